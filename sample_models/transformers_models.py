"""BERT-base, GPT-2 small and LLaMA-7B from their transformers configs, with seeded random weights.

No model hub here: every model is built from its config (the real hyperparameters) after torch.manual_seed(0).
Attention is transformers' "eager" implementation, so it shows up as explicit batch-matmul and softmax tasks.
Each model is wrapped so that the export has plain tensor inputs and a single tensor output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

Built = tuple[nn.Module, tuple[torch.Tensor, ...]]

BERT_BASE = dict(
    vocab_size=30522,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    max_position_embeddings=512,
)
BERT_TINY = dict(
    vocab_size=1000,
    hidden_size=128,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=512,
    max_position_embeddings=64,
)
GPT2_SMALL = dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12)
GPT2_TINY = dict(vocab_size=1000, n_positions=64, n_embd=128, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0)
LLAMA_7B = dict(
    vocab_size=32000,
    hidden_size=4096,
    intermediate_size=11008,
    num_attention_heads=32,
    num_key_value_heads=32,
    rms_norm_eps=1e-6,
    max_position_embeddings=2048,
)
LLAMA_TINY = dict(
    vocab_size=1000,
    hidden_size=64,
    intermediate_size=172,
    num_attention_heads=4,
    num_key_value_heads=4,
    rms_norm_eps=1e-6,
    max_position_embeddings=64,
)


class LastHidden(nn.Module):
    """Encoder: token ids -> last hidden state."""

    def __init__(self, model: nn.Module, vocab: int):
        super().__init__()
        self.model = model
        self.input_ranges = {"input_ids": (0, vocab)}  # [low, high) of the integer inputs

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids).last_hidden_state


class Logits(nn.Module):
    """Causal LM: token ids + attention mask -> logits.

    The mask is an explicit input: without it, transformers 5 builds the causal mask with cumsum on a bool
    tensor, which TVM's frontend keeps as bool and LLVM codegen then rejects (docs/tvm-notes.md, "Importing models").
    """

    def __init__(self, model: nn.Module, vocab: int):
        super().__init__()
        self.model = model
        # ids in [0, vocab); the mask is all ones (no padding), so random inputs never mask out a whole row
        self.input_ranges = {"input_ids": (0, vocab), "attention_mask": (1, 2)}

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def _make(model_cls: Callable[[Any], nn.Module], config: Any, wrapper: type, seq: int, causal: bool) -> Built:
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = wrapper(model_cls(config).eval(), config.vocab_size)
    ids = torch.randint(0, config.vocab_size, (1, seq), generator=torch.Generator().manual_seed(1))
    return model, ((ids, torch.ones(1, seq, dtype=torch.int64)) if causal else (ids,))


def bert(tiny: bool = False) -> Built:
    """BERT-base (uncased) encoder at sequence 128; tiny: 2 layers, hidden 128, sequence 32."""
    from transformers import BertConfig, BertModel

    config = BertConfig(**(BERT_TINY if tiny else BERT_BASE))
    return _make(lambda c: BertModel(c, add_pooling_layer=False), config, LastHidden, 32 if tiny else 128, False)


def gpt2(tiny: bool = False) -> Built:
    """GPT-2 small (124M) with its LM head at sequence 128; tiny: 2 layers, hidden 128, sequence 32."""
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(**(GPT2_TINY if tiny else GPT2_SMALL))
    return _make(GPT2LMHeadModel, config, Logits, 32 if tiny else 128, True)


def llama(tiny: bool = False, layers: int | None = None) -> Built:
    """LLaMA-7B's dimensions at sequence 128 with `layers` decoder layers (default 2 of 32: all the weights do
    not fit in memory here, see llama_layers); tiny: hidden 64, 4 heads, sequence 16, 2 layers by default."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from sample_models.llama_layers import BUILT_LAYERS

    config = LlamaConfig(**(LLAMA_TINY if tiny else LLAMA_7B), num_hidden_layers=layers or BUILT_LAYERS)
    return _make(LlamaForCausalLM, config, Logits, 16 if tiny else 128, True)
