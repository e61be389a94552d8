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
- rfactor for long reductions only, on the split's inner loop (vector partial sums, computed at the root), for
  every long reduction of the block (a LayerNorm's mean and variance);
- a producer is never placed where it would be computed many times over (a padded input under blocks of output
  channels): the deepest cache-tile loop that recomputes it at most `Knobs.recompute` times, else the root.

Top-1 (`heuristic_program`) builds one program per sketch in a single replay each and keeps the one its
micro performance model (`estimate`) ranks first. Top-k (`heuristic_candidates`) varies the rules' knobs,
ranks every distinct program by the same model, and `heuristic_top_k` measures the k best.

The package, one concept a module: analysis (the workload's blocks), knobs (the rules' parameters), planning
(tile factors per block), construction (one replay by rule), cost (the micro model), candidates (ranking and
Top-1), top_k (measured).
"""

from .analysis import L1_WAY_BYTES, BlockInfo, aliased, block_info, flops_of, footprint, readers, windowed
from .candidates import construct, heuristic_candidates, heuristic_program
from .construction import Candidate, closest
from .cost import (
    PARALLEL_LAUNCH_S,
    _rfactor_on_inner_loop,
    _rfactors_on_inner_loop,
    estimate,
    parallel_extents,
    program_estimate,
)
from .knobs import DEFAULT_KNOBS, Knobs
from .planning import SMALL_FLOPS, TilePlan, divisors, largest_divisor, plan_block
from .top_k import Measured, heuristic_top_k

METHOD = "heuristic"
LABEL = "Roller-style rule-based heuristic"

__all__ = [
    "DEFAULT_KNOBS",
    "BlockInfo",
    "Candidate",
    "Knobs",
    "L1_WAY_BYTES",
    "LABEL",
    "METHOD",
    "Measured",
    "PARALLEL_LAUNCH_S",
    "SMALL_FLOPS",
    "TilePlan",
    "_rfactor_on_inner_loop",
    "_rfactors_on_inner_loop",
    "aliased",
    "block_info",
    "closest",
    "construct",
    "divisors",
    "estimate",
    "flops_of",
    "footprint",
    "heuristic_candidates",
    "heuristic_program",
    "heuristic_top_k",
    "largest_divisor",
    "parallel_extents",
    "plan_block",
    "program_estimate",
    "readers",
    "windowed",
]
