"""Sample models end to end, per method, against PyTorch eager on the same inputs.

For each model: PyTorch's torch.compile, TVM default (untuned), Roller-style heuristic (Top-1 per task), the TLM
(top-1 per task) and, with a budget, Ansor-style evolutionary search (MetaSchedule implementation): end-to-end
latency (median of repeats, Relax VM), total compile time (schedule spaces, generation or search, tvm.compile),
max error vs PyTorch.

    .venv/bin/python benchmarks/models.py            # every tiny sample, search 20 trials per task
    .venv/bin/python benchmarks/models.py --quick    # bert-tiny and resnet50-tiny, no search

Writes benchmarks/results/models[-quick].json and .md (NAME.json and .md with --results NAME).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import ms, write  # noqa: E402

QUICK = ["bert-tiny", "resnet50-tiny"]


def eager_ms(name: str, repeat: int) -> float:
    """PyTorch eager's median latency, timed in a fresh process: TVM's thread pool, once started, keeps slowing
    PyTorch's threads in the process that ran it."""
    out = subprocess.run(
        [sys.executable, __file__, "--eager", name, "--repeat", str(repeat)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["pytorch_ms"]


def print_eager_ms(name: str, repeat: int) -> None:
    from tlm_core.compile import pytorch_latencies
    from tlm_core.frontend import load_model

    model = load_model(name)
    print(json.dumps({"pytorch_ms": ms(statistics.median(pytorch_latencies(model, model.random_inputs(0), repeat)))}))


def bench(
    name: str, trials_per_task: int, builder, target, repeat: int, only: list[str] | None = None, generator=None
) -> dict:
    from tlm_core import compile as C
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition

    row: dict = {"model": name, "pytorch_ms": eager_ms(name, repeat)}
    model = load_model(name)
    part = partition(model, target)
    row["tasks"] = len(part.tasks)
    methods = ["default", "heuristic"] + ["tlm"] * (generator is not None) + ["search"] * (trials_per_task > 0)
    methods = [m for m in methods if not only or m in only]
    ok = True
    if not only or "torch_compile" in only:
        # before TVM runs: PyTorch's threads degrade while TVM's thread pool still holds the cores
        tc = C.torch_compile_run(model, repeat=repeat)
        row["torch_compile_ms"], row["torch_compile_compile_s"] = ms(tc.latency), tc.compile_s
        row["torch_compile_max_err"], ok = tc.max_abs_error, tc.ok
        print(f"  torch.compile: {row['torch_compile_ms']:.3f} ms, ok {tc.ok}", file=sys.stderr, flush=True)
    if {"heuristic", "tlm"} & set(methods):
        builder.build(part.tasks[0])  # TVM's one-off start-up (tens of seconds) is charged to no method
    for method in methods:
        # the library's one path for a whole model, as `tlm compile` takes it (search: a budget per task)
        # PyTorch eager is timed in its own process (eager_ms): here it only checks the output
        run = C.compile_and_run(model, part, target, method, space_of=builder.build, generator=generator,
                                trials=trials_per_task * len(part.tasks), repeat=repeat,
                                with_pytorch=False)  # fmt: skip
        report = run.report
        row[f"{method}_ms"] = ms(report.latency)
        row[f"{method}_compile_s"] = run.compile_s
        row[f"{method}_max_err"] = report.max_abs_error
        ok = ok and report.ok
        print(f"  {method}: {row[f'{method}_ms']:.3f} ms, ok {report.ok}", file=sys.stderr, flush=True)
    for method in methods + ["torch_compile"] * ("torch_compile_ms" in row):
        row[f"{method}_vs_pytorch"] = row["pytorch_ms"] / row[f"{method}_ms"]  # > 1: faster than PyTorch
    row["ok"] = ok
    return row


def main(argv: list[str] | None = None) -> int:
    import sample_models

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="two tiny models, no search (CI smoke test)")
    p.add_argument("--results", help="results name (another machine's run beside the committed one)")
    p.add_argument("--trials", type=int, default=None, help="search trials per task (0: no search)")
    p.add_argument("--models", nargs="*", help="sample names (default: every tiny sample)")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--methods", nargs="*", help="torch_compile, default, heuristic, tlm, search (default: all)")
    p.add_argument("--eager", metavar="MODEL", help=argparse.SUPPRESS)  # eager_ms's fresh process
    args = p.parse_args(argv)
    if args.eager:
        print_eager_ms(args.eager, args.repeat)
        return 0
    trials = args.trials if args.trials is not None else (0 if args.quick else 20)
    names = args.models or (QUICK if args.quick else [n for n, s in sample_models.SAMPLES.items() if s.tiny])

    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    use_tlm = not args.methods or "tlm" in args.methods
    generator = Generator.from_checkpoint(default_checkpoint()) if use_tlm else None
    rows = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(bench(name, trials, builder, target, args.repeat, args.methods, generator))
    methods = ["torch_compile", "default", "heuristic", "tlm"] + (["search"] if trials else [])
    methods = [m for m in methods if not args.methods or m in args.methods]
    cols = ["model", "tasks", "pytorch_ms"] + [f"{m}_ms" for m in methods]
    cols += [f"{m}_vs_pytorch" for m in methods] + [f"{m}_compile_s" for m in methods] + ["ok"]
    notes = [
        "*_ms: end-to-end latency, median of the repeats (Relax VM; PyTorch eager on the same inputs, timed in a"
        " fresh process: TVM's thread pool slows PyTorch in the process that ran it).",
        "torch_compile: PyTorch's torch.compile (Inductor, default mode), checked against eager; its compile_s is"
        " the first call (Inductor generating and building its C++ kernels).",
        "*_vs_pytorch: PyTorch latency / method latency (> 1 is faster than PyTorch).",
        "*_compile_s: schedule spaces and generation (or search, with its measurements) plus tvm.compile.",
        "tlm: the shipped TLM's greedy schedule for every task (top-1, no measurement).",
        "ok: every method's output matched PyTorch eager.",
    ]
    if trials:
        notes.append(f"search: Ansor-style evolutionary search, MetaSchedule implementation, {trials} trials per task.")
    name = args.results or ("models-quick" if args.quick else "models")
    md = write(name, {"trials_per_task": trials, "rows": rows}, cols, rows, "Models: end to end per method", notes)
    print(md.read_text())
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
