"""Reading record directories without TVM: plain or gzip-compressed MetaSchedule JSON-lines files.

A record directory holds workload.json and tuning_record.json (a live RecordStore), or the same files as
workload.json.gz / tuning_record.json.gz (packed into the repository). Both read the same way here.
"""

from __future__ import annotations

import gzip
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from tlm_core.records.store import FAILED_RUN_SECS, RECORD_FILE, WORKLOAD_FILE, task_id_of_hash


def open_lines(path: Path) -> list[str]:
    """Complete lines of path or path.gz (a torn last line of a live file is left out)."""
    if path.exists():
        data = path.read_bytes()
        return data[: data.rfind(b"\n") + 1].decode().splitlines()
    gz = path.with_name(path.name + ".gz")
    if gz.exists():
        return gzip.decompress(gz.read_bytes()).decode().splitlines()
    return []


@dataclass
class RawRecord:
    task_id: str
    trace: list
    run_secs: list[float]

    @property
    def ok(self) -> bool:
        return any(s != FAILED_RUN_SECS for s in self.run_secs)

    @property
    def latency(self) -> float | None:
        return statistics.median(self.run_secs) if self.ok else None


def read_workloads(directory: str | Path) -> list[tuple[str, str]]:
    """(task id, the workload line as TVM wrote it) per line of workload.json."""
    out = []
    for line in open_lines(Path(directory) / WORKLOAD_FILE):
        out.append((task_id_of_hash(json.loads(line)[0]), line))
    return out


def read_records(directory: str | Path) -> list[RawRecord]:
    task_ids = [tid for tid, _ in read_workloads(directory)]
    out = []
    for line in open_lines(Path(directory) / RECORD_FILE):
        index, (trace, run_secs, *_rest) = json.loads(line)
        out.append(RawRecord(task_ids[index], trace, [float(s) for s in run_secs or []]))
    return out


def workload_mod(line: str):
    """The IRModule of a workload.json line (imports TVM)."""
    from tvm.s_tir import meta_schedule as ms

    return ms.database.Workload.from_json(json.loads(line)).mod
