"""Roller-style rule-based schedules: every decision of the space filled by rules, no measurement.

In the spirit of Roller (OSDI'22) and tinygrad's heuristic.py, adapted to MetaSchedule's CPU design space:

- innermost spatial tile of the contiguous (last) axis = whole vectors (16 fp32 lanes with AVX-512), a
  multiple of the cache line where the extent allows, else at most one partial vector;
- a register tile of rows on an axis the vector-loaded operands do not depend on (matmul rows, convolution
  output channels), 16 accumulators in all, so each loaded vector feeds several FMAs and their latency is hidden;
- a per-core cache tile grown one axis at a time by data reuse (FLOPs per byte touched, Roller's
  "compute intensity") while its footprint fits the L2 budget and enough outer iterations stay for all cores;
- the outer iterations split so that the parallel loop MetaSchedule fuses covers all cores;
- small reduction windows (conv kernels) unrolled into the micro-kernel, long reductions streamed;
- an operand streamed along the reduction with a row stride of whole L1 ways (a 1024-wide matmul's B: every
  row in the same cache set) is blocked instead: a few rows of it per reduction step, reused from L1 by a
  column of register tiles (level s2), a wider register tile (64 lanes), unrolled 64 deep; never an operand
  read through a sliding window (a convolution's padded input), whose cache tile blocking would lose;
- an unroll depth and compute locations by rule (producers at the consumer's cache tile, never inside its
  reduction; a pool's padding at its innermost loop; a padded input whose consumer's cache-tile level has no
  loop left, at its parallel level's deepest loop, not inlined);
- rfactor for long reductions only, on the split's inner loop (vector partial sums, computed at the root).

Top-1 (`heuristic_program`) builds one program per sketch in a single replay each and keeps the one its
micro performance model (`estimate`) ranks first. Top-k (`heuristic_candidates`) varies the rules' knobs,
ranks every distinct program by the same model, and `heuristic_top_k` measures the k best.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from tvm import tirx
from tvm.s_tir import SBlockRealize
from tvm.tirx.analysis import undefined_vars

from ..program import InvalidDecisions, Program, apply_decisions
from ..space import CATEGORICAL, TILE, Decision, DecisionPoint, Space, replay
from ..space.sketch import Sketch
from .hardware import Hardware

METHOD = "heuristic"
PARALLEL_LAUNCH_S = 5e-6  # measured on this 2-core machine: a parallel region of a tiny kernel costs ~5 us
SMALL_FLOPS = 2e6  # below this a block runs on one core: a parallel launch costs more than it saves
LABEL = "Roller-style rule-based heuristic"
L1_WAY_BYTES = 4096  # one L1 way on both CPUs measured here (48 KiB / 12, 32 KiB / 8): rows this far apart collide


@dataclass(frozen=True)
class Knobs:
    """The rules' parameters. Top-1 uses the defaults; Top-k varies them."""

    vectors: int = 2  # innermost tile of the contiguous axis, in vector registers
    rows: int = 8  # register-tile rows, on an axis the vector loads do not depend on (8x2 vectors: 1.2-1.9x 4x2's)
    cache_fraction: float = 0.5  # share of L2 a core's tile may fill
    unroll: int = 16  # explicit unroll depth (the nearest candidate is taken)
    window: int = 8  # reduction axes up to this extent are unrolled into the micro-kernel
    whole_rows: bool = True  # the parallel level takes the cache tile's other axes when it cuts the contiguous one
    blocked_unroll: int = 64  # unroll depth of a blocked plan (an aliased operand; 119 tasks: 1.02x 16's)
    block_windows: bool = False  # block an aliased operand read through a sliding window too (see `aliased`)
    window_at_parallel: bool = True  # a windowed producer goes to the parallel level's deepest loop, not inline


@dataclass
class Candidate:
    sketch_index: int
    decisions: list[Decision]
    estimate: float  # the micro model's latency estimate, seconds (only its ranking matters)
    knobs: Knobs
    program: Program | None = field(default=None, repr=False)


# ---- the workload's blocks: which loop is spatial, what each block reads and writes ----------------------


@dataclass
class BlockInfo:
    kinds: dict[str, str]  # loop name -> "S" (spatial) or "R" (reduction)
    extents: dict[str, int]  # loop name -> extent
    accesses: list[list[set[str]]]  # per buffer access (reads, then writes), per dimension: the loop names in it
    reads: int  # how many of the accesses are reads
    buffers: list[str]  # the buffer of each access
    shapes: list[tuple[int, ...]]  # the buffer shape of each access


