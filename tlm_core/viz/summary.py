"""Numbers and tables about a partitioned model: its summary and a searchable list of subgraph calls."""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx

from tlm_core.partition import Partition


def model_summary(part: Partition) -> dict[str, float | int | None]:
    """Operators (instances and distinct kinds), parameters (weight constants), FLOPs, calls and tasks."""
    g = part.graph
    ops = Counter(op for _, d in g.nodes(data=True) for op in d["ops"] for _ in range(d.get("repeat", 1)))
    weights = [i["shape"] for _, d in g.nodes(data=True) for i in d["inputs"] if i.get("from") == "weight"]
    params = sum(math.prod(s) for s in weights if s is not None) if weights else None
    return {
        "operators": sum(ops.values()),
        "distinct operators": len(ops),
        "parameters": params,
        "GFLOP": part.total_flops / 1e9,
        "subgraph calls": sum(d.get("repeat", 1) for _, d in g.nodes(data=True)),
        "graph nodes": g.number_of_nodes(),
        "tasks": len(part.tasks),
    }


def operator_counts(part: Partition) -> list[dict]:
    """How often each operator occurs in the model, most frequent first."""
    ops = Counter(op for _, d in part.graph.nodes(data=True) for op in d["ops"])
    return [{"operator": op, "count": n} for op, n in ops.most_common()]


def subgraph_rows(graph: nx.DiGraph, query: str = "", kinds: list[str] | None = None) -> list[dict]:
    """The graph's calls as table rows, filtered by a search text (name, operators, task id) and kinds."""
    query = query.strip().lower()
    rows = []
    for n, d in graph.nodes(data=True):
        if kinds and d["kind"] not in kinds:
            continue
        haystack = " ".join([str(n), d["func"], d["task"], " ".join(d["ops"])]).lower()
        if query and query not in haystack:
            continue
        out = d["outputs"][0]["shape"] if d["outputs"] else None
        rows.append(
            {
                "node": n,
                "subgraph": d["func"],
                "kind": d["kind"],
                "operators": " + ".join(d["ops"]),
                "output": str(out),
                "MFLOPs": d["flops"] / 1e6,
                "task": d["task"],
            }
        )
    return rows


def fused_bytes_saved(graph: nx.DiGraph, node: int) -> int:
    """Bytes of intermediate tensors fusion keeps out of memory in one call: every operator but the last
    would otherwise write its output (the size of the call's output) and the next would read it back."""
    d = graph.nodes[node]
    if not d["outputs"] or d["outputs"][0]["shape"] is None:
        return 0
    out = d["outputs"][0]
    itemsize = 8 if "64" in out["dtype"] else 2 if "16" in out["dtype"] else 1 if "8" in out["dtype"] else 4
    return 2 * (len(d["ops"]) - 1) * math.prod(out["shape"]) * itemsize
