"""Measured results kept per (task, method): the whole-model table and the graph overlay read them.

A later run of the same method on the same task replaces the earlier one, and clears the task's side-by-side
figures (they compare the programs of one moment).
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from tlm_core.compare.method import METHODS, MethodResult
from tlm_core.partition import Task


class Results:
    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], MethodResult] = {}

    def add(self, result: MethodResult) -> None:
        for r in self.of_task(result.task_id):
            r.side_by_side = None
        self._by_key[(result.task_id, result.method)] = result

    def get(self, task_id: str, method: str) -> MethodResult | None:
        return self._by_key.get((task_id, method))

    def of_task(self, task_id: str) -> list[MethodResult]:
        """This task's results, in METHODS order."""
        found = [r for (t, _), r in self._by_key.items() if t == task_id]
        return sorted(found, key=lambda r: METHODS.index(r.method))

    def methods(self) -> list[str]:
        """Methods with at least one result, in METHODS order."""
        have = {m for _, m in self._by_key}
        return [m for m in METHODS if m in have]

    def latency(self, task_id: str, method: str) -> float | None:
        r = self.get(task_id, method)
        return r.latency if r is not None and r.ok else None

    def speedup(self, task_id: str, method: str, baseline: str = "default") -> float | None:
        """baseline latency / method latency (above 1: the method is faster)."""
        mine, base = self.latency(task_id, method), self.latency(task_id, baseline)
        return base / mine if mine and base else None

    def __len__(self) -> int:
        return len(self._by_key)


def task_table(tasks: list[Task], results: Results) -> tuple[list[dict[str, Any]], dict[str, float | None]]:
    """One row per task: its latency (µs) per method measured so far (None: not measured or failed); and per
    method the model's kernel time, sum of latency x calls over tasks, when every task has a result (else None)."""
    methods = results.methods()
    rows = []
    for t in tasks:
        row: dict[str, Any] = {"task": t.id, "name": t.name, "calls": t.weight, "MFLOPs": t.flops / 1e6}
        for m in methods:
            lat = results.latency(t.id, m)
            row[f"{m} (µs)"] = None if lat is None else lat * 1e6
        rows.append(row)
    totals: dict[str, float | None] = {}
    for m in methods:
        lats = [results.latency(t.id, m) for t in tasks]
        totals[m] = sum(lat * t.weight for lat, t in zip(lats, tasks, strict=True)) if all(lats) else None
    return rows, totals


def node_values(graph: nx.DiGraph, results: Results, method: str, metric: str = "latency") -> dict[int, float]:
    """Graph node -> the value to colour it by: "latency" (seconds, of its task under `method`) or "speedup"
    (vs the untuned default). Nodes whose task has no such result are left out (drawn grey)."""
    out = {}
    for node, data in graph.nodes(data=True):
        task = data["task"]
        value = results.latency(task, method) if metric == "latency" else results.speedup(task, method)
        if value is not None:
            out[node] = value
    return out
