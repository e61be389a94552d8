"""One rule of the Roller-style heuristic, on against off: its Top-1 program with the default knobs and with one
knob changed, measured side by side on every task of the given models where the change gives another program.

A rule earns its place by what it does on real tasks, not by the one that suggested it. Per task both programs
are measured in one batch, --rounds rounds in rotated order (medians), each checked against the untuned task.
The task catalogue (models loaded and partitioned once) is cached in <work>/catalog.jsonl.

    .venv/bin/python benchmarks/heuristic_rule.py --knob whole_rows=false --models mobilenetv2 efficientnet-b0
    .venv/bin/python benchmarks/heuristic_rule.py --knob long_reduction=false rows_per_core=false --models llama-7b
    .venv/bin/python benchmarks/heuristic_rule.py --knob unroll=0 --models mobilenetv2-tiny --limit 1   # smoke
    .venv/bin/python benchmarks/heuristic_rule.py --hardware vector_bits=512 --models resnet50   # the machine's facts

Writes benchmarks/results/heuristic_rule.json and .md (NAME.json and .md with --results).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import geomean, ms, write  # noqa: E402


def with_settings(base, settings, option: str):
    """The frozen dataclass `base` with fields set from "name=value" settings (bools: true/false); `option`
    names the command-line option in errors."""
    fields = [f.name for f in dataclasses.fields(base)]
    changed = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in fields or not value:
            raise SystemExit(f"{option} wants name=value with name one of {', '.join(fields)}, got {setting!r}")
        default = getattr(base, name)
        if isinstance(default, bool):
            if value.lower() not in ("true", "false"):
                raise SystemExit(f"{option} {name} is true or false, got {value!r}")
            changed[name] = value.lower() == "true"
            continue
        try:
            changed[name] = type(default)(value)
        except ValueError:
            raise SystemExit(f"{option} {name}: {value!r} is not of type {type(default).__name__}") from None
    return dataclasses.replace(base, **changed)


def changed_knobs(*settings: str):
    """Knobs() with the fields set from "name=value" settings."""
    from tlm_core.baselines.heuristic import Knobs

    return with_settings(Knobs(), settings, "--knob")


def changed_hardware(target, *settings: str):
    """Hardware.from_target(target) with fields set from "name=value" settings (None: no settings)."""
    from tlm_core.baselines.hardware import Hardware

    return with_settings(Hardware.from_target(target), settings, "--hardware") if settings else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--knob", nargs="+", default=[], help="the changed knobs, name=value (heuristic.Knobs)")
    p.add_argument("--hardware", nargs="+", default=[],
                   help="changed machine facts, name=value (baselines.hardware.Hardware: vector_bits=512)")  # fmt: skip
    p.add_argument("--models", nargs="+", default=["mobilenetv2", "efficientnet-b0"], help="model families")
    p.add_argument("--max-gflop", type=float, default=0.5, help="skip bigger tasks (minutes per program here)")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--limit", type=int, help="stop after this many changed tasks")
    p.add_argument("--work", default="out/heuristic_rule", help="catalogue cache folder")
    p.add_argument("--results", default="heuristic_rule", help="results name")
    args = p.parse_args(argv)
    if not args.knob and not args.hardware:
        p.error("name a change: --knob and/or --hardware")
    from tlm_core.baselines.heuristic import Knobs, heuristic_program
    from tlm_core.dataset import Catalog, variants_for
    from tlm_core.measure import Measurer
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    knobs = changed_knobs(*args.knob)
    setting = " ".join(args.knob + args.hardware)
    target = host_target()
    hw = changed_hardware(target, *args.hardware)
    builder = SpaceBuilder.for_target(target)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    catalog = Catalog(Path(args.work) / "catalog.jsonl")
    variants = variants_for(args.models)
    catalog.ensure(variants, target, log=lambda m: print(m, flush=True))
    tasks = [t for t in catalog.for_variants([v.name for v in variants]) if t.flops <= args.max_gflop * 1e9]
    rows, seen = [], set()
    with Measurer(target) as m:
        for ct in sorted(tasks, key=lambda t: t.flops):
            if ct.id in seen or (args.limit and len(rows) >= args.limit):
                continue
            seen.add(ct.id)
            space = builder.build(ct.task())
            if not any(s.points for s in space.sketches):
                continue
            rules, changed = heuristic_program(space), heuristic_program(space, hw=hw, knobs=knobs)
            if (rules.sketch_index, rules.decisions) == (changed.sketch_index, changed.decisions):
                continue
            med = m.side_by_side(space.task, {"rules": rules.program.mod, "changed": changed.program.mod}, args.rounds)
            ok = med["rules"] is not None and med["changed"] is not None
            rows.append({
                "task": ct.name[:40], "id": ct.id, "mflop": round(ct.flops / 1e6, 1),
                "rules_ms": ms(med["rules"]), "changed_ms": ms(med["changed"]),
                "rules_speedup": round(med["changed"] / med["rules"], 3) if ok else None,
                "rules_decisions": str(rules.decisions), "changed_decisions": str(changed.decisions),
            })  # fmt: skip
            print(rows[-1], flush=True)
    ratios = [r["rules_speedup"] for r in rows if r["rules_speedup"]]
    mean = geomean(ratios)
    notes = [
        f"Models {', '.join(args.models)} (every variant), tasks of <= {args.max_gflop} GFLOP whose Top-1 program "
        f"changes with `{setting}` ({len(rows)} of {len(seen)} distinct tasks); both programs side by side, "
        f"{args.rounds} rounds in rotated order, medians in ms, checked against the untuned task.",
        f"rules_speedup = changed / rules latency, > 1 = the default rules are faster; geometric mean over "
        f"{len(ratios)} tasks: {mean:.2f}, the rules faster on {sum(r > 1 for r in ratios)}."
        if mean
        else "No task was measured successfully.",
    ]
    cols = ["task", "mflop", "rules_ms", "changed_ms", "rules_speedup"]
    data = {"knob": setting, "defaults": dataclasses.asdict(Knobs()), "models": args.models, "geomean": mean,
            "rows": rows}  # fmt: skip
    md = write(args.results, data, cols, rows, f"A heuristic rule on and off: `{setting}`", notes)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
