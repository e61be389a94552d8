"""Partition a model into fused subgraphs, their call graph, and the unique tuning tasks.

Pipeline step 2 of 8, after tlm_core.frontend: tlm_core.space builds each task's schedule space next.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import tvm
from tvm import relax, tirx
from tvm.target import Target

from tlm_core.frontend.model import LoadedModel
from tlm_core.partition.fuse import OP_PATTERNS, Fused, fuse
from tlm_core.partition.graph import build_graph, call_sites
from tlm_core.partition.kinds import KINDS, subgraph_kind
from tlm_core.partition.task import Task, task_from_primfunc, task_id, te_prim_func, workload_mod

__all__ = ["KINDS", "OP_PATTERNS", "Partition", "Task", "partition", "task_from_primfunc", "task_id", "te_prim_func"]


@dataclass
class Partition:
    mod: tvm.IRModule  # the fused module: Relax "main" calling fused PrimFuncs (or PrimFuncs only)
    graph: nx.DiGraph  # node = one call (attrs: func, task, kind, ops, inputs, outputs, flops, repeat)
    tasks: list[Task]  # unique workloads, in order of first call

    def task(self, id_or_name: str) -> Task:
        """A task by id, id prefix, or fused function name."""
        for t in self.tasks:
            if id_or_name in (t.id, t.name):
                return t
        matches = [t for t in self.tasks if t.id.startswith(id_or_name)]
        if len(matches) == 1:
            return matches[0]
        known = ", ".join(t.id for t in self.tasks[:8]) + (" ..." if len(self.tasks) > 8 else "")
        raise KeyError(f"no task {id_or_name!r} in this model (tasks: {known})")

    @property
    def total_flops(self) -> float:
        return sum(t.flops * t.weight for t in self.tasks)


def partition(model: LoadedModel | tvm.IRModule, target: Target) -> Partition:
    """Fuse the model and group its calls into tasks (weight = number of calls, times repeats)."""
    loaded = model if isinstance(model, LoadedModel) else None
    mod = model.mod if isinstance(model, LoadedModel) else model
    repeats = loaded.call_repeats if loaded else {}
    main = mod.functions.get(mod.get_global_var("main")) if "main" in [g.name_hint for g in mod.functions] else None
    if not isinstance(main, relax.Function):
        return _primfuncs_only(mod)

    fused: Fused = fuse(mod, target)
    calls, outputs = call_sites(fused.mod["main"])
    by_id: dict[str, Task] = {}
    attrs: dict[int, dict] = {}
    for site in calls:
        func = fused.mod[site.func]
        wmod = workload_mod(func)
        tid = task_id(wmod)
        task = by_id.get(tid)
        if task is None:
            ops = fused.ops.get(site.func, [site.func])
            task = Task(id=tid, name=site.func, mod=wmod, ops=ops, flops=_flops(wmod), weight=0)
            by_id[tid] = task
        repeat = repeats.get(site.index, 1)
        task.weight += repeat
        task.calls.append(site.index)
        pattern = fused.patterns.get(site.func, 7)
        attrs[site.index] = {
            "task": tid,
            "ops": task.ops,
            "kind": subgraph_kind(task.ops, pattern),
            "pattern": OP_PATTERNS.get(pattern, "opaque"),
            "flops": task.flops,
            "repeat": repeat,
        }
    return Partition(mod=fused.mod, graph=build_graph(calls, outputs, attrs), tasks=list(by_id.values()))


def _flops(mod: tvm.IRModule) -> float:
    from tvm.s_tir.analysis import estimate_tir_flops

    return float(estimate_tir_flops(mod))


def _primfuncs_only(mod: tvm.IRModule) -> Partition:
    """A module of PrimFuncs (a TVMScript operator): one task and one graph node per function."""
    graph = nx.DiGraph()
    tasks: list[Task] = []
    for i, (gv, func) in enumerate(mod.functions.items()):
        if not isinstance(func, tirx.PrimFunc):
            continue
        task = task_from_primfunc(func, gv.name_hint)
        task.calls.append(i)
        tasks.append(task)
        graph.add_node(
            i,
            var=gv.name_hint,
            func=gv.name_hint,
            task=task.id,
            ops=task.ops,
            kind=subgraph_kind([gv.name_hint], 7),
            pattern="opaque",
            flops=task.flops,
            repeat=1,
            inputs=[{"shape": list(s), "dtype": d, "from": "input"} for _, s, d in task.params[:-1]],
            outputs=[{"shape": list(task.params[-1][1]), "dtype": task.params[-1][2]}],
            model_inputs=[n for n, _, _ in task.params[:-1]],
            is_output=True,
        )
    if not tasks:
        raise ValueError("the module holds neither a Relax 'main' function nor any PrimFunc")
    return Partition(mod=mod, graph=graph, tasks=tasks)
