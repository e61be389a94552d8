"""Speed claims the test suite used to assert, measured here: a test that asserts a speed fails on a busy machine.

Tests assert correctness (every program checks against the reference, every figure is there and positive); which
program is faster, and by how much, is a finding of this machine at this moment. Each row is one claim a test
once asserted, the figures it rests on (every kernel checked against the untuned task by the project's Measurer,
the compared programs measured side by side in rotated order where the test did so), its threshold and whether it
holds in this run.

    .venv/bin/python benchmarks/speed_claims.py            # every claim (~10 min on a busy 2-core box)
    .venv/bin/python benchmarks/speed_claims.py --quick    # the operator claims only (~1 min)

Writes benchmarks/results/speed_claims.json and .md (speed_claims-quick with --quick).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import ms, us, write  # noqa: E402

OPERATOR = Path(__file__).resolve().parent.parent / "tests" / "data" / "matmul_relu.py"


def _row(claim: str, tests: str, figures: str, value: float | None, low: float | None, high: float | None = None):
    """One claim: `value` (a ratio or seconds) should lie above `low` (and below `high` when given)."""
    holds = value is not None and (low is None or value > low) and (high is None or value < high)
    threshold = " and ".join(
        s for s in (f"> {low:g}" if low is not None else "", f"< {high:g}" if high is not None else "") if s
    )
    return {"claim": claim, "figures": figures, "value": value, "threshold": threshold, "holds": holds, "test": tests}


def _ratio(slow: float | None, fast: float | None) -> float | None:
    return slow / fast if slow and fast else None


def operator_claims(measurer, builder, target) -> list[dict]:
    """The heuristic's Top-1 against TVM's default on the tests' matmuls; one program measured twice."""
    import tests.workloads as W
    from tlm_core.baselines.default import default_module
    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition, task_from_primfunc

    rows = []
    task = task_from_primfunc(W.matmul_128, "matmul_128")
    heuristic = heuristic_program(builder.build(task)).program.mod
    lat = measurer.side_by_side(task, {"default": default_module(task, target), "heuristic": heuristic}, rounds=3)
    rows.append(_row(
        "heuristic Top-1 vs TVM's default, matmul 128^3 (speed ratio; measured ~40x)",
        "test_baselines_heuristic.py::test_top1_and_the_untuned_default_both_run_side_by_side_on_matmul_128 (> 2); "
        "test_compare.py::test_every_quick_method_gives_a_measured_checked_row (> 1)",
        f"default {us(lat['default']):.1f} us, heuristic {us(lat['heuristic']):.1f} us (medians of 3 rounds)"
        if lat["default"] and lat["heuristic"] else f"a program failed: {lat}",
        _ratio(lat["default"], lat["heuristic"]), 2.0,
    ))  # fmt: skip

    (task,) = partition(load_model(OPERATOR, allow_code=True), target).tasks  # the repository's own file
    heuristic = heuristic_program(builder.build(task)).program.mod
    default, top1 = measurer.measure(task, [default_module(task, target), heuristic])  # as `tlm heuristic` does
    rows.append(_row(
        "heuristic Top-1 vs TVM's default, matmul+relu 64^3 (tests/data/matmul_relu.py; speed ratio)",
        "test_cli_baselines.py::test_heuristic_top1_and_top_k; "
        "test_cli_compare.py::test_compare_an_operator_with_a_users_database (> 1)",
        f"default {us(default.latency):.1f} us, heuristic {us(top1.latency):.1f} us (one batch)"
        if default.ok and top1.ok else f"{default.error or top1.error}",
        _ratio(default.latency, top1.latency), 1.0,
    ))  # fmt: skip

    # `tlm compare --db` rebuilds the heuristic's program from the user's database: the same program, measured
    # again beside itself; only noise separates the two figures
    lat = measurer.side_by_side(task, {"heuristic": heuristic, "database (the same program)": heuristic}, rounds=2)
    a, b = lat["database (the same program)"], lat["heuristic"]
    rows.append(_row(
        "one program measured twice side by side (database's copy / heuristic's; noise)",
        "test_cli_compare.py::test_compare_an_operator_with_a_users_database (0.5 < ratio < 2)",
        f"{us(a):.1f} us and {us(b):.1f} us (medians of 2 rounds)" if a and b else f"a program failed: {lat}",
        _ratio(a, b), 0.5, 2.0,
    ))  # fmt: skip

    # the first space in a process pays TVM's start-up (tensor intrinsics); later builds take milliseconds
    task = task_from_primfunc(W.matmul_relu_64, "matmul_relu_64")
    start = time.perf_counter()
    builder.build(task)
    builder.build(task)
    seconds = time.perf_counter() - start
    rows.append(_row(
        "two space builds of matmul_relu_64 after the first space of the process (seconds)",
        "test_space.py::test_builder_is_cached_and_deterministic (< 2 s)",
        f"{seconds:.3f} s", seconds, None, 2.0,
    ))  # fmt: skip
    return rows


