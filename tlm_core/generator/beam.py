"""Beam search under the same legality mask: the k most likely distinct sentences (by masked log-probability).

Beams take different decisions, so each may meet different legal compute locations: a PathOracle replays the
sketch along each beam's decision prefix to find its next point (cached by prefix). All beams run through the
model as one right-padded batch per choice step (no KV cache: beams fork and have different lengths).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import torch

from ..language import EOS, Prompt, context_tokens, encode_ids, sentence_of_points, token_ids
from ..space import Decision, DecisionPoint, Sketch, Space, replay
from .lm import make_step, masked_logprobs
from .record import Generation, Step
from .trie import Node, point_trie, sketch_trie


class _Stop(Exception):
    def __init__(self, point: DecisionPoint) -> None:
        self.point = point


class PathOracle:
    """The decision point that follows a prefix of decisions (None at the end), by replay."""

    def __init__(self, sketch: Sketch) -> None:
        self.sketch = sketch
        self._cache: dict[tuple, DecisionPoint | None] = {}

    def next_point(self, prefix: tuple) -> DecisionPoint | None:
        if prefix not in self._cache:

            def choose(point: DecisionPoint) -> Decision:
                if point.index < len(prefix):
                    return prefix[point.index]
                raise _Stop(point)

            try:
                replay(self.sketch, choose)
                self._cache[prefix] = None
            except _Stop as stop:
                self._cache[prefix] = stop.point
        return self._cache[prefix]


@dataclass
class Beam:
    ids: list[int]
    node: Node | None  # where in the current trie; None between decision points
    logprob: float = 0.0
    steps: list[Step] = field(default_factory=list)
    sketch: int | None = None
    point: DecisionPoint | None = None
    points: list[DecisionPoint] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    done: bool = False

    def fork(self) -> Beam:
        return replace(self, ids=list(self.ids), steps=list(self.steps), points=list(self.points),
                       decisions=list(self.decisions))  # fmt: skip


def beam_search(model, space: Space, prompt: Prompt, k: int) -> list[Generation]:
    start = time.perf_counter()
    vocab_size = len(token_ids())
    oracles = [PathOracle(s) for s in space.sketches]
    beams = [Beam(encode_ids(prompt.tokens), sketch_trie(len(space.sketches)))]
    model_seconds = 0.0

    def advance(b: Beam) -> None:
        """Through forced tokens, up to the next real choice or the end."""
        while not b.done:
            if b.node is None:
                point = oracles[b.sketch].next_point(tuple(b.decisions))  # type: ignore[index]
                if point is None:
                    b.steps.append(make_step(len(b.ids), None, [token_ids()[EOS]], None, 0, vocab_size))
                    b.ids.append(token_ids()[EOS])
                    b.done = True
                    return
                b.ids += encode_ids(context_tokens(point, prompt.block_index, prompt.iterators))
                b.point, b.node = point, point_trie(point)
            elif b.node.is_leaf:
                if b.point is None:
                    b.sketch = int(b.node.decision)  # type: ignore[arg-type]
                else:
                    b.points.append(b.point)
                    b.decisions.append(b.node.decision)  # type: ignore[arg-type]
                b.point, b.node = None, None
            elif len(b.node.children) == 1:
                (t,) = b.node.children
                b.steps.append(make_step(len(b.ids), _index(b), [t], None, 0, vocab_size))
                b.ids.append(t)
                b.node = b.node.children[t]
            else:
                return

    while True:
        for b in beams:
            advance(b)
        active = [b for b in beams if not b.done]
        if not active:
            break
        t0 = time.perf_counter()
        last = _last_logits(model, [b.ids for b in active])
        model_seconds += time.perf_counter() - t0
        pool: list[tuple[float, int, Beam, list[int], torch.Tensor | None, int]] = [
            (b.logprob, i, b, [], None, -1) for i, b in enumerate(beams) if b.done
        ]
        for j, b in enumerate(active):
            legal = list(b.node.children)  # type: ignore[union-attr]
            lp = masked_logprobs(last[j], legal)
            for c in range(len(legal)):
                pool.append((b.logprob + float(lp[c]), len(pool), b, legal, lp, c))
        pool.sort(key=lambda x: (-x[0], x[1]))  # stable: equal scores keep their order
        beams = []
        for score, _, b, legal, lp, c in pool[:k]:
            if c < 0:
                beams.append(b)
                continue
            nb = b.fork()
            nb.steps.append(make_step(len(nb.ids), _index(nb), legal, lp, c, vocab_size))
            nb.ids.append(legal[c])
            nb.node = b.node.children[legal[c]]  # type: ignore[union-attr]
            nb.logprob = score
            beams.append(nb)

    seconds = time.perf_counter() - start
    return [
        Generation(
            space.task.id,
            b.sketch,
            b.decisions,  # type: ignore[arg-type]
            sentence_of_points(prompt, b.sketch, b.points, b.decisions),  # type: ignore[arg-type]
            b.steps,
            b.logprob,
            seconds,
            model_seconds,
            "beam",
        )  # fmt: skip
        for b in beams
    ]


def _index(b: Beam) -> int | None:
    return b.point.index if b.point is not None else None


@torch.inference_mode()
def _last_logits(model, sequences: list[list[int]]) -> torch.Tensor:
    """Next-token logits after each sequence (right padding: causal attention never sees it)."""
    width = max(len(s) for s in sequences)
    ids = torch.zeros((len(sequences), width), dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, s in enumerate(sequences):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    logits = model(input_ids=ids, attention_mask=mask, use_cache=False).logits
    return torch.stack([logits[i, len(s) - 1] for i, s in enumerate(sequences)]).float()
