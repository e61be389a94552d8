"""Greedy generation time per subgraph (task) with the TLM, against the issue's target of <= 50 ms.

For every task with decisions of the chosen models: build its space (not timed), then time greedy generation
(median of --repeat runs, after one warm-up run per model). The time is split into the model's forward passes
and the rest (mostly TVM replaying the sketch to enumerate the legal choices; large convolutions pay ~100 ms
of compute-location probing there, which belongs to the space, not the model).

    .venv/bin/python benchmarks/generation_speed.py                     # shipped checkpoint, tiny samples
    .venv/bin/python benchmarks/generation_speed.py --models resnet50 --checkpoint DIR
    .venv/bin/python benchmarks/generation_speed.py --random-init       # an untrained small model
    .venv/bin/python benchmarks/generation_speed.py --cold 5 --models resnet50-tiny bert-tiny

Writes benchmarks/results/generation_speed.json and .md. --cold N times cold starts instead (-cold.json and
.md, see cold_start): N fresh processes per model and variant, alternating the variants.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RESULTS = Path(__file__).parent / "results"
VARIANTS = ["warmed", "padded", "exact"]  # --cold: see cold_child
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
    p.add_argument("--cold", type=int, metavar="N", help="time cold starts: N fresh processes per model and variant")
    p.add_argument("--variants", nargs="+", default=VARIANTS, choices=VARIANTS, help="--cold: see cold_child")
    p.add_argument("--tasks", type=int, default=6, help="--cold: the first N tasks with decisions, per model")
    p.add_argument("--child", help=argparse.SUPPRESS)  # one fresh process of --cold: this variant, JSON on stdout
    args = p.parse_args()
    if args.cold:
        return cold_start(args)
    if args.child:
        return print(json.dumps(cold_child(args)))

    from tlm_core.frontend import load_model
    from tlm_core.generator.lm import WIDE_FEED
    from tlm_core.model import num_parameters
    from tlm_core.partition import partition
    from tlm_core.program import apply_decisions
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_cpu, host_target

    gen, source = load_generator(args)
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


def load_generator(args, warm_up: bool = True):
    """The generator under --threads/--wide-threads; warmed up for them as from_checkpoint does, or not."""
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint, load_checkpoint, new_model, preset

    if args.random_init:
        model, source = new_model(preset(args.preset)), f"untrained {args.preset}"
    else:
        path = Path(args.checkpoint) if args.checkpoint else default_checkpoint()
        model, source = load_checkpoint(path), str(path)
    gen = Generator(model, args.threads, args.wide_threads or None)
    if warm_up:
        gen.warm_up()
    return gen, source


def cold_child(args) -> dict:
    """In a fresh process: greedy generation over the model's first --tasks tasks once (cold: the first
    generation meets every row count for the first time), then --repeat times more (warm). Wall and CPU
    seconds per generation; the spaces are built before, untimed. Variants: "warmed", the default path (row
    buckets, kernels built at load by Generator.warm_up, timed here alone); "padded" (row buckets, nothing
    done at load); "exact" (feeds at their exact length, nothing done at load: the path before row buckets)."""
    from tlm_core.frontend import load_model
    from tlm_core.generator.fast import FastGPT2
    from tlm_core.partition import partition
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    FastGPT2.pad_rows = args.child != "exact"
    gen, _ = load_generator(args, warm_up=False)
    wall, cpu = time.perf_counter(), time.process_time()
    if args.child == "warmed":
        gen.warm_up()
    warm_up = [time.perf_counter() - wall, time.process_time() - cpu]
    target = host_target()
    builder = SpaceBuilder.for_target(target)
    spaces = []
    for task in partition(load_model(args.models[0]), target).tasks:
        space = builder.build(task)
        if any(sk.points for sk in space.sketches):
            spaces.append(space)
        if len(spaces) == args.tasks:
            break

    def timed(space) -> list[float]:
        wall, cpu = time.perf_counter(), time.process_time()
        g = gen.greedy(space)
        return [time.perf_counter() - wall, time.process_time() - cpu, g.model_seconds, len(g.sentence.tokens)]

    passes = [[timed(s) for s in spaces] for _ in range(1 + args.repeat)]  # passes[0]: cold
    return {"warm_up_s": warm_up, "tasks": [s.task.name for s in spaces], "passes": passes}


def cold_start(args) -> None:
    """First generation in a fresh process against warm ones, per variant. Each fresh process measures its cold
    generations and then its warm ones right after (the ratios compare neighbours in time); variants alternate
    process by process, their order flipping every round, so a busy machine's load falls on all alike."""
    from benchmarks import report

    child = [sys.executable, __file__, "--tasks", str(args.tasks), "--repeat", str(args.repeat), "--threads",
             str(args.threads), "--wide-threads", str(args.wide_threads), "--preset", args.preset]  # fmt: skip
    child += ["--checkpoint", args.checkpoint] if args.checkpoint else []
    child += ["--random-init"] if args.random_init else []
    runs = []
    for r in range(args.cold):
        for name in args.models:
            for variant in args.variants if r % 2 == 0 else args.variants[::-1]:
                load = os.getloadavg()[0]
                cmd = [*child, "--child", variant, "--models", name]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
                runs.append({"round": r, "model": name, "variant": variant, "load_before": load,
                             "load_after": os.getloadavg()[0], **json.loads(out.splitlines()[-1])})  # fmt: skip
                print(f"round {r} {name} {variant}: {summarize([runs[-1]])}", flush=True)
    rows = [{"model": name, "variant": variant, **summarize([x for x in runs if (x["model"], x["variant"]) ==
             (name, variant)])} for name in args.models for variant in args.variants]  # fmt: skip
    cpu = cpu_model()
    doc = {"cpu_model": cpu, "rounds": args.cold, "tasks_per_model": args.tasks, "warm_repeats": args.repeat,
           "threads": args.threads, "wide_threads": args.wide_threads, "rows": rows, "runs": runs}  # fmt: skip
    columns = ["model", "variant", "warm_up_ms", "first_cold_ms", "first_warm_ms", "first_ratio", "first_cpu_ratio",
               "pass_cold_ms", "pass_warm_ms", "pass_ratio", "pass_cpu_ratio", "load_avg"]  # fmt: skip
    notes = [
        f"CPU: {cpu}. {args.cold} fresh processes per model and variant, variants alternating (order flipped "
        f"every round); torch threads {args.threads} ({args.wide_threads or args.threads} for feeds of >= 8 rows). "
        "Medians over the "
        "processes; load_avg: the 1-minute load average before each process (median).",
        "first: the first greedy generation in the process (its first task, after loading the checkpoint and "
        f"building the spaces, untimed) against the same task's warm generations (median of {args.repeat}, right "
        f"after in the same process). pass: all {args.tasks} first tasks with decisions, the first pass against "
        "the later ones. ratio: wall clock; cpu_ratio: the process's CPU time (less sensitive to other load).",
        "warmed: feeds padded to row buckets (padded_rows), oneDNN's kernels built at load (Generator.warm_up, "
        "which from_checkpoint calls; warm_up_ms: its time, before the spaces are built); padded: row buckets, "
        "nothing done at load; exact: feeds at their exact length, nothing done at load (the path before).",
    ]
    title = "Cold start: the first generation in a fresh process"
    md = report.write(f"{Path(args.out).name}-cold", doc, columns, rows, title, notes)
    print(md.read_text())


