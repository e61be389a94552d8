"""The paper's six workloads (and a tiny variant of each) as ready-to-open sample models.

`SAMPLES` lists them by name, `load(name)` builds one with seeded weights, exports it with torch.export and
imports it into Relax, and `DEFAULT` is the small sample the GUI opens first. Importing this package is cheap:
torch, TVM and transformers are imported only when a sample is built or loaded.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tlm_core.frontend.model import LoadedModel

# Opens in about a second and shows the interesting subgraphs: conv+BN+ReLU, residual add, pooling, dense.
DEFAULT = "resnet50-tiny"


@dataclass(frozen=True)
class SampleSpec:
    name: str
    family: str  # "resnet", "mobilenet", "efficientnet", "bert", "gpt2", "llama"
    description: str
    shape: str  # the input shape, as text
    tiny: bool  # a small variant for tests and demos, not one of the paper's workloads
    builder: str  # "module:function" in sample_models, called with tiny=...
    notes: tuple[str, ...] = ()

    def build(self, **overrides: Any) -> tuple[Any, tuple[Any, ...]]:
        """(torch.nn.Module in eval mode, example inputs), with the same seeded weights every time."""
        module, func = self.builder.split(":")
        return getattr(importlib.import_module(f"sample_models.{module}"), func)(tiny=self.tiny, **overrides)


_CNN = (
    "Random weights (seed 0); BatchNorm statistics calibrated on 2 seeded random batches, so folding BN into "
    "the convolutions is not an identity.",
)
_HF = ("Built from its transformers config with random weights (seed 0) and eager attention.",)
_CAUSAL = (*_HF, "attention_mask is an explicit input (all ones); the output is the logits tensor only.")
_LLAMA = (
    *_CAUSAL,
    "Only 2 of LLaMA-7B's 32 decoder layers are built: the fp32 weights of all 32 (~27 GB) do not fit in memory "
    "here. Every call of those 2 layers counts 16 times (call_repeats), so the tasks and their weights are "
    "exactly the 32-layer model's (2 layers, not 1: with a single layer the causal mask fuses into it).",
    "It cannot be run end to end here: the loaded graph is a 2-layer stand-in with no LLaMA-7B output to "
    "compare with (reference=None). Loading takes ~3 GB of memory, fusing it ~5.5 GB.",
)
_IMAGE, _TINY_IMAGE = "1×3×224×224", "1×3×32×32"

_SPECS = [
    SampleSpec("resnet50", "resnet", "ResNet-50: bottleneck blocks [3, 4, 6, 3]", _IMAGE, False, "resnet:build", _CNN),
    SampleSpec("resnet50-tiny", "resnet", "Tiny ResNet: 4 bottleneck blocks, 8-256 channels", _TINY_IMAGE, True,
               "resnet:build", _CNN),
    SampleSpec("mobilenetv2", "mobilenet", "MobileNetV2 (width 1.0): 17 inverted residuals, ReLU6", _IMAGE, False,
               "mobilenet_v2:build", _CNN),
    SampleSpec("mobilenetv2-tiny", "mobilenet", "Tiny MobileNetV2: 5 inverted residuals, 8-96 channels",
               _TINY_IMAGE, True, "mobilenet_v2:build", _CNN),
    SampleSpec("efficientnet-b0", "efficientnet", "EfficientNet-B0: 16 MBConv blocks with squeeze-excite, SiLU",
               _IMAGE, False, "efficientnet:build", _CNN),
    SampleSpec("efficientnet-b0-tiny", "efficientnet", "Tiny EfficientNet: 4 MBConv blocks, 8-72 channels",
               _TINY_IMAGE, True, "efficientnet:build", _CNN),
    SampleSpec("bert", "bert", "BERT-base encoder: 12 layers, hidden 768, last hidden state", "1×128 tokens",
               False, "transformers_models:bert", _HF),
    SampleSpec("bert-tiny", "bert", "Tiny BERT: 2 layers, hidden 128, vocabulary 1000", "1×32 tokens", True,
               "transformers_models:bert", _HF),
    SampleSpec("gpt2", "gpt2", "GPT-2 small: 12 layers, hidden 768, LM head", "1×128 tokens", False,
               "transformers_models:gpt2", _CAUSAL),
    SampleSpec("gpt2-tiny", "gpt2", "Tiny GPT-2: 2 layers, hidden 128, vocabulary 1000", "1×32 tokens", True,
               "transformers_models:gpt2", _CAUSAL),
    SampleSpec("llama-7b", "llama", "LLaMA-7B: 32 layers, hidden 4096, FFN 11008, 32 heads, vocabulary 32000",
               "1×128 tokens", False, "transformers_models:llama", _LLAMA),
    SampleSpec("llama-tiny", "llama", "Tiny LLaMA: 2 layers, hidden 64, vocabulary 1000", "1×16 tokens", True,
               "transformers_models:llama", _CAUSAL),
]  # fmt: skip
SAMPLES: dict[str, SampleSpec] = {s.name: s for s in _SPECS}


def load(name: str) -> LoadedModel:
    """Build, export and import the sample `name` into Relax (weights bound as constants)."""
    from tlm_core.frontend.model import ModelLoadError

    spec = SAMPLES.get(name)
    if spec is None:
        raise ModelLoadError(f"unknown sample {name!r}; known samples: {', '.join(SAMPLES)}")
    return load_spec(spec)


def load_spec(spec: SampleSpec, **overrides: Any) -> LoadedModel:
    """`load` for a spec, with builder overrides (llama: layers=N)."""
    import torch

    from tlm_core.frontend.torch_program import import_exported

    module, example = spec.build(**overrides)
    ranges: dict[str, tuple[int, int]] = getattr(module, "input_ranges", {})  # [low, high) of integer inputs
    with warnings.catch_warnings(), torch.no_grad():
        warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)  # torch-internal
        ep = torch.export.export(module, example)
        model = import_exported(ep, spec.name, "sample", int_high={k: hi for k, (_, hi) in ranges.items()})
    model.inputs = [dataclasses.replace(s, low=ranges[s.name][0]) if s.name in ranges else s for s in model.inputs]
    model.notes = [spec.description, *spec.notes, *model.notes]
    if spec.name == "llama-7b" and not overrides:
        from sample_models.llama_layers import decoder_layer_repeats

        model.reference = None  # a 2-layer stand-in; dropping it also frees PyTorch's copy of the weights
        model.call_repeats = decoder_layer_repeats()
    return model
