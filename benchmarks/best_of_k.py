"""Best-of-k end to end: the TLM's top-1 against its best of k chosen by kernels timed warm (the default) and by
kernels timed with the caches flushed between runs (Measurer(flush_cache=True)), in one process.

    .venv/bin/python benchmarks/best_of_k.py --models corpus-convnext

Each model's three executables are checked against PyTorch, then timed in alternating rounds (medians). Writes
benchmarks/results/best_of_k.json and .md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import write  # noqa: E402


def model_rows(name: str, k: int, rounds: int) -> list[dict]:
    from benchmarks.models import load_paper_model, side_by_side
    from tlm_core.compile import compile_model
    from tlm_core.compile.schedules import schedules_for
    from tlm_core.generator import Generator
    from tlm_core.measure import Measurer
    from tlm_core.model import default_checkpoint
    from tlm_core.partition import partition
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    model = load_paper_model(name, Path("out/best_of_k"))
    part = partition(model, target)
    build = SpaceBuilder.for_target(target).build
    spaces = {t.id: build(t) for t in part.tasks}
    gen = Generator.from_checkpoint(default_checkpoint())
    space_of = lambda t: spaces[t.id]  # noqa: E731
    variants = {"TLM top-1": schedules_for("tlm", part, target, space_of, generator=gen)}
    for label, flush in ((f"best-of-{k}, kernels timed warm", False), (f"best-of-{k}, caches flushed", True)):
        with Measurer(target, flush_cache=flush) as m:
            variants[label] = schedules_for("tlm", part, target, space_of, generator=gen, candidates=k, measurer=m)
    executables = {label: compile_model(part, s, target).executable for label, s in variants.items()}
    timed = side_by_side(model, executables, rounds)
    warm, flushed = (variants[label] for label in list(variants)[1:])
    same = sum(1 for t in part.tasks if str(warm[t.id].trace) == str(flushed[t.id].trace))
    rows = []
    for label, r in timed.items():
        rows.append({"model": name, "method": label, "latency_ms": r["ms"], "max_rel_err": r["max_rel_err"],
                     "ok": r["ok"], "same_pick_warm_flushed": f"{same}/{len(part.tasks)}"})  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="+", default=["corpus-convnext"], help="paper-size samples (benchmarks/models.py)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--results", default="best_of_k")
    args = p.parse_args(argv)
    rows = [r for m in args.models for r in model_rows(m, args.k, args.rounds)]
    notes = [
        "TLM: the shipped checkpoint. best-of-k: per task the TLM's k candidates measured by the Measurer (each kernel "
        "alone, repeated; flushed: TVM's cache_flush_cpu_non_first_arg before every run), the fastest kept.",
        "Whole models timed in alternating rounds (3 runs each), medians; outputs checked against PyTorch.",
    ]
    md = write(args.results, {"rows": rows}, ["model", "method", "latency_ms", "max_rel_err", "ok",
               "same_pick_warm_flushed"], rows, f"Best-of-{args.k}: warm vs flushed kernel timing", notes)  # fmt: skip
    print(md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
