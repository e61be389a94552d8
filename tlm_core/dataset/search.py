"""Strong fine-tuning targets, the searchers of collect's Sources: a short Ansor-style search of each task, or
the Roller-style heuristic's best candidates.

The best of ~128 random programs is a weak target (issue 3): search of 32 trials beat it on only 10 of 35
tasks, and hundreds of trials per task cost hours here. The heuristic's candidates cost one measurement each
and are strong where its rules fit (matmuls: register tiles of 8 rows x 2 vectors). The best programs are
measured again before they are stored: on a noisy machine the best of many single timings is often a lucky one.
"""

from __future__ import annotations

import tempfile

from tlm_core.baselines.search import search
from tlm_core.measure import MeasureResult
from tlm_core.partition import Task
from tlm_core.records import RecordStore
from tlm_core.space import Space

from .collect import MeasurerLike, Searcher
from .traces import program_key, trace_json


def best_of_search(top: int = 4) -> Searcher:
    """A searcher for collect: search the task alone for `trials`, re-measure its `top` best programs, and return
    those whose re-measurement passed (trace, result)."""
    from tlm_core.program import traced_module

    def searcher(
        task: Task, space: Space, measurer: MeasurerLike, trials: int, known: set[str]
    ) -> list[tuple[object, MeasureResult]]:
        if known:  # searched in an earlier run: a second search would mostly find the same programs
            return []
        with tempfile.TemporaryDirectory() as tmp:
            store = RecordStore(tmp)
            search([task], measurer.target, trials, measurer, store=store)  # type: ignore[arg-type]
            db = store.tvm_database()
            traces = [r.trace for r in db.get_top_k(db.commit_workload(task.mod), top)]
        mods = [traced_module(task.mod, t) for t in traces]
        results = measurer.measure(task, mods) if mods else []
        return [(t, r) for t, r in zip(traces, results, strict=True) if r.ok]

    return searcher


def heuristic_top(top: int = 4) -> Searcher:
    """A searcher for collect: measure the heuristic's `budget` best candidates (by its own model) that are not
    `known` yet, then measure the `top` fastest again; returns every first measurement and the re-measurements
    (two records each). After a change to the heuristic's rules, a rerun adds only the programs it now builds."""
    from tlm_core.baselines.heuristic import heuristic_candidates

    def searcher(
        task: Task, space: Space, measurer: MeasurerLike, budget: int, known: set[str]
    ) -> list[tuple[object, MeasureResult]]:
        cands = heuristic_candidates(space, k=budget)
        cands = [c for c in cands if program_key(trace_json(c.program.trace)) not in known]
        results = measurer.measure(task, [c.program.mod for c in cands]) if cands else []
        found = [(c.program.trace, r) for c, r in zip(cands, results, strict=True)]
        best = sorted((r.latency, i) for i, (_, r) in enumerate(found) if r.ok)[:top]
        again = measurer.measure(task, [cands[i].program.mod for _, i in best]) if best else []
        return found + [(cands[i].program.trace, r) for (_, i), r in zip(best, again, strict=True) if r.ok]

    return searcher
