"""Single subgraphs at realistic shapes, per method: kernel latency, compile time, ratios, numeric check.

Methods: TVM default (untuned), the TLM's top-1 (greedy, no measurement) and best-of-10 (beam search, measured),
Roller-style heuristic Top-1 and Top-10, Ansor-style evolutionary search (MetaSchedule implementation) with a
trial budget. Every program of an operator is measured by the same
Measurer (median over repeats, checked against the untuned reference), so ratios are within one run.

    .venv/bin/python benchmarks/operators.py            # realistic shapes, search 64 trials (~40 min)
    .venv/bin/python benchmarks/operators.py --quick    # small shapes, search 8 trials (~5 min)

Writes benchmarks/results/operators[-quick].json and .md (NAME.json and .md with --results NAME).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import geomean, us, write  # noqa: E402


def suite(quick: bool) -> dict:
    """name -> PrimFunc, built with TE/TOPI (the same operators Relax legalizes to)."""
    from tvm import te, topi

    from tlm_core.partition import te_prim_func

    def func(*tensors):
        return te_prim_func(tensors)

    s = 4 if quick else 1  # quick: shapes divided by s (by s*s for some)
    ops = {}
    m, k, n = 128 // s, 768 // s, 768 // s
    a, b = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
    ops[f"matmul {m}x{k}x{n}"] = func(a, b, topi.nn.matmul(a, b))
    a, w = te.placeholder((m, k), name="A"), te.placeholder((4 * n, k), name="W")
    bias = te.placeholder((4 * n,), name="bias")
    ops[f"dense+bias+gelu-ish {m}x{k}x{4 * n}"] = func(a, w, bias, topi.tanh(topi.add(topi.nn.dense(a, w), bias)))
    c, hw = 64 // s, 56 // s
    x, wt = te.placeholder((1, c, hw, hw), name="X"), te.placeholder((c, c, 3, 3), name="W")
    ops[f"conv2d+relu {c}x{hw}x{hw} 3x3"] = func(x, wt, topi.nn.relu(topi.nn.conv2d_nchw(x, wt, 1, 1, 1)))
    c2, hw2 = 256 // s, 14
    x, wt = te.placeholder((1, c2, hw2, hw2), name="X"), te.placeholder((c2, c2, 1, 1), name="W")
    ops[f"conv2d 1x1 {c2}x{hw2}x{hw2}"] = func(x, wt, topi.nn.conv2d_nchw(x, wt, 1, 0, 1))
    c3, hw3 = 144 // s, 28 // (2 if quick else 1)
    x, wt = te.placeholder((1, c3, hw3, hw3), name="X"), te.placeholder((c3, 1, 3, 3), name="W")
    ops[f"depthwise 3x3 {c3}x{hw3}x{hw3}"] = func(x, wt, topi.nn.depthwise_conv2d_nchw(x, wt, 1, 1, 1))
    c4, hw4 = 64 // s, 112 // s
    x = te.placeholder((1, c4, hw4, hw4), name="X")
    pool = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    ops[f"max_pool 3x3/2 {c4}x{hw4}x{hw4}"] = func(x, pool)
    h, sq, d = 12 // (s if quick else 1), 128 // s, 64
    q, kk = te.placeholder((h, sq, d), name="Q"), te.placeholder((h, sq, d), name="K")
    ops[f"batch_matmul {h}x{sq}x{d}x{sq}"] = func(q, kk, topi.nn.batch_matmul(q, kk))
    x = te.placeholder((h, sq, sq), name="X")
    ops[f"softmax {h}x{sq}x{sq}"] = func(x, topi.nn.softmax(x))
    x = te.placeholder((m, k), name="X")
    ops[f"sum over rows {m}x{k}"] = func(x, topi.sum(x, axis=1))
    x, y = te.placeholder((1, c, hw, hw), name="X"), te.placeholder((1, c, hw, hw), name="Y")
    ops[f"add+relu {c}x{hw}x{hw}"] = func(x, y, topi.nn.relu(topi.add(x, y)))
    return ops


def bench(name: str, prim, trials: int, measurer, builder, target, generators: dict | None = None, k: int = 10) -> dict:
    """One operator, every method. generators: column prefix ("tlm", "cmp_tlm") -> Generator."""
    from tlm_core.baselines.default import default_module
    from tlm_core.baselines.heuristic import heuristic_candidates, heuristic_program
    from tlm_core.baselines.search import search
    from tlm_core.compile import scheduled_module, tlm_schedules
    from tlm_core.compile.schedules import remeasured_best
    from tlm_core.partition import task_from_primfunc
    from tlm_core.records import RecordStore

    task = task_from_primfunc(prim, name.split()[0])
    space = builder.build(task)
    one, tlm = SimpleNamespace(tasks=[task]), {}
    for prefix, generator in (generators or {}).items():  # the compile library's own TLM path: top-1, best-of-k
        tlm_top1 = tlm_schedules(one, lambda _: space, generator)[task.id]
        tlm[prefix] = {"top1": tlm_top1, "best": tlm_schedules(one, lambda _: space, generator, k, measurer)[task.id]}
    t0 = time.perf_counter()
    top1 = heuristic_program(space)
    t_top1 = time.perf_counter() - t0
    top10 = heuristic_candidates(space, k=10)
    t_rank = time.perf_counter() - t0 - t_top1
    t0 = time.perf_counter()
    mods = [default_module(task, target), top1.program.mod] + [c.program.mod for c in top10]
    own = len(mods)  # the TLM's top-1 programs follow, one per generator
    mods += [scheduled_module(task, t["top1"]) for t in tlm.values()]
    results = measurer.measure(task, mods)
    t_measure10 = (time.perf_counter() - t0) * len(top10) / len(mods)  # top10's share of the batch
    tlm_results, results = dict(zip(tlm, results[own:], strict=True)), results[:own]
    default, heur = results[0], results[1]
    ok10 = [i for i in range(len(top10)) if results[2 + i].ok]
    fastest10 = min(ok10, key=lambda i: results[2 + i].latency) if ok10 else None  # index into top10
    best10 = results[2 + fastest10] if fastest10 is not None else None
    row = {
        "operator": name,
        "gflop": task.flops / 1e9,
        "default_us": us(default.latency),
        "heuristic_us": us(heur.latency),
        "heuristic_s": t_top1,
        "top10_us": us(best10.latency) if best10 else None,
        "top10_s": t_top1 + t_rank + t_measure10,
        "ok": default.ok and heur.ok and all(r.ok for r in results[2:]),
    }
    for p, t in tlm.items():
        row |= {f"{p}_us": us(tlm_results[p].latency), f"{p}_s": t["top1"].seconds,
                f"{p}_best_us": us(t["best"].latency), f"{p}_best_s": t["best"].seconds}  # fmt: skip
        row["ok"] = row["ok"] and tlm_results[p].ok and t["best"].latency is not None
    # every method's program measured again side by side: search's latency is the minimum over its trials, the
    # others' one measurement each, and this machine's speed drifts within minutes
    chosen = {"heuristic": top1.program.mod}
    if fastest10 is not None:
        chosen["top10"] = top10[fastest10].program.mod
    for p, t in tlm.items():
        chosen |= {p: scheduled_module(task, t["top1"]), f"{p}_best": scheduled_module(task, t["best"])}
    if trials:
        with tempfile.TemporaryDirectory() as records:
            store = RecordStore(Path(records))
            res = search([task], target, trials, measurer, store=store)
            searched = remeasured_best(store.tvm_database(), task, measurer).mod
        row["search_us"] = us(res.best.get(task.id))
        row["search_s"] = res.seconds
        row["search_trials"] = len(res.trials)
        row["ok"] = row["ok"] and task.id in res.best
        chosen["search"] = searched
    if trials or len(tlm) > 1:
        again = measurer.side_by_side(task, {m: mod for m, mod in chosen.items() if mod is not None})
        row |= {f"together_{m}_us": us(x) for m, x in again.items()}
    for key in ("heuristic", "top10", "tlm", "tlm_best", "search"):
        if row.get(f"{key}_us") and row["default_us"]:
            row[f"{key}_speedup"] = row["default_us"] / row[f"{key}_us"]
    if row.get("search_us") and row["heuristic_us"]:
        row["heuristic_vs_search"] = row["heuristic_us"] / row["search_us"]  # > 1: heuristic slower
        row["search_vs_heuristic_compile"] = row["search_s"] / row["heuristic_s"]
    if row.get("search_us"):  # the compass: TLM latency as a fraction of search's (>= 1: as fast or faster)
        for key in ("tlm", "tlm_best"):
            if row.get(f"{key}_us"):
                row[f"{key}_vs_search"] = row["search_us"] / row[f"{key}_us"]
                row[f"search_vs_{key}_compile"] = row["search_s"] / row[f"{key}_s"]
    if row.get("tlm_us") and row["heuristic_us"]:
        row["heuristic_vs_tlm"] = row["heuristic_us"] / row["tlm_us"]  # > 1: the TLM's schedule is faster
    pairs = [("search", "tlm"), ("search", "tlm_best"), ("search", "heuristic"), ("heuristic", "tlm")]
    pairs += [("cmp_tlm", "tlm"), ("cmp_tlm_best", "tlm_best"), ("heuristic", "cmp_tlm")]
    for num, den in pairs:
        if row.get(f"together_{num}_us") and row.get(f"together_{den}_us"):
            row[f"together_{num}_vs_{den}"] = row[f"together_{num}_us"] / row[f"together_{den}_us"]
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small shapes and a tiny search budget (CI smoke test)")
    p.add_argument("--results", help="results name (another machine's run beside the committed one)")
    p.add_argument("--trials", type=int, default=None, help="search trials per operator (0: no search)")
    p.add_argument("--only", help="only operators whose name starts with this")
    p.add_argument("--no-tlm", action="store_true", help="leave out the TLM rows")
    p.add_argument("--candidates", type=int, default=10, help="k of the TLM's best-of-k")
    p.add_argument("--checkpoint", help="the TLM checkpoint folder (default: the shipped one)")
    p.add_argument("--compare", help="a second checkpoint (cmp_* columns), its programs measured side by side")
    p.add_argument("--task-ids", action="store_true", help="print the task id of every operator (both suites) and "
                   "exit: `tlm train teacher --exclude-tasks` keeps them out of training")  # fmt: skip
    args = p.parse_args(argv)
    if args.task_ids:
        from tlm_core.partition import task_from_primfunc

        for quick in (False, True):
            for name, prim in suite(quick).items():
                print(task_from_primfunc(prim, name.split()[0]).id, name)
        return 0
    trials = args.trials if args.trials is not None else (8 if args.quick else 64)

    from tlm_core.generator import Generator
    from tlm_core.measure import Measurer
    from tlm_core.model import default_checkpoint
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    generators = {}
    if not args.no_tlm:
        generators["tlm"] = Generator.from_checkpoint(args.checkpoint or default_checkpoint())
        if args.compare:
            generators["cmp_tlm"] = Generator.from_checkpoint(args.compare)
    rows = []
    with Measurer(target, repeat=5, min_repeat_ms=10) as measurer:
        for name, prim in suite(args.quick).items():
            if args.only and not name.startswith(args.only):
                continue
            print(f"{name} ...", file=sys.stderr, flush=True)
            rows.append(bench(name, prim, trials, measurer, builder, target, generators, args.candidates))
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    tlm_cols = [] if args.no_tlm else ["tlm_us", "tlm_best_us"]
    cols = ["operator", "gflop", "default_us", *tlm_cols, "heuristic_us", "top10_us", "search_us"]
    cols += [] if args.no_tlm else ["tlm_speedup", "tlm_best_speedup", "heuristic_vs_tlm"]
    cols += ["heuristic_speedup", "search_speedup", "heuristic_vs_search"]
    cols += [] if args.no_tlm or not trials else ["tlm_vs_search", "tlm_best_vs_search"]
    cols += [] if args.no_tlm or not trials else ["together_search_vs_tlm", "together_search_vs_tlm_best"]
    cols += ["together_search_vs_heuristic"] if trials else []
    cols += [] if args.no_tlm or not (trials or args.compare) else ["together_heuristic_vs_tlm"]
    cols += ["cmp_tlm_us", "cmp_tlm_best_us", "together_cmp_tlm_vs_tlm", "together_cmp_tlm_best_vs_tlm_best",
             "together_heuristic_vs_cmp_tlm"] if "cmp_tlm" in generators else []  # fmt: skip
    cols += [] if args.no_tlm else ["tlm_s", "tlm_best_s"]
    cols += ["heuristic_s", "top10_s", "search_s", "ok"]
    notes = [
        f"search: Ansor-style evolutionary search, MetaSchedule implementation, {trials} trials per operator.",
        "heuristic: Roller-style rule-based Top-1 (no measurement); top10: best of its model's 10 best, measured.",
        f"tlm: the shipped TLM's greedy schedule (no measurement); tlm_best: best of its {args.candidates} most likely"
        " (beam search), measured; tlm_best_s includes those measurements.",
        "*_speedup: default latency / method latency; heuristic_vs_tlm: heuristic / TLM top-1 latency (> 1: TLM"
        " faster); tlm*_vs_search: search / TLM latency (>= 1: TLM as fast as search or faster).",
        "together_*: the methods' programs measured again side by side (3 rounds in rotated order, medians;"
        " search's: the fastest of its 5 best records, measured again): a latency ratio, > 1 = the second method"
        " faster. Search's own figure is the minimum over its trials; the others' one measurement each.",
        "*_s: compile time (generation, or search wall time including measurements and start-up).",
        "Latency: median over 5 repeats of >= 10 ms, all methods of an operator in the same run; ok: every"
        " program matched the untuned reference.",
    ]
    if args.compare:
        notes.append(f"tlm: {args.checkpoint or 'the shipped checkpoint'}; cmp_tlm: the same with {args.compare}"
                     " (together_cmp_tlm_vs_tlm > 1: the first one's program faster).")  # fmt: skip
    ratios = [c for c in cols if "_vs_" in c]
    means = {c: geomean([r[c] for r in rows if r.get(c)]) for c in ratios}
    notes.append("Geometric means over the operators: " + ", ".join(f"{c} {means[c]:.2f}" for c in ratios if means[c]))
    name = args.results or ("operators-quick" if args.quick else "operators")
    doc = {"trials": trials, "geomean": means, "rows": rows}
    md = write(name, doc, cols, rows, "Operators: kernel latency per method", notes)
    print(md.read_text())
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
