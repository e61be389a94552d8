"""The rules' parameters (Knobs): Top-1 uses the defaults, Top-k varies them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Knobs:
    """The rules' parameters. Top-1 uses the defaults; Top-k varies them."""

    vectors: int = 2  # innermost tile of the contiguous axis, in vector registers
    rows: int = 8  # register-tile rows, on an axis the vector loads do not depend on (8x2 vectors: 1.2-1.9x 4x2's)
    cache_fraction: float = 0.5  # share of L2 a core's tile may fill
    unroll: int = 16  # explicit unroll depth (the nearest candidate is taken)
    window: int = 8  # reduction axes up to this extent are unrolled into the micro-kernel
    whole_rows: bool = True  # the parallel level takes the cache tile's other axes when it cuts the contiguous one
    blocked_unroll: int = 16  # unroll depth of a blocked plan (64 was 1.02x on 119 Xeon tasks; 16 1.8x on big GEMMs)
    block_windows: bool = False  # block an aliased operand read through a sliding window too (see `aliased`)
    window_at_parallel: bool = True  # a windowed producer goes to the parallel level's deepest loop, not inline
    every_reduction: bool = True  # rank by the share of long reductions rfactored into vectors, not by any one
    long_reduction: bool = True  # a reduction too long for one register tile's operands in L2 is blocked too
    rows_per_core: bool = True  # a blocked plan's parallel level splits only the columns when they suffice
    recompute: float = 4.0  # a producer placed where it is computed more than this many times over goes to the root


DEFAULT_KNOBS = Knobs()  # Top-1's