def block_info(workload: Any, block: str) -> BlockInfo | None:
    """Loops and accesses of a block of the unscheduled workload (None for blocks a sketch created)."""
    realize = _find_realize(workload["main"].body, block)
    if realize is None:
        return None
    var_to_loop: dict[str, str] = {}
    kinds: dict[str, str] = {}
    extents: dict[str, int] = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values, strict=True):
        if not isinstance(value, tirx.Var):
            continue
        var_to_loop[iv.var.name] = value.name
        kinds[value.name] = "R" if int(iv.iter_type) == 2 else "S"
        dom = iv.dom.extent
        extents[value.name] = int(dom) if isinstance(dom, tirx.IntImm) else 1
    accesses = []
    regions = list(realize.block.reads) + list(realize.block.writes)
    for region in regions:
        dims = []
        for rng in region.region:
            names = {var_to_loop[v.name] for v in undefined_vars(rng.min) if v.name in var_to_loop}
            dims.append(names)
        accesses.append(dims)
    buffers = [_buffer(region) for region in regions]
    shapes = [tuple(int(d) if isinstance(d, tirx.IntImm) else 0 for d in r.source.shape) for r in regions]
    return BlockInfo(kinds, extents, accesses, len(realize.block.reads), buffers, shapes)


def _find_realize(stmt: Any, block: str) -> SBlockRealize | None:
    """The realize of the block named `block` under `stmt`."""
    return next((r for r in _realizes(stmt) if r.block.name_hint == block), None)


def _realizes(stmt: Any) -> Iterator[SBlockRealize]:
    """Every block realize under `stmt`, in program order (a plain walk: TIR has no Python visitor here)."""
    if stmt is None:
        return
    if isinstance(stmt, SBlockRealize):
        yield stmt
        yield from _realizes(stmt.block.body)
    elif isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            yield from _realizes(s)
    else:
        for attr in ("body", "then_case", "else_case"):
            yield from _realizes(getattr(stmt, attr, None))


def readers(workload: Any, block: str) -> int:
    """How many blocks of the unscheduled workload read what `block` writes."""
    realizes = list(_realizes(workload["main"].body))
    written = {_buffer(r) for b in realizes if b.block.name_hint == block for r in b.block.writes}
    return sum(any(_buffer(r) in written for r in b.block.reads) for b in realizes)


def _buffer(region: Any) -> str:
    return str(getattr(region.source, "name", region.source))


def footprint(info: BlockInfo, tile: dict[str, int]) -> int:
    """Elements touched by one tile (loop name -> tile extent; missing loops count 1)."""
    total = 0
    for dims in info.accesses:
        total += math.prod(sum(tile.get(n, 1) - 1 for n in names) + 1 for names in dims)
    return total


# ---- the rules -------------------------------------------------------------------------------------------


def aliased(info: BlockInfo, vec_loop: str, windows: bool = False) -> bool:
    """Whether an operand loaded along the vector loop steps through the reduction by whole L1 ways (its
    rows then share one cache set and cannot stay in L1: measured 2.5x slower GEMM 1024^3 on the Xeon).
    An operand read through a sliding window (a convolution's padded input) counts only with `windows`:
    blocking it loses the cache tile (zoo 5x5 convolutions on 28x28 images 5-10x slower blocked)."""
    # a reduction that walks more rows than an L1 set has ways (12 or 8 here)
    reduce = {n for n, k in info.kinds.items() if k == "R" and info.extents.get(n, 1) > 16}
    for dims, shape in zip(info.accesses[: info.reads], info.shapes[: info.reads], strict=True):
        if not dims or vec_loop not in dims[-1] or len(shape) != len(dims):
            continue
        if not windows and windowed(dims):
            continue
        for i, names in enumerate(dims[:-1]):
            stride = math.prod(shape[i + 1 :]) * 4
            if names & reduce and stride and stride % L1_WAY_BYTES == 0:
                return True
    return False


