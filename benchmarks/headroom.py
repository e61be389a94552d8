"""Search's headroom over the heuristic on the clean test split (issue 34 item 3): how much faster than the
heuristic's Top-1 program this design space allows on this CPU, found by long Ansor-style search.

Per task (--tasks of the test split, spread evenly, cheapest first): --trials trials of search on the task
alone (records kept in <work>/search-<trials>/), then search's best (the fastest of its 5 best records measured
again) and the heuristic's Top-1 measured side by side (--rounds rotated rounds, medians). Search's own best so
far after 64, 256, 512 and 1,024 trials says how the headroom grows with the budget.

    .venv/bin/python benchmarks/headroom.py                       # 10 test tasks, 2,000 trials each: hours
    .venv/bin/python benchmarks/headroom.py --limit 1             # one more task per run (resumable)
    .venv/bin/python benchmarks/headroom.py --quick               # one tiny task, 4 trials (CI)

Every finished task is appended to <work>/rows.jsonl, so a killed run loses only the task it was searching.
Writes benchmarks/results/headroom.json and .md (headroom-quick with --quick).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402
from benchmarks.evaluation import Evaluation  # noqa: E402
from benchmarks.tasks import held_out_tasks, test_split_tasks  # noqa: E402

CHECKPOINTS = (64, 256, 512, 1024)  # search's own best so far at these trial counts (and at the end)


def chosen_tasks(ev: Evaluation, n: int, quick: bool) -> list[tuple[str, object, object]]:
    """n test-split tasks spread evenly over its list (models in turn), cheapest first: each run finishes the
    quickest searches first. --quick: one task of a tiny validation model."""
    if quick:
        return held_out_tasks(ev.work, ["mobilenetv2-tiny"], 1, 0.3, ev.builder, ev.target)
    tasks = test_split_tasks(ev.builder, ev.target)
    spread = [tasks[i * len(tasks) // n] for i in range(min(n, len(tasks)))]
    return sorted(spread, key=lambda t: t[1].flops)


def headroom_row(ev: Evaluation, task, space, rounds: int) -> dict:
    """Search the task, then its best and the heuristic's Top-1 side by side."""
    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.compile.schedules import remeasured_best

    found = ev.search(task)
    mods = {"heuristic": heuristic_program(space).program.mod}
    best = remeasured_best(ev.search_database(task), task, ev.measurer, 5)
    if best.mod is not None:
        mods["search"] = best.mod
    together = ev.measurer.side_by_side(task, mods, rounds)
    return {"trials": found["trials"], "search_s": found["compile_s"], "search_own": found["best"],
            "best_at": found["best_at"], "heuristic": together["heuristic"], "search": together.get("search"),
            "rounds": rounds}  # fmt: skip


def write(name: str, rows: list[dict], cfg: dict) -> None:
    table, ratios = [], []
    for r in rows:
        gain = r["heuristic"] / r["search"] if r["heuristic"] and r["search"] else None
        if gain:
            ratios.append(gain)
        at = {n: r["best_at"].get(str(n), [None])[0] for n in CHECKPOINTS}
        table.append({"model": r["model"], "task": r["name"][:36], "gflop": r["flops"] / 1e9,
                      "heuristic_ms": report.ms(r["heuristic"]), "search_ms": report.ms(r["search"]),
                      "search_vs_heuristic": gain, "trials": r["trials"], "search_min": r["search_s"] / 60,
                      **{f"own_{n}_ms": report.ms(v) for n, v in at.items()},
                      "own_ms": report.ms(r["search_own"])})  # fmt: skip
    summary = {"config": cfg, "tasks": len(table), "geomean_search_vs_heuristic": report.geomean(ratios),
               "max_search_vs_heuristic": max(ratios, default=None)}  # fmt: skip
    g = summary["geomean_search_vs_heuristic"]
    notes = [
        f"{cfg['trials']} trials of Ansor-style evolutionary search (MetaSchedule) per task, on the task alone; "
        f"search_ms and heuristic_ms: search's best (the fastest of its 5 best records measured again) and the "
        f"heuristic's Top-1 measured side by side, {cfg['rounds']} rotated rounds, medians, numerically checked.",
        f"search_vs_heuristic > 1: search's program is faster. Geometric mean over {len(ratios)} tasks: "
        + (f"{g:.2f}x" if g else "-")
        + ". own_N_ms: search's own best after N trials, own_ms after all (a minimum over its measurements, not "
        "side by side). trials below the budget: the search ran out of new programs to measure (a small space).",
        "Tasks: the clean test split's (tlm_core.dataset.splits), spread evenly, cheapest first; a run resumes "
        "from <work>/rows.jsonl.",
    ]
    columns = ["model", "task", "gflop", "heuristic_ms", "search_ms", "search_vs_heuristic", "trials", "search_min",
               *(f"own_{n}_ms" for n in CHECKPOINTS), "own_ms"]  # fmt: skip
    report.write(name, {"summary": summary, "tasks": table, "rows": rows}, columns, table,
                 "Search's headroom over the heuristic, clean test split", notes)  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=10, help="test-split tasks, spread evenly")
    p.add_argument("--trials", type=int, default=2000)
    p.add_argument("--limit", type=int, help="search at most this many new tasks in this run")
    p.add_argument("--rounds", type=int, default=5, help="side-by-side rounds")
    p.add_argument("--work", default="out/headroom")
    p.add_argument("--results", help="results name (default headroom, headroom-quick with --quick)")
    p.add_argument("--quick", action="store_true", help="one tiny task, 4 trials (CI)")
    args = p.parse_args()
    trials = 4 if args.quick else args.trials
    cfg = {"tasks": 1 if args.quick else args.tasks, "trials": trials, "rounds": args.rounds}
    name = args.results or ("headroom-quick" if args.quick else "headroom")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    ev = Evaluation(work, k=1, search_trials=trials)
    done = {r["task"]: r for r in ev.rows if r["trials_asked"] == trials}
    new = 0
    try:
        for model, task, space in chosen_tasks(ev, cfg["tasks"], args.quick):
            if task.id in done or (args.limit is not None and new >= args.limit):
                continue
            print(f"{model} {task.name[:40]}: {trials} trials", flush=True)
            row = {"model": model, "task": task.id, "name": task.name, "flops": task.flops, "trials_asked": trials,
                   **headroom_row(ev, task, space, args.rounds)}  # fmt: skip
            ev.add(row)
            done[task.id], new = row, new + 1
    finally:
        ev.measurer.close()
    write(name, list(done.values()), cfg)
    print(report.results_dir() / f"{name}.md")


if __name__ == "__main__":
    main()
