"""Strong fine-tuning targets: the best programs of a short Ansor-style search of each task (collect's searcher).

The best of ~32 random programs is a weak target (issue 3); a search of a few dozen trials finds far faster ones.
Its best programs are measured again before they are stored: a search keeps each program's single timing, and
on a noisy machine the best of many single timings is often a lucky one.
"""

from __future__ import annotations

import tempfile

from tlm_core.baselines.search import search
from tlm_core.measure import MeasureResult
from tlm_core.partition import Task
from tlm_core.records import RecordStore
from tlm_core.space import Space

from .collect import MeasurerLike, Searcher


def best_of_search(top: int = 4) -> Searcher:
    """A searcher for collect: search the task alone for `trials`, re-measure its `top` best programs, and return
    those whose re-measurement passed (trace, result)."""
    from tlm_core.compile.schedules import Schedule, scheduled_module

    def searcher(task: Task, space: Space, measurer: MeasurerLike, trials: int) -> list[tuple[object, MeasureResult]]:
        with tempfile.TemporaryDirectory() as tmp:
            store = RecordStore(tmp)
            search([task], measurer.target, trials, measurer, store=store)  # type: ignore[arg-type]
            db = store.tvm_database()
            traces = [r.trace for r in db.get_top_k(db.commit_workload(task.mod), top)]
        mods = [scheduled_module(task, Schedule(task.id, "search", t)) for t in traces]
        results = measurer.measure(task, mods) if mods else []
        return [(t, r) for t, r in zip(traces, results, strict=True) if r.ok]

    return searcher
