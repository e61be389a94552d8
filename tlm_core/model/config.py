"""Model sizes (nanoGPT style): a small dataclass, presets, and its GPT2Config."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..language import vocab_tokens
from ..language.vocab import BOS, EOS, PAD, token_ids


@dataclass(frozen=True)
class TLMConfig:
    n_layer: int = 4  # transformer blocks
    n_head: int = 4  # attention heads per block (n_embd must divide by it)
    n_embd: int = 256  # hidden size
    n_positions: int = 1024  # longest sentence in tokens (a ResNet-50 conv's sketch: ~400)
    dropout: float = 0.0  # residual/embedding/attention dropout while training (0: small data, short runs)

    def gpt2_config(self):
        from transformers import GPT2Config

        ids = token_ids()
        return GPT2Config(
            vocab_size=len(vocab_tokens()),
            n_positions=self.n_positions,
            n_embd=self.n_embd,
            n_layer=self.n_layer,
            n_head=self.n_head,
            resid_pdrop=self.dropout,
            embd_pdrop=self.dropout,
            attn_pdrop=self.dropout,
            bos_token_id=ids[BOS],
            eos_token_id=ids[EOS],
            pad_token_id=ids[PAD],
        )

    def to_dict(self) -> dict:
        return asdict(self)


PRESETS: dict[str, TLMConfig] = {
    "tiny": TLMConfig(n_layer=2, n_head=2, n_embd=64, n_positions=1024),  # tests: ~0.2M parameters
    "small": TLMConfig(n_layer=4, n_head=4, n_embd=256, n_positions=1024),  # default, trains on a CPU: ~3.6M
    "gpt2": TLMConfig(n_layer=12, n_head=12, n_embd=768, n_positions=1024),  # the paper's GPT-2 small: ~86M
}


def preset(name: str) -> TLMConfig:
    if name not in PRESETS:
        raise ValueError(f"unknown model preset {name!r}; presets: {', '.join(PRESETS)}")
    return PRESETS[name]
