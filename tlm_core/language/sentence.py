"""Tensor sentences: prompt (hardware, operator, number of sketches) + decisions (sketch, then each point).

    <bos> <hw> ... <op> ... sketches 3^1 ; <dec>  s1  tile b0 x 2^7 ; ... = 2^1 ; 2^4 ; ; 2^2 ;  cat ... = c2  <eos>
    |--------------------- prompt ----------------------|  |------------------- decisions ---------------------|

The model chooses the sketch (token s<i>, masked to the task's sketches), then every decision; each point's
context tokens are written before its decision because they depend on the choices before it (legal compute
locations do). `decision_mask` marks the tokens a model actually chooses: fine-tuning puts its loss there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tvm.target import Target

from ..space import Decision, DecisionPoint, Space, replay
from .decisions import KIND_OF_WORD, LanguageError, context_tokens, decision_tokens, read_decision, sketch_token
from .hardware import hardware_tokens
from .numbers import number_tokens
from .operator import block_iterators, blocks_of, operator_tokens
from .vocab import BOS, EOS, encode_ids

PROMPT_END = "<dec>"
# What each token of a sentence is: the prompt's three parts (the hardware from "<hw>", the operator from "<op>",
# the sketch count from "sketches" to "<dec>"), <bos>, and after the prompt the given context of each decision
# point or a chosen token (the sketch, a decision, <eos>).
ROLES = ("start", "hardware", "operator", "sketch", "context", "decision")
_SECTION_ROLE = {"<hw>": "hardware", "<op>": "operator", "sketches": "sketch"}


@dataclass
class Prompt:
    tokens: list[str]  # <bos> ... <dec>
    block_index: dict[str, int]  # block name -> its number in the operator description
    num_sketches: int
    iterators: dict[str, tuple[str, ...]] = field(default_factory=dict)  # block name -> its iterators' loop names


@dataclass
class Sentence:
    tokens: list[str]
    prompt_len: int  # tokens[:prompt_len] is the prompt
    decision_mask: list[bool] = field(repr=False)  # True where the token is (part of) a choice
    sketch_index: int = 0
    decisions: list[Decision] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    @property
    def ids(self) -> list[int]:
        return encode_ids(self.tokens)

    @property
    def decision_text(self) -> str:
        return " ".join(self.tokens[self.prompt_len :])


def token_roles(sentence: Sentence) -> list[str]:
    """The role (one of ROLES) of every token of a sentence, in order."""
    roles, role = [], "start"
    for tok in sentence.tokens[: sentence.prompt_len]:
        role = _SECTION_ROLE.get(tok, role)
        roles.append(role)
    roles += ["decision" if m else "context" for m in sentence.decision_mask[sentence.prompt_len :]]
    return roles


def make_prompt(space: Space, target: Target | None = None, trained: Sequence[str] = ()) -> Prompt:
    """The prompt of a task's space on a target (default: the space's own), for a checkpoint trained on the
    hardware prompts `trained` (see hardware_tokens)."""
    task = space.task
    blocks = {b.name_hint: i for i, b in enumerate(blocks_of(task.func))}
    n = len(space.sketches)
    tokens = [BOS, *hardware_tokens(target or space.target, trained), *operator_tokens(task)]
    tokens += ["sketches", *number_tokens(n), PROMPT_END]
    return Prompt(tokens, blocks, n, block_iterators(task.func))


def point_tokens(point: DecisionPoint, decision: Decision, prompt: Prompt) -> tuple[list[str], list[bool]]:
    """A point's context + decision, with the decision mask."""
    context = context_tokens(point, prompt.block_index, prompt.iterators)
    choice = decision_tokens(point, decision)
    return [*context, *choice], [False] * len(context) + [True] * len(choice)


def sentence_of_points(
    prompt: Prompt, sketch_index: int, points: list[DecisionPoint], decisions: list[Decision]
) -> Sentence:
    """The sentence of decisions along a known replay path (`points` as replay met them)."""
    tokens, mask = list(prompt.tokens), [False] * len(prompt.tokens)
    tokens.append(sketch_token(sketch_index))
    mask.append(True)
    for point, decision in zip(points, decisions, strict=True):
        t, m = point_tokens(point, decision, prompt)
        tokens += t
        mask += m
    tokens.append(EOS)
    mask.append(True)  # ending is a decision too: the model learns where a sentence stops
    return Sentence(tokens, len(prompt.tokens), mask, sketch_index, list(decisions))


def encode(space: Space, sketch_index: int, decisions: list[Decision], prompt: Prompt | None = None) -> Sentence:
    """decisions -> sentence. Replays the sketch, so the contexts are those of this decision vector's path.

    The decisions must be legal (use `apply_decisions` to validate outside input first)."""
    prompt = prompt or make_prompt(space)
    sketch = space.sketches[sketch_index]
    if len(decisions) != len(sketch.points):
        raise LanguageError(f"sketch {sketch_index} takes {len(sketch.points)} decisions, got {len(decisions)}")
    replayed = replay(sketch, lambda p: decisions[p.index])
    return sentence_of_points(prompt, sketch_index, replayed.points, replayed.decisions)


def decision_mask(tokens: list[str], prompt_len: int) -> list[bool]:
    """A sentence's decision mask from its tokens alone: after the prompt, everything but the contexts (from a
    point's kind word to its "=")."""
    mask, in_context = [False] * prompt_len, False
    for tok in tokens[prompt_len:]:
        in_context = (in_context or tok in KIND_OF_WORD) and tok != "="
        mask.append(not in_context and tok != "=")
    return mask


def decode(tokens: list[str] | str) -> tuple[int, list[Decision]]:
    """sentence -> (sketch index, decisions), from the tokens alone (the prompt is skipped)."""
    if isinstance(tokens, str):
        tokens = tokens.split()
    try:
        i = tokens.index(PROMPT_END) + 1
    except ValueError:
        raise LanguageError(f"no '{PROMPT_END}' in the sentence: it has no decisions") from None
    tok = tokens[i] if i < len(tokens) else "<end>"
    if not (tok.startswith("s") and tok[1:].isdigit()):
        raise LanguageError(f"expected a sketch token after '{PROMPT_END}', got {tok!r}")
    sketch_index, i = int(tok[1:]), i + 1
    decisions: list[Decision] = []
    while i < len(tokens) and tokens[i] != EOS:
        kind = KIND_OF_WORD.get(tokens[i])
        if kind is None:
            raise LanguageError(f"expected tile, cat or loc at token {i}, got {tokens[i]!r}")
        try:
            i = tokens.index("=", i) + 1
        except ValueError:
            raise LanguageError(f"decision context at token {i} has no '='") from None
        decision, i = read_decision(tokens, i, kind)
        decisions.append(decision)
    return sketch_index, decisions
