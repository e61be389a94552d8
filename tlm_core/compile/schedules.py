"""Per-task schedules chosen by a method: TVM's default, the heuristic, the TLM, search, or a MetaSchedule database.

A Schedule is one task's trace (None = leave the task untuned) with where it came from; compile_model
turns a {task id: Schedule} mapping into one executable. `schedules_for` is the one dispatcher the CLI and
the GUI share.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tvm.s_tir import Trace
from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from tlm_core.compile import database_check
from tlm_core.partition import Partition, Task, task_id

if TYPE_CHECKING:  # hints only: the generator imports torch, which most methods never need
    from tlm_core.generator import Generation, Generator
    from tlm_core.measure import Measurer, MeasureResult
    from tlm_core.program import Program
    from tlm_core.space import Space

METHODS = ("default", "heuristic", "tlm", "search", "database")  # database: a MetaSchedule JSONDatabase

# progress(fraction done in [0, 1], what is happening): how long steps report to a CLI bar or a GUI page
Progress = Callable[[float, str], None]


@dataclass
class Schedule:
    task_id: str
    method: str
    trace: Trace | None  # None: the untuned task (TVM's default)
    seconds: float = 0.0  # time to produce it (generation, or search including measurements)
    trials: int = 0  # programs measured to find it
    latency: float | None = None  # the kernel's measured latency when known, seconds
    dropped: str = ""  # why the method's schedule was left out (its kernel failed alone); the task runs untuned


def default_schedules(part: Partition) -> dict[str, Schedule]:
    """TVM with no tuning: every task keeps its naive loops."""
    return {t.id: Schedule(t.id, "default", None) for t in part.tasks}


def heuristic_schedules(
    part: Partition, space_of: Callable[[Task], object], progress: Progress | None = None
) -> dict[str, Schedule]:
    """Top-1 of the Roller-style heuristic for every task (no measurement)."""
    from tlm_core.baselines.heuristic import heuristic_program

    out = {}
    for i, task in enumerate(part.tasks):
        if progress:
            progress(i / len(part.tasks), f"heuristic: task {i + 1}/{len(part.tasks)} {task.name}")
        start = time.perf_counter()
        cand = heuristic_program(space_of(task))
        out[task.id] = Schedule(task.id, "heuristic", cand.program.trace, time.perf_counter() - start)
    return out


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
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
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


def database_schedules(db: ms.database.Database, part: Partition, target: Target, method: str) -> dict[str, Schedule]:
    """The best record of each task in a database (tasks it does not know stay untuned)."""
    out = {}
    for task in part.tasks:
        trace, latency = best_in_database(db, task, target)
        out[task.id] = Schedule(task.id, method, trace, latency=latency)
    return out


def best_in_database(db: ms.database.Database, task: Task, target: Target) -> tuple[Trace | None, float | None]:
    records = top_records(db, task, 1)
    if not records:
        return None, None
    secs = [float(s) for s in records[0].run_secs or []]
    return records[0].trace, (sorted(secs)[len(secs) // 2] if secs else None)


def top_records(db: ms.database.Database, task: Task, k: int) -> list:
    """The task's k fastest records in the database (TuningRecords: .trace, .run_secs), fastest first."""
    return db.get_top_k(db.commit_workload(task.mod), k) if db.has_workload(task.mod) else []


@dataclass
class Remeasured:
    """A database's k best records of a task, measured again now."""

    mod: Any  # the fastest one's module (None: none ran)
    latencies: list[float | None]  # every record's new latency, in the database's order (None: it failed)
    pick: int | None  # the fastest one's index


def remeasured_best(db: ms.database.Database, task: Task, measurer, k: int = 5) -> Remeasured:
    """The fastest of the task's k best records measured again now (a top record alone may be a lucky
    measurement: the minimum over a search's trials favours noise)."""
    from tlm_core.measure import fastest_again

    records = top_records(db, task, k)
    mods = [scheduled_module(task, Schedule(task.id, "database", r.trace)) for r in records]
    # the records' own medians rank them; all of them are measured again (a lone record is not)
    first = [statistics.median(float(s) for s in r.run_secs) if r.run_secs else math.inf for r in records]
    screened = fastest_again(task, mods, first, measurer, screen=len(mods))
    again = [screened.again[i] if i in screened.again else None for i in range(len(mods))]
    lat = [r.latency if r is not None and r.ok else None for r in again]
    return Remeasured(None if screened.pick is None else mods[screened.pick], lat, screened.pick)


