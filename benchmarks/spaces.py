"""The design spaces of the sample models: every task of every model must yield a non-empty space.

For each model (one subprocess each, so peak memory is per model): load, partition, build every task's
space; report tasks, calls, tasks with decisions, space sizes and the time of each step:
- time to graph: load + partition, what the Model page waits for before it draws the partitioned graph;
- start-up: the Space Builder's one-off start-up in a process (TVM's tensor intrinsics), paid once;
- per space: the median and the largest time of one task's space after the start-up (what a page waits
  for, per task: spaces are built lazily);
- spaces: every space of the model, start-up included.

    .venv/bin/python benchmarks/spaces.py            # the six paper-size models (~15 min, ~6 GB peak)
    .venv/bin/python benchmarks/spaces.py --quick    # their tiny variants
    .venv/bin/python benchmarks/spaces.py --models resnet50-tiny tests/data/matmul_relu.py  # samples or files

Writes benchmarks/results/spaces[-quick].json and .md (--models: spaces-selected.json and .md).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import machine  # noqa: E402

RESULTS = Path(__file__).parent / "results"
PAPER = ["resnet50", "mobilenetv2", "efficientnet-b0", "bert", "gpt2", "llama-7b"]


def one(name: str) -> dict:
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    t0 = time.perf_counter()
    model = load_model(name, allow_code=True)  # a TVMScript file given with --models is the user's own
    t1 = time.perf_counter()
    part = partition(model, target)
    t2 = time.perf_counter()
    builder = SpaceBuilder.for_target(target)  # the one-off start-up: TVM's tensor intrinsics
    t3 = time.perf_counter()
    tasks = []
    for task in part.tasks:
        start = time.perf_counter()
        space = builder.build(task)
        tasks.append(
            {
                "id": task.id,
                "name": task.name,
                "weight": task.weight,
                "sketches": len(space.sketches),
                "decisions": max(len(s.points) for s in space.sketches),
                "log10_size": space.log10_size,
                "seconds": time.perf_counter() - start,
            }
        )
    t4 = time.perf_counter()
    per_space = [t["seconds"] for t in tasks]
    return {
        "model": name,
        "tasks": len(tasks),
        "calls": sum(t["weight"] for t in tasks),
        "tasks_with_decisions": sum(t["decisions"] > 0 for t in tasks),
        "empty_spaces": sum(t["sketches"] == 0 for t in tasks),
        "max_log10_size": max(t["log10_size"] for t in tasks),
        "median_log10_size_with_decisions": statistics.median(
            [t["log10_size"] for t in tasks if t["decisions"]] or [0]
        ),
        "load_s": t1 - t0,
        "partition_s": t2 - t1,
        "graph_s": t2 - t0,
        "startup_s": t3 - t2,
        "space_median_s": statistics.median(per_space),
        "space_max_s": max(per_space),
        "spaces_s": t4 - t2,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "per_task": tasks,
    }


def table(rows: list[dict]) -> str:
    cols = ["model", "tasks", "calls", "tasks with decisions", "empty spaces", "largest space", "load", "partition"]
    cols += ["time to graph", "start-up", "per space (median, max)", "spaces", "peak memory"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['tasks']} | {r['calls']} | {r['tasks_with_decisions']} | {r['empty_spaces']} | "
            f"10^{r['max_log10_size']:.1f} | {r['load_s']:.1f} s | {r['partition_s']:.1f} s | "
            f"{r['graph_s']:.1f} s | {r['startup_s']:.1f} s | "
            f"{r['space_median_s'] * 1e3:.0f} ms, {r['space_max_s'] * 1e3:.0f} ms | "
            f"{r['spaces_s']:.1f} s | {r['peak_rss_gb']:.1f} GB |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tiny variants instead of the paper sizes")
    parser.add_argument("--models", nargs="*", help="these samples instead")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one model, print its JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    names = args.models or ([f"{n}-tiny" if n != "llama-7b" else "llama-tiny" for n in PAPER] if args.quick else PAPER)
    rows = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        out = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    stem = "spaces-selected" if args.models else "spaces-quick" if args.quick else "spaces"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1))
    command = "python benchmarks/spaces.py" + (" --quick" if args.quick else "")
    command += f" --models {' '.join(args.models)}" if args.models else ""
    when, host = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine()
    (RESULTS / f"{stem}.md").write_text(
        f"{when}, {host['cpu']}, {host['cores']} cores. Produced by `{command}`.\n\n{table(rows)}\n")
    print(table(rows))
    if any(r["empty_spaces"] for r in rows):
        raise SystemExit("some task has an empty design space")


if __name__ == "__main__":
    main()
