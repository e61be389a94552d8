"""Construction: one replay of a sketch with every decision by rule (tiles from the plans, unroll depth, compute
locations), and the Candidate it yields."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...program import Program
from ...space import CATEGORICAL, TILE, Decision, DecisionPoint
from ...space.sketch import Sketch
from ..hardware import Hardware
from .analysis import BlockInfo, block_info, readers, windowed
from .knobs import Knobs
from .planning import TilePlan, innermost_limit, largest_divisor, plan_block


@dataclass
class Candidate:
    sketch_index: int
    decisions: list[Decision]
    estimate: float  # the micro model's latency estimate, seconds (only its ranking matters)
    knobs: Knobs
    program: Program | None = field(default=None, repr=False)


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


class Constructor:
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
        innermost = largest_divisor(extent, min(innermost_limit(p), lanes)) or 1
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
        if tiled:
            # The deepest cache-tile loop that does not compute the producer many times over (ResNet-50's 3x3
            # conv 256 ch at 14x14 under 16 blocks of output channels: 2.26 ms there, 1.16 ms at the root).
            for i in reversed(tiled):
                if self._recompute(p, i) <= self.knobs.recompute:
                    self.location_kinds.append("tile")
                    return i
            if -1 in p.choices:
                self.location_kinds.append("root")
                return -1
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

    def _recompute(self, p: DecisionPoint, i: int) -> float:
        """How many times over the producer is computed at the consumer's loop i: once per iteration of the
        loops outside it that do not index what the consumer reads (output channels, for a padded input),
        and a sliding window's halo once per tile (a 3x3 window over one-row tiles: about 3x)."""
        plan, info = self.plans.get(p.consumer or ""), self._info(p.consumer or "")
        if plan is None or info is None:
            return 1.0
        outside: dict[str, int] = {}  # consumer loop -> iterations at or outside loop i
        for name in p.consumer_loops[: i + 1]:
            base, _, level = name.rpartition("_")
            factors = plan.factors.get(base)
            if factors and level.isdigit() and int(level) < len(factors):
                outside[base] = outside.get(base, 1) * factors[int(level)]
        reads = self._reads_of_producer(p)
        indexing = {name for dims in reads for names in dims for name in names}
        times = float(math.prod(n for base, n in outside.items() if base not in indexing))
        for dims in reads:
            for names in dims:
                window = math.prod(info.extents.get(n, 1) for n in names if info.kinds.get(n) == "R")
                for n in names & outside.keys():
                    extent = info.extents.get(n, 1)
                    tile = max(1, extent // outside[n])
                    times *= ((tile + window - 1) / tile) / ((extent + window - 1) / extent)
        return times

    def _windowed(self, p: DecisionPoint) -> bool:
        """Whether the consumer reads the producer through a sliding window (see `windowed`)."""
        return any(windowed(dims) for dims in self._reads_of_producer(p))

    def _spatial(self, p: DecisionPoint, loop: str) -> bool:
        """Whether the consumer's loop (xx_1 of a tiled block, ax3 of an untiled one) is a spatial loop."""
        info = self._info(p.consumer or "")
        head, _, level = loop.rpartition("_")
        base = head if head and level.isdigit() else loop
        return info is None or info.kinds.get(base) == "S"
