"""The first replay of an uploaded MetaSchedule database's traces, in a helper process (replay_records).

A record's trace is a program of schedule instructions that TVM replays when it loads the record. A hostile or
corrupt one can make TVM raise, hang, or crash the whole process (in TVM 0.27 a workload module nested too
deeply overflows the stack of TVM's JSON parser; a decision naming an instruction past the trace's end reads out
of bounds), and that process must not be the app's server. So a child process loads the workloads and replays
the records, with a time limit per item: a crash or a hang costs only the child; the item is skipped with the
reason, and a new child goes on with the rest. The child reads the files itself and answers in JSON lines on its
stdout (nothing is pickled either way):

    {"item": ["record", 7]}                                           before each item: a crash names it
    {"kind": "workload", "line": 3, "ok": true, "json": [hash, b64]}  the module, with its own structural hash
    {"kind": "record", "line": 7, "ok": true, "json": [trace, run_secs, target, args]}  as TVM re-serialized it
    {"kind": "record", "line": 7, "ok": false, "reason": "..."}
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tlm_core
from tlm_core.measure.worker import watch_parent

ITEM_TIMEOUT_S = 30.0  # one workload or one trace (milliseconds normally)
BUDGET_S = 300.0  # the whole check; records not reached by then are skipped, so say
STARTUP_TIMEOUT_S = 120.0  # importing TVM: 2-3 s idle, far longer on a loaded machine

_PROJECT_ROOT = str(Path(tlm_core.__file__).resolve().parents[1])  # so the child imports this tlm_core


@dataclass
class Verdict:
    ok: bool
    json: Any = None  # what TVM loaded, re-serialized by TVM (ok only)
    reason: str = ""  # one line (not ok)


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """(line number from 1, line) of each non-blank line: the numbering every message about a file uses, here
    and in the checks before (compile.database)."""
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def json_rows(path: Path) -> list[tuple[int, Any]]:
    """(line number, parsed row) of each non-blank line of a JSON-lines file."""
    return [(n, json.loads(line)) for n, line in numbered_lines(path.read_text(encoding="utf-8"))]


def replay_records(
    directory: str | Path,
    workloads: list[int],
    records: list[int],
    item_timeout_s: float = ITEM_TIMEOUT_S,
    budget_s: float = BUDGET_S,
    fault: dict | None = None,
) -> tuple[dict[int, Verdict], dict[int, Verdict]]:
    """Load `workloads` (line numbers of workload.json) and replay `records` (of tuning_record.json, in this
    order) in child processes: ({workload line: Verdict}, {record line: Verdict}), one for every line asked.

    A child that crashes or takes over `item_timeout_s` on one item is killed, the item gets the reason, and
    a new child goes on after it; records not reached within `budget_s` are skipped as unchecked. `fault`
    (tests only): {"line": record line, "do": "abort" | "hang"} makes the child fail there. RuntimeError
    when no child can start at all."""
    directory = Path(directory)
    done_w: dict[int, Verdict] = {}
    done_r: dict[int, Verdict] = {}
    deadline = time.monotonic() + budget_s
    while True:
        todo_r = [n for n in records if n not in done_r]
        todo_w = [n for n in workloads if n not in done_w or done_w[n].ok]  # a new child reloads the good ones
        if not todo_r and all(n in done_w for n in workloads):
            return done_w, done_r
        if time.monotonic() >= deadline:
            for n in todo_r:
                done_r[n] = Verdict(False, reason=f"not checked: the check's time limit ({budget_s:g} s) ran out")
            for n in workloads:
                done_w.setdefault(
                    n, Verdict(False, reason=f"not checked: the check's time limit ({budget_s:g} s) ran out")
                )
            return done_w, done_r
        request = {"directory": str(directory), "workloads": todo_w, "records": todo_r, "fault": fault}
        _run_child(request, done_w, done_r, item_timeout_s, deadline)


def _run_child(
    request: dict, done_w: dict[int, Verdict], done_r: dict[int, Verdict], item_timeout_s: float, deadline: float
) -> None:
    """One child over the request; its verdicts go into done_w and done_r. When it dies or hangs on an item,
    that item gets the reason and the caller starts another child for the rest."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_PROJECT_ROOT, os.environ.get("PYTHONPATH")])))
    code = "import sys; from tlm_core.compile.database_check import main; main(sys.argv[1])"
    with tempfile.TemporaryDirectory(prefix="tlm-db-check-") as tmp:
        asked = Path(tmp) / "request.json"
        asked.write_text(json.dumps({**request, "parent": os.getpid()}))
        with open(Path(tmp) / "log", "w+b") as log:  # TVM's chatter, a crash's stack: why a child cannot start
            proc = subprocess.Popen([sys.executable, "-c", code, str(asked)], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=log, env=env)  # fmt: skip
            item, verdicts, end = _follow(proc, done_w, done_r, item_timeout_s, deadline)
            if end == "done" or (end == "hung" and time.monotonic() >= deadline):
                return  # finished, or out of time: the caller marks what is left as unchecked
            if item is None and verdicts == 0:  # nothing to blame and no progress: another child would do the same
                log.seek(0)
                tail = " | ".join(log.read().decode(errors="replace").strip().splitlines()[-3:])
                how = f"did not start within {STARTUP_TIMEOUT_S:g} s" if end == "hung" else f"stopped ({end})"
                raise RuntimeError(f"the database check {how}" + (f": {tail}" if tail else ""))
    if item is not None:
        kind, n = item
        what = "loading it" if kind == "workload" else "replaying its trace"
        why = f"took over {item_timeout_s:g} s in TVM" if end == "hung" else f"crashed TVM ({end})"
        (done_w if kind == "workload" else done_r)[n] = Verdict(False, reason=f"{what} {why}")


