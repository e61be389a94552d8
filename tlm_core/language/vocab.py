"""The vocabulary: a fixed, versioned list of tokens, and the transformers tokenizer built from it.

Token ids never depend on data: the list below is the whole language, rebuilt identically everywhere. A
change of any token list bumps VERSION; checkpoints store the version and refuse to load a different one.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from .decisions import decision_vocab
from .hardware import hardware_vocab
from .numbers import number_vocab
from .operator import operator_vocab, operator_vocab_3

VERSION = "tlm-lang-3"  # 2: tile factors innermost first; 3: then the outermost; the task's work; tile iterators
PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = [PAD, BOS, EOS, UNK]
META_FILE = "tlm_language.json"  # saved next to the tokenizer in a checkpoint


@functools.cache
def vocab_tokens() -> tuple[str, ...]:
    tokens = [*SPECIALS, *number_vocab(), *hardware_vocab(), *operator_vocab(), *decision_vocab()]
    seen: set[str] = set()
    unique = [t for t in tokens if not (t in seen or seen.add(t))]  # first occurrence wins
    added = operator_vocab_3()  # version 3: appended, so that version 2's ids stay
    assert not seen & set(added)
    unique += added
    assert all(t and not any(c.isspace() for c in t) for t in unique)
    return tuple(unique)


@functools.cache
def token_ids() -> dict[str, int]:
    return {t: i for i, t in enumerate(vocab_tokens())}


def vocab_hash(size: int | None = None) -> str:
    """The hash of the vocabulary (of its first `size` tokens: an earlier version's, when tokens were appended)."""
    return hashlib.sha256("\n".join(vocab_tokens()[:size]).encode()).hexdigest()[:16]


def encode_ids(tokens: list[str]) -> list[int]:
    ids = token_ids()
    unk = ids[UNK]
    return [ids.get(t, unk) for t in tokens]


def decode_ids(ids: list[int]) -> list[str]:
    vocab = vocab_tokens()
    return [vocab[i] for i in ids]


def make_tokenizer():
    """A `PreTrainedTokenizerFast` over whitespace-separated tokens (WordLevel: one word, one id)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(vocab=token_ids(), unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token=BOS, eos_token=EOS, unk_token=UNK, pad_token=PAD, model_max_length=4096
    )


def save_language(directory: str | Path) -> None:
    """The tokenizer and the language's version, into a checkpoint folder."""
    directory = Path(directory)
    make_tokenizer().save_pretrained(directory)
    meta = {"version": VERSION, "vocab_size": len(vocab_tokens()), "vocab_hash": vocab_hash()}
    (directory / META_FILE).write_text(json.dumps(meta, indent=1) + "\n")


def check_language(directory: str | Path, any_version: bool = False) -> None:
    """Raise LanguageError unless the checkpoint in `directory` speaks this version of the language (or, with
    any_version, another version whose vocabulary this one's starts with: load_checkpoint grows its embeddings)."""
    from .decisions import LanguageError

    path = Path(directory) / META_FILE
    if not path.exists():
        raise LanguageError(f"{directory} has no {META_FILE}: not a TLM checkpoint")
    meta = json.loads(path.read_text())
    same = meta.get("vocab_hash") == vocab_hash() and meta.get("version") == VERSION
    prefix = meta.get("vocab_hash") == vocab_hash(int(meta.get("vocab_size", 0)))
    if not (same or (any_version and prefix)):
        raise LanguageError(
            f"checkpoint {directory} speaks {meta.get('version')} (vocabulary {meta.get('vocab_hash')}), "
            f"this code speaks {VERSION} ({vocab_hash()}): retrain or use a matching checkpoint"
        )
