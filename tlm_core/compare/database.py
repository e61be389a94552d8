"""A user's own MetaSchedule JSONDatabase (from their tuning), compared per task with the other methods.

Reading and checking the files is tlm_core.compile.database's (save_database checks an upload as plain JSON
data first, nothing is unpickled or executed; check_database has TVM load every workload and trace in a helper
process first and leaves out, with the reason, what fails, hangs or crashes there). Tasks are matched by their
workload's structural hash (TVM's own `has_workload`); the best record of a task is re-measured here, on this
machine, with the numeric check, and the latency the user recorded is kept beside it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from tvm.s_tir import meta_schedule as ms

from tlm_core.compare.method import LABELS, MethodResult, from_measurement, match_trace, trace_text
from tlm_core.compile.database import DATABASE_MAX_BYTES, DatabaseError, check_database, save_database
from tlm_core.compile.schedules import Schedule, best_in_database, scheduled_module
from tlm_core.errors import first_line
from tlm_core.measure import Measurer
from tlm_core.partition import Task
from tlm_core.partition.task import task_id
from tlm_core.records.store import FAILED_RUN_SECS
from tlm_core.space import Space

__all__ = ["DatabaseError", "UserDatabase", "database_from_files", "database_result", "read_database"]


@dataclass
class UserDatabase:
    db: ms.database.Database
    workload_ids: list[str]  # task ids (structural hashes) of the workloads its records tune
    records: int  # usable ones
    source: str = ""
    problems: list[str] = field(default_factory=list)  # one line per workload or record left out, with why
    skipped: dict[str, list[str]] = field(default_factory=dict)  # task id -> why its records were left out

    def coverage(self, tasks: list[Task]) -> tuple[list[str], list[str], int]:
        """(ids of the tasks it has a record for, ids of those it lacks, its workloads matching no task)."""
        covered = [t.id for t in tasks if self.db.has_workload(t.mod)]
        missing = [t.id for t in tasks if t.id not in covered]
        return covered, missing, len(set(self.workload_ids) - {t.id for t in tasks})

    def summary(self, tasks: list[Task]) -> dict:
        covered, missing, foreign = self.coverage(tasks)
        return {"source": self.source, "records": self.records, "covered": covered, "missing": missing,
                "foreign_workloads": foreign, "problems": self.problems}  # fmt: skip


def read_database(path: str | Path, source: str | None = None) -> UserDatabase:
    """A JSONDatabase directory (or either of its files): its usable records (see check_database)."""
    checked = check_database(path)
    ids = sorted({task_id(r.workload.mod) for r in checked.db.get_all_tuning_records()})
    return UserDatabase(checked.db, ids, checked.records, source or str(path), checked.problems, checked.skipped)


def database_from_files(
    workload: bytes, records: bytes, directory: str | Path, max_bytes: int = DATABASE_MAX_BYTES, source: str = "upload"
) -> UserDatabase:
    """An uploaded pair of files (workload.json, tuning_record.json): checked, written into `directory`, loaded."""
    return read_database(save_database(workload, records, directory, max_bytes), source)


def database_result(space: Space, user: UserDatabase, measurer: Measurer) -> MethodResult:
    """The database's best record of this task, applied and re-measured here (with the numeric check)."""
    task = space.task
    if not user.db.has_workload(task.mod):
        return _failed(task, "the database has no record of this task")
    start = time.perf_counter()
    trace, recorded = best_in_database(user.db, task, space.target)
    if trace is None and task.id in user.skipped:  # its records were left out: say why
        return _failed(task, f"no usable record of this task; {user.skipped[task.id][0]}")
    if trace is None:
        return _failed(task, "the database knows this task but has no successful record of it")
    try:
        mod = scheduled_module(task, Schedule(task.id, "database", trace))
    except Exception as err:
        return _failed(task, f"its best trace does not apply to this task here: {first_line(err)}")
    seconds = time.perf_counter() - start
    (result,) = measurer.measure(task, [mod])
    matched = match_trace(space, trace)
    recorded_ok = recorded is not None and recorded < FAILED_RUN_SECS and math.isfinite(recorded)
    return from_measurement(
        space,
        "database",
        result,
        compile_s=seconds,
        sketch_index=matched[0] if matched else None,
        decisions=matched[1] if matched else None,
        trace=trace_text(trace),
        extra={"recorded_latency_s": recorded if recorded_ok else None, "source": user.source},
        mod=mod,
    )


def _failed(task: Task, error: str) -> MethodResult:
    return MethodResult(task.id, "database", LABELS["database"], False, error=error)
