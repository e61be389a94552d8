"""Relax's fusion pipeline: pad weight columns (pad.py), legalize operators to TIR, fold weights, fuse, and merge
into fused PrimFuncs."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import relax, tirx
from tvm.target import Target
from tvm_ffi import structural_equal, structural_hash

from tlm_core.partition.pad import pad_weight_columns

# tvm.compile's CPU pipeline legalizes but does not fuse; this is the fusion half of the default pipeline.
_BEFORE_FUSE_TIR = [
    pad_weight_columns,
    relax.transform.DecomposeOpsForInference(),
    relax.transform.CanonicalizeBindings(),
    relax.transform.LegalizeOps(),
    relax.transform.AnnotateTIROpPattern(),
    relax.transform.FoldConstant(),
    relax.transform.FuseOps(),
]
_AFTER_FUSE_TIR = [relax.transform.FuseTIR(), relax.transform.DeadCodeElimination()]

# AnnotateTIROpPattern's codes (relay/op_attr_types.h); fused functions take the largest of their members.
OP_PATTERNS = {0: "elemwise", 1: "broadcast", 2: "injective", 3: "comm_reduce", 4: "out_elemwise_fusable"}


@dataclass
class Fused:
    mod: tvm.IRModule  # Relax "main" calling one PrimFunc per fused subgraph
    ops: dict[str, list[str]]  # fused PrimFunc name -> operators inside, in order
    patterns: dict[str, int]  # fused PrimFunc name -> op pattern code


def _op_name(func_name: str) -> str:
    # LegalizeOps names PrimFuncs after their operator, de-duplicated with a numeric suffix (add, add1, ...)
    return re.sub(r"(?<=[a-z_])\d+$", "", func_name) or func_name


def fuse(mod: tvm.IRModule, target: Target) -> Fused:
    """Fuse a Relax module once (fusing twice renames and recounts subgraphs)."""
    with target, _one_build_per_function():
        mid = tvm.transform.Sequential(_BEFORE_FUSE_TIR)(mod)
    ops: dict[str, list[str]] = {}
    patterns: dict[str, int] = {}
    for gv, func in mid.functions.items():
        if isinstance(func, tirx.PrimFunc):
            ops[gv.name_hint] = [_op_name(gv.name_hint)]
            patterns[gv.name_hint] = int(func.attrs.get("op_pattern", 7)) if func.attrs else 7
    for gv, func in mid.functions.items():
        if isinstance(func, relax.Function) and func.attrs and func.attrs.get("Primitive"):
            members = [c.args[0].name_hint for c in _call_tirs(func)]
            ops[gv.name_hint] = [op for m in members for op in ops[m]]
            patterns[gv.name_hint] = max(patterns[m] for m in members)
    with target:
        fused = tvm.transform.Sequential(_AFTER_FUSE_TIR)(mid)
    names = {gv.name_hint for gv, f in fused.functions.items() if isinstance(f, tirx.PrimFunc)}
    return Fused(fused, {k: v for k, v in ops.items() if k in names}, {k: v for k, v in patterns.items() if k in names})


def _call_tirs(func: relax.Function) -> list[relax.Call]:
    calls: list[relax.Call] = []

    def visit(expr: relax.Expr) -> None:
        if isinstance(expr, relax.Call) and expr.op == tvm.ir.Op.get("relax.call_tir"):
            calls.append(expr)

    relax.analysis.post_order_visit(func.body, visit)
    return calls


_BUILD = "tirx.build"
_build_lock = threading.Lock()


@contextlib.contextmanager
def _one_build_per_function() -> Iterator[None]:
    """While active, "tirx.build" compiles each structurally distinct PrimFunc once and hands back that module.

    FoldConstant evaluates every call_tir on constants (a BatchNorm's statistics, a weight's transpose) by
    compiling its PrimFunc with LLVM, renamed "tir_function", and its own cache misses: ResNet-50 compiled 319
    PrimFuncs of which 19 differ, 95 % of partitioning (the LLVM build and JIT of each). The same function
    compiles to the same code, so the folded constants, and the partition, are unchanged.
    """
    with _build_lock:
        original = tvm.get_global_func(_BUILD)
        built: dict[tuple[int, str, str], list[tuple[Any, Any]]] = {}

        def build(mod: Any, target: Any = None, pipeline: Any = "default") -> Any:
            if not isinstance(mod, tirx.PrimFunc) or not isinstance(pipeline, str):
                return original(mod, target, pipeline)
            same = built.setdefault((structural_hash(mod), str(target), pipeline), [])
            for func, module in same:
                if structural_equal(func, mod):
                    return module
            module = original(mod, target, pipeline)
            same.append((mod, module))
            return module

        tvm.register_global_func(_BUILD, build, override=True)
        try:
            yield
        finally:
            tvm.register_global_func(_BUILD, original, override=True)
