"""Output helpers shared by the commands: tables for people, one JSON document for scripts."""

from __future__ import annotations

import argparse
import json


def table(rows: list[dict], columns: list[str]) -> str:
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def fmt_flops(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if x >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x:.0f}"


def fmt_secs(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1e3:.3f} ms" if x >= 1e-3 else f"{x * 1e6:.1f} us"


def emit(args: argparse.Namespace, doc: dict, text: str) -> None:
    print(json.dumps(doc, indent=1, default=str) if args.json else text)


def load_partition(args: argparse.Namespace):
    """The model named by args.model, partitioned for args.target: (LoadedModel, Partition, Target)."""
    from tlm_core.frontend import load_model, parse_input_shapes
    from tlm_core.partition import partition
    from tlm_core.progress import step
    target = target_from_args(args)
    with step(f"loading {args.model}", args.quiet):
        model = load_model(args.model, allow_code=True, input_shapes=parse_input_shapes(args.input_shape))
    with step("partitioning", args.quiet):
        part = partition(model, target)
    return model, part, target


def add_hardware_options(sp: argparse.ArgumentParser) -> None:
    """--cpu / --cores: write for (and measure on) a smaller machine this host can run, e.g. AVX2-only on one core."""
    sp.add_argument("--cpu", help="an LLVM CPU this host can execute instead of its own (e.g. haswell: AVX2 only)")
    sp.add_argument("--cores", type=int, help="num-cores of the target (also sets TVM_NUM_THREADS when unset)")


def target_from_args(args: argparse.Namespace):
    """The target of args.target, with --cpu / --cores where the command has them (a CPU this host runs: its
    caches are this host's; --cores N: TVM's runtime uses N threads unless TVM_NUM_THREADS says otherwise)."""
    import os

    from tlm_core.target import host_target

    cpu, cores = getattr(args, "cpu", None), getattr(args, "cores", None)
    if cores is not None:
        os.environ.setdefault("TVM_NUM_THREADS", str(cores))
    return host_target(args.target, cpu, cores, runs_here=True)


def task_row(task, space=None) -> dict:
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


def build_spaces(args: argparse.Namespace, tasks, target) -> dict:
    """Task id -> Space, for the given tasks."""
    from tlm_core.progress import bar
    from tlm_core.space import SpaceBuilder

    builder = SpaceBuilder.for_target(target)
    # the first space in a process also pays TVM's start-up (tensor intrinsics, a few seconds: space.startup)
    return {t.id: builder.build(t) for t in bar(tasks, "design spaces", quiet=args.quiet)}
