"""A lean GPT-2 forward pass for token-by-token decoding, on the weights of a transformers GPT2LMHeadModel.

transformers' forward costs ~1-2 ms of Python per call (cache objects, mask building, dispatch) however few
tokens it gets, which dominates when a small model is stepped a few dozen times per subgraph. This one does
the same arithmetic (pre-LN blocks, tanh GELU, tied LM head) with a preallocated KV cache; tests check that
its logits match transformers'.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def supports(model) -> bool:
    """Whether `model` is a GPT-2 this implementation reproduces exactly."""
    cfg = getattr(model, "config", None)
    return (
        cfg is not None
        and getattr(cfg, "model_type", None) == "gpt2"
        and cfg.activation_function in ("gelu_new", "gelu_pytorch_tanh")
        and not cfg.scale_attn_by_inverse_layer_idx
        and not cfg.reorder_and_upcast_attn
        and cfg.scale_attn_weights
    )


class FastGPT2:
    """Feeds tokens through the model with a KV cache; `feed(ids)` returns the last position's logits."""

    def __init__(self, model) -> None:
        cfg = model.config
        t = model.transformer
        self.wte, self.wpe, self.ln_f = t.wte.weight, t.wpe.weight, t.ln_f
        self.head = model.lm_head.weight
        self.blocks = list(t.h)
        self.n_head = cfg.n_head
        self.d = cfg.n_embd // cfg.n_head
        self.eps = cfg.layer_norm_epsilon
        self.scale = 1 / math.sqrt(self.d)
        self.k = torch.empty(len(self.blocks), self.n_head, cfg.n_positions, self.d)  # only written slots are read
        self.v = torch.empty_like(self.k)
        self.length = 0
        self.max_length = cfg.n_positions

    def fork(self) -> FastGPT2:
        """An independent copy of this state (e.g. after the prompt, shared by several samples)."""
        other = object.__new__(FastGPT2)
        other.__dict__.update(self.__dict__)
        other.k, other.v = torch.empty_like(self.k), torch.empty_like(self.v)
        other.k[:, :, : self.length] = self.k[:, :, : self.length]
        other.v[:, :, : self.length] = self.v[:, :, : self.length]
        return other

    @torch.inference_mode()
    def feed(self, ids: list[int]) -> torch.Tensor:
        n, start = len(ids), self.length
        end = start + n
        if end > self.max_length:
            raise ValueError(f"sentence of {end} tokens exceeds the model's {self.max_length} positions")
        x = self.wte[torch.tensor(ids)] + self.wpe[start:end]
        mask = None
        if n > 1 and start > 0:  # new token i sees the cache and new tokens 0..i
            mask = torch.ones(n, end, dtype=torch.bool).tril(diagonal=start)
        for i, block in enumerate(self.blocks):
            h = F.layer_norm(x, (x.shape[-1],), block.ln_1.weight, block.ln_1.bias, self.eps)
            qkv = torch.addmm(block.attn.c_attn.bias, h, block.attn.c_attn.weight)
            q, k, v = qkv.view(n, 3, self.n_head, self.d).permute(1, 2, 0, 3)
            self.k[i, :, start:end] = k
            self.v[i, :, start:end] = v
            keys, values = self.k[i, :, :end], self.v[i, :, :end]
            if n == 1:  # plain matmuls: for one query token they beat SDPA's dispatch ~10x at these sizes
                att = torch.softmax((q @ keys.transpose(1, 2)) * self.scale, dim=-1) @ values
            else:  # the prompt (causal, no mask built) or a run of queued tokens; 4-d: SDPA's fused CPU kernel
                att = F.scaled_dot_product_attention(
                    q[None], keys[None], values[None], mask, is_causal=mask is None, scale=self.scale
                )[0]
            att = att.permute(1, 0, 2).reshape(n, -1)
            x = x + torch.addmm(block.attn.c_proj.bias, att, block.attn.c_proj.weight)
            h = F.layer_norm(x, (x.shape[-1],), block.ln_2.weight, block.ln_2.bias, self.eps)
            h = F.gelu(torch.addmm(block.mlp.c_fc.bias, h, block.mlp.c_fc.weight), approximate="tanh")
            x = x + torch.addmm(block.mlp.c_proj.bias, h, block.mlp.c_proj.weight)
        self.length = end
        last = F.layer_norm(x[-1], (x.shape[-1],), self.ln_f.weight, self.ln_f.bias, self.eps)
        return last @ self.head.T
