"""Pre-training: a causal LM over sentences of random legal decisions (tlm_core.train.corpus)."""

from __future__ import annotations

from pathlib import Path

from ..model import TLMConfig
from .corpus import read_corpus
from .data import lm_example
from .loop import TrainSettings, train


def pretrain(
    corpus: list[str | Path],
    out_dir: str | Path,
    settings: TrainSettings,
    config: TLMConfig | None = None,
    quiet: bool = False,
) -> dict:
    """Train (or resume) a model on the sentences of one or more corpus files."""
    rows = read_corpus(corpus)
    return train([lm_example(r["text"]) for r in rows], out_dir, settings, "pretrain", config, quiet=quiet)
