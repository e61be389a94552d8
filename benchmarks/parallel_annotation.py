"""Does search's extra dimension matter? The `meta_schedule.parallel` annotation, measured.

MetaSchedule's MutateParallel rewrites a sketch's `meta_schedule.parallel` value (RewriteParallelVectorizeUnroll
then fuses outer loops into the parallel loop until their product exceeds it: 1 = the outermost loop alone).
Our space fixes it at the sketch's 32, and search's best records often hold another value. Here each held-out
task's fastest search record is measured with several values, side by side (rounds in rotated order, medians):
if they run alike, the dimension our space leaves out costs nothing on these tasks.

    .venv/bin/python benchmarks/parallel_annotation.py     # the 512-trial search's records of 6 held-out tasks
    .venv/bin/python benchmarks/parallel_annotation.py --quick   # one tiny task, the heuristic's trace (CI)

Writes benchmarks/results/parallel-annotation[-quick].json and .md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402

RECORDS = Path(__file__).parent / "results" / "evaluation-intel-search512-records"
KEY = "meta_schedule.parallel"


def _annotations(doc: list) -> list[list]:
    """The parallel Annotate instructions of a trace's JSON document (one per sketch that has one)."""
    return [inst for inst in doc[0] if inst[0] == "Annotate" and KEY in json.dumps(inst[2])]


def parallel_of(trace) -> int | None:
    """The trace's parallel annotation value (None: it has none)."""
    found = _annotations(trace.as_json())
    return int(found[0][1][1]) if found else None


def with_parallel(space, trace, value: int):
    """The module of `trace` (a postprocessed one, as records hold) with its sketch's parallel annotation set to
    `value` and the space's postprocessors run again (they turn the annotation into fused parallel loops)."""
    from tvm.s_tir.schedule import Schedule, Trace

    from tlm_core.program import postprocess

    doc = trace.simplified(remove_postproc=True).as_json()
    for inst in _annotations(doc):
        inst[1][1] = value
    sch = Schedule(space.task.mod)
    Trace.apply_json_to_schedule(doc, sch)
    postprocess(space, sch)
    return sch.mod


def search_database(folder: Path):
    """The gzipped JSONDatabase of a benchmark's records, unpacked into a temporary folder."""
    from tvm.s_tir import meta_schedule as ms

    from tlm_core.dataset import unpack

    tmp = unpack(folder, tempfile.mkdtemp())
    return ms.database.JSONDatabase(str(tmp / "workload.json"), str(tmp / "tuning_record.json"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--tasks", type=int, default=2, help="held-out tasks per model (evaluation.py's choice)")
    p.add_argument("--values", type=int, nargs="+", default=[1, 4, 32, 1024])
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--work", default="out/evaluation-probe", help="folder of the task catalogue")
    args = p.parse_args(argv)

    from benchmarks.tasks import held_out_tasks
    from tlm_core.compile.schedules import top_records
    from tlm_core.dataset.splits import VALIDATION_MODELS
    from tlm_core.measure import Measurer
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.quick:
        from tlm_core.baselines.heuristic import heuristic_program

        tasks = held_out_tasks(work, ["mobilenetv2-tiny"], 1, 0.3, builder, target)
        traces = {task.id: heuristic_program(space).program.trace for _, task, space in tasks}
        values, rounds = [1, 32], 1
    else:
        tasks = held_out_tasks(work, list(VALIDATION_MODELS), args.tasks, 1.0, builder, target)
        db = search_database(RECORDS)
        traces = {task.id: recs[0].trace for _, task, _ in tasks if (recs := top_records(db, task, 1))}
        values, rounds = args.values, args.rounds
    rows = []
    with Measurer(target, repeat=7, min_repeat_ms=20, timeout_s=60.0) as m:
        for model, task, space in tasks:
            if task.id not in traces:
                continue
            mods = {str(v): with_parallel(space, traces[task.id], v) for v in values}
            med = m.side_by_side(task, mods, rounds)
            ok = [x for x in med.values() if x]
            row = {"model": model, "task": task.name[:36], "record_value": parallel_of(traces[task.id])}
            row |= {f"p{v}_us": report.us(med[str(v)]) for v in values}
            row["max_over_min"] = max(ok) / min(ok) if ok else None
            rows.append(row)
            print(row, flush=True)
    notes = [
        f"Each task's fastest search record with `{KEY}` set to each value; {rounds} rounds side by side, medians.",
        "record_value: the record's own value. max_over_min: the slowest value's median over the fastest's.",
        "Traces: "
        + (
            "the heuristic's program (quick)."
            if args.quick
            else f"benchmarks/results/{RECORDS.name}, the 512-trial search of evaluation-intel-search512."
        ),
    ]
    columns = ["model", "task", "record_value", *(f"p{v}_us" for v in values), "max_over_min"]
    name = "parallel-annotation-quick" if args.quick else "parallel-annotation"
    md = report.write(name, {"rows": rows, "values": values, "rounds": rounds}, columns, rows,
                      "The parallel annotation search mutates, measured", notes)  # fmt: skip
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