def search_schedules(
    part: Partition, target: Target, trials: int, measurer, store, on_trial=None, progress: Progress | None = None
):
    """Ansor-style evolutionary search over every task (records into `store`), then each task's best.

    Returns (schedules, SearchResult); a task's seconds are its share of the search's wall time by trials."""
    from tlm_core.baselines.search import search

    budget = max(trials, len(part.tasks))  # the search's global budget (it may overshoot by part of an iteration)

    def trial_done(trial) -> None:
        if on_trial:
            on_trial(trial)
        if progress:
            progress(min(1.0, (trial.index + 1) / budget), f"search: trial {trial.index + 1} of about {budget}")

    result = search(part.tasks, target, trials, measurer, store=store, on_trial=trial_done)
    out = database_schedules(store.tvm_database(), part, target, "search")
    total = max(1, len(result.trials))
    for task in part.tasks:
        mine = len(result.trials_of(task.id))
        out[task.id].trials = mine
        out[task.id].seconds = result.seconds * mine / total
    return out, result


@dataclass
class TLMChoice:
    """How tlm_schedule chose one task's program: every candidate, its measurement, the winner, the times.

    The Compare page and `tlm compare` report all of it; a whole-model compile keeps only the Schedule."""

    generations: list[Generation]  # most likely first (one, greedy, for top-1)
    programs: list[Program]  # generations[i] applied to the space
    results: list[MeasureResult]  # one per candidate; empty for top-1 (nothing measured)
    best: int | None  # the chosen candidate: 0 for top-1; None when no measured candidate passed its check
    generate_s: float  # generation and apply_decisions, seconds
    measure_s: float = 0.0  # measuring the candidates (and the fastest again), seconds
    again: dict[int, MeasureResult] = field(default_factory=dict)  # the fastest few, measured again

    @property
    def seconds(self) -> float:
        """Time to choose the schedule: generation plus every measurement the choice needed."""
        return self.generate_s + self.measure_s

    @property
    def latencies(self) -> list[float | None]:
        return [r.latency for r in self.results]

    @property
    def chosen(self) -> MeasureResult | None:
        """The winner's last measurement (its second when it was measured again)."""
        if self.best is None or not self.results:
            return None
        return self.again.get(self.best, self.results[self.best])


def tlm_schedule(
    task: Task, space: Space, generator: Generator, candidates: int = 1, measurer: Measurer | None = None
) -> tuple[Schedule, TLMChoice]:
    """One task's schedule written by the TLM: the one best-of-k of `tlm compile` and `tlm compare`.

    No measurer: top-1, the greedy program, unmeasured (candidates must be 1). With a measurer: the
    `candidates` programs of Generator.candidates (greedy, then beam search's most likely), each measured,
    the fastest few measured again (tlm_core.measure.screen); the fastest of those that passed the numeric
    check twice wins, and a task none of whose candidates passed gets trace None (untuned): a schedule that
    fails its check must never reach the model."""
    from tlm_core.measure import fastest_again
    from tlm_core.program import apply_decisions

    if candidates > 1 and measurer is None:
        raise ValueError("best-of-k needs a Measurer to pick the fastest candidate")
    start = time.perf_counter()
    gens = generator.generate(space, candidates=candidates)
    # decoding is constrained, so every generation is a legal program (apply_decisions would raise if not)
    programs = [apply_decisions(space, g.sketch_index, g.decisions) for g in gens]
    generated = time.perf_counter()
    if measurer is None:
        choice = TLMChoice(gens, programs, [], 0, generated - start)
        return Schedule(task.id, "tlm", programs[0].trace, choice.seconds), choice
    mods = [p.mod for p in programs]
    results = measurer.measure(task, mods)
    screened = fastest_again(task, mods, [r.latency if r.ok else None for r in results], measurer)
    best = screened.pick
    choice = TLMChoice(gens, programs, results, best, generated - start, time.perf_counter() - generated,
                       screened.again)  # fmt: skip
    schedule = Schedule(
        task.id,
        "tlm",
        programs[best].trace if best is not None else None,
        choice.seconds,
        trials=len(programs) + len(screened.again),
        latency=choice.chosen.latency if choice.chosen else None,
    )
    return schedule, choice


