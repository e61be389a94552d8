"""Random legal programs, for "measure K random schedules" and for sampling datasets."""

from __future__ import annotations

from ..space import Space, random_decisions
from ..space.sampling import Rng, as_rng, index_picker
from .errors import InvalidDecisions
from .program import Program, apply_decisions


def random_program(space: Space, rng: Rng = None, sketch_index: int | None = None, attempts: int = 100) -> Program:
    """A random program of the space (sketch drawn uniformly unless given).

    Retries when the postprocessors reject a vector: legal vectors rarely are on CPU, but on CUDA
    VerifyGPUCode rejects most (too many threads or too much shared memory per block; ~90-97% of
    uniform vectors for a matmul or conv).
    """
    rng = as_rng(rng)
    pick = index_picker(rng)
    last: InvalidDecisions | None = None
    for _ in range(attempts):
        index = sketch_index if sketch_index is not None else pick(len(space.sketches))
        decisions = random_decisions(space.sketches[index], rng)
        try:
            return apply_decisions(space, index, decisions)
        except InvalidDecisions as err:
            last = err
    raise InvalidDecisions(None, f"no valid program in {attempts} random attempts; last: {last}")
