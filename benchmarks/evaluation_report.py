"""The evaluation's report (benchmarks/evaluation.py): its rows as one table per task, the summary ratios, and
the notes that say how each figure was measured; written with benchmarks/report.py."""

from __future__ import annotations

import os
import statistics

from benchmarks import report

# summary ratio -> (numerator column, denominator column) of the table: > 1 = the denominator's method is faster
RATIOS = [
    ("top1_vs_search", "search_ms", "tlm_top1_ms"),
    ("best10_vs_search", "search_ms", "tlm_best10_ms"),
    ("top1_vs_random", "random_top1_ms", "tlm_top1_ms"),
    ("best10_vs_random", "random_best10_ms", "tlm_best10_ms"),
    ("top1_vs_heuristic", "heuristic_ms", "tlm_top1_ms"),
    ("heuristic_vs_search", "search_ms", "heuristic_ms"),
    ("cmp_top1_vs_search", "search_ms", "cmp_top1_ms"),
    ("cmp_best10_vs_search", "search_ms", "cmp_best10_ms"),
    ("compile_speedup", "search_s", "tlm_compile_s"),
    ("together_top1_vs_search", "together_search_ms", "together_top1_ms"),
    ("together_best10_vs_search", "together_search_ms", "together_best_ms"),
    ("together_top1_vs_heuristic", "together_heuristic_ms", "together_top1_ms"),
    ("together_heuristic_vs_search", "together_search_ms", "together_heuristic_ms"),
    ("together_cmp_top1_vs_search", "together_search_ms", "together_cmp_top1_ms"),
    ("together_cmp_best10_vs_search", "together_search_ms", "together_cmp_best_ms"),
]


