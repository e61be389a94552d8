"""A lean GPT-2 forward pass for token-by-token decoding, on the weights of a transformers GPT2LMHeadModel.

transformers' forward costs ~1-2 ms of Python per call (cache objects, mask building, dispatch) however few
tokens it gets, which dominates when a small model is stepped a few dozen times per subgraph. This one does
the same arithmetic (pre-LN blocks, tanh GELU, tied LM head) with a preallocated KV cache, on feeds padded to a
few row counts (padded_rows) whose oneDNN kernels are built once; tests check that its logits match
transformers'.
"""

from __future__ import annotations

import contextlib
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


class Linear:
    """x -> x @ weight + bias for a GPT-2 Conv1D (weight [in, out]). Where torch has oneDNN, the weight is
    prepacked once into its blocked layout: 1.1-1.8x MKL's addmm for the 1-64-row feeds of decoding and for the
    prompt, on a 2-core Zen 4 (one run, medians; exact fp32, only the summation order differs)."""

    def __init__(self, conv1d) -> None:
        self.weight, self.bias = conv1d.weight.detach(), conv1d.bias.detach()
        self.packed = None
        with contextlib.suppress(AttributeError, RuntimeError):  # a torch built without oneDNN: addmm
            self.packed = torch.ops.mkldnn._reorder_linear_weight(self.weight.t().contiguous())

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed is not None:
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")
        return torch.addmm(self.bias, x, self.weight)


class Layer:
    """One pre-LN block's tensors, read once (module attribute lookups cost ~1 us each, 80 per feed)."""

    def __init__(self, block) -> None:
        self.ln_1 = (block.ln_1.weight.detach(), block.ln_1.bias.detach())
        self.ln_2 = (block.ln_2.weight.detach(), block.ln_2.bias.detach())
        self.qkv, self.proj = Linear(block.attn.c_attn), Linear(block.attn.c_proj)
        self.fc, self.out = Linear(block.mlp.c_fc), Linear(block.mlp.c_proj)


def layers_of(model) -> list[Layer]:
    """The model's layers, prepared once and kept on the model until a parameter changes in place (training
    bumps every tensor's version counter), since a stream is made per generation."""
    version = tuple((id(p), p._version) for p in model.parameters())
    cached = model.__dict__.get("_fast_layers")
    if cached is None or cached[0] != version:
        cached = (version, [Layer(block) for block in model.transformer.h])
        model.__dict__["_fast_layers"] = cached
    return cached[1]


def padded_rows(n: int) -> int:
    """The rows a feed of n tokens is computed on: n rounded up to one of eight sizes per doubling (1-16, 18,
    20, ..., 32, 36, 40, ..., 64, 72, ...: ~4 % more rows on the tiny samples' feeds). oneDNN builds a kernel
    for every row count it meets (~0.5 ms per Linear shape and thread count), and feeds have dozens of distinct
    lengths (prompts of 66-262 tokens, contexts of 7-45, steps of 1-2); these few can be built once, at load."""
    step = 1 << max(n.bit_length() - 4, 0)
    return -(-n // step) * step


class FastGPT2:
    """Feeds tokens through the model with a KV cache; `feed(ids)` returns the last position's logits."""

    pad_rows = True  # compute feeds on padded_rows(n) rows (False: exactly n)

    def __init__(self, model) -> None:
        cfg = model.config
        t = model.transformer
        self.wte, self.wpe = t.wte.weight.detach(), t.wpe.weight.detach()
        self.ln_f = (t.ln_f.weight.detach(), t.ln_f.bias.detach())
        self.head = model.lm_head.weight.detach()
        self.layers = layers_of(model)
        self.n_head = cfg.n_head
        self.d = cfg.n_embd // cfg.n_head
        self.width = cfg.n_embd
        self.eps = cfg.layer_norm_epsilon
        self.scale = 1 / math.sqrt(self.d)
        self.k = torch.empty(len(self.layers), self.n_head, cfg.n_positions, self.d)  # only written slots are read
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

    def build(self, rows: int) -> None:
        """Has oneDNN build its kernels for feeds of `rows` rows (under the current thread count): one layer's
        Linears on that many rows, as every layer has the same shapes."""
        layer = self.layers[0]
        with torch.inference_mode():
            for linear in (layer.qkv, layer.proj, layer.fc, layer.out):
                linear(torch.zeros(rows, linear.weight.shape[0]))

    def rows(self, n: int) -> int:
        """The rows a feed of n tokens is computed on (never past the model's last position)."""
        return min(padded_rows(n), self.max_length - self.length) if self.pad_rows else n

    @torch.inference_mode()
    def feed(self, ids: list[int]) -> torch.Tensor:
        n, start = len(ids), self.length
        if start + n > self.max_length:
            raise ValueError(f"sentence of {start + n} tokens exceeds the model's {self.max_length} positions")
        # Padding rows (repeats of the last token) go to cache slots past the sentence's end: under the causal
        # mask no real row sees them (row i sees keys <= start + i), and the next feed overwrites them.
        rows = self.rows(n)
        end = start + rows
        x = self.wte[torch.tensor(ids + ids[-1:] * (rows - n))] + self.wpe[start:end]
        mask = None
        if rows > 1 and start > 0:  # new token i sees the cache and new tokens 0..i
            mask = torch.ones(rows, end, dtype=torch.bool).tril(diagonal=start)
        shape = (self.width,)
        for i, layer in enumerate(self.layers):
            qkv = layer.qkv(F.layer_norm(x, shape, *layer.ln_1, self.eps))
            q, k, v = qkv.view(rows, 3, self.n_head, self.d).permute(1, 2, 0, 3)
            self.k[i, :, start:end] = k
            self.v[i, :, start:end] = v
            keys, values = self.k[i, :, :end], self.v[i, :, :end]
            if rows == 1:  # plain matmuls: for one query token they beat SDPA's dispatch ~10x at these sizes
                att = torch.softmax((q @ keys.transpose(1, 2)) * self.scale, dim=-1) @ values
            else:  # the prompt (causal, no mask built) or a run of queued tokens; 4-d: SDPA's fused CPU kernel
                att = F.scaled_dot_product_attention(
                    q[None], keys[None], values[None], mask, is_causal=mask is None, scale=self.scale
                )[0]
            x = x + layer.proj(att.permute(1, 0, 2).reshape(rows, -1))
            h = F.gelu(layer.fc(F.layer_norm(x, shape, *layer.ln_2, self.eps)), approximate="tanh")
            x = x + layer.out(h)
        self.length = start + n
        return F.layer_norm(x[n - 1], shape, *self.ln_f, self.eps) @ self.head.T
