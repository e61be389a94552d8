"""Does `tlm adapt` help on hardware the TLM never learnt? Measured for real, before and after, side by side.

The target: an AVX2-only CPU this host still runs (LLVM -mcpu=haswell: 256-bit vectors instead of 512) on one
core (target num-cores 1, TVM_NUM_THREADS=1; run the script under `taskset -c 0`). No training data of the
shipped checkpoint was measured on it (its train_state.json lists the hardware it learnt).

On a fixed set of tasks (the heaviest few of tiny samples), in one run:
1. the shipped checkpoint's top-1 (greedy) program and the heuristic's Top-1 program per task;
2. `tlm adapt` on those tasks for --minutes (measure, fine-tune, write the local checkpoint), timed;
3. the checkpoint default_checkpoint_for(target) now resolves to (must be the adapted one), its top-1;
4. all of them, and the best program adapt measured (its ~100-program search), measured side by side per task
   (--rounds batches in rotated order, medians), and the same for a few control tasks of another model that
   adapt never measured (does adapting hurt the rest of the user's tasks on this hardware?).

    taskset -c 0 .venv/bin/python benchmarks/adapt.py --minutes 10     # ~20 min; results/adapt-haswell.*
    .venv/bin/python benchmarks/adapt.py --quick                         # one tiny task, seconds (tests)

Writes benchmarks/results/<name>.json and .md and <name>-rows.jsonl.gz (every measurement adapt made). The
adapted checkpoint (14 MB) goes to --out (default: the local one for this hardware), never into git.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402

QUICK_MODEL = str(Path(__file__).resolve().parent.parent / "tests" / "data" / "matmul_relu.py")


def choose_tasks(model_name: str, target, builder, n: int):
    """The n heaviest tasks (calls x FLOPs) of a model that have decisions, with their spaces."""
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition

    part = partition(load_model(model_name, allow_code=True), target)
    chosen = []
    for t in sorted(part.tasks, key=lambda t: -t.weight * t.flops):
        space = builder.build(t)
        if space.num_points or len(space.sketches) > 1:
            chosen.append((t, space))
        if len(chosen) >= n:
            break
    return chosen


def lscpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["gpt2-tiny", "resnet50-tiny"], help="models adapt learns on")
    ap.add_argument("--per-model", type=int, default=5, help="heaviest tasks per model")
    ap.add_argument("--control", nargs="*", default=["bert-tiny"], help="models whose tasks adapt never sees")
    ap.add_argument("--control-tasks", type=int, default=4)
    ap.add_argument("--cpu", default="haswell")
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--rounds", type=int, default=5, help="side-by-side rounds per task")
    ap.add_argument("--work", default="out/adapt-bench/work", help="adapt's work folder (resumed when it exists)")
    ap.add_argument("--out", help="adapted checkpoint folder (default: the local one for this hardware)")
    ap.add_argument("--name", help="results name (default: adapt-<cpu>[-quick])")
    ap.add_argument("--quick", action="store_true", help="one tiny task, a few seconds of budget (tests)")
    args = ap.parse_args(argv)
    if args.quick:
        args.models, args.per_model, args.control, args.minutes, args.steps, args.rounds = (
            [QUICK_MODEL], 1, [], 0.1, 3, 1)  # fmt: skip
    name = args.name or f"adapt-{args.cpu}" + ("-quick" if args.quick else "")
    os.environ.setdefault("TVM_NUM_THREADS", str(args.cores))

    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.generator import Generator
    from tlm_core.measure import Measurer
    from tlm_core.model import adapted_checkpoint, checkpoint_label, default_checkpoint, default_checkpoint_for
    from tlm_core.model import train_state as read_state
    from tlm_core.model.adapted import hardware_prompt
    from tlm_core.program import apply_decisions
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import cpu_count, host_target, target_to_dict
    from tlm_core.train.adapt import ROWS_FILE, AdaptSettings, adapt, best_programs
    from tlm_core.train.measured import decisions_of

    target = host_target("llvm", args.cpu, args.cores, runs_here=True)
    shipped_dir = default_checkpoint()
    trained_on = read_state(shipped_dir).get("hardware", [])
    here = hardware_prompt(target)
    if here in trained_on:
        print(f"warning: the shipped checkpoint was trained on {here}: not unseen hardware", file=sys.stderr)
    builder = SpaceBuilder.for_target(target)
    chosen = [c for m in args.models for c in choose_tasks(m, target, builder, args.per_model)]
    control = [c for m in args.control for c in choose_tasks(m, target, builder, args.control_tasks)]
    ids = {t.id for t, _ in chosen}
    control = [(t, s) for t, s in control if t.id not in ids]
    print(f"target {target}; {len(chosen)} adapt tasks, {len(control)} control tasks", file=sys.stderr)

    shipped = Generator.from_checkpoint(shipped_dir)
    before = {}
    for t, space in chosen + control:
        g = shipped.greedy(space)
        h = heuristic_program(space)
        before[t.id] = {"shipped": apply_decisions(space, g.sketch_index, g.decisions),
                        "heuristic": h.program or apply_decisions(space, h.sketch_index, h.decisions)}  # fmt: skip

    out = Path(args.out) if args.out else adapted_checkpoint(target)
    if args.quick and not args.out:
        out = Path(args.work).parent / "checkpoint"
    measured_before = len(_read_rows(Path(args.work) / ROWS_FILE))
    start = time.perf_counter()
    settings = AdaptSettings(minutes=args.minutes, tasks=len(chosen), steps=args.steps, lr=args.lr)
    summary = adapt([t for t, _ in chosen], target, args.work, out, shipped_dir, settings, args.models,
                    builder=builder, log=lambda m: print(m, file=sys.stderr, flush=True))  # fmt: skip
    adapt_minutes = (time.perf_counter() - start) / 60
    resumed = measured_before > 0  # adapt ran before on this work folder: its figures are that run's
    picked = out if (args.out or args.quick) else default_checkpoint_for(target)
    if not args.quick and not args.out and picked != out:
        raise SystemExit(f"default_checkpoint_for(target) resolved to {picked}, not the adapted {out}")
    adapted = Generator.from_checkpoint(picked)
    rows_all = [r for r in _read_rows(Path(args.work) / ROWS_FILE)]
    best = best_programs(rows_all)

    rows, doc_tasks = [], []
    with Measurer(target, repeat=5, min_repeat_ms=10, timeout_s=60.0) as m:
        for t, space in chosen + control:
            g = adapted.greedy(space)
            progs = {**before[t.id], "adapted": apply_decisions(space, g.sketch_index, g.decisions)}
            if t.id in best:
                b = best[t.id][0]
                progs["adapt-best"] = apply_decisions(space, b["sketch"], decisions_of(space, b))
            lat = m.side_by_side(t, {k: p.mod for k, p in progs.items()}, rounds=args.rounds)
            keys = {n: (p.sketch_index, p.decisions) for n, p in progs.items()}
            adapted_is = "+".join(n for n in ("adapt-best", "shipped", "heuristic")
                                  if keys.get(n) == keys["adapted"]) or "new"  # fmt: skip
            row = {"task": t.name[:44], "set": "control" if t.id not in ids else "adapt",
                   "shipped_us": report.us(lat["shipped"]), "adapted_us": report.us(lat["adapted"]),
                   "heuristic_us": report.us(lat["heuristic"]), "adapt_best_us": report.us(lat.get("adapt-best")),
                   "adapted_vs_shipped": _ratio(lat["shipped"], lat["adapted"]),
                   "adapted_vs_heuristic": _ratio(lat["heuristic"], lat["adapted"]),
                   "shipped_vs_heuristic": _ratio(lat["heuristic"], lat["shipped"]),
                   "best_vs_heuristic": _ratio(lat["heuristic"], lat.get("adapt-best")),
                   "adapted_is": adapted_is}  # fmt: skip
            rows.append(row)
            doc_tasks.append({**row, "id": t.id, "name": t.name, "flops": t.flops})
            print(row, file=sys.stderr, flush=True)

    def gm(key: str, which: str) -> float | None:
        return report.geomean([r[key] for r in rows if r["set"] == which and r[key]])

    results = report.results_dir()
    results.mkdir(parents=True, exist_ok=True)
    rows_out = results / f"{name}-rows.jsonl.gz"
    if not resumed:
        rows_out.write_bytes(gzip.compress((Path(args.work) / ROWS_FILE).read_bytes(), mtime=0))
    ratios = ("adapted_vs_shipped", "adapted_vs_heuristic", "shipped_vs_heuristic", "best_vs_heuristic")
    geo = {f"{w}_{k}": gm(k, w) for w in ("adapt", "control") for k in ratios}
    doc = {
        "target": target_to_dict(target),
        "hardware": here,
        "shipped_trained_on": trained_on,
        "host": {"lscpu": lscpu_model(), "affinity_cpus": cpu_count(), "TVM_NUM_THREADS": os.environ.get(
            "TVM_NUM_THREADS"), "loadavg": os.getloadavg()},  # fmt: skip
        "adapt": {k: v for k, v in summary.items() if k != "tasks"},
        "adapt_tasks": summary["tasks"],
        "adapt_wall_minutes": round(adapt_minutes, 2),
        "resumed": resumed,
        "checkpoint_used": checkpoint_label(picked, target),
        "rounds": args.rounds,
        "geomeans": geo,
        "tasks": doc_tasks,
        "rows_file": None if resumed else rows_out.name,
    }
    cols = ["task", "set", "shipped_us", "adapted_us", "heuristic_us", "adapt_best_us", "adapted_vs_shipped",
            "adapted_vs_heuristic", "shipped_vs_heuristic", "best_vs_heuristic", "adapted_is"]  # fmt: skip
    f = report._cell
    notes = [
        f"Target {here} (LLVM -mcpu={args.cpu}, num-cores {args.cores}, TVM_NUM_THREADS="
        f"{os.environ.get('TVM_NUM_THREADS')}, affinity {cpu_count()} CPU(s)); host {lscpu_model()}, LLVM "
        f"{report.machine()['cpu']}. The shipped checkpoint learnt only {len(trained_on)} other hardware prompts.",
        f"`tlm adapt` on the {len(chosen)} adapt tasks: budget {args.minutes:g} min, "
        + (f"resumed from {args.work} ({measured_before} measurements of an earlier run; adapt measured nothing "
           "new here and its figures are that run's), " if resumed else
           f"{adapt_minutes:.1f} min wall (start-up included), ")
        + f"{summary['measured']} programs measured ({summary['failed']} failed) in "
        f"{summary['measure_minutes']} min, fine-tuned {summary['train_steps']} steps (lr {args.lr:g}) in "
        f"{summary['train_minutes']} min on {summary['examples']} examples.",
        f"Geometric means, adapt tasks: adapted/shipped {f(geo['adapt_adapted_vs_shipped'])}x, adapted vs "
        f"heuristic Top-1 {f(geo['adapt_adapted_vs_heuristic'])}x (shipped {f(geo['adapt_shipped_vs_heuristic'])}x),"
        f" adapt's best measured vs heuristic {f(geo['adapt_best_vs_heuristic'])}x.",
        f"Control tasks (never measured by adapt): adapted/shipped {f(geo['control_adapted_vs_shipped'])}x, adapted "
        f"vs heuristic {f(geo['control_adapted_vs_heuristic'])}x (shipped {f(geo['control_shipped_vs_heuristic'])}x).",
        f"Latencies: medians of {args.rounds} side-by-side rounds (rotated order), each a 5-repeat median; ratios"
        " > 1 mean the first named is faster. adapt_best: the fastest program adapt measured (after re-measuring"
        " its top 3), a short search's result. The adapt tasks are the ones adapted on (the user's own model).",
        f"Checkpoint used after adapt: {checkpoint_label(picked, target)}"
        + ("." if resumed else f"; every measurement adapt made: {rows_out.name}."),
    ]
    md = report.write(name, doc, cols, rows, f"tlm adapt on unseen hardware: {args.cpu}, {args.cores} core(s)", notes)
    print(md.read_text())
    if args.quick:
        shutil.rmtree(out, ignore_errors=True)
    return 0


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _read_rows(path: Path):
    import json

    return [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []


if __name__ == "__main__":
    sys.exit(main())