def search_claim(measurer, target) -> dict:
    """8 trials of MetaSchedule's search against the untuned matmul 128^3."""
    import tests.workloads as W
    from tlm_core.baselines.search import search
    from tlm_core.partition import task_from_primfunc

    task = task_from_primfunc(W.matmul_128, "matmul_128")
    result = search([task], target, trials=8, measurer=measurer, per_iter=8)
    (untuned,) = measurer.measure(task, [task.mod])
    best = result.best.get(task.id)
    return _row(
        "8-trial search's best vs the untuned matmul 128^3 (speed ratio)",
        "test_baselines_search.py::test_a_tiny_search_finds_a_checked_best_and_writes_records_tvm_reads (> 2)",
        f"untuned {us(untuned.latency):.1f} us, search's best of {len(result.trials)} trials {us(best):.1f} us"
        if untuned.ok and best else f"untuned: {untuned.error}; search's best: {best}",
        _ratio(untuned.latency, best), 2.0,
    )  # fmt: skip


def model_claims(builder, target) -> list[dict]:
    """bert-tiny end to end, heuristic against default; the default sample's second import."""
    import sample_models
    from tlm_core.compile import compile_model, default_schedules, heuristic_schedules, run_model
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition

    model = load_model("bert-tiny")
    part = partition(model, target)
    default = run_model(model, compile_model(part, default_schedules(part), target), repeat=3)
    heuristic = run_model(model, compile_model(part, heuristic_schedules(part, builder.build), target), repeat=3)
    ok = default.ok and heuristic.ok
    rows = [_row(
        "bert-tiny end to end: every task's heuristic Top-1 vs TVM's default (speed ratio; measured ~15x)",
        "test_compile.py::test_default_and_heuristic_match_pytorch (> 1)",
        f"default {ms(default.latency):.2f} ms, heuristic {ms(heuristic.latency):.2f} ms (medians of 3 runs)"
        if ok else "a run failed",
        _ratio(default.latency, heuristic.latency) if ok else None, 1.0,
    )]  # fmt: skip

    sample_models.load(sample_models.DEFAULT)  # the first export in a process pays torch.export's warm-up
    start = time.perf_counter()
    sample_models.load(sample_models.DEFAULT)
    seconds = time.perf_counter() - start
    rows.append(_row(
        f"the default sample ({sample_models.DEFAULT}) imported a second time in a process (seconds)",
        "test_sample_models.py::test_default_opens_with_its_operators (< 5 s)", f"{seconds:.2f} s", seconds, None, 5.0,
    ))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the operator claims only (CI)")
    p.add_argument("--results", help="results name (default speed_claims, or speed_claims-quick)")
    args = p.parse_args(argv)
    from tlm_core.measure import Measurer
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    load = os.getloadavg()[0]  # a busy machine moves every figure: say how busy it was
    with Measurer(target) as m:
        rows = operator_claims(m, builder, target)
        if not args.quick:
            rows.append(search_claim(m, target))
    if not args.quick:
        rows += model_claims(builder, target)
    for r in rows:
        print(r, flush=True)
    held = sum(r["holds"] for r in rows)
    notes = [
        "Each claim was once asserted by the test named beside it (with the threshold in brackets); the tests now"
        " assert only that the figures exist, are positive and every program passes its numeric check."
        " value: the ratio (slower / faster) or seconds.",
        f"{held} of {len(rows)} claims hold in this run; load average (1 min) at the start: {load:.1f}.",
    ]
    name = args.results or ("speed_claims-quick" if args.quick else "speed_claims")
    cols = ["claim", "figures", "value", "threshold", "holds", "test"]
    doc = {"quick": args.quick, "load_average": load, "rows": rows}
    md = write(name, doc, cols, rows, "Speed claims, measured", notes)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
