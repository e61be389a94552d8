"""The micro performance model: a latency estimate of a constructed program (its ranking is what matters), and
its refinement on the built program (parallel launches)."""

from __future__ import annotations

import math
from typing import Any

from tvm import tirx
from tvm.s_tir import SBlockRealize

from ...space import CATEGORICAL, TILE, Decision, Space
from ...space.sketch import Sketch
from ..hardware import Hardware
from .analysis import block_realizes
from .construction import Candidate, Constructor

PARALLEL_LAUNCH_S = 5e-6  # measured on this 2-core machine: a parallel region of a tiny kernel costs ~5 us
SERIAL_ADD_S = 0.6e-9  # a scalar add of a reduction without partial sums (LayerNorm 32x768: 16 us in all, Zen 4)


def estimate(space: Space, sketch_index: int, cons: Constructor, decisions: list[Decision], hw: Hardware) -> float:
    """Latency estimate (seconds) of a constructed program: compute at the efficiency its tiles allow,
    plus memory traffic, plus penalties for structure the rules know to be slow. Only its ranking matters."""
    flops = max(space.task.flops, 1.0)
    sketch = space.sketches[sketch_index]
    compute = flops / hw.peak_flops
    memory = 0.0
    eff = 1.0
    for plan in cons.plans.values():
        lanes = hw.lanes()
        vec_eff = plan.vector / (math.ceil(plan.vector / lanes) * lanes) if plan.vector >= 4 else 0.15
        par = plan.outer_iters
        par_eff = par / (math.ceil(par / hw.cores) * hw.cores)
        acc = plan.accumulators
        # enough FMAs per loaded value (rows x vectors FMAs for rows + vectors loads); spills past 24 registers
        reg_eff = min(1.0, acc / 16) if acc <= 24 else 0.6
        cache_eff = 1.0 if plan.core_footprint <= hw.l2_bytes else 0.5
        eff = min(eff, vec_eff * par_eff * reg_eff * cache_eff)
        memory += plan.core_footprint * max(1, plan.outer_iters) / (20e9 * hw.cores)
    if not cons.plans:  # no multi-level tiling: memory bound; vectorised inner splits help a little
        eff = 0.3
        memory = sum(4 * math.prod(shape) for _, shape, _ in space.task.params) / 20e9
    trace_text = str(sketch.trace)
    bonus = 0.9 if "cache_write" in trace_text else 1.0  # accumulate in a local tile, write once
    inline_penalty = 1.0 + 0.2 * cons.location_kinds.count("inline") if cons.plans else 1.0
    root_penalty = 1.0 + 0.1 * cons.location_kinds.count("root")
    unroll = _unroll_value(sketch, decisions)
    unroll_penalty = {0: 1.05, 16: 1.0, 64: 1.02, 512: 1.15}.get(unroll, 1.0)
    rfactor_bonus = 1.0
    if not cons.plans and "rfactor" in trace_text:
        # Partial sums along the split's inner loop are whole vectors (a row sum 768: 14 us vs 30 us along
        # the outer loop and 47 us without rfactor, which adds one float at a time). A short window (a 3x3
        # pool) gains nothing and pays an extra pass (max pool 64x112x112: 0.8 ms vs 0.25 ms without).
        long = any(p.kind == TILE and (p.extent or 0) >= 64 for p in sketch.points)
        rfactor_bonus = (0.5 if _rfactor_on_inner_loop(sketch) else 0.95) if long else 2.0
    serial = 0.0
    if not cons.plans and cons.knobs.every_reduction:
        # A long reduction without vector partial sums adds one float at a time, latency bound: LayerNorm
        # 256x768 with only the mean's sum rfactored 125 us, with the variance's too 25 us (Zen 4).
        sizes = _long_reductions(space)
        left = max(0, len(sizes) - _rfactors_on_inner_loop(sketch))
        serial = SERIAL_ADD_S * sum(sorted(sizes)[:left]) / hw.cores
    return (compute / eff + memory) * bonus * inline_penalty * root_penalty * unroll_penalty * rfactor_bonus + serial


def _rfactor_on_inner_loop(sketch: Sketch) -> bool:
    """Whether an rfactor of the sketch factors out the innermost loop of a split."""
    return _rfactors_on_inner_loop(sketch) > 0


def _rfactors_on_inner_loop(sketch: Sketch) -> int:
    """How many rfactors of the sketch factor out the innermost loop of a split (vector partial sums)."""
    inner = [inst.outputs[-1] for inst in sketch.trace.insts if inst.kind.name == "Split"]
    return sum(
        inst.kind.name == "RFactor" and any(inst.inputs[0].same_as(loop) for loop in inner)
        for inst in sketch.trace.insts
    )


def _long_reductions(space: Space) -> list[int]:
    """Per block of the workload that reduces over >= 64 elements (a row sum, a variance; not a 3x3 window):
    how many elements it adds up in all."""
    sizes = []
    for realize in block_realizes(space.task.mod["main"].body):
        extents: dict[int, int] = {}  # iter type (0 spatial, 2 reduction) -> product of extents
        for iv in realize.block.iter_vars:
            extent = int(iv.dom.extent) if isinstance(iv.dom.extent, tirx.IntImm) else 1
            extents[int(iv.iter_type)] = extents.get(int(iv.iter_type), 1) * extent
        if 2 in extents and extents[2] >= 64:
            sizes.append(math.prod(extents.values()))
    return sizes


def _unroll_value(sketch: Sketch, decisions: list[Decision]) -> int:
    for p, d in zip(sketch.points, decisions, strict=False):
        if p.kind == CATEGORICAL and "unroll" in (p.used_by or "") and p.candidates:
            return p.candidates[d]  # type: ignore[index]
    return 16


def program_estimate(cand: Candidate, hw: Hardware) -> float:
    """The estimate refined on the built program: each parallel loop costs a thread-pool launch, and
    without one the work runs on a single core."""
    assert cand.program is not None
    extents = parallel_extents(cand.program.mod["main"].body)
    if not extents:
        return cand.estimate * hw.cores
    return cand.estimate + PARALLEL_LAUNCH_S * len(extents)


def parallel_extents(stmt: Any) -> list[int]:
    """Extents of the parallel loops under `stmt` (a plain walk: TIR has no Python visitor here)."""
    if stmt is None:
        return []
    if isinstance(stmt, tirx.For) and int(stmt.kind) == int(tirx.ForKind.PARALLEL):
        return [int(stmt.extent) if isinstance(stmt.extent, tirx.IntImm) else 1]
    if isinstance(stmt, SBlockRealize):
        return parallel_extents(stmt.block.body)
    if isinstance(stmt, tirx.SeqStmt):
        return [e for s in stmt.seq for e in parallel_extents(s)]
    return [e for attr in ("body", "then_case", "else_case") for e in parallel_extents(getattr(stmt, attr, None))]