def summarize(runs: list[dict]) -> dict:
    """Medians over fresh processes of the cold/warm figures (ms, ratios) and of the load average."""

    def med(f) -> float:
        return statistics.median(f(x) for x in runs)

    def warm(x, i: int, col: int = 0) -> float:  # a task's warm time: median over the warm passes
        return statistics.median(p[i][col] for p in x["passes"][1:])

    def pass_warm(x, col: int = 0) -> float:
        return statistics.median(sum(t[col] for t in p) for p in x["passes"][1:])

    return {
        "warm_up_ms": round(med(lambda x: x["warm_up_s"][0]) * 1e3, 1),
        "first_cold_ms": round(med(lambda x: x["passes"][0][0][0]) * 1e3, 1),
        "first_warm_ms": round(med(lambda x: warm(x, 0)) * 1e3, 1),
        "first_ratio": round(med(lambda x: x["passes"][0][0][0] / warm(x, 0)), 2),
        "first_cpu_ratio": round(med(lambda x: x["passes"][0][0][1] / warm(x, 0, 1)), 2),
        "pass_cold_ms": round(med(lambda x: sum(t[0] for t in x["passes"][0])) * 1e3, 1),
        "pass_warm_ms": round(med(pass_warm) * 1e3, 1),
        "pass_ratio": round(med(lambda x: sum(t[0] for t in x["passes"][0]) / pass_warm(x)), 2),
        "pass_cpu_ratio": round(med(lambda x: sum(t[1] for t in x["passes"][0]) / pass_warm(x, 1)), 2),
        "load_avg": round(med(lambda x: x["load_before"]), 2),
    }


def cpu_model() -> str:
    """The CPU's marketing name (lscpu's "Model name")."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


if __name__ == "__main__":
    main()
