"""Reading record directories: plain or gzip-compressed MetaSchedule JSON-lines files.

A record directory holds workload.json and tuning_record.json (a live RecordStore), or the same files as
workload.json.gz / tuning_record.json.gz (packed into the repository). Both read the same way here.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tlm_core.records.store import RECORD_FILE, WORKLOAD_FILE, Record, task_id_of_hash


def open_lines(path: Path) -> list[str]:
    """Complete lines of path or path.gz (a torn last line of a live file is left out)."""
    if path.exists():
        data = path.read_bytes()
        return data[: data.rfind(b"\n") + 1].decode().splitlines()
    gz = path.with_name(path.name + ".gz")
    if gz.exists():
        return gzip.decompress(gz.read_bytes()).decode().splitlines()
    return []


def read_workloads(directory: str | Path) -> list[tuple[str, str]]:
    """(task id, the workload line as TVM wrote it) per line of workload.json."""
    out = []
    for line in open_lines(Path(directory) / WORKLOAD_FILE):
        out.append((task_id_of_hash(json.loads(line)[0]), line))
    return out


def read_records(directory: str | Path) -> list[Record]:
    task_ids = [tid for tid, _ in read_workloads(directory)]
    return [Record.from_line(line, task_ids) for line in open_lines(Path(directory) / RECORD_FILE)]


def workload_mod(line: str):
    """The IRModule of a workload.json line (imports TVM)."""
    from tvm.s_tir import meta_schedule as ms

    return ms.database.Workload.from_json(json.loads(line)).mod
