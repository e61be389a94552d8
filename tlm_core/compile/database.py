"""A user's MetaSchedule JSONDatabase, checked before it is used: an upload as plain data first (save_database:
JSON lines of the expected shape, nothing executed or unpickled), then every workload and trace loaded by TVM in a
helper process (check_database, through database_check), what fails there left out with the reason.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from tvm.s_tir import meta_schedule as ms

from tlm_core.compile import database_check
from tlm_core.partition import task_id

DATABASE_MAX_BYTES = 64 * 1024**2  # per file of an uploaded database


class DatabaseError(ValueError):
    """A MetaSchedule database that cannot be used, with a one-line reason."""


@dataclass
class CheckedDatabase:
    """A MetaSchedule database whose workloads and traces were each loaded once in a helper process first
    (check_database): what TVM could not load is left out, with why."""

    db: ms.database.Database  # the usable workloads and records (a MemoryDatabase)
    records: int  # usable records
    problems: list[str] = field(default_factory=list)  # one line per workload or record left out
    skipped: dict[str, list[str]] = field(default_factory=dict)  # task id -> why records of it were left out


def check_database(
    path: str | Path,
    item_timeout_s: float = database_check.ITEM_TIMEOUT_S,
    budget_s: float = database_check.BUDGET_S,
    fault: dict | None = None,
) -> CheckedDatabase:
    """A MetaSchedule JSONDatabase from a directory (workload.json + tuning_record.json) or either file, every
    workload and trace loaded by TVM in a helper process before this one touches it (see database_check): a
    trace that makes TVM raise, hang or crash is left out with a one-line reason, and so are records whose
    data is wrong (a decision naming no instruction, run_secs that are not positive). DatabaseError when a
    file is not JSON lines of a database, or when nothing in it is usable; FileNotFoundError without files.
    `fault` is for tests (see replay_records)."""
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    files = directory / "workload.json", directory / "tuning_record.json"
    if not all(f.exists() for f in files):
        raise FileNotFoundError(f"{directory} holds no MetaSchedule database (workload.json, tuning_record.json)")
    workloads, tuning = _checked_rows(files[0].read_bytes(), files[1].read_bytes(), max_bytes=None)
    reasons = {n: why for n, (_, (trace, run_secs, *_)) in tuning if (why := _record_problem(trace, run_secs))}
    try:
        done_w, done_r = database_check.replay_records(
            directory, [n for n, _ in workloads], _check_order(tuning, reasons), item_timeout_s, budget_s, fault
        )
    except RuntimeError as err:
        raise DatabaseError(str(err)) from err

    db, problems = ms.database.MemoryDatabase(), []
    loaded: dict[int, tuple[ms.database.Workload, str]] = {}  # workload line -> (workload, task id)
    for n, _ in workloads:
        why = done_w[n].reason
        if done_w[n].ok:  # the module as the helper re-serialized it, with its own structural hash
            try:
                mod = ms.database.Workload.from_json(done_w[n].json).mod
                loaded[n] = db.commit_workload(mod), task_id(mod)
                continue
            except Exception as err:  # it loaded in the helper: not expected, but no reason to fail the rest
                why = f"TVM cannot load its module here: {type(err).__name__}"
        problems.append(f"workload.json line {n}: {why}")
    skipped: dict[str, list[str]] = {}
    usable = 0
    for n, (index, _) in tuning:
        verdict = done_r.get(n)
        workload, task = loaded.get(workloads[index][0], (None, None))
        why = reasons.get(n) or (verdict.reason if verdict else "not checked")
        if verdict is not None and verdict.ok:  # replayed once already, in the helper: safe to replay here
            try:
                db.commit_tuning_record(ms.database.TuningRecord.from_json(verdict.json, workload))
                usable += 1
                continue
            except Exception as err:
                why = f"TVM cannot load it here: {type(err).__name__}"
        why = f"tuning_record.json line {n}: {why}"
        problems.append(why)
        if task is not None:
            skipped.setdefault(task, []).append(why)
    if problems and not usable:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise DatabaseError(f"TVM could not load any of it: {problems[0]}{more}")
    return CheckedDatabase(db, usable, problems, skipped)


def load_database(path: str | Path) -> ms.database.Database:
    """The usable records of a MetaSchedule JSONDatabase directory (or either file): check_database(path).db."""
    return check_database(path).db


def _record_problem(trace: list, run_secs: list | None) -> str | None:
    """What is wrong with a record as data, before TVM sees it (None: nothing found)."""
    if run_secs is not None and not all(_positive_seconds(s) for s in run_secs):
        return "its run_secs are not all positive, finite seconds"  # a negative time would win every comparison
    instructions, decisions = trace
    for d in decisions:  # TVM 0.27 reads out of bounds (and crashes) on a decision past the trace's end
        if not (isinstance(d, list) and len(d) == 2 and type(d[0]) is int and 0 <= d[0] < len(instructions)):
            return f"a decision ({json.dumps(d)[:40]}) names no instruction of its trace"
    return None


def _positive_seconds(x: float) -> bool:
    try:
        return 0 < float(x) < math.inf
    except OverflowError:  # an integer too large for a float
        return False


def _check_order(tuning: list[tuple[int, list]], leave_out: dict[int, str]) -> list[int]:
    """Record lines to replay, every workload's fastest first (mean run_secs, as TVM ranks them), then every
    second fastest, ...: a time limit on the check cuts only records no task would pick."""
    by_workload: dict[int, list[tuple[float, int]]] = {}
    for n, (index, (_, run_secs, *_)) in tuning:
        if n not in leave_out:
            by_workload.setdefault(index, []).append((statistics.fmean(run_secs) if run_secs else math.inf, n))
    ranked = [(rank, n) for rows in by_workload.values() for rank, (_, n) in enumerate(sorted(rows))]
    return [n for _, n in sorted(ranked)]


def _json_lines(data: bytes, name: str, max_bytes: int | None) -> list[tuple[int, object]]:
    """(line number, parsed row) of every non-blank line."""
    if max_bytes is not None and len(data) > max_bytes:
        raise DatabaseError(f"{name} is {len(data) / 1024**2:.1f} MiB: the limit is {max_bytes / 1024**2:.0f} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DatabaseError(f"{name} is not UTF-8 text (byte {err.start})") from err
    rows = []
    for n, line in database_check.numbered_lines(text):
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as err:
            raise DatabaseError(f"{name} line {n} is not JSON: {err.msg}") from err
        except RecursionError as err:  # Python's parser stops here; TVM's own would overflow its stack
            raise DatabaseError(f"{name} line {n} nests too deeply to be a database line") from err
    return rows


def _checked_rows(
    workload: bytes, records: bytes, max_bytes: int | None
) -> tuple[list[tuple[int, list]], list[tuple[int, list]]]:
    """Both files as JSON lines of the expected shape (DatabaseError with a one-line reason when not)."""
    workloads = _json_lines(workload, "workload.json", max_bytes)
    tuning = _json_lines(records, "tuning_record.json", max_bytes)
    for n, row in workloads:
        ok = isinstance(row, list) and len(row) == 2 and all(isinstance(x, str) for x in row) and row[0].isdigit()
        if not ok:
            raise DatabaseError(f"workload.json line {n} is not [structural hash, base64 module]")
        try:
            base64.b64decode(row[1], validate=True)
        except binascii.Error as err:
            raise DatabaseError(f"workload.json line {n}: the module is not base64 ({err})") from err
    for n, row in tuning:
        ok = isinstance(row, list) and len(row) == 2 and type(row[0]) is int and isinstance(row[1], list)
        if not ok or len(row[1]) != 4:
            raise DatabaseError(f"tuning_record.json line {n} is not [workload index, [trace, run_secs, target, args]]")
        if not 0 <= row[0] < len(workloads):
            raise DatabaseError(f"tuning_record.json line {n}: no workload {row[0]} in workload.json")
        trace, run_secs = row[1][0], row[1][1]
        if not (isinstance(trace, list) and len(trace) == 2 and all(isinstance(x, list) for x in trace)):
            raise DatabaseError(f"tuning_record.json line {n}: the trace is not [instructions, decisions]")
        numbers = isinstance(run_secs, list) and all(type(x) in (int, float) for x in run_secs)
        if run_secs is not None and not numbers:
            raise DatabaseError(f"tuning_record.json line {n}: run_secs are not numbers")
    return workloads, tuning


def save_database(workload: bytes, records: bytes, directory: str | Path, max_bytes: int = DATABASE_MAX_BYTES) -> Path:
    """Check the two files of a MetaSchedule JSONDatabase as plain data (JSON lines of the expected shape;
    nothing is executed or unpickled) and write them into `directory` for check_database / load_database.
    DatabaseError with a one-line reason when they are not a database."""
    _checked_rows(workload, records, max_bytes)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "workload.json").write_bytes(workload)
    (directory / "tuning_record.json").write_bytes(records)
    return directory
