"""Decision points and decisions as tokens: the live context of each point, then its decision.

    tile b1 dim2 x 2^6 ; n 2^2 ; max 2^6 ; =  2^2 ; 2^1 ; 1 ; 2^3 ;   a tiling [2, 8, 1, 4] of b1's 3rd loop
    cat use:unroll_explicit k 2^2 ; =  c2                        candidate index 2 of 4
    loc b0 in b1 loops 2^1 5^1 ; legal 3^1 ; =  L-1              -2 inline, -1 root, i >= 0 a consumer loop

The context (everything before "=") is fixed by the sketch and the earlier decisions; the generator writes it
as forced tokens and only chooses the decision tokens. A tiling is written innermost factor first, then the
outermost, then the others from the inside out (the list itself, as TVM takes it, is outer to inner): the
innermost factor decides vectorisation and register reuse, so it is the model's freest choice; the outermost
is the parallel loop (MetaSchedule fuses and parallelises the outer level), an explicit choice, since on a
kernel of a microsecond one parallel launch costs more than all the work; a middle level takes what remains.
A tile names its loop by the block iterator's position (dim<i>): loops of equal extent (a conv's rows and
columns) would otherwise have identical contexts.
Locations, candidates and sketches have a bounded number of tokens (MAX_*); a space that needs more raises
LanguageError instead of writing something wrong.
"""

from __future__ import annotations

from ..space import CATEGORICAL, COMPUTE_LOCATION, TILE, Decision, DecisionPoint
from .numbers import is_number_token, number_tokens, read_number

MAX_LOCATION = 63  # loop indices L0..L63 (deepest nests seen: 22 loops)
MAX_CANDIDATES = 32  # c0..c31 (CPU unroll has 4)
MAX_SKETCHES = 64  # s0..s63 (at most ~9 per task on CPU)
USES = ["unroll_explicit", "unroll_implicit", "parallel", "vectorize", "cooperative_fetch", "thread_extent"]
DECISION_WORDS = ["<dec>", "sketches", "=", "tile", "x", "n", "max", "nomax", "cat", "use?", "k", "loc", "in", "loops",
                  "legal", "root?"]  # fmt: skip


class LanguageError(ValueError):
    """Something the language cannot write (out of its bounds) or a sentence it cannot read."""


def decision_vocab() -> list[str]:
    return [
        *DECISION_WORDS,
        *(f"use:{u}" for u in USES),
        *(f"s{i}" for i in range(MAX_SKETCHES)),
        *(f"c{i}" for i in range(MAX_CANDIDATES)),
        *(f"L{i}" for i in range(-2, MAX_LOCATION + 1)),
    ]


def sketch_token(index: int) -> str:
    if not 0 <= index < MAX_SKETCHES:
        raise LanguageError(f"sketch index {index} is beyond the language's {MAX_SKETCHES} sketch tokens")
    return f"s{index}"


def context_tokens(
    point: DecisionPoint, block_index: dict[str, int], iterators: dict[str, tuple[str, ...]]
) -> list[str]:
    """What is known about a point before its decision, ending with "=". iterators: block name -> its
    iterators' loop names (operator.block_iterators)."""
    from .operator import block_token, dim_token

    if point.kind == TILE:
        limit = point.max_innermost_factor
        names = iterators.get(point.block or "", ())
        dim = dim_token(names.index(point.loop) if point.loop in names else None)
        out = ["tile", block_token(block_index.get(point.block or "")), dim, "x", *number_tokens(point.extent or 0)]
        out += ["n", *number_tokens(point.n or 0), "max"]
        out += ["nomax"] if limit is None or limit < 1 else list(number_tokens(limit))
    elif point.kind == CATEGORICAL:
        use = (point.used_by or "").removeprefix("meta_schedule.")
        out = ["cat", f"use:{use}" if use in USES else "use?", "k", *number_tokens(len(point.candidates or ()))]
    else:
        consumer = block_token(block_index[point.consumer]) if point.consumer in block_index else "root?"
        out = ["loc", block_token(block_index.get(point.block or "")), "in", consumer]
        out += ["loops", *number_tokens(len(point.consumer_loops)), "legal", *number_tokens(len(point.choices))]
    return [*out, "="]


def write_order(n: int) -> list[int]:
    """The order a tiling's n factors (TVM's outer-to-inner list) are written in: innermost, outermost, then the
    rest from the inside out, e.g. [3, 0, 2, 1]."""
    return [n - 1, *range(n - 1)[:1], *range(n - 2, 0, -1)] if n > 1 else list(range(n))


def decision_tokens(point: DecisionPoint, decision: Decision) -> list[str]:
    """The tokens of one decision at a point (no context)."""
    if point.kind == TILE:
        factors = decision if isinstance(decision, tuple) else (decision,)
        if any(f < 1 for f in factors):  # a non-constant loop's fixed (-1, 1, ...): not a choice anyone makes
            raise LanguageError(f"tile {list(factors)} of a loop without a constant extent cannot be written")
        return [tok for i in write_order(len(factors)) for tok in number_tokens(factors[i])]
    if point.kind == CATEGORICAL:
        if not 0 <= int(decision) < MAX_CANDIDATES:  # type: ignore[arg-type]
            raise LanguageError(f"categorical index {decision} is beyond the language's {MAX_CANDIDATES}")
        return [f"c{decision}"]
    assert point.kind == COMPUTE_LOCATION
    if not -2 <= int(decision) <= MAX_LOCATION:  # type: ignore[arg-type]
        raise LanguageError(f"compute location {decision} is beyond the language's L{MAX_LOCATION}")
    return [f"L{decision}"]


def read_decision(tokens: list[str], i: int, kind: str) -> tuple[Decision, int]:
    """Parse one decision of `kind` starting at tokens[i]: (decision, index after it)."""
    if kind == TILE:
        factors = []
        while i < len(tokens) and is_number_token(tokens[i]):
            value, i = read_number(tokens, i)
            factors.append(value)
        if not factors:
            raise LanguageError(f"a tile decision at token {i} has no factors")
        tiling = [0] * len(factors)
        for k, at in enumerate(write_order(len(factors))):
            tiling[at] = factors[k]
        return tuple(tiling), i
    tok = tokens[i] if i < len(tokens) else "<end>"
    if kind == CATEGORICAL and tok.startswith("c") and tok[1:].isdigit():
        return int(tok[1:]), i + 1
    if kind == COMPUTE_LOCATION and tok.startswith("L"):
        return int(tok[1:]), i + 1
    raise LanguageError(f"expected a {kind} decision at token {i}, got {tok!r}")


KIND_OF_WORD = {"tile": TILE, "cat": CATEGORICAL, "loc": COMPUTE_LOCATION}
