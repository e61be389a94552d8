"""The architectures users bring, built from `transformers` configs with seeded random weights, and exported
the ways users export them: the coverage corpus of tests/test_coverage.py and benchmarks/coverage.py.

    module, inputs = build("bert", "small")              # nn.Module (eval) and its example inputs (torch)
    path, arrays = export("bert", "small", "onnx", folder)  # the file, and the inputs (numpy) to check it with

Every architecture comes at two sizes: "small" (tiny widths, 1-2 layers, sequence 16, 32x32 images: tests)
and "full" (the real architecture's config: bert-base, gpt2, resnet-50, ...; sequence 128, 224x224 images).
No model hub: each model is built from its config class after torch.manual_seed(0). Attention is whatever
transformers picks by default (SDPA in transformers 5), as in a user's own export.

Inputs, as users pass them: text models take (input_ids, attention_mask) with right padding (the last quarter
of the positions masked out, their ids the pad token), decoders too (their causal mask comes on top; LLaMA has
rotary embeddings and grouped-query attention), T5 is its encoder only (T5EncoderModel); vision models take
pixel_values (batch 1). Each model is wrapped so that forward returns one tensor: the last hidden state of
an encoder, the logits of a decoder (LM head) or of an image classifier. BatchNorm statistics are calibrated
on seeded random batches, so that folding them into the convolutions is not an identity.

Formats (FORMATS):
- "pt2": torch.export.export + torch.export.save, static shapes;
- "pt2-dynamic": the same with torch.export.Dim: text batch and sequence, vision batch (traced at batch 2:
  torch.export specialises a dimension whose example is 1);
- "onnx": torch.onnx.export(dynamo=True, external_data=False), static shapes;
- "onnx-legacy": torch.onnx.export(dynamo=False, opset 17), static shapes;
- "onnx-dynamic": the legacy exporter with dynamic_axes named "batch" and "sequence" (text), "batch" (vision).
The inputs returned are always the batch-1 example: a dynamic export is checked at that shape.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

SIZES = ("small", "full")
FORMATS = ("pt2", "pt2-dynamic", "onnx", "onnx-legacy", "onnx-dynamic")
DYNAMIC_FORMATS = ("pt2-dynamic", "onnx-dynamic")
SEQ = {"small": 16, "full": 128}
IMAGE = {"small": 32, "full": 224}
LABELS = {"small": 10, "full": 1000}  # image classes
SEED = 0
ONNX_OPSET = 17  # the legacy exporter's; the dynamo exporter picks its own (18 in torch 2.13)

# ---------------------------------------------------------------------------------------------------------
# Configs: (small, full) keyword arguments of each transformers config class. "full" is the real model's.

_TEXT_SMALL = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                   max_position_embeddings=64)  # fmt: skip
CONFIGS: dict[str, tuple[dict, dict]] = {
    "bert": (_TEXT_SMALL, {}),  # BertConfig() is bert-base-uncased
    # RoBERTa's positions start after padding_idx (1): max_position_embeddings = 512 + 2, as roberta-base
    "roberta": ({**_TEXT_SMALL, "max_position_embeddings": 66, "pad_token_id": 1},
                dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                     layer_norm_eps=1e-5)),  # fmt: skip
    "distilbert": (dict(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64),
                   {}),  # DistilBertConfig() is distilbert-base-uncased  # fmt: skip
    "gpt2": (dict(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0, eos_token_id=0),
             {}),  # GPT2Config() is gpt2 (124M)  # fmt: skip
    # TinyLlama-1.1B's real config with 2 of its 22 decoder layers (LLaMA-7B's width would be 2.7 GB of weights
    # for 2 layers, over ONNX's 2 GB single-file limit): grouped-query attention (32 heads, 4 KV heads), RoPE
    "llama": (dict(vocab_size=100, hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2,
                   num_hidden_layers=2, max_position_embeddings=64, rms_norm_eps=1e-5),
              dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_attention_heads=32,
                   num_key_value_heads=4, num_hidden_layers=2, max_position_embeddings=2048, rms_norm_eps=1e-5,
                   rope_theta=10000.0, tie_word_embeddings=False)),  # fmt: skip
    "t5-encoder": (dict(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
                   {}),  # T5Config() is t5-small  # fmt: skip
    "vit": (dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=32,
                 patch_size=8), {}),  # ViTConfig() is vit-base-patch16-224  # fmt: skip
    "resnet": (dict(embedding_size=8, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1]),
               {}),  # ResNetConfig() is resnet-50  # fmt: skip
    "convnext": (dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1]), {}),  # ConvNextConfig() is convnext-tiny
    "mobilenet-v2": (dict(depth_multiplier=0.35), {}),  # MobileNetV2Config() is mobilenet_v2_1.0_224
    # EfficientNetConfig() is B7: B0 is width and depth 1.0 at 224 (hidden_dim = round_filters(1280))
    "efficientnet": (dict(width_coefficient=0.25, depth_coefficient=0.5, image_size=32, hidden_dim=320),
                     dict(width_coefficient=1.0, depth_coefficient=1.0, image_size=224, hidden_dim=1280,
                          dropout_rate=0.2)),  # fmt: skip
    # RegNetConfig() is regnet-y-040; RegNetY-400MF: depths [1, 3, 6, 6], widths [48, 104, 208, 440], groups of 8
    "regnet": (dict(embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1], groups_width=8),
               dict(embedding_size=32, hidden_sizes=[48, 104, 208, 440], depths=[1, 3, 6, 6], groups_width=8)),
}  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# Wrappers: plain tensors in, one tensor out.


class TextEncoder(nn.Module):
    """(input_ids, attention_mask) -> last_hidden_state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class CausalLM(nn.Module):
    """(input_ids, attention_mask) -> logits, no KV cache."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class ImageClassifier(nn.Module):
    """pixel_values -> logits."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        return self.model(pixel_values=pixel_values).logits


