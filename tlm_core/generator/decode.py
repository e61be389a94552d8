"""One sentence, token by token, under the legality mask: greedy or sampled, with optional forced decisions.

The walk over decision points is the space's `replay`: at each point `point.choices` holds the legal decisions
given the earlier ones (compute locations depend on them), the point's context is written as forced tokens, and
the decision is chosen token by token inside the point's trie. Every sentence is thus a legal program.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from ..language import EOS, Prompt, context_tokens, decision_tokens, encode_ids, sentence_of_points, token_ids
from ..space import Decision, DecisionPoint, Space, replay
from .lm import TokenStream, make_step, masked_logprobs, pick
from .record import Generation, Step
from .trie import Node, point_trie, sketch_trie


def prompt_stream(model, prompt: Prompt, wide_threads: int | None = None) -> TokenStream:
    """A token stream holding the prompt (fed lazily, at the first choice)."""
    stream = TokenStream(model, wide_threads)
    stream.push(encode_ids(prompt.tokens))
    return stream


@dataclass
class Policy:
    temperature: float = 0.0  # 0: greedy
    top_k: int | None = None
    generator: torch.Generator | None = None  # seeded, for reproducible sampling


def decode_one(
    model,
    space: Space,
    prompt: Prompt,
    policy: Policy,
    forced: dict[int, Decision] | None = None,
    sketch_index: int | None = None,
    stream: TokenStream | None = None,
) -> Generation:
    """One generation. `forced` maps decision indices to values the model must take (checked for legality:
    ValueError when illegal); `sketch_index` forces the sketch; `stream` holds the prompt already (see
    prompt_stream; fork one to decode several times after a single pass over the prompt)."""
    start = time.perf_counter()
    forced = forced or {}
    vocab_size = len(token_ids())
    stream = stream or prompt_stream(model, prompt)
    steps: list[Step] = []
    logprob = [0.0]

    def choose_in(trie: Node, point: int | None) -> Decision:
        node = trie
        while not node.is_leaf:
            legal = list(node.children)
            if len(legal) == 1:  # the mask leaves no choice: no model call
                chosen, lp = 0, None
            else:
                lp = masked_logprobs(stream.logits(), legal)
                chosen = pick(lp, policy.temperature, policy.top_k, policy.generator)
                logprob[0] += float(lp[chosen])
            steps.append(make_step(stream.length, point, legal, lp, chosen, vocab_size))
            stream.push([legal[chosen]])
            node = node.children[legal[chosen]]
        return node.decision  # type: ignore[return-value]

    def push_forced(ids: list[int], point: int | None) -> None:
        for t in ids:
            steps.append(make_step(stream.length, point, [t], None, 0, vocab_size, forced=True))
            stream.push([t])

    if sketch_index is None:
        sketch_index = int(choose_in(sketch_trie(len(space.sketches)), None))  # type: ignore[arg-type]
    else:
        if not 0 <= sketch_index < len(space.sketches):
            raise ValueError(f"sketch {sketch_index} does not exist: the space has {len(space.sketches)}")
        push_forced(encode_ids([f"s{sketch_index}"]), None)

    def chooser(point: DecisionPoint) -> Decision:
        stream.push(encode_ids(context_tokens(point, prompt.block_index, prompt.iterators)))
        if point.index in forced:
            reason = point.check(forced[point.index])
            if reason is not None:
                raise ValueError(f"decision {point.index} ({point.title()}): {reason}")
            value = point.normalize(forced[point.index])
            push_forced(encode_ids(decision_tokens(point, value)), point.index)
            return value
        return choose_in(point_trie(point), point.index)

    replayed = replay(space.sketches[sketch_index], chooser)
    end = token_ids()[EOS]
    steps.append(make_step(stream.length, None, [end], None, 0, vocab_size))
    sentence = sentence_of_points(prompt, sketch_index, replayed.points, replayed.decisions)
    method = "greedy" if policy.temperature <= 0 else "sample"
    return Generation(
        space.task.id,
        sketch_index,
        list(replayed.decisions),
        sentence,
        steps,
        logprob[0],
        time.perf_counter() - start,
        stream.model_seconds,
        "override" if forced else method,
    )
