"""Which of search's decisions make its program faster than the heuristic's? A decision-by-decision ablation.

For each task of an evaluation's work folder (its search records and heuristic rows, benchmarks/evaluation.py),
the heuristic's Top-1 program and search's best record (matched back to decisions in the same space) differ in
a few decisions. Each differing decision is put alone into the heuristic's program ("h+dI=value") and the
heuristic's value alone into search's ("s-dI=value"); all of them, the two programs and the heuristic's
decisions on search's sketch ("h+sketch") are measured side by side (--rounds rounds, rotated order, medians,
each checked against the untuned task). A decision that makes the heuristic's program fast by itself is a rule
to learn (benchmarks/heuristic_rule.py then measures the rule on every task it changes).

    .venv/bin/python benchmarks/search_ablation.py --work out/eval-s19 --tasks fused_conv2d6 fused_conv2d20

Writes benchmarks/results/search_ablation.json and .md (NAME.json and .md with --results).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import ms, write  # noqa: E402


def variants(heuristic: tuple[int, list], search: tuple[int, list]) -> dict[str, tuple[int, list]]:
    """The two programs, the heuristic's decisions on search's sketch, and each single-decision swap."""
    hs, hd = heuristic
    ss, sd = search
    out = {"heuristic": (hs, hd), "search": (ss, sd), "h+sketch": (ss, hd)}
    for i, (a, b) in enumerate(zip(hd, sd, strict=True)):
        if a != b:
            out[f"h+d{i}={b}"] = (hs, [*hd[:i], b, *hd[i + 1 :]])
            out[f"s-d{i}={a}"] = (ss, [*sd[:i], a, *sd[i + 1 :]])
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", required=True, help="an evaluation's work folder (rows.jsonl, catalog, search-N/)")
    p.add_argument("--trials", type=int, default=512, help="which search budget's records (search-N/)")
    p.add_argument("--tasks", nargs="+", help="task name prefixes (default: every evaluated task)")
    p.add_argument("--models", nargs="+", help="default: the validation models (tlm_core.dataset.splits)")
    p.add_argument("--per-model", type=int, default=2, help="the evaluation's --tasks")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--results", default="search_ablation", help="results name")
    args = p.parse_args(argv)
    from benchmarks.tasks import held_out_tasks
    from tlm_core.compare.method import match_trace
    from tlm_core.compile.schedules import top_records
    from tlm_core.dataset.splits import VALIDATION_MODELS
    from tlm_core.measure import Measurer
    from tlm_core.program import InvalidDecisions, apply_decisions
    from tlm_core.records import RecordStore
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    work = Path(args.work)
    target = host_target()
    builder = SpaceBuilder.for_target(target)
    tasks = held_out_tasks(work, args.models or list(VALIDATION_MODELS), args.per_model, 0.3, builder, target)
    rows_in = [json.loads(line) for line in (work / "rows.jsonl").read_text().splitlines() if line]
    db = RecordStore(work / f"search-{args.trials}").tvm_database()
    rows = []
    with Measurer(target) as m:
        for _, task, space in tasks:
            if args.tasks and not any(task.name.startswith(t) for t in args.tasks):
                continue
            heur = next((r for r in rows_in if r["task"] == task.id and r["method"] == "heuristic"), None)
            matched = [x for x in (match_trace(space, r.trace) for r in top_records(db, task, 5)) if x]
            if heur is None or not matched:
                print(f"{task.name}: no heuristic row or no matched search record in {work}", flush=True)
                continue
            sketch, decisions = heur["program"]
            heuristic = (sketch, [tuple(d) if isinstance(d, list) else d for d in decisions])
            mods = {}
            for name, (s, d) in variants(heuristic, matched[0]).items():
                try:
                    mods[name] = apply_decisions(space, s, d).mod
                except InvalidDecisions as e:  # a swap can break a dependent decision (a compute location)
                    print(f"{task.name} {name}: {e}", flush=True)
            med = m.side_by_side(task, mods, args.rounds)
            base = med["heuristic"]
            for name, v in sorted(med.items(), key=lambda x: x[1] or float("inf")):
                rows.append({"task": task.name[:32], "variant": name, "ms": ms(v),
                             "vs_heuristic": round(base / v, 3) if base and v else None})  # fmt: skip
                print(rows[-1], flush=True)
    notes = [
        f"Tasks of `{args.work}` (its heuristic rows and search-{args.trials} records); per task every variant "
        f"side by side, {args.rounds} rounds in rotated order, medians in ms, each checked against the untuned "
        "task; vs_heuristic > 1 = faster than the heuristic's program.",
        "h+dI=v: the heuristic's program with search's decision I; s-dI=v: search's with the heuristic's "
        "decision I; h+sketch: the heuristic's decisions on search's sketch.",
    ]
    md = write(args.results, {"work": args.work, "rows": rows}, ["task", "variant", "ms", "vs_heuristic"], rows,
               "Search's decisions, one at a time, against the heuristic's", notes)  # fmt: skip
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
