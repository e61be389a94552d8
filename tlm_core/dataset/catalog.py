"""The task catalogue of a collection: every task of every model variant, saved so a resume skips loading.

catalog.jsonl holds one line per variant, appended when the variant has been loaded and partitioned:
    {"variant": name, "tasks": [{"id", "name", "ops", "flops", "weight", "workload"}, ...]}
where "workload" is the task's line of MetaSchedule's workload.json (structural hash, base64 IRModule), so
a task is rebuilt without the model, and training can rebuild every space from this file alone.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tlm_core.partition.task import Task
from tlm_core.records.jsonl import append_line, dumps

from .variants import Variant, variant_tasks

CATALOG_FILE = "catalog.jsonl"


@dataclass
class CatalogTask:
    id: str
    name: str
    ops: list[str]
    flops: float
    workload: str  # a workload.json line
    models: dict[str, int] = field(default_factory=dict)  # variant -> weight (calls) in it

    def task(self) -> Task:
        from .files import workload_mod

        return Task(id=self.id, name=self.name, mod=workload_mod(self.workload), ops=self.ops, flops=self.flops)


class Catalog:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.tasks: dict[str, CatalogTask] = {}  # in order of first appearance
        self.variants: list[str] = []
        from .files import open_lines

        for line in open_lines(self.path):  # catalog.jsonl, or catalog.jsonl.gz when packed
            self._add(json.loads(line))

    def _add(self, entry: dict) -> None:
        self.variants.append(entry["variant"])
        for t in entry["tasks"]:
            known = self.tasks.setdefault(t["id"], CatalogTask(t["id"], t["name"], t["ops"], t["flops"], t["workload"]))
            known.models[entry["variant"]] = t["weight"]

    def add(self, variant: str, tasks: list[Task]) -> None:
        from tvm.s_tir import meta_schedule as ms

        rows = [
            {
                "id": t.id,
                "name": t.name,
                "ops": t.ops,
                "flops": t.flops,
                "weight": t.weight,
                "workload": dumps(ms.database.Workload(t.mod).as_json()),
            }
            for t in tasks
        ]
        entry = {"variant": variant, "tasks": rows}
        append_line(self.path, dumps(entry))
        self._add(entry)

    def ensure(self, variants: list[Variant], target, log: Callable[[str], None] = print) -> None:
        """Load and partition every variant not yet in the catalogue (the slow part: seconds to minutes)."""
        for v in variants:
            if v.name in self.variants:
                continue
            log(f"loading and partitioning {v.name}")
            tasks = variant_tasks(v, target)
            self.add(v.name, tasks)
            log(f"{v.name}: {len(tasks)} tasks ({len(self.tasks)} unique so far)")
            del tasks
            gc.collect()  # the model, its export and Relax module are garbage now: free them before the next

    def for_variants(self, names: list[str]) -> list[CatalogTask]:
        return [t for t in self.tasks.values() if any(n in t.models for n in names)]
