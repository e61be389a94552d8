"""Every measured program, in MetaSchedule's JSONDatabase format (two JSON-lines files TVM itself reads).

    workload.json       one line per workload:  [structural hash as a string, base64 of the IRModule's JSON]
    tuning_record.json  one line per program:   [workload line index, [trace, run_secs, target, args_info]]

The content of each line is TVM's own `Workload.as_json()` / `TuningRecord.as_json()`; only the writing
is ours, so that every line is appended durably (tlm_core.records.jsonl) and a kill never corrupts earlier
records. `ms.database.JSONDatabase(path_workload=..., path_tuning_record=...)` loads the same files.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.schedule import Schedule, Trace
from tvm.target import Target

from tlm_core.measure.result import MeasureResult
from tlm_core.partition.task import Task
from tlm_core.records.jsonl import append_line, dumps, locked, read_lines, repair
from tlm_core.target import host_target

FAILED_RUN_SECS = 1e10  # what MetaSchedule's AddToDatabase stores when a measurement failed
WORKLOAD_FILE = "workload.json"
RECORD_FILE = "tuning_record.json"


def task_id_of_hash(shash: str) -> str:
    """A workload's task id from its structural hash, as tlm_core.partition.task.task_id computes it."""
    return f"{int(shash) & 0xFFFFFFFFFFFF:012x}"


@dataclass
class Record:
    task_id: str
    workload_index: int  # line of workload.json
    trace: list  # MetaSchedule's trace JSON: [instructions, decisions]
    run_secs: list[float]  # every repeat's latency; [1e10] when the measurement failed
    target: dict
    args_info: list | None

    @property
    def decisions(self) -> list:
        """[[instruction index, decision], ...], as MetaSchedule stores them."""
        return self.trace[1]

    @property
    def ok(self) -> bool:
        """Measured successfully (TVM's TuningRecord.IsValid: some run_secs other than the 1e10 stub)."""
        return any(s != FAILED_RUN_SECS for s in self.run_secs)

    @property
    def latency(self) -> float | None:
        return statistics.median(self.run_secs) if self.ok else None

    @classmethod
    def from_line(cls, line: str, task_ids: list[str]) -> Record:
        index, (trace, run_secs, target, args_info) = json.loads(line)
        return cls(task_ids[index], index, trace, [float(s) for s in run_secs or []], target, args_info)


class RecordStore:
    """An append-only store of measured programs in `directory` (created if missing)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.workload_path = self.directory / WORKLOAD_FILE
        self.record_path = self.directory / RECORD_FILE
        self._lock_path = self.directory / ".lock"
        self._task_ids: list[str] = []  # workload line -> task id
        self._workloads: dict[str, ms.database.Workload] = {}  # task id -> TVM workload (built on demand)
        with locked(self._lock_path):
            repair(self.workload_path)
            repair(self.record_path)
            self._read_workloads()

    def append(self, task: Task, trace: Trace | None, result: MeasureResult, target: Target | None = None) -> Record:
        """Record one measured program (failed ones too, with run_secs [1e10] as MetaSchedule does).

        trace None stands for the untuned program (an empty trace: TVM loads such a record, but its
        get_top_k / query_* skip it, as TuningRecord.IsValid wants an instruction); target defaults to
        host_target()."""
        target = target or host_target()
        trace = trace if trace is not None else Schedule(task.mod).trace
        run_secs = result.latencies if result.ok and result.latencies else [FAILED_RUN_SECS]
        with locked(self._lock_path):
            self._read_workloads()  # another process may have added some
            if task.id not in self._task_ids:
                append_line(self.workload_path, dumps(self._workload(task).as_json()))
                self._task_ids.append(task.id)
            index = self._task_ids.index(task.id)
            args_info = ms.arg_info.ArgInfo.from_prim_func(task.func)
            record = ms.database.TuningRecord(trace, self._workload(task), run_secs, target, args_info)
            line = dumps([index, record.as_json()])
            append_line(self.record_path, line)
        return Record.from_line(line, self._task_ids)

    def __len__(self) -> int:
        return len(read_lines(self.record_path))

    def records(self, task_id: str | None = None) -> list[Record]:
        self._read_workloads()
        found = (Record.from_line(line, self._task_ids) for line in read_lines(self.record_path))
        return [r for r in found if task_id is None or r.task_id == task_id]

    def best(self, task_id: str) -> Record | None:
        """The fastest successful record of a task, or None."""
        measured = [r for r in self.records(task_id) if r.ok]
        return min(measured, key=lambda r: r.latency) if measured else None

    def tvm_database(self) -> ms.database.JSONDatabase:
        """TVM's own JSONDatabase over the same files (e.g. for MetaScheduleApplyDatabase)."""
        with locked(self._lock_path):
            repair(self.workload_path)
            repair(self.record_path)
            return ms.database.JSONDatabase(
                path_workload=str(self.workload_path), path_tuning_record=str(self.record_path)
            )

    def _read_workloads(self) -> None:
        lines = read_lines(self.workload_path)
        for line in lines[len(self._task_ids) :]:
            self._task_ids.append(task_id_of_hash(json.loads(line)[0]))

    def _workload(self, task: Task) -> ms.database.Workload:
        if task.id not in self._workloads:
            self._workloads[task.id] = ms.database.Workload(task.mod)
        return self._workloads[task.id]
