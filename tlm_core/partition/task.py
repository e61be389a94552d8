"""A tuning task: one unique fused subgraph (workload), with how often the model calls it."""

from __future__ import annotations

from dataclasses import dataclass, field

import tvm
from tvm import tirx
from tvm.s_tir.analysis import estimate_tir_flops
from tvm_ffi.structural import structural_hash


@dataclass
class Task:
    id: str  # stable id: hex of the structural hash of `mod` (same workload -> same id, across runs)
    name: str  # the fused function's name at its first call site, e.g. "fused_conv2d_add_relu"
    mod: tvm.IRModule  # one PrimFunc named "main": the workload MetaSchedule tunes
    ops: list[str]  # the operators fused into it, in order, e.g. ["conv2d", "add", "relu"]
    flops: float  # floating-point operations of one call
    weight: int = 1  # how many times the model calls it (a whole model's calls add up to the weights)
    calls: list[int] = field(default_factory=list)  # indices of its calls in the partition graph

    @property
    def func(self) -> tirx.PrimFunc:
        return self.mod["main"]

    @property
    def params(self) -> list[tuple[str, tuple[int, ...], str]]:
        """(name, shape, dtype) of every buffer argument, in call order (outputs last)."""
        return [(p.name, tuple(int(d) for d in p.shape), str(p.dtype)) for p in self.func.params]


def workload_mod(func: tirx.PrimFunc) -> tvm.IRModule:
    """The canonical IRModule for a PrimFunc: named "main", as MetaSchedule expects."""
    return tvm.IRModule({"main": func.with_attr("global_symbol", "main")})


def task_id(mod: tvm.IRModule) -> str:
    return f"{structural_hash(mod) & 0xFFFFFFFFFFFF:012x}"


def te_prim_func(tensors: list) -> tirx.PrimFunc:
    """The PrimFunc of TE tensors (inputs, then outputs), as a TVMScript operator has it: without
    "layout_free_buffers", so no weight layout rewrite (which needs constant weights) enters its space."""
    from tvm import te

    func = te.create_prim_func(list(tensors))
    return func.without_attr("layout_free_buffers") if func.attrs and "layout_free_buffers" in func.attrs else func


def task_from_primfunc(func: tirx.PrimFunc, name: str = "main", ops: list[str] | None = None) -> Task:
    """A task for a single PrimFunc (e.g. one read from a TVMScript file)."""
    mod = workload_mod(func)
    return Task(id=task_id(mod), name=name, mod=mod, ops=ops or [name], flops=float(estimate_tir_flops(mod)))
