"""`tlm compare MODEL`: every method on every task (or one), measured on this machine; with --side-by-side N,
each task's programs are then measured again together, N rounds in rotated order (side_by_side_s: the median).

--json contract, per (task, method): {"id", "name", "method", "latency_s", "compile_s", "trials", ...}; plus this
machine's roofline ceilings and, per method, the model's kernel time (latency x calls summed over tasks).
"""

from __future__ import annotations

import argparse
import sys

from tlm_core.cli.common import build_spaces, emit, fmt_secs, load_partition, table


def cmd_compare(args: argparse.Namespace) -> None:
    from tlm_core.cli.tlm import load_generator, task_notes
    from tlm_core.compare import (
        Results,
        machine_ceilings,
        read_database,
        roofline_points,
        run_method,
        side_by_side,
        task_table,
    )
    from tlm_core.measure import Measurer
    from tlm_core.progress import bar

    user = read_database(args.db) if args.db else None
    for line in user.problems if user is not None else []:  # left out of the database, with why
        print(f"{args.db}: left out: {line}", file=sys.stderr)
    model, part, target = load_partition(args)
    generator, checkpoint = load_generator(args, target)  # tlm adapt's checkpoint for this hardware, if any
    tasks = [part.task(args.task)] if args.task else part.tasks
    spaces = build_spaces(args, tasks, target)
    unseen = task_notes(generator, [spaces[t.id] for t in tasks], args)  # outside what the TLM learnt
    methods = ["default", "heuristic", "tlm", "tlm-best-of-k"]
    methods += ["heuristic-top-k"] if args.top > 1 else []
    methods += ["search"] if args.trials > 0 else []
    methods += ["database"] if user is not None else []
    results = Results()
    with Measurer(target, timeout_s=args.timeout) as m:
        for task in bar(tasks, "comparing", quiet=args.quiet):
            for method in methods:
                results.add(run_method(method, spaces[task.id], m, generator, k=args.candidates, top_k=args.top,
                                       trials=args.trials, database=user,
                                       search_seconds=args.search_minutes and args.search_minutes * 60))  # fmt: skip
            if args.side_by_side:
                side_by_side(spaces[task.id], results.of_task(task.id), m, args.side_by_side)
    ceilings = machine_ceilings()
    rows = []
    for task in tasks:
        points = {p.method: p for p in roofline_points(task, results.of_task(task.id), ceilings)}
        for r in results.of_task(task.id):
            row = {"name": task.name, **r.to_dict()}
            if r.method in points:
                row["intensity"] = points[r.method].intensity
                row["roof_gflops"] = points[r.method].roof_gflops
            rows.append(row)
    _, totals = task_table(tasks, results)
    pytorch = None
    if not args.task and model.reference is not None:
        import statistics

        from tlm_core.compile import pytorch_latencies

        pytorch = statistics.median(pytorch_latencies(model, model.random_inputs(0)))
    doc = {
        "model": model.name,
        "target": str(target),
        "checkpoint": checkpoint,
        "methods": methods,
        "tasks": rows,
        "kernel_time_s": totals,  # per method: sum of latency x calls, when every task has a result
        "pytorch_eager_s": pytorch,
        "roofline": ceilings.to_dict(),
        "database": None if user is None else user.summary(tasks),
        "task_notes": unseen,
    }
    shown = [
        {
            "id": r["id"],
            "name": r["name"][:32],
            "method": r["method"],
            "latency": fmt_secs(r["latency_s"]) if r["ok"] else f"failed: {(r['error'] or '')[:40]}",
            "side by side": fmt_secs(r["side_by_side_s"]) if r["side_by_side_s"] else "-",
            "GFLOP/s": f"{r['gflops']:.2f}" if r["gflops"] else "-",
            "compile": f"{r['compile_s']:.2f} s",
            "trials": r["trials"],
        }
        for r in rows
    ]
    columns = ["id", "name", "method", "latency"] + ["side by side"] * bool(args.side_by_side)
    text = table(shown, columns + ["GFLOP/s", "compile", "trials"])
    text += "\nkernel time per inference (latency x calls): " + ", ".join(
        f"{m} {fmt_secs(v)}" for m, v in totals.items() if v is not None
    )
    if pytorch is not None:
        text += f"; PyTorch eager end to end {fmt_secs(pytorch)}"
    failed = [f"{r['id']} {r['method']}: {r['error']}" for r in rows if not r["ok"]]
    text += "".join(f"\nfailed: {line}" for line in failed)  # the table cuts the reasons short
    text += f"\nroofline: {ceilings.peak_gflops:.1f} GFLOP/s (numpy GEMM), {ceilings.bandwidth_gbs:.1f} GB/s (copy)"
    emit(args, doc, text)


def register(sub: argparse._SubParsersAction, add) -> None:
    sp = add(sub, "compare", cmd_compare, "every method on every task (or one), measured here (and again together)",
             example="tlm compare tests/data/matmul_relu.py --trials 64 --candidates 10 --side-by-side 3")  # fmt: skip
    sp.add_argument("--task", help="one task (id, id prefix or name); default: all")
    sp.add_argument("--db", help="a MetaSchedule JSONDatabase directory of your own to compare against")
    sp.add_argument("--trials", type=int, default=0, help="Ansor-style search trials per task (0: no search)")
    sp.add_argument("--candidates", type=int, default=4, metavar="K", help="TLM best-of-K (beam search, measured)")
    sp.add_argument("--top", type=int, default=0, help="also the heuristic's measured Top-k (k > 1)")
    sp.add_argument("--checkpoint", help="TLM checkpoint folder (default: the shipped assets/tlm-small)")
    sp.add_argument("--timeout", type=float, default=30.0, help="seconds per program (build, run, check, time)")
    sp.add_argument("--search-minutes", type=float, metavar="M",
                    help="stop each task's search after M minutes with the trials so far (MetaSchedule evolves "
                    "its population for ~1 minute per 16 trials here, longer for 3-D convolutions)")  # fmt: skip
    sp.add_argument("--side-by-side", type=int, default=0, metavar="ROUNDS",
                    help="then measure each task's programs again together, ROUNDS rounds in rotated order "
                    "(medians: a fair comparison on a noisy machine; 0: no)")  # fmt: skip
    sp.set_defaults(random_init=False, preset="small", seed=0)
