"""The legal token sequences of a decision point, as a trie: the mask at every token inside a decision.

A tile's legal factorisations become paths of number tokens, so after "2^3 ;" only the continuations that
still multiply to the extent (and keep the innermost factor under its limit) remain: the mask for each factor
is "what remains". Every leaf is a complete legal decision; sequences are prefix-free (each tiling has exactly
n factors, each ending with ';'), so reaching a leaf ends the decision.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ..language import decision_tokens, encode_ids
from ..language.decisions import sketch_token
from ..space import TILE, Decision, DecisionPoint


@dataclass
class Node:
    children: dict[int, Node] = field(default_factory=dict)
    decision: Decision | None = None  # set on leaves
    leaves: int = 0  # legal decisions below this node

    @property
    def is_leaf(self) -> bool:
        return not self.children


def build_trie(sequences: list[tuple[list[int], Decision]]) -> Node:
    root = Node()
    for ids, decision in sequences:
        node = root
        node.leaves += 1
        for t in ids:
            node = node.children.setdefault(t, Node())
            node.leaves += 1
        node.decision = decision
    return root


def point_trie(point: DecisionPoint) -> Node:
    """The trie of a point's legal decisions (cached: tiles by extent/n/limit, others by their choices)."""
    if point.kind == TILE:
        return _tile_trie(point.extent or 0, point.n or 0, point.max_innermost_factor or 0, tuple(point.choices))
    return _choice_trie(point.kind, tuple(point.choices))


@functools.lru_cache(maxsize=4096)
def _tile_trie(extent: int, n: int, limit: int, choices: tuple) -> Node:
    probe = DecisionPoint(0, 0, TILE, None, list(choices), choices[0], extent=extent, n=n)
    return build_trie([(encode_ids(decision_tokens(probe, c)), c) for c in choices])


@functools.lru_cache(maxsize=4096)
def _choice_trie(kind: str, choices: tuple) -> Node:
    probe = DecisionPoint(0, 0, kind, None, list(choices), choices[0])
    return build_trie([(encode_ids(decision_tokens(probe, c)), c) for c in choices])


@functools.lru_cache(maxsize=64)
def sketch_trie(num_sketches: int) -> Node:
    """The sketch choice: one of s0..s{n-1}."""
    return build_trie([(encode_ids([sketch_token(i)]), i) for i in range(num_sketches)])