# ---------------------------------------------------------------------------------------------------------
# The registry.


@dataclass(frozen=True)
class Arch:
    name: str
    kind: str  # "text" (encoder), "decoder" (causal LM) or "vision"
    title: str  # the real model the "full" size is
    config: str  # transformers config class
    model: str  # transformers model class
    wrapper: type[nn.Module]
    pad_token: str = "pad_token_id"  # config attribute that gives the id of padded positions (text)

    @property
    def input_names(self) -> tuple[str, ...]:
        return ("pixel_values",) if self.kind == "vision" else ("input_ids", "attention_mask")

    @property
    def output_name(self) -> str:
        return "last_hidden_state" if self.kind == "text" else "logits"


ARCHS: dict[str, Arch] = {
    a.name: a
    for a in [
        Arch("bert", "text", "bert-base-uncased", "BertConfig", "BertModel", TextEncoder),
        Arch("roberta", "text", "roberta-base", "RobertaConfig", "RobertaModel", TextEncoder),
        Arch("distilbert", "text", "distilbert-base-uncased", "DistilBertConfig", "DistilBertModel", TextEncoder),
        Arch("gpt2", "decoder", "gpt2 (124M)", "GPT2Config", "GPT2LMHeadModel", CausalLM, "eos_token_id"),
        Arch("llama", "decoder", "TinyLlama-1.1B, 2 of 22 layers", "LlamaConfig", "LlamaForCausalLM", CausalLM),
        Arch("t5-encoder", "text", "t5-small encoder", "T5Config", "T5EncoderModel", TextEncoder),
        Arch("vit", "vision", "vit-base-patch16-224", "ViTConfig", "ViTForImageClassification", ImageClassifier),
        Arch("resnet", "vision", "resnet-50", "ResNetConfig", "ResNetForImageClassification", ImageClassifier),
        Arch("convnext", "vision", "convnext-tiny-224", "ConvNextConfig", "ConvNextForImageClassification",
             ImageClassifier),
        Arch("mobilenet-v2", "vision", "mobilenet_v2_1.0_224", "MobileNetV2Config",
             "MobileNetV2ForImageClassification", ImageClassifier),
        Arch("efficientnet", "vision", "efficientnet-b0", "EfficientNetConfig", "EfficientNetForImageClassification",
             ImageClassifier),
        Arch("regnet", "vision", "regnet-y-400mf", "RegNetConfig", "RegNetForImageClassification", ImageClassifier),
    ]
}  # fmt: skip


def config(arch: str, size: str) -> Any:
    """The transformers config of `arch` at `size`."""
    import transformers

    a = _arch(arch, size)
    kwargs = dict(CONFIGS[arch][SIZES.index(size)])
    if a.kind == "vision":
        kwargs.setdefault("num_labels", LABELS[size])
    cfg = getattr(transformers, a.config)(**kwargs)
    if a.kind == "vision" and hasattr(cfg, "image_size"):
        cfg.image_size = IMAGE[size]
    return cfg