def windowed(dims: list[set[str]]) -> bool:
    """Whether an access reads through a sliding window: a dimension indexed by 2+ loops (a conv's y + ry)."""
    return any(len(names) > 1 for names in dims)


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
    blocked = row_point is not None and bool(reduce) and aliased(info, vec_point.loop, knobs.block_windows)
    if blocked:  # 4 rows x 4 vectors measured 1.4x 8 x 2 there (GEMM 1024^3, Xeon): the same 16 accumulators
        knobs = replace(knobs, vectors=knobs.vectors * 2, rows=max(1, knobs.rows // 2))
    vector = 1
    if vec_point is not None:
        cap = min(vec_point.extent, _limit(vec_point), lanes * knobs.vectors)
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
        rows = largest_divisor(row_point.extent, min(want, _limit(row_point))) or 1
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
    budget = hw.l2_bytes * knobs.cache_fraction / 4
    full_red = {p.loop: p.extent for p in reduce}
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


def flops_of(info: BlockInfo) -> int:
    return math.prod(info.extents.values()) * 2


def _limit(p: DecisionPoint) -> int:
    return p.extent if p.max_innermost_factor in (None, -1) else min(p.extent, p.max_innermost_factor)


def _levels(n: int, four: list[int]) -> tuple[int, ...]:
    """Fold a 4-level spatial (or 2-level reduction) plan into n factors (GPU rules use 5 and 3)."""
    if n == len(four):
        return tuple(four)
    if n < len(four):
        head = math.prod(four[: len(four) - n + 1])
        return (head, *four[len(four) - n + 1 :])
    return (four[0], *([1] * (n - len(four))), *four[1:])


def closest(point: DecisionPoint, want: Decision) -> Decision:
    """`want` when legal, else the legal choice nearest to it (log distance for tiles)."""
    if want in point.choices:
        return want
    if point.kind == TILE:

        def dist(c: tuple[int, ...]) -> float:
            return sum(abs(math.log(a) - math.log(b)) for a, b in zip(c, want, strict=False)) + (
                0 if c[-1] == want[-1] else 10
            )

        return min(point.choices, key=dist)
    return min(point.choices, key=lambda c: abs(c - want))  # type: ignore[operator]


class _Constructor:
    """One replay of a sketch, every decision by rule."""

    def __init__(self, sketch: Sketch, hw: Hardware, knobs: Knobs):
        self.sketch, self.hw, self.knobs = sketch, hw, knobs
        self.plans: dict[str, TilePlan] = {}
        self.infos: dict[str, BlockInfo | None] = {}
        by_block: dict[str, list[DecisionPoint]] = {}
        for p in sketch.points:
            if p.kind == TILE and p.block:
                by_block.setdefault(p.block, []).append(p)
        for block, points in by_block.items():
            info = self._info(block)
            if info is not None and any(info.kinds.get(p.loop or "") == "S" for p in points):
                self.plans[block] = plan_block(info, points, hw, knobs)
        self.location_kinds: list[str] = []

    def __call__(self, point: DecisionPoint) -> Decision:
        if point.kind == TILE:
            return closest(point, self._tile(point))
        if point.kind == CATEGORICAL:
            return self._categorical(point)
        return self._location(point)

    def _tile(self, p: DecisionPoint) -> Decision:
        plan = self.plans.get(p.block or "")
        if plan is not None and p.loop in plan.factors:
            return plan.factors[p.loop]
        # A split of its own (rfactor of a long reduction): whole vectors inside, the rest outside.
        extent, n = p.extent or 1, p.n or 2
        lanes = self.hw.lanes()
        innermost = largest_divisor(extent, min(_limit(p), lanes)) or 1
        return (*[1] * (n - 2), extent // innermost, innermost)

    def _categorical(self, p: DecisionPoint) -> Decision:
        cands = list(p.candidates or ())
        if "unroll" in (p.used_by or "") and cands:
            blocked = any(plan.blocked for plan in self.plans.values())
            depth = self.knobs.blocked_unroll if blocked else self.knobs.unroll
            return min(range(len(cands)), key=lambda i: abs(cands[i] - depth))
        return p.sampled if p.sampled in p.choices else p.choices[0]

    def _location(self, p: DecisionPoint) -> Decision:
        # Producers go to the consumer's cache tile: the deepest spatial loop of its outer (s0/s1) levels,
        # where the produced slice is reused by the whole tile. Never inside the reduction (rx_1): a padded
        # input there is copied again for every tap (a 3x3 conv 2.6x slower than at the cache tile). An
        # untiled consumer (a pool) gets a producer without reduction (its padding) at its deepest loop that
        # does not recompute it (max pool 3x3: 87 us, root 180 us, inline 400 us). A reducing producer (a row
        # mean, softmax's max) is inlined or goes to the consumer's outermost loop (measured: at the row loop
        # a 12x128x128 softmax took 0.91 ms, at the outermost 0.75 ms; at every element a row mean 776 ms).
        # A producer that several blocks read is computed once, at the root, not inlined into each
        # (softmax's exp: 2.0 ms vs 3.5 ms inlined, 32x128x128).
        if self._shared(p):
            self.location_kinds.append("root")
            return -1
        if (p.block or "").endswith("_rf") and -1 in p.choices:
            # rfactor's vector partial sums: at the root their lane loop is innermost and vectorized; under
            # the final reduction's row loop it is not (LLaMA's RMSNorm 128x4096: 0.11 ms at the root, 0.26)
            self.location_kinds.append("partials")
            return -1
        spatial = [i for i, name in enumerate(p.consumer_loops) if i in p.choices and self._spatial(p, name)]
        tiled = [i for i in spatial if p.consumer_loops[i].endswith("_1")]
        untiled = not any(name.endswith("_0") for name in p.consumer_loops)
        producer = self._info(p.block or "")
        reduces = producer is None or "R" in producer.kinds.values()
        reused = self._indexing_loops(p) if untiled and not reduces else set()
        fresh = [i for i in spatial if set(p.consumer_loops[: i + 1]) <= reused]
        if tiled or fresh:
            self.location_kinds.append("tile")
            return (tiled or fresh)[-1]
        # Whole rows can leave the cache-tile level no loop to take a padded input read through a sliding window:
        # it goes to the parallel level's deepest loop, copied once per tile. Inlined, the padding's conditions
        # run in the innermost loop for every tap (zoo 5x5 convolutions on 28x28: 5.7-9.4x slower).
        parallel = [i for i in spatial if p.consumer_loops[i].endswith("_0")]
        if parallel and self.knobs.window_at_parallel and self._windowed(p):
            self.location_kinds.append("parallel")
            return parallel[-1]
        if -2 in p.choices:
            self.location_kinds.append("inline")
            return -2
        loops = [c for c in p.choices if isinstance(c, int) and c >= 0]
        self.location_kinds.append("outer" if loops else "root")
        return loops[0] if loops else -1

    def _info(self, block: str) -> BlockInfo | None:
        """The unscheduled workload's view of a block, looked up once per replay."""
        if block not in self.infos:
            self.infos[block] = block_info(self.sketch.workload, block)
        return self.infos[block]

    def _shared(self, p: DecisionPoint) -> bool:
        """An elementwise producer read by several blocks, which inlining would compute once per reader."""
        producer = self._info(p.block or "")
        if -1 not in p.choices or producer is None or "R" in producer.kinds.values():
            return False
        return readers(self.sketch.workload, p.block or "") > 1

    def _reads_of_producer(self, p: DecisionPoint) -> list[list[set[str]]]:
        """The consumer's reads of what the producer writes: per read, per dimension, the loop names in it."""
        producer, consumer = self._info(p.block or ""), self._info(p.consumer or "")
        if producer is None or consumer is None:
            return []
        written = set(producer.buffers[producer.reads :])
        reads = zip(consumer.buffers[: consumer.reads], consumer.accesses, strict=False)
        return [dims for buffer, dims in reads if buffer in written]

    def _indexing_loops(self, p: DecisionPoint) -> set[str]:
        """The consumer's loops that index what it reads of the producer: at a loop outside them the producer
        would be computed again for every iteration of the others."""
        return {name for dims in self._reads_of_producer(p) for names in dims for name in names}

    def _windowed(self, p: DecisionPoint) -> bool:
        """Whether the consumer reads the producer through a sliding window (see `windowed`)."""
        return any(windowed(dims) for dims in self._reads_of_producer(p))

    def _spatial(self, p: DecisionPoint, loop: str) -> bool:
        """Whether the consumer's loop (xx_1 of a tiled block, ax3 of an untiled one) is a spatial loop."""
        info = self._info(p.consumer or "")
        head, _, level = loop.rpartition("_")
        base = head if head and level.isdigit() else loop
        return info is None or info.kinds.get(base) == "S"


# ---- the micro performance model ------------------------------------------------------------------------


def estimate(space: Space, sketch_index: int, cons: _Constructor, decisions: list[Decision], hw: Hardware) -> float:
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
    return (compute / eff + memory) * bonus * inline_penalty * root_penalty * unroll_penalty * rfactor_bonus


def _rfactor_on_inner_loop(sketch: Sketch) -> bool:
    """Whether an rfactor of the sketch factors out the innermost loop of a split."""
    inner = [inst.outputs[-1] for inst in sketch.trace.insts if inst.kind.name == "Split"]
    return any(
        inst.kind.name == "RFactor" and any(inst.inputs[0].same_as(loop) for loop in inner)
        for inst in sketch.trace.insts
    )


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


# ---- public API -----------------------------------------------------------------------------------------


def construct(space: Space, sketch_index: int, knobs: Knobs = Knobs(), hw: Hardware | None = None) -> Candidate:
    """One rule-built decision vector for one sketch, with the model's estimate (one replay, no measurement)."""
    hw = hw or Hardware.from_target(space.target)
    cons = _Constructor(space.sketches[sketch_index], hw, knobs)
    decisions = replay(space.sketches[sketch_index], cons).decisions
    return Candidate(sketch_index, decisions, estimate(space, sketch_index, cons, decisions, hw), knobs)


def heuristic_candidates(
    space: Space, k: int = 10, hw: Hardware | None = None, variants: bool = True, knobs: Knobs = Knobs()
) -> list[Candidate]:
    """Up to k distinct valid programs, best estimate first. variants=False: `knobs` only (the defaults).

    Vectors are ranked by the plan's estimate; the best 3k are built and re-ranked on the program."""
    hw = hw or Hardware.from_target(space.target)
    knob_sets = [knobs]
    if variants:
        grid = itertools.product((1, 2, 4), (1, 2, 4, 8), (0.25, 0.5, 1.0), (0, 16, 64), (8,))
        knob_sets += [Knobs(v, r, c, u, w) for v, r, c, u, w in grid]
    seen: set[tuple] = set()
    found: list[Candidate] = []
    for knobs in knob_sets:
        for index in range(len(space.sketches)):
            try:
                cand = construct(space, index, knobs, hw)
            except Exception:  # a rule that TVM cannot apply on this sketch: skip that combination
                continue
            key = (index, tuple(cand.decisions))
            if key in seen:
                continue
            seen.add(key)
            found.append(cand)
    found.sort(key=lambda c: c.estimate)
    built: list[Candidate] = []
    for cand in _spread(found, max(3 * k, len(space.sketches))):
        try:  # postprocessors may still reject a vector: keep only programs that build
            cand.program = apply_decisions(space, cand.sketch_index, cand.decisions)
        except InvalidDecisions:
            continue
        cand.estimate = program_estimate(cand, hw)
        built.append(cand)
    built.sort(key=lambda c: c.estimate)
    return sorted(_spread(built, k), key=lambda c: c.estimate)


def _spread(ranked: list[Candidate], k: int) -> list[Candidate]:
    """The first k of `ranked`, each distinct set of tiles before any repeat: the sketch and unroll variants of
    one tile plan are near-ties of the estimate, and measuring ten of them finds little."""
    first: list[Candidate] = []
    rest: list[Candidate] = []
    seen: set[tuple] = set()
    for cand in ranked:
        tiles = tuple(d for d in cand.decisions if isinstance(d, tuple))
        (rest if tiles in seen else first).append(cand)
        seen.add(tiles)
    return (first + rest)[:k]


def heuristic_program(space: Space, hw: Hardware | None = None, knobs: Knobs = Knobs()) -> Candidate:
    """Top-1: the rules (default knobs) on every sketch, the model's favourite, as a valid Program."""
    found = heuristic_candidates(space, k=1, hw=hw, variants=False, knobs=knobs)
    if not found:  # every sketch rejected by its postprocessors: try the knob variants
        found = heuristic_candidates(space, k=1, hw=hw, variants=True)
    if not found:
        raise InvalidDecisions(None, f"the heuristic found no valid program for task {space.task.name}")
    return found[0]


@dataclass
class Measured:
    candidate: Candidate
    result: Any  # MeasureResult
    again: Any = None  # its second MeasureResult, when it was among the fastest (tlm_core.measure.screen)

    @property
    def latest(self) -> Any:
        return self.result if self.again is None else self.again


def heuristic_top_k(
    space: Space, measurer: Any, k: int = 10, hw: Hardware | None = None
) -> tuple[list[Measured], float]:
    """Top-k: the model's k best candidates, measured, the fastest few again. Returns (measured: the winner
    first, then by first measurement; seconds spent)."""
    from tlm_core.measure import fastest_again

    start = time.perf_counter()
    cands = heuristic_candidates(space, k=k, hw=hw)
    mods = [c.program.mod for c in cands]
    results = measurer.measure(space.task, mods)
    screened = fastest_again(space.task, mods, [r.latency if r.ok else None for r in results], measurer)
    measured = [Measured(c, r, screened.again.get(i)) for i, (c, r) in enumerate(zip(cands, results, strict=True))]
    order = sorted(range(len(measured)), key=lambda i: (i != screened.pick, not results[i].ok,
                                                        results[i].latency or math.inf))  # fmt: skip
    return [measured[i] for i in order], time.perf_counter() - start
