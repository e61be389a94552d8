"""Kernels of a microsecond: the TLM's greedy program against the heuristic's Top-1 on a tiny model's tasks.

On tasks this small one parallel launch (~5 us here) costs more than all the work, so a schedule must keep
the parallel (outermost) tile factors at 1; the heuristic does by rule (SMALL_FLOPS), the TLM must have
learnt it. Every task with decisions of the model (default: mobilenetv2-tiny, whose 1x1 and depthwise
convolutions take 0.3-10 us), both programs measured back to back in one run, each checked against the
untuned task.

    .venv/bin/python benchmarks/small_kernels.py [--model mobilenetv2-tiny] [--checkpoint DIR] [--results NAME]

Writes benchmarks/results/small_kernels.json and .md (NAME.json and .md with --results).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import geomean, us, write  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="mobilenetv2-tiny")
    p.add_argument("--checkpoint", help="default: the shipped assets/tlm-small")
    p.add_argument("--results", default="small_kernels", help="results name (another machine's run beside this one)")
    args = p.parse_args(argv)
    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.frontend import load_model
    from tlm_core.generator import Generator
    from tlm_core.measure import Measurer
    from tlm_core.model import default_checkpoint
    from tlm_core.partition import partition
    from tlm_core.program import apply_decisions
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    checkpoint = args.checkpoint or "assets/tlm-small (shipped)"
    generator = Generator.from_checkpoint(args.checkpoint or default_checkpoint())
    rows = []
    with Measurer(target) as m:
        for task in partition(load_model(args.model), target).tasks:
            space = builder.build(task)
            if not any(s.points for s in space.sketches):
                continue
            h, g = heuristic_program(space), generator.greedy(space)
            programs = [h.program.mod, apply_decisions(space, g.sketch_index, g.decisions).mod]
            rh, rt = m.measure(task, programs)
            ok = rh.ok and rt.ok
            rows.append({
                "task": task.name[:40], "flops": task.flops, "heuristic_us": us(rh.latency), "tlm_us": us(rt.latency),
                "heuristic_sketch": h.sketch_index, "tlm_sketch": g.sketch_index,
                "tlm_speed_vs_heuristic": round(rh.latency / rt.latency, 3) if ok else None,
                "error": rh.error or rt.error,
            })  # fmt: skip
            print(rows[-1], flush=True)
    ratios = [r["tlm_speed_vs_heuristic"] for r in rows if r["tlm_speed_vs_heuristic"]]
    mean = geomean(ratios)
    notes = [
        f"Model {args.model}, checkpoint `{checkpoint}`; every task with decisions; latency: median over "
        "repeats, each program checked against the untuned task; > 1 = the TLM's program is faster.",
        f"Geometric mean of TLM speed / heuristic speed over {len(ratios)} tasks: {mean:.2f}."
        if mean
        else "No task was measured successfully.",
    ]
    cols = ["task", "flops", "heuristic_sketch", "heuristic_us", "tlm_sketch", "tlm_us", "tlm_speed_vs_heuristic"]
    data = {"model": args.model, "checkpoint": checkpoint, "geomean": mean, "rows": rows}
    md = write(args.results, data, cols, rows, "Kernels of a microsecond: TLM vs heuristic", notes)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
