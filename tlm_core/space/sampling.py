"""Random legal decision vectors, by replay: a uniform pick among the legal choices at each point."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .decision import Decision
from .replay import Replayed, replay
from .sketch import Sketch

Rng = random.Random | Any | int | None  # random.Random, numpy.random.Generator, a seed, or None (fresh)


def random_decisions(sketch: Sketch, rng: Rng = None) -> list[Decision]:
    """A random legal decision vector of a sketch (uniform at each point, given the earlier picks)."""
    return random_replay(sketch, rng).decisions


def random_replay(sketch: Sketch, rng: Rng = None) -> Replayed:
    """One replay of a sketch with a uniform pick among the legal choices at each point (its points too)."""
    pick = index_picker(rng)
    return replay(sketch, lambda point: point.choices[pick(len(point.choices))])


def as_rng(rng: Rng) -> Any:
    """A generator to draw from: a seed or None becomes a random.Random; generators pass through."""
    return random.Random(rng) if rng is None or isinstance(rng, int) else rng


def index_picker(rng: Rng) -> Callable[[int], int]:
    """n -> a uniform index in [0, n), from a random.Random, a numpy Generator or a seed."""
    rng = as_rng(rng)
    if isinstance(rng, random.Random):
        return rng.randrange
    return lambda n: int(rng.integers(n))  # numpy.random.Generator
