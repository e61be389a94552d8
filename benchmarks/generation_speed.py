"""Greedy generation time per subgraph (task) with the TLM, against the issue's target of <= 50 ms.

For every task with decisions of the chosen models: build its space (not timed), then time greedy generation
(median of --repeat runs, after one warm-up run per model). The time is split into the model's forward passes
and the rest (mostly TVM replaying the sketch to enumerate the legal choices; large convolutions pay ~100 ms
of compute-location probing there, which belongs to the space, not the model).

    .venv/bin/python benchmarks/generation_speed.py                     # shipped checkpoint, tiny samples
    .venv/bin/python benchmarks/generation_speed.py --models resnet50 --checkpoint DIR
    .venv/bin/python benchmarks/generation_speed.py --random-init       # an untrained small model

Writes benchmarks/results/generation_speed.json and .md.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
TINY = ["resnet50-tiny", "mobilenetv2-tiny", "efficientnet-b0-tiny", "bert-tiny", "gpt2-tiny", "llama-tiny"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=TINY)
    p.add_argument("--checkpoint", help="default: assets/tlm-small")
    p.add_argument("--random-init", action="store_true", help="an untrained model of --preset")
    p.add_argument("--preset", default="small")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="torch threads for feeds of fewer tokens")
    p.add_argument("--wide-threads", type=int, default=2, help="threads for feeds of >= 8 tokens (0: --threads)")
    p.add_argument("--out", default=str(RESULTS / "generation_speed"))
    args = p.parse_args()

    from tlm_core.frontend import load_model
    from tlm_core.generator import Generator
    from tlm_core.generator.lm import WIDE_FEED
    from tlm_core.model import default_checkpoint, new_model, num_parameters, preset
    from tlm_core.partition import partition
    from tlm_core.program import apply_decisions
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_cpu, host_target

    if args.random_init:
        gen, source = Generator(new_model(preset(args.preset))), f"untrained {args.preset}"
    else:
        path = Path(args.checkpoint) if args.checkpoint else default_checkpoint()
        gen, source = Generator.from_checkpoint(path), str(path)
    gen.threads, gen.wide_threads = args.threads, args.wide_threads or None
    target = host_target()
    builder = SpaceBuilder.for_target(target)
    rows = []
    for name in args.models:
        spaces = [builder.build(t) for t in partition(load_model(name), target).tasks]
        spaces = [s for s in spaces if any(sk.points for sk in s.sketches)]
        if spaces:
            gen.greedy(spaces[0])  # warm-up (allocations, caches)
        for space in spaces:
            runs = []
            for _ in range(args.repeat):
                g = gen.greedy(space)
                runs.append((g.seconds, g.model_seconds))
            apply_decisions(space, g.sketch_index, g.decisions)  # valid, or this raises
            total = statistics.median(r[0] for r in runs)
            model = statistics.median(r[1] for r in runs)
            rows.append({
                "model": name, "task": space.task.name, "task_id": space.task.id, "sketch": g.sketch_index,
                "decisions": len(g.decisions), "tokens": len(g.sentence.tokens),
                "choices": sum(1 for s in g.steps if s.num_legal > 1),
                "total_ms": round(total * 1e3, 2), "model_ms": round(model * 1e3, 2),
                "replay_ms": round((total - model) * 1e3, 2),
            })  # fmt: skip
            print(f"{name:22s} {space.task.name[:50]:50s} {rows[-1]['total_ms']:8.1f} ms "
                  f"(model {rows[-1]['model_ms']:.1f})", flush=True)  # fmt: skip
    totals = [r["total_ms"] for r in rows]
    models = [r["model_ms"] for r in rows]
    summary = {
        "checkpoint": source,
        "parameters": num_parameters(gen.model),
        "cpu": host_cpu(),
        "machine": platform.machine(),
        "threads": gen.threads,
        "wide_threads": gen.wide_threads or gen.threads,
        "tasks": len(rows),
        "median_total_ms": statistics.median(totals),
        "median_model_ms": statistics.median(models),
        "max_total_ms": max(totals),
        "mean_total_ms": statistics.mean(totals),
        "tasks_within_50ms": sum(t <= 50 for t in totals),
        "model_within_50ms": sum(t <= 50 for t in models),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1) + "\n")
    lines = [
        "# Greedy generation time per subgraph",
        "",
        f"Checkpoint `{source}` ({summary['parameters']:,} parameters), CPU {summary['cpu']}, "
        f"{summary['threads']} torch thread ({summary['wide_threads']} for feeds of >= {WIDE_FEED} tokens), "
        f"{summary['date']}. Median of {args.repeat} runs per task, "
        "tasks with decisions only. `model` = the model's forward passes; `replay` = the rest (TVM replaying "
        "the sketch to list the legal choices, masking, bookkeeping). Target: <= 50 ms per subgraph.",
        "",
        f"**{summary['tasks_within_50ms']}/{len(rows)} tasks within 50 ms in total; "
        f"{summary['model_within_50ms']}/{len(rows)} within 50 ms of model time.** Median total "
        f"{summary['median_total_ms']:.1f} ms, median model {summary['median_model_ms']:.1f} ms, "
        f"max total {summary['max_total_ms']:.1f} ms.",
        "",
        "| model | task | decisions | tokens | choices | total ms | model ms | replay ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [f"| {r['model']} | {r['task'][:48]} | {r['decisions']} | {r['tokens']} | {r['choices']} | "
              f"{r['total_ms']} | {r['model_ms']} | {r['replay_ms']} |" for r in rows]  # fmt: skip
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
