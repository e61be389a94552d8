"""The tensor language: a task's schedule space as a sentence of tokens, and decisions back from one.

Pipeline step 4 of 8, after tlm_core.space: the vocabulary the TLM (tlm_core.model) reads and the generator writes.

prompt = make_prompt(space)                    # hardware, operator, number of sketches
sentence = encode(space, sketch_index, decisions)
sketch_index, decisions = decode(sentence.tokens)
make_tokenizer() / save_language(dir)          # the fixed, versioned vocabulary as a transformers tokenizer
"""

from .decisions import LanguageError, context_tokens, decision_tokens, sketch_token
from .hardware import hardware_differences, hardware_of, hardware_tokens, hide_cpu
from .numbers import number_tokens, read_number
from .sentence import (
    PROMPT_END,
    ROLES,
    Prompt,
    Sentence,
    decision_mask,
    decode,
    encode,
    make_prompt,
    point_tokens,
    sentence_of_points,
    token_roles,
)
from .vocab import (
    BOS,
    EOS,
    PAD,
    VERSION,
    check_language,
    decode_ids,
    encode_ids,
    make_tokenizer,
    save_language,
    token_ids,
    vocab_tokens,
)

__all__ = [
    "BOS",
    "EOS",
    "PAD",
    "PROMPT_END",
    "ROLES",
    "VERSION",
    "LanguageError",
    "Prompt",
    "Sentence",
    "check_language",
    "context_tokens",
    "decision_mask",
    "decision_tokens",
    "decode",
    "decode_ids",
    "encode",
    "encode_ids",
    "hardware_differences",
    "hardware_of",
    "hardware_tokens",
    "hide_cpu",
    "make_prompt",
    "make_tokenizer",
    "number_tokens",
    "point_tokens",
    "read_number",
    "save_language",
    "sentence_of_points",
    "sketch_token",
    "token_ids",
    "token_roles",
    "vocab_tokens",
]
