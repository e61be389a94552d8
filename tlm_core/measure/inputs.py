"""Deterministic random arguments for a task, and which of its params are outputs.

The rule (it keys the reference cache, so bump INPUT_RULE_VERSION when it changes):
- every param, in order, is drawn from `numpy.random.default_rng(seed)`, outputs included (their initial
  contents are the same for the reference and every candidate, so a kernel that leaves part of an output
  unwritten is still caught);
- floats: standard normal;
- bool: 0 or 1;
- integers are usually index tensors (take, gather, embedding): they are drawn uniformly from [0, k), where
  k is the smallest extent > 1 among the *other* params' dims (so an index is valid along any axis it could
  address), capped at INDEX_CAP and at the dtype's maximum + 1; k = 1 (all zeros) when no such extent exists.
"""

from __future__ import annotations

import numpy as np
from tvm import s_tir, tirx

INPUT_RULE_VERSION = 1
INDEX_CAP = 1 << 16

Param = tuple[str, tuple[int, ...], str]  # (name, shape, dtype), as Task.params gives them


def index_bound(params: list[Param], i: int) -> int:
    """The exclusive upper bound k for integer param i (see the module docstring)."""
    extents = [d for j, (_, shape, _) in enumerate(params) if j != i for d in shape if d > 1]
    k = min(extents, default=1)
    return int(min(k, INDEX_CAP, np.iinfo(params[i][2]).max + 1))


def random_arguments(params: list[Param], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for i, (name, shape, dtype) in enumerate(params):
        kind = np.dtype(dtype).kind
        if kind == "f":
            arrays.append(rng.standard_normal(shape, dtype=np.float32).astype(dtype))
        elif kind == "b":
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
        elif kind in "iu":
            arrays.append(rng.integers(0, index_bound(params, i), shape).astype(dtype))
        else:
            raise ValueError(f"no input rule for param {name!r} of dtype {dtype}")
    return arrays


def output_indices(func: tirx.PrimFunc) -> list[int]:
    """Indices of the params some block writes (the DPS outputs); the last param if no block says so."""
    sch = s_tir.Schedule(func.with_attr("global_symbol", "main"))
    written = []
    stack = [sch.get_sblock("root")]
    while stack:
        block_rv = stack.pop()
        written += [region.source for region in sch.get(block_rv).writes]
        stack += sch.get_child_blocks(block_rv)
    found = [i for i, p in enumerate(func.params) if any(p.same_as(w) for w in written)]
    return found or [len(func.params) - 1]
