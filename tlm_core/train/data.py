"""Training examples and batches: token ids, with the positions that carry loss."""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from ..language import PAD, encode_ids, hide_cpu, token_ids, vocab_tokens

IGNORE = -100  # labels transformers' loss skips


@dataclass
class Example:
    ids: list[int]
    loss_mask: list[bool]  # True where the token is predicted with loss


def lm_example(text: str) -> Example:
    """Pre-training: every token after <bos> carries loss."""
    ids = encode_ids(text.split())
    return Example(ids, [False] + [True] * (len(ids) - 1))


def decision_example(ids: list[int], decision_mask: list[bool]) -> Example:
    """Fine-tuning: loss on decision tokens only (the prompt and contexts are given, not learnt)."""
    return Example(ids, list(decision_mask))


def hide_cpu_names(examples: list[Example], share: float, seed: int = 0) -> list[Example]:
    """A `share` of the examples (seeded choice) with the prompt's CPU name written "cpu?": the model then
    also learns each machine from its numbers alone (cores, vector width, caches), which is all it has for a
    CPU it never learnt (hardware_tokens hides such a name at generation)."""
    tokens, cpu = vocab_tokens(), token_ids()["cpu"]
    rng = random.Random(seed)
    out = []
    for e in examples:
        if cpu in e.ids and rng.random() < share:
            e = Example(encode_ids(hide_cpu([tokens[i] for i in e.ids])), e.loss_mask)
        out.append(e)
    return out


def batches(examples: list[Example], batch_size: int, rng: random.Random, max_len: int):
    """Endless shuffled batches: (input_ids, attention_mask, labels), right-padded to the batch's longest."""
    pad = token_ids()[PAD]
    order: list[int] = []
    while True:
        if len(order) < batch_size:
            fresh = list(range(len(examples)))
            rng.shuffle(fresh)
            order += fresh
        chosen, order = [examples[i] for i in order[:batch_size]], order[batch_size:]
        width = min(max(len(e.ids) for e in chosen), max_len)
        ids = torch.full((len(chosen), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chosen), width), dtype=torch.long)
        labels = torch.full((len(chosen), width), IGNORE, dtype=torch.long)
        for i, e in enumerate(chosen):
            n = min(len(e.ids), width)
            ids[i, :n] = torch.tensor(e.ids[:n])
            mask[i, :n] = 1
            lab = torch.tensor(e.ids[:n])
            keep = torch.tensor(e.loss_mask[:n])
            labels[i, :n] = torch.where(keep, lab, torch.full_like(lab, IGNORE))
        yield ids, mask, labels
