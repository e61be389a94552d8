"""Supervised fine-tuning on the best measured programs: (prompt, best decisions) sentences, loss on decisions.

The examples come from measured data directories (tlm_core.train.measured.measured_examples), where each
record's trace was mapped back to its sketch and decisions by tlm_core.dataset.traces.SketchMatcher.
"""

from __future__ import annotations

from pathlib import Path

from ..model import TLMConfig
from .data import Example
from .loop import TrainSettings, train


def finetune(
    examples: list[Example],
    out_dir: str | Path,
    settings: TrainSettings,
    init_from: str | Path | None = None,
    config: TLMConfig | None = None,
    quiet: bool = False,
) -> dict:
    """Fine-tune (or resume) from `init_from` (a pre-trained checkpoint) into `out_dir`."""
    return train(examples, out_dir, settings, "finetune", config, init_from=init_from, quiet=quiet)
