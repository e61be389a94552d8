"""Why add+relu is slow for every tuned method: vector lanes that cross a row.

MetaSchedule's CPU space schedules an elementwise task without a decision: fuse every loop, parallelise, and
vectorise 64 lanes. On a 64x56x56 tensor the 64 lanes cross rows of 56; after flattening the index is
`64 f + v`, but TVM's simplifier cannot prove it, so LLVM loads and stores lane by lane. The same task with
lanes that stay inside a row (8, 56) or that divide nothing (16) shows it. Every program is checked against the
untuned reference by the project's Measurer (median over repeats, all in one run).

    .venv/bin/python benchmarks/vector_lanes.py

Writes benchmarks/results/vector_lanes.json and .md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import us, write  # noqa: E402


def hand_schedule(mod, lanes: int, fuse_all: bool):
    """compute_inline the add; parallel outer loop; vectorise `lanes` (fused loop split, or the row itself)."""
    from tvm import s_tir

    sch = s_tir.Schedule(mod)
    sch.compute_inline(sch.get_sblock("T_add"))
    loops = sch.get_loops(sch.get_sblock("compute"))
    if fuse_all:
        outer, inner = sch.split(sch.fuse(*loops), [None, lanes])
    else:  # the row (last loop) is the vector
        outer, inner = sch.fuse(*loops[:-1]), loops[-1]
    sch.parallel(outer)
    sch.vectorize(inner)
    return sch.mod


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    from tvm import te, topi

    from tlm_core.measure import Measurer
    from tlm_core.partition import task_from_primfunc, te_prim_func
    from tlm_core.program import apply_decisions
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    x, y = te.placeholder((1, 64, 56, 56), name="X"), te.placeholder((1, 64, 56, 56), name="Y")
    task = task_from_primfunc(te_prim_func([x, y, topi.nn.relu(topi.add(x, y))]), "add_relu")
    space = SpaceBuilder.for_target(target).build(task)
    programs = {
        "untuned (no parallel, no vector)": task.mod,
        "MetaSchedule's space: fused, 64 lanes across rows": apply_decisions(space, 0, []).mod,
        "fused, 16 lanes (across rows)": hand_schedule(task.mod, 16, True),
        "fused, 8 lanes (inside a row)": hand_schedule(task.mod, 8, True),
        "row of 56 as the vector": hand_schedule(task.mod, 56, False),
    }
    with Measurer(target) as m:
        results = m.measure(task, list(programs.values()))
    rows = [
        {"program": name, "latency_us": us(r.latency), "ok": r.ok, "error": r.error}
        for name, r in zip(programs, results, strict=True)
    ]
    notes = ["add+relu 1x64x56x56 fp32; latency: median over repeats, every program checked against the untuned one."]
    md = write("vector_lanes", {"rows": rows}, ["program", "latency_us", "ok"], rows, "Vector lanes across rows", notes)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