def _follow(
    proc: subprocess.Popen,
    done_w: dict[int, Verdict],
    done_r: dict[int, Verdict],
    item_timeout_s: float,
    deadline: float,
) -> tuple[list | None, int, str]:
    """Read the child's verdicts until it is done, dies, or hangs (then kill it): (the item it was on, verdicts
    read, how it ended: "done", "hung", or how it died, e.g. "signal 11")."""
    lines: queue.Queue[bytes | None] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True)
    reader.start()
    item, verdicts = None, 0
    try:
        limit = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            try:
                line = lines.get(timeout=max(0.0, min(limit, deadline) - time.monotonic()))
            except queue.Empty:
                return item, verdicts, "hung"
            if line is None:  # the child died
                return item, verdicts, _how_it_died(proc)
            message = json.loads(line)
            if message.get("done"):
                return None, verdicts, "done"
            if "item" in message:
                item, limit = message["item"], time.monotonic() + item_timeout_s
            else:
                verdict = Verdict(message["ok"], message.get("json"), message.get("reason", ""))
                (done_w if message["kind"] == "workload" else done_r)[message["line"]] = verdict
                item, verdicts = None, verdicts + 1
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(timeout=5)
        proc.stdout.close()


def _read_lines(stream, out: queue.Queue) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


def _how_it_died(proc: subprocess.Popen) -> str:
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "still running"
    return f"signal {-code}" if code < 0 else f"exit code {code}"


# ---- the child ------------------------------------------------------------------------------------------------


def _reason(err: BaseException) -> str:
    """The informative line of a TVM error: a ScheduleError's "Error message: ...", else the last line, without
    the C++ condition of a failed check when a message follows it."""
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    found = [line for line in lines if line.startswith("Error message:")]
    text = found[-1].removeprefix("Error message:").strip() if found else (lines[-1] if lines else "")
    text = re.sub(r"^(The error is: )?Check failed: .*? is false:\s*(?=\S)", "", text)
    text = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def main(request_path: str) -> None:
    request = json.loads(Path(request_path).read_text())
    out = os.fdopen(os.dup(1), "w", buffering=1)  # our lines only: TVM's own prints to fd 1 go to stderr
    os.dup2(2, 1)
    threading.Thread(target=watch_parent, args=(request["parent"],), daemon=True).start()

    from tvm import s_tir
    from tvm.s_tir import meta_schedule as ms

    def say(message: dict) -> None:
        out.write(json.dumps(message) + "\n")

    directory = Path(request["directory"])
    workload_rows = json_rows(directory / "workload.json")
    line_of_index = [n for n, _ in workload_rows]
    workload_row = dict(workload_rows)
    loaded = {}
    for n in request["workloads"]:
        say({"item": ["workload", n]})
        try:
            # the module's own structural hash, whatever the file claims: TVM matches tasks by it
            workload = ms.database.Workload(ms.database.Workload.from_json(workload_row[n]).mod)
            loaded[n] = workload
            say({"kind": "workload", "line": n, "ok": True, "json": list(map(str, workload.as_json()))})
        except Exception as err:
            say({"kind": "workload", "line": n, "ok": False, "reason": f"TVM cannot load its module: {_reason(err)}"})

    record_row = dict(json_rows(directory / "tuning_record.json"))
    fault = request.get("fault") or {}
    for n in request["records"]:
        say({"item": ["record", n]})
        index, row = record_row[n]
        workload = loaded.get(line_of_index[index])
        if workload is None:
            say({"kind": "record", "line": n, "ok": False,
                 "reason": f"its workload (workload.json line {line_of_index[index]}) did not load"})  # fmt: skip
            continue
        if fault.get("line") == n:
            if fault["do"] == "abort":
                os.abort()
            time.sleep(3600)
        try:
            record = ms.database.TuningRecord.from_json(row, workload)  # TVM's loader: replays the trace
            sch = s_tir.Schedule(workload.mod)
            record.trace.apply_to_schedule(sch, remove_postproc=False)  # as scheduled_module and compile_model
            say({"kind": "record", "line": n, "ok": True, "json": _plain(record.as_json())})
        except Exception as err:
            say({"kind": "record", "line": n, "ok": False, "reason": _readable_failure(s_tir, row, workload, err)})
    say({"done": True})


def _readable_failure(s_tir, row: list, workload, err: Exception) -> str:
    """Whether the trace itself fails (replayed again, with TVM's error rendering on: its loader renders none)
    or the rest of the record (target, arguments)."""
    try:
        s_tir.Trace.apply_json_to_schedule(row[0], s_tir.Schedule(workload.mod, error_render_level="detail"))
    except Exception as detailed:
        return f"its trace does not replay on its workload: {_reason(detailed)}"
    return f"TVM cannot load it: {_reason(err)}"


def _plain(obj: Any) -> Any:
    """TVM's JSON objects (Array, Map, String, IntImm, FloatImm) as Python's, for json.dumps."""
    if isinstance(obj, str | bool | int | float) or obj is None:
        return obj
    if hasattr(obj, "items"):
        return {str(k): _plain(v) for k, v in obj.items()}
    if hasattr(obj, "value"):  # IntImm, FloatImm
        return obj.value
    return [_plain(x) for x in obj]
