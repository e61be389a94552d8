"""Checkpoints: one folder with safetensors weights, the GPT-2 config and the language's tokenizer.

GPT2LMHeadModel.from_pretrained(dir) and AutoTokenizer.from_pretrained(dir) both load it.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..language import check_language, save_language, vocab_tokens
from .config import TLMConfig

TRAIN_STATE = "train_state.json"


def _quiet_transformers() -> None:
    """No progress bars from transformers when writing or reading a checkpoint (ours print their own)."""
    from transformers.utils import logging

    logging.disable_progress_bar()  # optional: step, optimizer-free progress, written by tlm_core.train


def new_model(config: TLMConfig, seed: int = 0):
    """A freshly initialised (untrained) GPT2LMHeadModel for the language's vocabulary."""
    from transformers import GPT2LMHeadModel

    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config.gpt2_config())
    model.eval()
    return model


def save_checkpoint(model, directory: str | Path, extra: dict | None = None) -> Path:
    """Weights (safetensors), config and tokenizer into `directory`; `extra` goes to train_state.json."""
    _quiet_transformers()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory, safe_serialization=True)
    save_language(directory)
    if extra is not None:
        (directory / TRAIN_STATE).write_text(json.dumps(extra, indent=1) + "\n")
    return directory


def load_checkpoint(directory: str | Path, any_version: bool = False):
    """The model in a checkpoint folder, in eval mode; refuses one written for another language version.

    any_version: accept another version whose vocabulary this one's extends (its weights are a fine start for
    training in this version, not a model of it); the embeddings grow to the new tokens."""
    from transformers import GPT2LMHeadModel

    _quiet_transformers()
    directory = Path(directory)
    if not (directory / "config.json").exists():
        raise FileNotFoundError(f"no checkpoint in {directory} (config.json missing)")
    check_language(directory, any_version)
    model = GPT2LMHeadModel.from_pretrained(directory)
    if model.config.vocab_size < len(vocab_tokens()):
        model.resize_token_embeddings(len(vocab_tokens()))  # new rows start at the mean of the old ones
    model.eval()
    return model


def num_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters())


def train_state(directory: str | Path) -> dict:
    path = Path(directory) / TRAIN_STATE
    return json.loads(path.read_text()) if path.exists() else {}


def default_checkpoint() -> Path:
    """Where the shipped checkpoint lives in a checkout: assets/tlm-small."""
    return Path(__file__).resolve().parents[2] / "assets" / "tlm-small"
