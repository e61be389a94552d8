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
    ("together_best10_vs_heuristic", "together_heuristic_ms", "together_best_ms"),
    ("together_cmp_top1_vs_heuristic", "together_heuristic_ms", "together_cmp_top1_ms"),
    ("together_cmp_best10_vs_heuristic", "together_heuristic_ms", "together_cmp_best_ms"),
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
        f"Re-measured together ({len(ratios.get('together_top1_vs_heuristic', []))} tasks, "
        f"{len(ratios.get('together_top1_vs_search', []))} with search: the TLM's top-1 and "
        f"best-of-{cfg['k']} programs, the heuristic's and search's best, measured again side by side in one "
        f"batch, {cfg['rounds']} rounds in rotated order, medians; removes the advantage a minimum over many noisy "
        f"measurements has over one): top-1 vs search {fmt('together_top1_vs_search')}, best-of-{cfg['k']} vs "
        f"search {fmt('together_best10_vs_search')}, top-1 vs heuristic {fmt('together_top1_vs_heuristic')}, "
        f"best-of-{cfg['k']} vs heuristic {fmt('together_best10_vs_heuristic')} (heuristic vs search "
        f"{fmt('together_heuristic_vs_search')}); cmp_* in the same batches: top-1 vs search "
        f"{fmt('together_cmp_top1_vs_search')}, best-of-{cfg['k']} vs search {fmt('together_cmp_best10_vs_search')}, "
        f"top-1 vs heuristic {fmt('together_cmp_top1_vs_heuristic')}, best-of-{cfg['k']} vs heuristic "
        f"{fmt('together_cmp_best10_vs_heuristic')}.",
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
        *target_note(cfg),
    ]
    columns = ["model", "task", "gflop", "calls", "tlm_top1_ms", "tlm_best10_ms", "random_top1_ms",
               "random_best10_ms", "search_ms", "heuristic_ms", "cmp_top1_ms", "cmp_best10_ms", "tlm_gen_s",
               "tlm_compile_s", "search_s", "together_top1_ms", "together_best_ms", "together_cmp_top1_ms",
               "together_cmp_best_ms", "together_heuristic_ms",
               "together_search_ms"]  # fmt: skip
    doc = {"summary": summary, "tasks": table, "rows": evaluated}
    md = report.write(name, doc, columns, table, "TLM evaluation on held-out tasks", notes)
    print(md.read_text())


# the test split's summary ratios (numerator column, denominator column), > 1 = the denominator's method is faster;
# the side-by-side medians (together_*) are the headline: every method's program measured in the same batches
TEST_RATIOS = [
    ("top1_vs_heuristic", "together_heuristic_ms", "together_top1_ms"),
    ("best10_vs_heuristic", "together_heuristic_ms", "together_best_ms"),
    ("best10_vs_heuristic10", "together_heuristic10_ms", "together_best_ms"),
    ("top1_vs_default", "together_default_ms", "together_top1_ms"),
    ("heuristic_vs_default", "together_default_ms", "together_heuristic_ms"),
    ("top1_vs_search", "together_search_ms", "together_top1_ms"),
    ("best10_vs_search", "together_search_ms", "together_best_ms"),
    ("heuristic_vs_search", "together_search_ms", "together_heuristic_ms"),
    ("compile_speedup", "search_s", "tlm_compile_s"),
]
TEST_ROLES = ("default", "heuristic", "heuristic10", "top1", "best", "search")


def target_note(cfg: dict) -> list[str]:
    """A line naming the target where it is not the host's own CPU (evaluation.py --cpu)."""
    if not cfg.get("cpu"):
        return []
    return [f"Target: LLVM `-mcpu={cfg['cpu']}` (its instruction set run on this host, with the host's caches and "
            "cores): every method's programs were written and measured for it."]  # fmt: skip


