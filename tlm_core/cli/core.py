"""Core commands: models, inspect, space, measure."""

from __future__ import annotations

import argparse
from pathlib import Path

from tlm_core.cli.common import build_spaces, emit, fmt_flops, fmt_secs, load_partition, table, task_row

# ---- commands ----------------------------------------------------------------------------------------------


def cmd_models(args: argparse.Namespace) -> None:
    from tlm_core.frontend.samples import catalog

    found = catalog()
    rows = [
        {
            "name": s.name,
            "default": s.name == found.default,
            "shape": s.shape,
            "description": s.description,
        }
        for s in found.samples.values()
    ]
    emit(
        args,
        {"models": rows, "default": found.default},
        table(rows, ["name", "shape", "description"]),
    )


def cmd_inspect(args: argparse.Namespace) -> None:
    model, part, target = load_partition(args)
    spaces = {} if args.no_space else build_spaces(args, part.tasks, target)
    tasks = [task_row(t, spaces.get(t.id)) for t in part.tasks]
    g = part.graph
    doc = {
        "model": model.name,
        "source": model.source,
        "target": str(target),
        "inputs": [{"name": i.name, "shape": list(i.shape), "dtype": i.dtype} for i in model.inputs],
        "subgraphs": g.number_of_nodes(),
        "edges": g.number_of_edges(),
        "calls": sum(t.weight for t in part.tasks),
        "total_flops": part.total_flops,
        "tasks": tasks,
        "notes": model.notes,
    }
    rows = [
        {
            **r,
            "ops": "+".join(r["ops"][:4]) + ("+..." if len(r["ops"]) > 4 else ""),
            "flops": fmt_flops(r["flops"]),
            "log10_space": r.get("log10_space", "-"),
        }
        for r in tasks
    ]
    head = (
        f"{model.name}: {doc['subgraphs']} subgraph calls, {len(tasks)} tasks, "
        f"{fmt_flops(doc['total_flops'])}FLOP per inference on {target.kind.name}\n"
    )
    notes = "".join(f"note: {n}\n" for n in model.notes)
    cols = ["id", "name", "weight", "flops", "sketches", "decisions", "log10_space"]
    emit(args, doc, notes + head + table(rows, cols if spaces else cols[:4]))


def _pick_tasks(part, task_arg: str | None):
    return [part.task(task_arg)] if task_arg else part.tasks


def cmd_space(args: argparse.Namespace) -> None:
    _, part, target = load_partition(args)
    tasks = _pick_tasks(part, args.task)
    spaces = build_spaces(args, tasks, target)
    docs, texts = [], []
    for task in tasks:
        space = spaces[task.id]
        doc = {**task_row(task, space), "space": space.to_dict(with_choices=args.choices)}
        if args.script:
            doc["script"] = task.mod.script()
        docs.append(doc)
        texts.append(_space_text(task, space, args))
    emit(args, {"tasks": docs}, "\n\n".join(texts))


def _space_text(task, space, args: argparse.Namespace) -> str:
    out = [f"task {task.id} {task.name} (weight {task.weight}, {fmt_flops(task.flops)}FLOP): "]
    out[0] += f"{len(space.sketches)} sketches, 10^{space.log10_size:.2f} programs"
    if args.script:
        out.append(task.mod.script())
    for sketch in space.sketches:
        out.append(f"  sketch {sketch.index}: {len(sketch.points)} decisions, 10^{sketch.log10_size:.2f} programs")
        for p in sketch.points:
            line = f"    [{p.index}] {p.title():<44} {len(p.choices):>7} legal   sampled {p.describe(p.sampled)}"
            out.append(line)
            if args.choices:
                out.append("        " + ", ".join(p.describe(c) for c in p.choices))
    return "\n".join(out)


def cmd_measure(args: argparse.Namespace) -> None:
    import numpy as np

    from tlm_core.measure import Measurer
    from tlm_core.program import random_program
    from tlm_core.progress import bar, step
    from tlm_core.records import RecordStore

    _, part, target = load_partition(args)
    task = part.task(args.task)
    space = build_spaces(args, [task], target)[task.id]
    rng = np.random.default_rng(args.seed)
    programs = [random_program(space, rng) for _ in bar(range(args.random), "sampling programs", quiet=args.quiet)]
    store = RecordStore(Path(args.records)) if args.records else None
    with (
        step(f"measuring {len(programs)} programs", args.quiet),
        Measurer(target, timeout_s=args.timeout, repeat=args.repeat, flush_cache=args.flush_cache) as m,
    ):
        results = m.measure(task, [p.mod for p in programs])
    if store is not None:
        for prog, res in zip(programs, results, strict=True):
            store.append(task, prog.trace, res, target)
    rows = []
    for i, (prog, res) in enumerate(zip(programs, results, strict=True)):
        rows.append(
            {
                "index": i,
                "sketch": prog.sketch_index,
                "decisions": prog.decisions,
                "ok": res.ok,
                "latency_s": res.latency,
                "gflops": res.gflops,
                "build_s": res.build_secs,
                "error": res.error,
            }
        )
    best = min((r for r in rows if r["ok"]), key=lambda r: r["latency_s"], default=None)
    doc = {"task": task_row(task, space), "programs": rows, "best": best, "records": args.records}
    text_rows = [
        {
            **r,
            "latency": fmt_secs(r["latency_s"]),
            "gflops": f"{r['gflops']:.2f}" if r["gflops"] else "-",
            "error": (r["error"] or "")[:60],
        }
        for r in rows
    ]
    text = table(text_rows, ["index", "sketch", "ok", "latency", "gflops", "error"])
    if best:
        text += f"\nbest: program {best['index']} {fmt_secs(best['latency_s'])}"
    if args.records:
        text += f"\nrecords: {args.records} ({len(store)} in all)"
    emit(args, doc, text)


def register(sub: argparse._SubParsersAction, add) -> None:
    add(sub, "models", cmd_models, "list the sample models", model=False, example="tlm models")
    sp = add(sub, "inspect", cmd_inspect, "subgraphs, tasks, weights, FLOPs and space sizes of a model",
             example="tlm inspect bert-tiny")  # fmt: skip
    sp.add_argument("--no-space", action="store_true", help="skip building design spaces (faster)")
    sp = add(sub, "space", cmd_space, "a task's design space: sketches, decision points, legal choices, size",
             example="tlm space tests/data/matmul_relu.py --choices")  # fmt: skip
    sp.add_argument("--task", help="task id, id prefix or fused function name (default: every task)")
    sp.add_argument("--choices", action="store_true", help="list every legal choice of every decision")
    sp.add_argument("--script", action="store_true", help="print the task's unscheduled TVMScript")
    sp = add(sub, "measure", cmd_measure, "build and time K random legal schedules of a task",
             example="tlm measure tests/data/matmul_relu.py --task main --random 8 --records out/records")  # fmt: skip
    sp.add_argument("--task", required=True, help="task id, id prefix or fused function name")
    sp.add_argument("--random", type=int, default=8, metavar="K", help="number of random programs (default 8)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--timeout", type=float, default=60.0, help="seconds per program before it counts as hung")
    sp.add_argument("--repeat", type=int, default=5, help="timed repeats per program; the median is reported")
    sp.add_argument("--flush-cache", action="store_true", help="flush the CPU caches before every repeat")
    sp.add_argument("--records", help="directory of a MetaSchedule JSONDatabase to append the results to")
