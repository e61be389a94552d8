"""Perfect tilings: the legal choices of MetaSchedule's `SamplePerfectTile`."""

from __future__ import annotations

import functools

# TVM's encoding of "no limit on the innermost factor" (sampling.cc: `max_innermost_factor == -1`).
NO_INNERMOST_LIMIT = -1


def perfect_tilings(extent: int, n: int, max_innermost: int = NO_INNERMOST_LIMIT) -> list[tuple[int, ...]]:
    """Every ordered factorisation of `extent` into `n` factors whose last factor is <= `max_innermost`.

    This is exactly the set `SamplePerfectTile(loop, n, max_innermost_factor)` samples from:
    TVM draws a uniform perfect tiling and redraws until the innermost factor is at most the limit;
    -1 means no limit. Any other limit below 1 admits nothing (TVM would redraw forever).
    Ordered as TVM prints decisions: outermost factor first; lexicographic.
    """
    return list(_tilings(int(extent), int(n), int(max_innermost)))


@functools.lru_cache(maxsize=4096)
def _tilings(extent: int, n: int, max_innermost: int) -> tuple[tuple[int, ...], ...]:
    if extent < 1 or n < 1:
        raise ValueError(f"cannot tile extent {extent} into {n} factors")
    limit = extent if max_innermost == NO_INNERMOST_LIMIT else max_innermost
    return tuple(t for t in _factorisations(extent, n) if t[-1] <= limit)


@functools.lru_cache(maxsize=4096)
def _factorisations(extent: int, n: int) -> tuple[tuple[int, ...], ...]:
    if n == 1:
        return ((extent,),)
    return tuple((d, *rest) for d in _divisors(extent) for rest in _factorisations(extent // d, n - 1))


@functools.lru_cache(maxsize=4096)
def _divisors(x: int) -> tuple[int, ...]:
    small = [d for d in range(1, int(x**0.5) + 1) if x % d == 0]
    return tuple(sorted(set(small + [x // d for d in small])))