def tlm_schedules(
    part: Partition,
    space_of: Callable[[Task], Space],
    generator: Generator,
    candidates: int = 1,
    measurer: Measurer | None = None,
    progress: Progress | None = None,
) -> dict[str, Schedule]:
    """Schedules written by the TLM (a tlm_core.generator.Generator) for every task (see tlm_schedule).

    candidates 1: the greedy program (top-1, no measurement, even when a measurer is given). candidates k > 1:
    Generator.candidates' k programs (greedy, then beam search), each measured with `measurer`; the
    Schedule's seconds are generation plus measurement wall time."""
    if candidates > 1 and measurer is None:
        raise ValueError("best-of-k needs a Measurer to pick the fastest candidate")
    out = {}
    for i, task in enumerate(part.tasks):
        if progress:
            what = "top-1" if candidates <= 1 else f"best-of-{candidates}"
            progress(i / len(part.tasks), f"TLM {what}: task {i + 1}/{len(part.tasks)} {task.name}")
        # the caller's measurer may be there only to time the kernels afterwards: top-1 never measures
        choose_with = measurer if candidates > 1 else None
        out[task.id] = tlm_schedule(task, space_of(task), generator, candidates, choose_with)[0]
    return out


def schedules_for(
    method: str,
    part: Partition,
    target: Target,
    space_of: Callable[[Task], object] | None = None,
    *,
    generator=None,
    candidates: int = 1,
    trials: int = 64,
    measurer=None,
    store=None,
    database: ms.database.Database | str | Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Schedule]:
    """Every task's schedule by `method` (one of METHODS): the one dispatcher of the CLI and the GUI.

    heuristic and tlm need `space_of` (task -> Space); tlm needs `generator` (and `measurer` for
    candidates > 1); search needs `measurer` and a RecordStore `store` for its programs, and spends
    `trials` over the whole model; database needs `database` (a Database or a JSONDatabase path)."""
    if method == "default":
        return default_schedules(part)
    if method in ("heuristic", "tlm") and space_of is None:
        raise ValueError(f"method {method} needs the tasks' schedule spaces (space_of)")
    if method == "heuristic":
        return heuristic_schedules(part, space_of, progress)
    if method == "tlm":
        if generator is None:
            raise ValueError("method tlm needs a Generator (e.g. Generator.from_checkpoint(default_checkpoint()))")
        return tlm_schedules(part, space_of, generator, candidates, measurer, progress)
    if method == "search":
        if measurer is None or store is None:
            raise ValueError("method search needs a Measurer and a RecordStore for its programs")
        return search_schedules(part, target, trials, measurer, store, progress=progress)[0]
    if method == "database":
        if database is None:
            raise ValueError("method database needs a MetaSchedule database")
        db = database if isinstance(database, ms.database.Database) else load_database(database)
        return database_schedules(db, part, target, "database")
    raise ValueError(f"unknown method {method!r}: one of {', '.join(METHODS)}")


def scheduled_module(task: Task, schedule: Schedule):
    """The task's module with the schedule's trace applied (the untuned module when it has none)."""
    from tvm.s_tir import Schedule as TirSchedule

    if schedule.trace is None:
        return task.mod
    sch = TirSchedule(task.mod)
    schedule.trace.apply_to_schedule(sch, remove_postproc=False)
    return sch.mod


def measure_schedules(
    part: Partition, schedules: dict[str, Schedule], measurer, progress: Progress | None = None
) -> dict[str, object]:
    """Measure each task's kernel alone in the Measurer's worker processes (built, checked against the untuned
    reference, timed): task id -> MeasureResult. Schedules without a latency get the measured one when their
    check passed; a scheduled kernel that fails (build error, crash, hang, wrong output) is replaced by the
    untuned task with the reason in `dropped`, so the whole model is built only from kernels that worked alone
    (a hostile database trace that crashes LLVM or the kernel costs a worker, not the caller's process)."""
    out = {}
    for i, task in enumerate(part.tasks):
        if progress:
            progress(i / len(part.tasks), f"measuring kernel {i + 1}/{len(part.tasks)} {task.name}")
        sched = schedules[task.id]
        (result,) = measurer.measure(task, [scheduled_module(task, sched)])
        out[task.id] = result
        if result.ok and sched.latency is None:
            sched.latency = result.latency
        elif not result.ok and sched.trace is not None:
            reason = f"its {sched.method} kernel failed alone: {result.error}"
            schedules[task.id] = Schedule(task.id, sched.method, None, sched.seconds, sched.trials, dropped=reason)
    return out
