"""Per-task schedules chosen by a method: the heuristic, TVM's default, or a MetaSchedule database.

A Schedule is one task's trace (None = leave the task untuned) with where it came from; compile_model
turns a {task id: Schedule} mapping into one executable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tvm.s_tir import Trace
from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from tlm_core.partition import Partition, Task

METHODS = ("default", "heuristic", "search", "tlm")  # or a path to a MetaSchedule JSONDatabase


@dataclass
class Schedule:
    task_id: str
    method: str
    trace: Trace | None  # None: the untuned task (TVM's default)
    seconds: float = 0.0  # time to produce it (generation, or search including measurements)
    trials: int = 0  # programs measured to find it
    latency: float | None = None  # the kernel's measured latency when known, seconds


def default_schedules(part: Partition) -> dict[str, Schedule]:
    """TVM with no tuning: every task keeps its naive loops."""
    return {t.id: Schedule(t.id, "default", None) for t in part.tasks}


def heuristic_schedules(
    part: Partition, space_of: Callable[[Task], object], progress: Callable[[Task], None] | None = None
) -> dict[str, Schedule]:
    """Top-1 of the Roller-style heuristic for every task (no measurement)."""
    from tlm_core.baselines.heuristic import heuristic_program

    out = {}
    for task in part.tasks:
        if progress:
            progress(task)
        start = time.perf_counter()
        cand = heuristic_program(space_of(task))
        out[task.id] = Schedule(task.id, "heuristic", cand.program.trace, time.perf_counter() - start)
    return out


def load_database(path: str | Path) -> ms.database.Database:
    """A MetaSchedule JSONDatabase from a directory (workload.json + tuning_record.json) or either file."""
    path = Path(path)
    directory = path if path.is_dir() else path.parent
    workload, records = directory / "workload.json", directory / "tuning_record.json"
    if not workload.exists() or not records.exists():
        raise FileNotFoundError(f"{directory} holds no MetaSchedule database (workload.json, tuning_record.json)")
    return ms.database.JSONDatabase(path_workload=str(workload), path_tuning_record=str(records))


def database_schedules(db: ms.database.Database, part: Partition, target: Target, method: str) -> dict[str, Schedule]:
    """The best record of each task in a database (tasks it does not know stay untuned)."""
    out = {}
    for task in part.tasks:
        trace, latency = best_in_database(db, task, target)
        out[task.id] = Schedule(task.id, method, trace, latency=latency)
    return out


def best_in_database(db: ms.database.Database, task: Task, target: Target) -> tuple[Trace | None, float | None]:
    if not db.has_workload(task.mod):
        return None, None
    records = db.get_top_k(db.commit_workload(task.mod), 1)
    if not records:
        return None, None
    secs = [float(s) for s in records[0].run_secs or []]
    return records[0].trace, (sorted(secs)[len(secs) // 2] if secs else None)


def search_schedules(part: Partition, target: Target, trials: int, measurer, store, on_trial=None):
    """Ansor-style evolutionary search over every task (records into `store`), then each task's best.

    Returns (schedules, SearchResult); a task's seconds are its share of the search's wall time by trials."""
    from tlm_core.baselines.search import search

    result = search(part.tasks, target, trials, measurer, store=store, on_trial=on_trial)
    out = database_schedules(store.tvm_database(), part, target, "search")
    total = max(1, len(result.trials))
    for task in part.tasks:
        mine = len(result.trials_of(task.id))
        out[task.id].trials = mine
        out[task.id].seconds = result.seconds * mine / total
    return out, result
