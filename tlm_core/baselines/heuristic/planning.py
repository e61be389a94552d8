"""Tile planning: the factors of every tile point of one multi-level-tiled block (register tile, cache tile grown
by reuse within the L2 budget, parallel level for all cores, a blocked plan for an aliased operand)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...space import DecisionPoint
from ..hardware import Hardware
from .analysis import BlockInfo, aliased, flops_of, footprint, windowed
from .knobs import Knobs

SMALL_FLOPS = 2e6  # below this a block runs on one core: a parallel launch costs more than it saves


def divisors(x: int) -> list[int]:
    return [d for d in range(1, x + 1) if x % d == 0]


def largest_divisor(x: int, limit: int, multiple_of: int = 1) -> int | None:
    fits = [d for d in divisors(x) if d <= limit and d % multiple_of == 0]
    return max(fits) if fits else None


@dataclass
class TilePlan:
    """Per loop of a multi-level-tiled block: its factors, outermost first."""

    factors: dict[str, tuple[int, ...]]
    outer_iters: int  # iterations of the parallelisable outer loops (all spatial s0*s1)
    vector: int  # innermost factor of the contiguous axis
    accumulators: int  # vector registers the register tile keeps live
    core_footprint: int  # bytes a core's tile touches over the whole reduction
    blocked: bool = False  # an aliased operand, blocked per reduction step (see `aliased`)


def plan_block(info: BlockInfo, points: list[DecisionPoint], hw: Hardware, knobs: Knobs) -> TilePlan:
    """Factors for every tile point of one block tiled MetaSchedule's way (CPU: SSRSRS; n=4 / n=2)."""
    spatial = [p for p in points if info.kinds.get(p.loop or "") == "S" and p.extent]
    reduce = [p for p in points if info.kinds.get(p.loop or "") == "R" and p.extent]
    lanes = hw.lanes()
    inner: dict[str, int] = {p.loop: 1 for p in spatial}  # the register tile (innermost level)
    vec_point = next((p for p in reversed(spatial) if p.extent > 1), None)
    row_point = None
    if vec_point is not None:
        before = [p for p in spatial if p.extent > 1 and p is not vec_point]
        # Rows on an axis the vector-loaded operands do not depend on, so each loaded vector feeds every row:
        # i of a matmul (B[k, j] is loaded along j), the output channels of a convolution (X[c, y, x]).
        streamed = [dims for dims in info.accesses[: info.reads] if any(vec_point.loop in d for d in dims)]
        reuse = [p for p in before if not any(p.loop in d for dims in streamed for d in dims)]
        row_point = (reuse or before or [None])[-1]
    budget = hw.l2_bytes * knobs.cache_fraction / 4
    full_red = {p.loop: p.extent for p in reduce}
    blocked = row_point is not None and bool(reduce) and aliased(info, vec_point.loop, knobs.block_windows)
    if row_point is not None and reduce and knobs.long_reduction and not blocked:
        # One register tile's operands over the whole reduction overflow the L2 budget (LLaMA's 4096-deep
        # matmuls: 8 rows x 2 vectors read 655 KB): the cache tile cannot grow, so step the reduction through L1
        # as for an aliased operand (128x4096x11008: 1.4x on Zen 4). Not through a sliding window (see `aliased`).
        register = {vec_point.loop: lanes * knobs.vectors, row_point.loop: knobs.rows} | full_red
        blocked = footprint(info, register) > budget and not any(windowed(d) for d in streamed)
    if blocked:  # 4 rows x 4 vectors measured 1.4x 8 x 2 there (GEMM 1024^3, Xeon): the same 16 accumulators
        knobs = replace(knobs, vectors=knobs.vectors * 2, rows=max(1, knobs.rows // 2))
    vector = 1
    if vec_point is not None:
        cap = min(vec_point.extent, innermost_limit(vec_point), lanes * knobs.vectors)
        # Whole vectors, else at most one (partial) vector: LLVM turns a 28-lane loop into slow code
        # (measured: a 3x3 conv 6x slower with 28 lanes than with 14, 8 rows each).
        vector = (
            largest_divisor(vec_point.extent, cap, hw.line_elems())
            or largest_divisor(vec_point.extent, cap, lanes)
            or largest_divisor(vec_point.extent, min(cap, lanes))
            or 1
        )
        inner[vec_point.loop] = vector
    rows = 1
    if row_point is not None:
        # The register tile keeps rows x vectors accumulators: fewer vector registers per row, more rows.
        want = knobs.rows * max(1, knobs.vectors // math.ceil(vector / lanes))
        rows = largest_divisor(row_point.extent, min(want, innermost_limit(row_point))) or 1
        # MetaSchedule vectorises the innermost spatial loops fused while their product fits 64 lanes:
        # rows there would become strided vector lanes, so they move one level out instead.
        if rows * vector <= 64 and rows > 1:
            inner[row_point.loop] = 1
        else:
            inner[row_point.loop] = rows
    mid: dict[str, int] = {p.loop: 1 for p in spatial}  # the cache tile in register tiles (level s1)
    if row_point is not None and inner[row_point.loop] == 1:
        mid[row_point.loop] = rows
    red_inner = {p.loop: (p.extent if p.extent <= knobs.window else 1) for p in reduce}
    column: dict[str, int] = {p.loop: 1 for p in spatial}  # register tiles under one reduction step (level s2)

    # Grow the per-core cache tile by reuse while it fits the L2 budget and leaves work for every core.
    # It lives at level s1, outside the reduction, so the register tile (level s3) accumulates over the
    # whole reduction; level s2 stays 1 (measured: s2 > 1 re-streams the accumulators every k step), except
    # for an aliased operand (below), where the accumulators live in L1 anyway.
    small = flops_of(info) < SMALL_FLOPS  # not worth a parallel launch: one core does it all

    def span(p: DecisionPoint) -> int:  # a core's tile along p's loop: levels s1 x s2 x s3
        return mid[p.loop] * column[p.loop] * inner[p.loop]

    def tile() -> dict[str, int]:
        return {p.loop: span(p) for p in spatial} | full_red

    def outer() -> int:
        return math.prod(p.extent // span(p) for p in spatial)

    def intensity(t: dict[str, int]) -> float:
        return math.prod(t.values()) / max(1, footprint(info, t))

    want_outer = 1 if small else min(hw.cores * 2, math.prod(p.extent for p in spatial) // max(1, vector * rows))
    if blocked:
        # A block of the aliased operand (a few of its rows) per reduction step, reused from L1 by a column of
        # register tiles whose accumulators (a third of L1) stay in L1 between the steps; work left for all cores.
        red_inner = {p.loop: largest_divisor(p.extent, knobs.window) or 1 for p in reduce}
        tile_bytes = span(row_point) * vector * 4
        for d in sorted(divisors(row_point.extent // span(row_point)), reverse=True):
            column[row_point.loop] = d
            if d == 1 or (d * tile_bytes <= hw.l1_bytes // 3 and outer() >= want_outer):
                break
        # The rest of the rows stay on one core when the columns alone leave work for every core: each core then
        # streams its columns of the vector-loaded operand (a weight) once, not once per block of rows
        # (LLaMA's 128x4096 @ 4096x11008: 1.6x on Zen 4).
        rest = row_point.extent // span(row_point)
        if knobs.rows_per_core and rest > 1 and outer() // rest >= want_outer:
            mid[row_point.loop] *= rest
    while not blocked:  # blocked: the column is the cache tile, the operand's block streams from L2
        best = None
        for p in spatial:
            rest = p.extent // span(p)
            grow = next((d for d in divisors(rest) if d > 1), None)
            if grow is None:
                continue
            mid[p.loop] *= grow
            t = tile()
            ok = (small or footprint(info, t) <= budget) and outer() >= want_outer
            score = intensity(t)
            mid[p.loop] //= grow
            if ok and (best is None or score > best[0]):
                best = (score, p.loop, grow)
        if best is None:
            break
        mid[best[1]] *= best[2]

    # When the parallel level cuts the contiguous axis into chunks, it takes the cache tile's other axes too
    # (rows of an image, not of the register tile): a core's tile then holds one row's inputs in L1 for every
    # block of output channels, where a tile of all rows re-reads them from L2 for each block (measured:
    # MobileNetV2's 1x1 convolution 24->144 at 56x56 1.31x faster, as 512-trial search has it).
    if knobs.whole_rows and vec_point is not None and vec_point.extent // span(vec_point) > 1:
        for p in spatial:
            if p is not vec_point and p is not row_point:
                mid[p.loop] = 1

    # The remaining outer iterations form the parallel level s0 (MetaSchedule fuses and parallelises it).
    factors: dict[str, tuple[int, ...]] = {}
    for p in spatial:
        factors[p.loop] = _levels(p.n or 4, [p.extent // span(p), mid[p.loop], column[p.loop], inner[p.loop]])
    for p in reduce:
        r1 = red_inner[p.loop]
        factors[p.loop] = _levels(p.n or 2, [p.extent // r1, r1])
    accumulators = rows * max(1, math.ceil(vector / lanes))
    return TilePlan(factors, outer(), vector, accumulators, footprint(info, tile()) * 4, blocked)


def innermost_limit(p: DecisionPoint) -> int:
    return p.extent if p.max_innermost_factor in (None, -1) else min(p.extent, p.max_innermost_factor)


def _levels(n: int, four: list[int]) -> tuple[int, ...]:
    """Fold a 4-level spatial (or 2-level reduction) plan into n factors (GPU rules use 5 and 3)."""
    if n == len(four):
        return tuple(four)
    if n < len(four):
        head = math.prod(four[: len(four) - n + 1])
        return (head, *four[len(four) - n + 1 :])
    return (four[0], *([1] * (n - len(four))), *four[1:])
