"""A zip that reproduces a whole-model run elsewhere: schedules, traces, records, results and the command.

    data = bundle_zip(run)        # run: a ModelRun made with measure_kernels=True

Inside (all text):
    README.md                         what was run, the results, the exact commands to reproduce it
    results.json                      the `tlm compile --json` document of the run
    database/workload.json            every scheduled task's schedule as a MetaSchedule JSONDatabase
    database/tuning_record.json       (run_secs: the kernel measured alone); `tlm compile MODEL --method database`
    tasks/<id>_<name>.py              each task's scheduled TVMScript
    traces/<id>.json                  each task's MetaSchedule trace (TVM's JSON and as Python)
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

from tlm_core.compile.pipeline import ModelRun, cli_command
from tlm_core.compile.schedules import scheduled_module
from tlm_core.records import RecordStore

DATABASE = "database"


def _fmt(secs: float | None) -> str:
    return "n/a" if secs is None else f"{secs * 1e3:.3f} ms"


def _readme(run: ModelRun, scheduled: int) -> str:
    doc, r = run.to_dict(), run.report
    error = "n/a" if r.max_abs_error is None else f"{r.max_abs_error:.2e}"
    lines = [
        f"# {run.model} compiled with {run.label}",
        "",
        f"Target: `{run.target}`",
        "",
        f"- end to end (median of {len(r.latencies)} repeats): {_fmt(r.latency)}; PyTorch eager on the same inputs:"
        f" {_fmt(r.pytorch_latency)}",
        f"- output vs PyTorch: max abs error {error} ({'passed' if r.ok else 'FAILED'})",
        f"- compile time {doc['compile_s']:.2f} s (schedules + tvm.compile); {scheduled}/{len(run.part.tasks)} tasks"
        " scheduled, the rest keep TVM's untuned loops",
        "",
        "## Reproduce",
        "",
        "The same method from scratch (TLM Studio installed, `tlm` on the PATH):",
        "",
        "```bash",
        run.command,
        "```",
        "",
        "Exactly these schedules, from the MetaSchedule database in this bundle (unzip it first):",
        "",
        "```bash",
        cli_command(run.model, "database", database=DATABASE),
        "```",
        "",
        "Or with TVM alone: `tvm.s_tir.meta_schedule.database.JSONDatabase(path_workload='database/workload.json',"
        " path_tuning_record='database/tuning_record.json')` and `relax.transform.MetaScheduleApplyDatabase()` on"
        " the fused module.",
        "",
        "## Files",
        "",
        "- `results.json`: latencies (every repeat, seconds), errors, compile times, per-task method/latency/trials",
        "- `database/`: one record per scheduled task; run_secs are that kernel measured alone on the target",
        "- `tasks/*.py`: each task's scheduled TVMScript; `traces/*.json`: its MetaSchedule trace",
    ]
    return "\n".join(lines) + "\n"


def bundle_zip(run: ModelRun) -> bytes:
    """The bundle of a run, as zip bytes. Needs each task's kernel measured (compile_and_run with
    measure_kernels=True): the database's run_secs must be real measurements."""
    if run.kernels is None:
        raise ValueError("measure each task's kernel first (compile_and_run(..., measure_kernels=True))")
    buf = io.BytesIO()
    scheduled = 0
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z, tempfile.TemporaryDirectory() as tmp:
        store = RecordStore(Path(tmp))
        for task in run.part.tasks:
            sched = run.schedules[task.id]
            stem = f"{task.id}_{task.name}"
            header = (
                f"# {task.name} (task {task.id}, weight {task.weight}): {sched.method if sched.trace else 'default'}"
            )
            z.writestr(f"tasks/{stem}.py", f"{header}\n{scheduled_module(task, sched).script()}\n")
            if sched.trace is None:
                continue
            scheduled += 1
            record = store.append(task, sched.trace, run.kernels[task.id], run.target)
            trace = {"task_id": task.id, "name": task.name, "method": sched.method, "trials": sched.trials,
                     "trace": record.trace,  # MetaSchedule's JSON, as in the database
                     "python": [str(line) for line in sched.trace.as_python()]}  # fmt: skip
            z.writestr(f"traces/{task.id}.json", json.dumps(trace, indent=1))
        for name in ("workload.json", "tuning_record.json"):
            z.writestr(f"{DATABASE}/{name}", (Path(tmp) / name).read_text() if (Path(tmp) / name).exists() else "")
        z.writestr("results.json", json.dumps(run.to_dict(), indent=1, default=str))
        z.writestr("README.md", _readme(run, scheduled))
    return buf.getvalue()