def write_test_results(name: str, evaluated: list[dict], tasks, models: dict, cfg: dict, keys: dict[str, str]) -> None:
    """benchmarks/results/<name>.json and .md of the test split: per task every method's program measured side by
    side (medians of rounds), the first measurements, and geometric means of TEST_RATIOS overall and per model."""
    table, ratios, by_model = [], {}, {}
    for model, task, _ in tasks:
        rows = {role: r for r in evaluated for role, key in keys.items()
                if r["task"] == task.id and r["method"] == key}  # fmt: skip
        t, srch, tog = rows.get("tlm"), rows.get("search"), rows.get("together")
        entry = {"model": model, "task": task.name[:36], "gflop": task.flops / 1e9, "calls": task.weight,
                 "default_ms": report.ms(rows.get("default") and rows["default"]["top1"]),
                 "heuristic_ms": report.ms(rows.get("heuristic") and rows["heuristic"]["top1"]),
                 "heuristic10_ms": report.ms(rows.get("heuristic10") and rows["heuristic10"]["best"]),
                 "tlm_top1_ms": report.ms(t and t["top1"]), "tlm_best10_ms": report.ms(t and t["best"]),
                 "search_ms": report.ms(srch and srch["best"]),
                 "tlm_compile_s": t and t["compile_s"], "search_s": srch and srch["compile_s"]}  # fmt: skip
        for role in TEST_ROLES:
            entry[f"together_{role}_ms"] = report.ms(tog and tog.get(role))
        table.append(entry)
        for label, num, den in TEST_RATIOS:
            if entry[num] and entry[den]:
                ratios.setdefault(label, []).append(entry[num] / entry[den])
                by_model.setdefault(model, {}).setdefault(label, []).append(entry[num] / entry[den])
    tlm_rows = [r for r in evaluated if r["method"] == keys["tlm"] and r["task"] in {t.id for _, t, _ in tasks}]
    summary = {
        "split": "test",
        "checkpoints": {m: {"path": os.path.relpath(p), "key": k} for m, (p, k) in models.items()},
        "config": cfg,
        "tasks": len(table),
        "measured_together": len(ratios.get("top1_vs_heuristic", [])),
        "valid": sum(r["valid"] for r in tlm_rows),
        "candidates": sum(r["candidates"] for r in tlm_rows),
        "geomean": {k: report.geomean(v) for k, v in ratios.items()},
        "geomean_by_model": {m: {k: report.geomean(v) for k, v in r.items()} for m, r in by_model.items()},
        "tasks_counted": {k: len(v) for k, v in ratios.items()},
        "load_average": os.getloadavg(),
    }
    g = summary["geomean"]

    def fmt(key: str) -> str:
        return f"{g[key]:.2f}x ({summary['tasks_counted'][key]} tasks)" if g.get(key) else "-"

    notes = [
        f"The clean test split (tlm_core.dataset.splits, data/test-split/tasks.txt): {len(table)} tasks of "
        f"{', '.join(cfg['models'])} at full size, none in any training source; evaluated once per shipped "
        "checkpoint, never used for choosing.",
        f"Side by side (every method's program measured again in one batch, {cfg['rounds']} rounds in rotated "
        "order, medians; > 1 = the TLM's is faster): "
        f"top-1 vs heuristic Top-1 {fmt('top1_vs_heuristic')}, best-of-{cfg['k']} vs heuristic Top-1 "
        f"{fmt('best10_vs_heuristic')}, best-of-{cfg['k']} vs heuristic Top-{cfg['k']} {fmt('best10_vs_heuristic10')}, "
        f"top-1 vs TVM default {fmt('top1_vs_default')} (heuristic vs default {fmt('heuristic_vs_default')}); "
        f"vs {cfg['search_trials']}-trial search (on {cfg.get('search_tasks') or 0} tasks): top-1 "
        f"{fmt('top1_vs_search')}, best-of-{cfg['k']} {fmt('best10_vs_search')}, heuristic "
        f"{fmt('heuristic_vs_search')}; compile time search / TLM {fmt('compile_speedup')}.",
        f"Validity: {summary['valid']}/{summary['candidates']} TLM candidates applied. First measurements "
        "(*_ms without together_): each the median of 5 repeats of >= 10 ms, numerically checked against the "
        "untuned task; a best-of-k is its winner's second latency (tlm_core.measure.screen).",
        "TVM default: DLight's CPU rules where one applies, else the untuned task (tlm_core.baselines.default). "
        f"heuristic10: the heuristic's {cfg['k']} best candidates by its own cost model, measured like the TLM's.",
        f"tlm: `{summary['checkpoints']['tlm']['path']}` (key {summary['checkpoints']['tlm']['key']}). Load average "
        f"at the end {summary['load_average'][0]:.1f} on {os.cpu_count()} cores: other jobs shared this machine, so "
        "latencies are noisy; the side-by-side batches share their moment's load.",
        *target_note(cfg),
    ]
    columns = ["model", "task", "gflop", "calls", *(f"together_{r}_ms" for r in TEST_ROLES), "default_ms",
               "heuristic_ms", "heuristic10_ms", "tlm_top1_ms", "tlm_best10_ms", "search_ms", "tlm_compile_s",
               "search_s"]  # fmt: skip
    doc = {"summary": summary, "tasks": table, "rows": evaluated}
    md = report.write(name, doc, columns, table, "TLM evaluation on the clean test split", notes)
    print(md.read_text())