@functools.lru_cache(maxsize=2)
def build(arch: str, size: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """(the wrapped model in eval mode, its batch-1 example inputs), the same seeded weights every time.

    Cached (the last two): every format of an architecture is exported from the same module, and a caller
    that times it gets that one too. Do not modify it."""
    import transformers

    a = _arch(arch, size)
    cfg = config(arch, size)
    torch.manual_seed(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = getattr(transformers, a.model)(cfg)
    model = a.wrapper(model.eval())
    if a.kind != "vision":  # [low, high) of the integer inputs, for random inputs (tlm_core.frontend.samples)
        model.input_ranges = {"input_ids": (0, cfg.vocab_size), "attention_mask": (1, 2)}
    if a.kind == "vision":
        _calibrate_batchnorm(model, IMAGE[size])
        gen = torch.Generator().manual_seed(SEED + 1)
        return model.eval(), (torch.randn(1, 3, IMAGE[size], IMAGE[size], generator=gen),)
    return model.eval(), text_inputs(cfg, a, SEQ[size])


def text_inputs(cfg: Any, a: Arch, seq: int, batch: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded token ids (never the pad token) and a right-padded mask: the last quarter of the positions is
    padding (mask 0, id = the pad token)."""
    pad = getattr(cfg, a.pad_token, None)
    pad = 0 if pad is None else int(pad)
    gen = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, cfg.vocab_size - 1, (batch, seq), generator=gen)
    ids = ids + (ids >= pad).long()  # skip the pad token: only the padded positions carry it
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[:, seq - seq // 4 :] = 0
    ids[mask == 0] = pad
    return ids, mask


@torch.no_grad()
def _calibrate_batchnorm(model: nn.Module, image: int, batches: int = 2) -> None:
    """Seeded affine weights and running statistics from a few random batches (not mean 0 / var 1)."""
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not norms:
        return
    gen = torch.Generator().manual_seed(SEED + 2)
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
        m.weight.copy_(torch.empty_like(m.weight).uniform_(0.5, 1.5, generator=gen))
        m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
    model.train()
    for _ in range(batches):
        model(torch.randn(2, 3, image, image, generator=gen))
    model.eval()


def _arch(arch: str, size: str) -> Arch:
    if arch not in ARCHS:
        raise KeyError(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}")
    if size not in SIZES:
        raise KeyError(f"unknown size {size!r}; known: {', '.join(SIZES)}")
    return ARCHS[arch]


# ---------------------------------------------------------------------------------------------------------
# Export.


def file_name(arch: str, size: str, fmt: str) -> str:
    return f"{arch}-{size}-{fmt}{'.pt2' if fmt.startswith('pt2') else '.onnx'}"


def export(arch: str, size: str, fmt: str, folder: str | Path) -> tuple[Path, dict[str, np.ndarray]]:
    """Export `arch` at `size` in `fmt` into `folder`: (the file, {input name: the batch-1 input (numpy)})."""
    if fmt not in FORMATS:
        raise KeyError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    a = _arch(arch, size)
    model, example = build(arch, size)
    path = Path(folder) / file_name(arch, size, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        EXPORTERS[fmt](model, example, a, path)
    return path, {n: t.numpy() for n, t in zip(a.input_names, example, strict=True)}


def _batch2(example: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(torch.cat([t, t]) for t in example)


def _pt2(model, example, a: Arch, path: Path) -> None:
    torch.export.save(torch.export.export(model, example), str(path))


def _pt2_dynamic(model, example, a: Arch, path: Path) -> None:
    from torch.export import Dim

    batch = Dim("batch", min=1, max=64)
    if a.kind == "vision":
        shapes: dict[str, dict[int, Any]] = {"pixel_values": {0: batch}}
    else:
        seq = Dim("sequence", min=2, max=_max_positions(model))
        shapes = {n: {0: batch, 1: seq} for n in a.input_names}
    ep = torch.export.export(model, _batch2(example), dynamic_shapes=shapes)
    torch.export.save(ep, str(path))


def _onnx(model, example, a: Arch, path: Path) -> None:
    torch.onnx.export(model, example, str(path), dynamo=True, external_data=False,
                      input_names=list(a.input_names), output_names=[a.output_name])  # fmt: skip


def _onnx_legacy(model, example, a: Arch, path: Path, dynamic_axes: dict | None = None) -> None:
    torch.onnx.export(model, example, str(path), dynamo=False, opset_version=ONNX_OPSET,
                      input_names=list(a.input_names), output_names=[a.output_name],
                      dynamic_axes=dynamic_axes)  # fmt: skip


def _onnx_dynamic(model, example, a: Arch, path: Path) -> None:
    if a.kind == "vision":
        axes = {"pixel_values": {0: "batch"}, a.output_name: {0: "batch"}}
    else:
        axes = {n: {0: "batch", 1: "sequence"} for n in (*a.input_names, a.output_name)}
    _onnx_legacy(model, _batch2(example), a, path, axes)


def _max_positions(model: nn.Module) -> int:
    cfg = model.model.config
    n = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None) or 512
    return n - 2 if cfg.model_type == "roberta" else n  # RoBERTa's positions start after padding_idx


EXPORTERS: dict[str, Callable[[nn.Module, tuple, Arch, Path], None]] = {
    "pt2": _pt2,
    "pt2-dynamic": _pt2_dynamic,
    "onnx": _onnx,
    "onnx-legacy": _onnx_legacy,
    "onnx-dynamic": _onnx_dynamic,
}


def input_shapes(arch: str, size: str) -> dict[str, tuple[int, ...]]:
    """The batch-1 shapes of the inputs (what a dynamic export is opened with)."""
    a = _arch(arch, size)
    if a.kind == "vision":
        return {"pixel_values": (1, 3, IMAGE[size], IMAGE[size])}
    return {n: (1, SEQ[size]) for n in a.input_names}


# ---------------------------------------------------------------------------------------------------------
# Registered samples (sample_models.SAMPLES): the test split's models at full size, "small" as their tiny build.


def sample(arch: str, tiny: bool = False) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    return build(arch, "small" if tiny else "full")


vit = functools.partial(sample, "vit")
convnext = functools.partial(sample, "convnext")
regnet = functools.partial(sample, "regnet")
t5_encoder = functools.partial(sample, "t5-encoder")
llama = functools.partial(sample, "llama")
