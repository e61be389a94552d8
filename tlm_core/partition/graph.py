"""The call graph of a fused module: one node per call of a fused PrimFunc, edges along the data flow."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import tvm
from tvm import relax


@dataclass
class CallSite:
    index: int  # position in execution order
    var: str  # the Relax variable bound to the call's result
    func: str  # the fused PrimFunc it calls
    inputs: list[dict]  # per argument: shape, dtype, and what produced it ("call", "input" or "weight")
    outputs: list[dict]  # per result tensor: shape, dtype
    producers: set[int]  # calls whose results it reads
    model_inputs: list[str]  # model inputs it reads directly


def _tensor(ty) -> dict:
    if isinstance(ty, relax.TensorType) and ty.shape is not None:
        return {"shape": [int(d) for d in ty.shape.values], "dtype": str(ty.dtype)}
    return {"shape": None, "dtype": str(getattr(ty, "dtype", "?"))}


def _fields(expr: relax.Expr) -> list[relax.Expr]:
    return list(expr.fields) if isinstance(expr, relax.Tuple) else [expr]


def call_sites(main: relax.Function) -> tuple[list[CallSite], set[int]]:
    """The calls of `main` in order and the calls whose results the model returns.

    Non-call bindings (aliases, tuples, tuple-get-item) are looked through: a variable's producers are
    the calls its value was computed from.
    """
    call_tir = tvm.ir.Op.get("relax.call_tir")
    params = {p.name for p in main.params}
    producers_of: dict[str, set[int]] = {}
    calls: list[CallSite] = []

    def producers(expr: relax.Expr) -> set[int]:
        found: set[int] = set()
        for v in relax.analysis.free_vars(expr):
            found |= producers_of.get(v.name, set())
        return found

    def model_inputs(expr: relax.Expr) -> list[str]:
        return [v.name for v in relax.analysis.free_vars(expr) if v.name in params]

    for block in main.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and value.op == call_tir:
                args = _fields(value.args[1])
                inputs = []
                for arg in args:
                    info = _tensor(arg.ty)
                    if isinstance(arg, tvm.ir.expr.Constant):
                        info["from"] = "weight"
                    elif isinstance(arg, relax.Var) and arg.name in params:
                        info["from"] = "input"
                    else:
                        info["from"] = "call"
                    inputs.append(info)
                ty = binding.var.ty
                outs = [_tensor(t) for t in ty.fields] if isinstance(ty, relax.TupleType) else [_tensor(ty)]
                site = CallSite(
                    index=len(calls),
                    var=binding.var.name,
                    func=value.args[0].name_hint,
                    inputs=inputs,
                    outputs=outs,
                    producers=producers(value.args[1]),
                    model_inputs=model_inputs(value.args[1]),
                )
                calls.append(site)
                producers_of[binding.var.name] = {site.index}
            else:
                producers_of[binding.var.name] = producers(value)
    return calls, producers(main.body.body)


def build_graph(calls: list[CallSite], outputs: set[int], node_attrs: dict[int, dict]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for site in calls:
        graph.add_node(
            site.index,
            var=site.var,
            func=site.func,
            inputs=site.inputs,
            outputs=site.outputs,
            model_inputs=site.model_inputs,
            is_output=site.index in outputs,
            **node_attrs[site.index],
        )
    for site in calls:
        for p in sorted(site.producers):
            graph.add_edge(p, site.index, shape=calls[p].outputs[0]["shape"])
    return graph