def write_results(name: str, evaluated: list[dict], tasks, models: dict, cfg: dict, keys: dict[str, str]) -> None:
    """benchmarks/results/<name>.json and .md of an evaluation's rows (`evaluated`): per task every method's
    latencies, the geometric means of RATIOS, and notes on how each figure was measured. keys: role -> method key."""
    table, ratios = [], {}
    for model, task, _ in tasks:
        rows = {role: r for r in evaluated for role, key in keys.items()
                if r["task"] == task.id and r["method"] == key}  # fmt: skip
        t, rnd, srch = rows.get("tlm"), rows.get("random"), rows.get("search")
        cmp, heur, tog = rows.get("compare"), rows.get("heuristic"), rows.get("together")
        entry = {"model": model, "task": task.name[:36], "gflop": task.flops / 1e9, "calls": task.weight,
                 "tlm_top1_ms": report.ms(t and t["top1"]), "tlm_best10_ms": report.ms(t and t["best"]),
                 "random_top1_ms": report.ms(rnd and rnd["top1"]), "random_best10_ms": report.ms(rnd and rnd["best"]),
                 "search_ms": report.ms(srch and srch["best"]),
                 "heuristic_ms": report.ms(heur and heur["top1"]),
                 "cmp_top1_ms": report.ms(cmp and cmp["top1"]), "cmp_best10_ms": report.ms(cmp and cmp["best"]),
                 "tlm_gen_s": t and t["generation_s"], "tlm_compile_s": t and t["compile_s"],
                 "search_s": srch and srch["compile_s"]}  # fmt: skip
        for role in ("top1", "best", "cmp_top1", "cmp_best", "heuristic", "search"):  # the side-by-side medians
            entry[f"together_{role}_ms"] = report.ms(tog and tog.get(role))
        table.append(entry)
        for label, num, den in RATIOS:
            if entry[num] and entry[den]:
                ratios.setdefault(label, []).append(entry[num] / entry[den])
    tlm_rows = [r for r in evaluated if r["method"] == keys["tlm"] and r["task"] in {t.id for _, t, _ in tasks}]
    summary = {
        "checkpoints": {m: {"path": os.path.relpath(p), "key": k} for m, (p, k) in models.items()},
        "config": cfg,
        "tasks": len(table),
        "valid": sum(r["valid"] for r in tlm_rows),
        "candidates": sum(r["candidates"] for r in tlm_rows),
        "geomean": {k: report.geomean(v) for k, v in ratios.items()},
        "median_greedy_s": statistics.median(r["greedy_s"] for r in tlm_rows) if tlm_rows else None,
    }
    g = summary["geomean"]

    def fmt(key: str) -> str:
        return f"{g[key]:.2f}x" if g.get(key) else "-"

    reused = sorted({r["reused_from"] for r in evaluated if r["method"] == keys["search"] and "reused_from" in r})
    notes = [
        f"Held-out models {', '.join(cfg['models'])}: the {cfg['tasks']} heaviest tasks with decisions of each "
        f"(calls x FLOPs) among those of <= {cfg['max_gflop']} GFLOP per call (bigger ones cost minutes per "
        "candidate here). Latencies in ms, each the median of 5 repeats of >= 10 ms, numerically checked; "
        "best-of-N latencies (TLM, random): every candidate measured once, the 3 fastest again, the winner's "
        "second latency (tlm_core.measure.screen; rows written before that screen: the minimum of N medians); "
        "search: the minimum over its trials.",
        f"Validity: {summary['valid']}/{summary['candidates']} TLM candidates applied without InvalidDecisions.",
        f"Speed ratios (geometric mean over tasks, > 1 = the TLM is faster): top-1 vs search {fmt('top1_vs_search')},"
        f" best-of-{cfg['k']} vs search {fmt('best10_vs_search')}, top-1 vs random top-1 {fmt('top1_vs_random')}, "
        f"best-of-{cfg['k']} vs random best-of-{cfg['k']} {fmt('best10_vs_random')}, top-1 vs heuristic Top-1 "
        f"{fmt('top1_vs_heuristic')} (heuristic vs search {fmt('heuristic_vs_search')}); cmp_* top-1 vs search "
        f"{fmt('cmp_top1_vs_search')}, best-of-{cfg['k']} vs search {fmt('cmp_best10_vs_search')}. "
        f"Compile time, search / TLM: {fmt('compile_speedup')}.",
        f"Re-measured together ({len(ratios.get('together_top1_vs_search', []))} tasks: the TLM's top-1 and "
        f"best-of-{cfg['k']} programs, the heuristic's and search's best, measured again side by side in one "
        f"batch, {cfg['rounds']} rounds in rotated order, medians; removes the advantage a minimum over many noisy "
        f"measurements has over one): top-1 vs search {fmt('together_top1_vs_search')}, best-of-{cfg['k']} vs "
        f"search {fmt('together_best10_vs_search')}, top-1 vs heuristic {fmt('together_top1_vs_heuristic')} "
        f"(heuristic vs search {fmt('together_heuristic_vs_search')}); cmp_* in the same batches: top-1 vs search "
        f"{fmt('together_cmp_top1_vs_search')}, best-of-{cfg['k']} vs search {fmt('together_cmp_best10_vs_search')}.",
        f"tlm: `{summary['checkpoints']['tlm']['path']}`, greedy top-1 and best of {cfg['k']} distinct candidates "
        "(greedy + beam search's most likely others, as the product picks); tlm_compile_s = generation + "
        "measuring them (the 3 fastest twice). cmp_*: "
        + (
            f"`{summary['checkpoints']['compare']['path']}` (--compare) the same way."
            if "compare" in summary["checkpoints"]
            else "no --compare checkpoint given."
        ),
        f"random: {cfg['k']} distinct uniformly random legal programs (seeded). search: "
        f"{cfg['search_trials']} trials of Ansor-style evolutionary search (MetaSchedule) on the task alone"
        + (" (the issue's budget)" if cfg["search_trials"] >= 512 else ", not the issue's 512 (this machine's time)")
        + "; search_s is its wall time."
        + "".join(
            f" Search reused from `{n}` (its run's machine and moment; its programs measured again here side by side)."
            for n in reused
        ),  # fmt: skip
        "Shared, loaded 2-core machine (other jobs measuring and training at the same time): latencies are noisy. "
        "A task's methods are measured back to back, so they share that moment's load; a resumed run (or a new "
        "checkpoint's rows added to old ones) mixes moments: compare such rows with care.",
    ]
    columns = ["model", "task", "gflop", "calls", "tlm_top1_ms", "tlm_best10_ms", "random_top1_ms",
               "random_best10_ms", "search_ms", "heuristic_ms", "cmp_top1_ms", "cmp_best10_ms", "tlm_gen_s",
               "tlm_compile_s", "search_s", "together_top1_ms", "together_best_ms", "together_cmp_top1_ms",
               "together_cmp_best_ms", "together_heuristic_ms",
               "together_search_ms"]  # fmt: skip
    doc = {"summary": summary, "tasks": table, "rows": evaluated}
    md = report.write(name, doc, columns, table, "TLM evaluation on held-out tasks", notes)
    print(md.read_text())
