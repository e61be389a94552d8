"""Candidates: construct one program per sketch and knob setting, rank them by the model, keep the distinct ones
that build (Top-1 `heuristic_program`, the ranked list `heuristic_candidates`)."""

from __future__ import annotations

import itertools

from ...errors import summary
from ...program import InvalidDecisions, apply_decisions
from ...space import Space, replay
from ..hardware import Hardware
from .construction import Candidate, Constructor
from .cost import estimate, program_estimate
from .knobs import DEFAULT_KNOBS, Knobs


def construct(space: Space, sketch_index: int, knobs: Knobs = DEFAULT_KNOBS, hw: Hardware | None = None) -> Candidate:
    """One rule-built decision vector for one sketch, with the model's estimate (one replay, no measurement)."""
    hw = hw or Hardware.from_target(space.target)
    cons = Constructor(space.sketches[sketch_index], hw, knobs)
    decisions = replay(space.sketches[sketch_index], cons).decisions
    return Candidate(sketch_index, decisions, estimate(space, sketch_index, cons, decisions, hw), knobs)


def heuristic_candidates(
    space: Space, k: int = 10, hw: Hardware | None = None, variants: bool = True, knobs: Knobs = DEFAULT_KNOBS
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


def heuristic_program(space: Space, hw: Hardware | None = None, knobs: Knobs = DEFAULT_KNOBS) -> Candidate:
    """Top-1: the rules (default knobs) on every sketch, the model's favourite, as a valid Program."""
    found = heuristic_candidates(space, k=1, hw=hw, variants=False, knobs=knobs)
    if not found:  # every sketch rejected by its postprocessors: try the knob variants
        found = heuristic_candidates(space, k=1, hw=hw, variants=True)
    if not found:
        raise InvalidDecisions(None, f"the heuristic found no valid program for task {space.task.name}: "
                               f"{_why_none(space, hw, knobs)}")  # fmt: skip
    return found[0]


def _why_none(space: Space, hw: Hardware | None, knobs: Knobs) -> str:
    """Why each sketch gave no program under the default knobs (its first error), for the failure's message."""
    if not space.sketches:
        return "the space has no sketch"
    reasons = []
    for index in range(len(space.sketches)):
        try:
            cand = construct(space, index, knobs, hw)
            apply_decisions(space, index, cand.decisions)
            reason = "built here, rejected under every knob variant"
        except Exception as err:  # what the ranking skipped silently
            reason = summary(err)
        reasons.append(f"sketch {index}: {reason}")
    return "; ".join(reasons)
