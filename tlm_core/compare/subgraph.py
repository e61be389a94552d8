"""Run one method on one task and collect a row: latency, GFLOP/s, compile time, trials, numeric check, schedule.

Every latency here comes from the Measurer, which checks each program's output against the untuned reference
before its time counts. "Compile seconds" is the time to *choose* the schedule: generation or rule time, plus
every measurement the method needs to choose (best-of-k, Top-k, search). Top-1 methods need none: the one
measurement that reports their latency is not part of their cost.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from typing import Any

from tlm_core.compare.method import LABELS, METHODS, MethodResult, from_measurement, match_trace, trace_text
from tlm_core.errors import summary
from tlm_core.measure import Measurer
from tlm_core.space import Space


def run_default(space: Space, measurer: Measurer) -> MethodResult:
    from tlm_core.baselines.default import default_module

    start = time.perf_counter()
    mod = default_module(space.task, space.target)
    seconds = time.perf_counter() - start
    (result,) = measurer.measure(space.task, [mod])
    return from_measurement(space, "default", result, compile_s=seconds, mod=mod)


def run_heuristic(space: Space, measurer: Measurer) -> MethodResult:
    from tlm_core.baselines.heuristic import heuristic_program

    start = time.perf_counter()
    cand = heuristic_program(space)
    seconds = time.perf_counter() - start
    (result,) = measurer.measure(space.task, [cand.program.mod])
    return from_measurement(
        space,
        "heuristic",
        result,
        compile_s=seconds,
        sketch_index=cand.sketch_index,
        decisions=list(cand.decisions),
        trace=trace_text(cand.program.trace),
        mod=cand.program.mod,
    )


def run_heuristic_top_k(space: Space, measurer: Measurer, k: int = 10) -> MethodResult:
    from tlm_core.baselines.heuristic import heuristic_top_k

    measured, seconds = heuristic_top_k(space, measurer, k=k)
    if not measured:
        return MethodResult(space.task.id, "heuristic-top-k", f"Roller-style heuristic, Top-{k}", False,
                            compile_s=seconds, error="the heuristic found no valid program")  # fmt: skip
    best = measured[0]
    return from_measurement(
        space,
        "heuristic-top-k",
        best.latest,
        label=f"Roller-style heuristic, Top-{k} (measured)",
        compile_s=seconds,
        trials=len(measured) + sum(m.again is not None for m in measured),
        sketch_index=best.candidate.sketch_index,
        decisions=list(best.candidate.decisions),
        trace=trace_text(best.candidate.program.trace),
        extra={"k": k, "latencies_s": [m.result.latency for m in measured]},
        mod=best.candidate.program.mod,
    )


def run_tlm(space: Space, measurer: Measurer, generator: Any) -> MethodResult:
    from tlm_core.compile.schedules import tlm_schedule

    _, choice = tlm_schedule(space.task, space, generator)
    gen, program = choice.generations[0], choice.programs[0]
    (result,) = measurer.measure(space.task, [program.mod])  # reports its latency; not part of its cost
    return from_measurement(
        space,
        "tlm",
        result,
        compile_s=choice.seconds,
        sketch_index=gen.sketch_index,
        decisions=list(gen.decisions),
        trace=trace_text(program.trace),
        mod=program.mod,
    )


def run_tlm_best_of_k(space: Space, measurer: Measurer, generator: Any, k: int = 4) -> MethodResult:
    """k distinct candidates by beam search, all measured, the fastest few again; the fastest that passes."""
    from tlm_core.compile.schedules import tlm_schedule

    _, choice = tlm_schedule(space.task, space, generator, k, measurer)
    # none passed its check: the row shows the most likely candidate and why it failed
    best = choice.best if choice.best is not None else 0
    return from_measurement(
        space,
        "tlm-best-of-k",
        choice.chosen or choice.results[best],
        label=f"TLM, best of {k} (beam, measured)",
        compile_s=choice.seconds,
        trials=len(choice.results) + len(choice.again),
        sketch_index=choice.generations[best].sketch_index,
        decisions=list(choice.generations[best].decisions),
        trace=trace_text(choice.programs[best].trace),
        extra={
            "k": k,
            "latencies_s": choice.latencies,
            "again_s": {str(i): r.latency for i, r in choice.again.items()},
        },  # fmt: skip
        mod=choice.programs[best].mod,
    )


def run_search(
    space: Space,
    measurer: Measurer,
    trials: int,
    on_trial: Callable[[Any], None] | None = None,
    seed: int = 0,
    max_seconds: float | None = None,
) -> MethodResult:
    """MetaSchedule's evolutionary search on this task alone; the best trial's program (checked like every trial).
    max_seconds: stop it there with the trials so far (the row's label says so)."""
    from tlm_core.baselines.search import search
    from tlm_core.compile.schedules import Schedule, best_in_database, scheduled_module
    from tlm_core.records import RecordStore

    task = space.task
    with tempfile.TemporaryDirectory() as tmp:
        store = RecordStore(tmp)
        result = search([task], space.target, trials, measurer, store=store, per_iter=max(1, min(16, trials)),
                        seed=seed, on_trial=on_trial, max_seconds=max_seconds)  # fmt: skip
        trace, _ = best_in_database(store.tvm_database(), task, space.target)
    latency = result.best.get(task.id)
    matched = match_trace(space, trace) if trace is not None else None
    return MethodResult(
        task_id=task.id,
        method="search",
        label=f"{LABELS['search']}, {len(result.trials)} trials" + (" (stopped at its time limit)" * result.stopped),
        ok=latency is not None,
        latency=latency,
        gflops=task.flops / latency / 1e9 if latency and task.flops else None,
        compile_s=result.seconds,
        trials=len(result.trials_of(task.id)),
        error=None if latency is not None else "no trial built, ran and passed the numeric check",
        sketch_index=matched[0] if matched else None,
        decisions=matched[1] if matched else None,
        trace=trace_text(trace),
        extra={"convergence": result.convergence(task.id)},
        mod=None if trace is None else scheduled_module(task, Schedule(task.id, "search", trace)),
    )


def run_method(
    method: str,
    space: Space,
    measurer: Measurer,
    generator: Any = None,
    k: int = 4,
    top_k: int = 10,
    trials: int = 16,
    on_trial: Callable[[Any], None] | None = None,
    database: Any = None,
    search_seconds: float | None = None,
) -> MethodResult:
    """One method on one task. generator: for tlm*; database: a UserDatabase for "database"; search_seconds:
    a time limit for search (None: its trials decide).

    A method that fails on the task (no program found, TVM refusing a schedule) gives a failed row saying why,
    never an exception: one method's failure must not abort a comparison of the others. Wrong arguments
    (an unknown method, a missing generator or database) still raise."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; one of {', '.join(METHODS)}")
    if method in ("tlm", "tlm-best-of-k") and generator is None:
        raise ValueError(f"method {method} needs a TLM generator")
    if method == "database" and database is None:
        raise ValueError("method database needs a MetaSchedule database (read_database)")
    start = time.perf_counter()
    try:
        return _run(method, space, measurer, generator, k, top_k, trials, on_trial, database, search_seconds)
    except Exception as err:  # the row says why; the comparison goes on
        label = LABELS[method].replace("Top-k", f"Top-{top_k}").replace("best of k", f"best of {k}")
        return MethodResult(space.task.id, method, label, False, compile_s=time.perf_counter() - start,
                            error=f"{method} failed: {summary(err)}")  # fmt: skip


def _run(method, space, measurer, generator, k, top_k, trials, on_trial, database, search_seconds) -> MethodResult:
    if method == "default":
        return run_default(space, measurer)
    if method == "heuristic":
        return run_heuristic(space, measurer)
    if method == "heuristic-top-k":
        return run_heuristic_top_k(space, measurer, top_k)
    if method == "tlm":
        return run_tlm(space, measurer, generator)
    if method == "tlm-best-of-k":
        return run_tlm_best_of_k(space, measurer, generator, k)
    if method == "search":
        return run_search(space, measurer, trials, on_trial, max_seconds=search_seconds)
    from tlm_core.compare.database import database_result

    return database_result(space, database, measurer)


def side_by_side(space: Space, results: list[MethodResult], measurer: Measurer, rounds: int = 3) -> None:
    """Measure the programs of the space's task's results again, together (Measurer.side_by_side): each
    result's `side_by_side` becomes its median there. Their own latencies come from separate moments, and a
    best-of-k's or a search's is the minimum over many noisy measurements; side by side the comparison is fair."""
    mine = [r for r in results if r.task_id == space.task.id and r.ok and r.mod is not None]
    again = measurer.side_by_side(space.task, {r.method: r.mod for r in mine}, rounds)
    for r in mine:
        r.side_by_side = again[r.method]
