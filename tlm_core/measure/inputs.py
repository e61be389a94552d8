"""Deterministic random arguments for a task, and which of its params are outputs.

The rule (it keys the reference cache, so bump INPUT_RULE_VERSION when it changes):
- every param, in order, is drawn from `numpy.random.default_rng(seed)`, outputs included (their initial
  contents are the same for the reference and every candidate, so a kernel that leaves part of an output
  unwritten is still caught);
- floats: standard normal;
- bool: 0 or 1;
- integers are usually index tensors (take, gather, embedding): they are drawn uniformly from [0, k). Where
  the function uses the param as an index, directly or through intermediate buffers computed from it
  (`index_bounds`), k is the smallest extent of an axis it indexes. Otherwise k is the smallest extent > 1
  among the *other* params' dims, capped at INDEX_CAP and at the dtype's maximum + 1; k = 1 (all zeros) when
  no such extent exists.
"""

from __future__ import annotations

import numpy as np
from tvm import s_tir, tirx

INPUT_RULE_VERSION = 2
INDEX_CAP = 1 << 16

Param = tuple[str, tuple[int, ...], str]  # (name, shape, dtype), as Task.params gives them


def index_bound(params: list[Param], i: int) -> int:
    """The exclusive upper bound k for integer param i (see the module docstring)."""
    extents = [d for j, (_, shape, _) in enumerate(params) if j != i for d in shape if d > 1]
    k = min(extents, default=1)
    return int(min(k, INDEX_CAP, np.iinfo(params[i][2]).max + 1))


def _blocks(func: tirx.PrimFunc) -> list:
    sch = s_tir.Schedule(func.with_attr("global_symbol", "main"))
    blocks, stack = [], [sch.get_sblock("root")]
    while stack:
        block_rv = stack.pop()
        blocks.append(sch.get(block_rv))
        stack += sch.get_child_blocks(block_rv)
    return blocks


def index_bounds(func: tirx.PrimFunc) -> dict[int, int]:
    """Param index -> the smallest extent of an axis the param indexes, for params used as indices.

    A buffer read inside another buffer's index (X[I[i]]) is bounded by that axis of X; a buffer a block reads
    to write an already-bounded buffer (I = broadcast(P)) inherits the bound, so bounds follow copies.
    """
    bounds: list[list] = []  # [buffer var, bound]; TVM vars compare by identity (same_as)

    def tighten(var, bound: int) -> bool:
        for entry in bounds:
            if entry[0].same_as(var):
                if bound < entry[1]:
                    entry[1] = bound
                    return True
                return False
        bounds.append([var, bound])
        return True

    def bound_of(var) -> int | None:
        return next((b for v, b in bounds if v.same_as(var)), None)

    blocks = _blocks(func)
    for block in blocks:
        for region in [*block.reads, *block.writes]:
            for axis, rng in enumerate(region.region):
                for var in tirx.analysis.undefined_vars(rng.min):
                    if getattr(var.ty, "shape", None) is not None:  # a buffer loaded inside the index
                        tighten(var, int(region.source.ty.shape[axis]))
    changed = True
    while changed:
        changed = False
        for block in blocks:
            written = [b for w in block.writes if (b := bound_of(w.source)) is not None]
            if written:
                for r in block.reads:
                    changed |= tighten(r.source, min(written))
    return {i: b for i, p in enumerate(func.params) if (b := bound_of(p)) is not None}


def random_arguments(params: list[Param], seed: int, bounds: dict[int, int] | None = None) -> list[np.ndarray]:
    """Arguments for `params`; `bounds` (from index_bounds) gives integer params their exclusive bound."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, (name, shape, dtype) in enumerate(params):
        kind = np.dtype(dtype).kind
        if kind == "f":
            arrays.append(rng.standard_normal(shape, dtype=np.float32).astype(dtype))
        elif kind == "b":
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
        elif kind in "iu":
            high = (bounds or {}).get(i) or index_bound(params, i)
            arrays.append(rng.integers(0, high, shape).astype(dtype))
        else:
            raise ValueError(f"no input rule for param {name!r} of dtype {dtype}")
    return arrays


def output_indices(func: tirx.PrimFunc) -> list[int]:
    """Indices of the params some block writes (the DPS outputs); the last param if no block says so."""
    written = [region.source for block in _blocks(func) for region in block.writes]
    found = [i for i, p in enumerate(func.params) if any(p.same_as(w) for w in written)]
    return found or [len(func.params) - 1]
