"""The unscheduled workload's blocks: which loop is spatial or a reduction, what each block reads and writes,
how many elements a tile touches, and the access patterns the rules look for (an aliased operand, a sliding
window)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tvm import tirx
from tvm.s_tir import SBlockRealize
from tvm.tirx.analysis import undefined_vars

L1_WAY_BYTES = 4096  # one L1 way on both CPUs measured here (48 KiB / 12, 32 KiB / 8): rows this far apart collide


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
    return next((r for r in block_realizes(stmt) if r.block.name_hint == block), None)


def block_realizes(stmt: Any) -> Iterator[SBlockRealize]:
    """Every block realize under `stmt`, in program order (a plain walk: TIR has no Python visitor here)."""
    if stmt is None:
        return
    if isinstance(stmt, SBlockRealize):
        yield stmt
        yield from block_realizes(stmt.block.body)
    elif isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            yield from block_realizes(s)
    else:
        for attr in ("body", "then_case", "else_case"):
            yield from block_realizes(getattr(stmt, attr, None))


def readers(workload: Any, block: str) -> int:
    """How many blocks of the unscheduled workload read what `block` writes."""
    realizes = list(block_realizes(workload["main"].body))
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


def flops_of(info: BlockInfo) -> int:
    return math.prod(info.extents.values()) * 2


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
