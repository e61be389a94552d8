"""The model as a token stream: feed tokens (batched, through the KV cache), read next-token logits.

Forced tokens (contexts, single-legal-token steps) are only queued; the model runs when a real choice needs
logits, on everything queued at once. So a sentence costs one forward pass per choice, not per token.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Iterator

import torch

from ..language import decode_ids
from .fast import FastGPT2, padded_rows, supports
from .record import Step

TOP = 5  # tokens listed per step
WIDE_FEED = 8  # tokens fed at once (the prompt, most contexts) from which the matmuls gain from a second thread


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with n intra-op threads (restored after). One thread is fastest for this small model's
    feeds of a few tokens, and on a shared 2-core machine extra threads spin against other processes."""
    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def warm_up(model, threads: int | None, wide_threads: int | None, longest: int = 512) -> None:
    """What a process's first generation would otherwise pay for (1.4-1.9x a warm one's time), done at load: the
    fast path's layers prepared, oneDNN's kernels built for every padded row count up to `longest` under the
    thread count each will run with, and torch's first calls of the prompt, multi- and single-token feeds."""
    if not supports(model):
        return
    fast = FastGPT2(model)
    with torch_threads(threads):
        for rows in sorted({padded_rows(n) for n in range(1, longest + 1)}):
            with torch_threads(wide_threads if rows >= WIDE_FEED else None):
                fast.build(rows)
        for n in (3, 2, 1):
            fast.feed([0] * n)


class TokenStream:
    def __init__(self, model, wide_threads: int | None = None) -> None:
        """wide_threads: torch threads for feeds of >= WIDE_FEED tokens (None: the caller's setting)."""
        self.model = model
        self.wide_threads = wide_threads
        self.fast = FastGPT2(model) if supports(model) else None  # same logits, far less overhead per call
        self.past = None  # transformers' KV cache (when the fast path does not apply)
        self.pending: list[int] = []  # queued, not yet fed
        self.length = 0  # tokens in the sentence so far (fed + pending)
        self.model_seconds = 0.0
        self._logits: torch.Tensor | None = None

    def fork(self) -> TokenStream:
        """An independent stream with everything fed so far (prompt caching for several decodings)."""
        self.logits()
        other = copy.copy(self)
        other.pending, other.model_seconds = [], 0.0
        if self.fast is not None:
            other.fast = self.fast.fork()
        # transformers' cache objects are updated in place: forking one is a deep copy
        other.past = copy.deepcopy(self.past)
        return other

    def push(self, ids: list[int]) -> None:
        self.pending += ids
        self.length += len(ids)

    @torch.inference_mode()
    def logits(self) -> torch.Tensor:
        """Next-token logits after everything pushed (runs the model on the queued tokens)."""
        if self.pending or self._logits is None:
            start = time.perf_counter()
            rows = self.fast.rows(len(self.pending)) if self.fast is not None else len(self.pending)
            with torch_threads(self.wide_threads if rows >= WIDE_FEED else None):  # by rows: one setting per bucket
                if self.fast is not None:
                    self._logits = self.fast.feed(self.pending).float()
                else:
                    ids = torch.tensor([self.pending], dtype=torch.long)
                    out = self.model(input_ids=ids, cache=self.past, use_cache=True, logits_to_keep=1)
                    self.past = out.cache
                    self._logits = out.logits[0, -1].float()
            self.pending = []
            self.model_seconds += time.perf_counter() - start
        return self._logits


def masked_logprobs(logits: torch.Tensor, legal: list[int]) -> torch.Tensor:
    """Log-probabilities over the legal tokens only (in `legal`'s order)."""
    return torch.log_softmax(logits[legal], dim=-1)


def pick(logprobs: torch.Tensor, temperature: float, top_k: int | None, gen: torch.Generator | None) -> int:
    """An index into the legal tokens: argmax when temperature is 0, else a sample (optionally top-k)."""
    if temperature <= 0:
        return int(torch.argmax(logprobs))  # first maximum: deterministic
    scores = logprobs / temperature
    if top_k is not None and top_k < len(scores):
        cut = torch.topk(scores, top_k).values[-1]
        scores = torch.where(scores >= cut, scores, torch.full_like(scores, -math.inf))
    return int(torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=gen))


def make_step(position: int, point: int | None, legal: list[int], logprobs: torch.Tensor | None, chosen: int,
              vocab_size: int, forced: bool = False) -> Step:  # fmt: skip
    """The record of one token: `chosen` indexes `legal`; logprobs None when no model call was needed."""
    token = decode_ids([legal[chosen]])[0]
    if logprobs is None:
        return Step(position, point, token, 1.0, [(token, 1.0)], len(legal), vocab_size - len(legal), 0.0, forced)
    probs = logprobs.exp()
    k = min(TOP, len(legal))
    top_p, top_i = torch.topk(probs, k)
    top = [(decode_ids([legal[int(i)]])[0], float(p)) for p, i in zip(top_p, top_i, strict=True)]
    entropy = float(-(probs * logprobs).sum())
    return Step(position, point, token, float(probs[chosen]), top, len(legal), vocab_size - len(legal), entropy, forced)
