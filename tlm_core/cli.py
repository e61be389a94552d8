"""`tlm`: the command line over tlm_core. Every command prints a table, or one JSON document with --json.

Errors are one line on stderr and a non-zero exit; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

EXIT_ERROR = 2


def _table(rows: list[dict], columns: list[str]) -> str:
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def _flops(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x:.0f}"


def _secs(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1e3:.3f} ms" if x >= 1e-3 else f"{x * 1e6:.1f} us"


def _emit(args: argparse.Namespace, doc: dict, text: str) -> None:
    print(json.dumps(doc, indent=1, default=str) if args.json else text)


# ---- commands ----------------------------------------------------------------------------------------------


def cmd_models(args: argparse.Namespace) -> None:
    import sample_models

    rows = [
        {
            "name": s.name,
            "default": s.name == sample_models.DEFAULT,
            "shape": s.shape,
            "description": s.description,
        }
        for s in sample_models.SAMPLES.values()
    ]
    _emit(
        args,
        {"models": rows, "default": sample_models.DEFAULT},
        _table(rows, ["name", "shape", "description"]),
    )


def _load(args: argparse.Namespace):
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition
    from tlm_core.progress import step
    from tlm_core.target import host_target

    target = host_target(args.target)
    with step(f"loading {args.model}", args.quiet):
        model = load_model(args.model, allow_code=True)
    with step("partitioning", args.quiet):
        part = partition(model, target)
    return model, part, target


def _task_row(task, space=None) -> dict:
    row = {
        "id": task.id,
        "name": task.name,
        "ops": task.ops,
        "weight": task.weight,
        "flops": task.flops,
        "calls": task.calls,
    }
    if space is not None:
        row["sketches"] = len(space.sketches)
        row["decisions"] = max((len(s.points) for s in space.sketches), default=0)
        row["log10_space"] = round(space.log10_size, 3)
    return row


def _spaces(args: argparse.Namespace, tasks, target) -> dict:
    from tlm_core.progress import bar, step
    from tlm_core.space import SpaceBuilder

    with step("starting the space builder (first use in a process takes ~20 s)", args.quiet):
        builder = SpaceBuilder.for_target(target)
    return {t.id: builder.build(t) for t in bar(tasks, "design spaces", quiet=args.quiet)}


def cmd_inspect(args: argparse.Namespace) -> None:
    model, part, target = _load(args)
    spaces = {} if args.no_space else _spaces(args, part.tasks, target)
    tasks = [_task_row(t, spaces.get(t.id)) for t in part.tasks]
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
            "flops": _flops(r["flops"]),
            "log10_space": r.get("log10_space", "-"),
        }
        for r in tasks
    ]
    head = (
        f"{model.name}: {doc['subgraphs']} subgraph calls, {len(tasks)} tasks, "
        f"{_flops(doc['total_flops'])}FLOP per inference on {target.kind.name}\n"
    )
    notes = "".join(f"note: {n}\n" for n in model.notes)
    cols = ["id", "name", "weight", "flops", "sketches", "decisions", "log10_space"]
    _emit(args, doc, notes + head + _table(rows, cols if spaces else cols[:4]))


def _pick_tasks(part, task_arg: str | None):
    return [part.task(task_arg)] if task_arg else part.tasks


def cmd_space(args: argparse.Namespace) -> None:
    _, part, target = _load(args)
    tasks = _pick_tasks(part, args.task)
    spaces = _spaces(args, tasks, target)
    docs, texts = [], []
    for task in tasks:
        space = spaces[task.id]
        doc = {**_task_row(task, space), "space": space.to_dict(with_choices=args.choices)}
        if args.script:
            doc["script"] = task.mod.script()
        docs.append(doc)
        texts.append(_space_text(task, space, args))
    _emit(args, {"tasks": docs}, "\n\n".join(texts))


def _space_text(task, space, args: argparse.Namespace) -> str:
    out = [f"task {task.id} {task.name} (weight {task.weight}, {_flops(task.flops)}FLOP): "]
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

    _, part, target = _load(args)
    task = part.task(args.task)
    space = _spaces(args, [task], target)[task.id]
    rng = np.random.default_rng(args.seed)
    programs = [random_program(space, rng) for _ in bar(range(args.random), "sampling programs", quiet=args.quiet)]
    store = RecordStore(Path(args.records)) if args.records else None
    with (
        step(f"measuring {len(programs)} programs", args.quiet),
        Measurer(target, timeout_s=args.timeout) as m,
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
    doc = {"task": _task_row(task, space), "programs": rows, "best": best, "records": args.records}
    text_rows = [
        {
            **r,
            "latency": _secs(r["latency_s"]),
            "gflops": f"{r['gflops']:.2f}" if r["gflops"] else "-",
            "error": (r["error"] or "")[:60],
        }
        for r in rows
    ]
    text = _table(text_rows, ["index", "sketch", "ok", "latency", "gflops", "error"])
    if best:
        text += f"\nbest: program {best['index']} {_secs(best['latency_s'])}"
    if args.records:
        text += f"\nrecords: {args.records} ({len(store)} in all)"
    _emit(args, doc, text)


# ---- wiring ------------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tlm", description="Tensor Language Model compiler: inspect, space, measure")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, fn: Callable, help: str, model: bool = True) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help, description=help)
        if model:
            sp.add_argument("model", help="sample name (see `tlm models`) or a .pt2 / .onnx / TVMScript file")
            sp.add_argument("--target", default="llvm", choices=["llvm", "cuda", "auto"])
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--quiet", action="store_true", help="no progress on stderr")
        sp.set_defaults(fn=fn)
        return sp

    add("models", cmd_models, "list the sample models", model=False)
    sp = add("inspect", cmd_inspect, "subgraphs, tasks, weights, FLOPs and space sizes of a model")
    sp.add_argument("--no-space", action="store_true", help="skip building design spaces (faster)")
    sp = add("space", cmd_space, "a task's design space: sketches, decision points, legal choices, size")
    sp.add_argument("--task", help="task id, id prefix or fused function name (default: every task)")
    sp.add_argument("--choices", action="store_true", help="list every legal choice of every decision")
    sp.add_argument("--script", action="store_true", help="print the task's unscheduled TVMScript")
    sp = add("measure", cmd_measure, "build and time K random legal schedules of a task")
    sp.add_argument("--task", required=True, help="task id, id prefix or fused function name")
    sp.add_argument("--random", type=int, default=8, metavar="K", help="number of random programs (default 8)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--timeout", type=float, default=60.0, help="seconds per program before it counts as hung")
    sp.add_argument("--records", help="directory of a MetaSchedule JSONDatabase to append the results to")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.fn(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # one clear line, not a traceback; TLM_DEBUG=1 shows the traceback
        import os

        if os.environ.get("TLM_DEBUG"):
            raise
        msg = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        print(f"tlm {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
