"""Shape variants of the sample models, so that the training tasks cover several shapes of each operator.

The sample builders take no shape overrides, so the variants are built here from the same classes and
configs (sample_models.resnet, sample_models.transformers_models). Transformer variants keep 2 layers:
every layer of BERT or GPT-2 has the same tasks, so 2 give the full model's unique workloads at a fraction
of the import time (the task weights are the 2-layer model's, which training does not use).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Variant:
    name: str  # e.g. "resnet50-b1-160", "bert-s64"
    family: str  # "resnet50", "bert", "gpt2", "zoo" (tlm_core.dataset.zoo), or a sample name as it is
    batch: int = 1
    size: int | None = None  # image side (CNNs) or sequence length (transformers); None: the sample's own
    layers: int = 2  # transformer layers built (see the module docstring)

    def build(self) -> tuple[Any, tuple[Any, ...]]:
        """(torch module in eval mode, example inputs), seeded like the samples."""
        if self.family == "resnet50":
            return _resnet50(self.batch, self.size or 224)
        if self.family in ("bert", "gpt2"):
            return _transformer(self.family, self.batch, self.size or 128, self.layers)
        if self.family == "zoo":
            from .zoo import build

            return build(self.name)
        raise ValueError(f"no shape variants for {self.family!r}")


def _v(family: str, batch: int, size: int) -> Variant:
    tag = f"b{batch}-{size}" if family == "resnet50" else (f"s{size}" if batch == 1 else f"b{batch}-s{size}")
    return Variant(f"{family}-{tag}", family, batch, size)


TRAIN_VARIANTS: tuple[Variant, ...] = (
    *(_v("resnet50", 1, s) for s in (224, 192, 160, 128)),
    *(_v("bert", 1, s) for s in (64, 128, 256)),
    *(_v("gpt2", 1, s) for s in (64, 128, 256)),
    # added in the fourth round: small shapes, cheap to measure (7x7 down to 3x3 maps, 32-token sequences)
    *(_v("resnet50", 1, s) for s in (112, 96)),
    *(_v(f, 1, 32) for f in ("bert", "gpt2")),
)


def variants_for(models: list[str] | None) -> list[Variant]:
    """The variants of the given model families / variant names / samples (default: TRAIN_VARIANTS)."""
    if not models:
        return list(TRAIN_VARIANTS)
    out: list[Variant] = []
    for name in models:
        found = [v for v in TRAIN_VARIANTS if name in (v.family, v.name)] or _parse(name)
        if name == "zoo" or name.startswith("zoo-"):
            from .zoo import zoo_names

            found = [Variant(n, "zoo") for n in zoo_names() if name in ("zoo", n)]
        out += found or [Variant(name, name)]  # anything else: a sample (or file) loaded as it is
    return out


def _parse(name: str) -> list[Variant]:
    """A shape variant named like the training ones ("resnet50-b2-160", "bert-s48", "gpt2-b4-s64"), or none."""
    m = re.fullmatch(r"(resnet50)-b(\d+)-(\d+)|(bert|gpt2)-(?:b(\d+)-)?s(\d+)", name)
    if not m:
        return []
    if m[1]:
        return [_v("resnet50", int(m[2]), int(m[3]))]
    return [_v(m[4], int(m[5] or 1), int(m[6]))]


def load_variant(variant: Variant):
    """The variant as a LoadedModel (exported with torch.export and imported into Relax)."""
    import sample_models
    from tlm_core.frontend import load_model

    if variant.family not in ("resnet50", "bert", "gpt2", "zoo"):
        return load_model(variant.name, allow_code=True)
    if variant.family == "zoo":
        spec = sample_models.SampleSpec(
            name=variant.name, family="zoo", description=f"Operator zoo part {variant.name}: 8 single operators "
            "of one kind at seeded random shapes (tlm_core.dataset.zoo).", shape="per operator", tiny=False,
            builder="", notes=("Random weights and shapes, seeded by the name.",))  # fmt: skip
    else:
        spec = sample_models.SAMPLES[variant.family]
    return sample_models.load_spec(_VariantSpec(**{**spec.__dict__, "name": variant.name}, variant=variant))


def variant_tasks(variant: Variant, target) -> list:
    """The tasks (tlm_core.partition.Task) of a variant: its model partitioned for `target`, or, for the
    TE/TOPI zoo parts ("zoo-topi-<i>", "zoo-gemm-<i>"), built directly (single operators with no model around)."""
    from .zoo import TE_KINDS, topi_tasks

    if variant.family == "zoo" and variant.name.split("-")[1] in TE_KINDS:
        return topi_tasks(variant.name)
    from tlm_core.partition import partition

    return partition(load_variant(variant), target).tasks


def _variant_spec_class():
    import sample_models

    @dataclass(frozen=True)
    class VariantSpec(sample_models.SampleSpec):
        variant: Variant | None = None

        def build(self, **overrides: Any):
            assert self.variant is not None
            return self.variant.build()

    return VariantSpec


def _VariantSpec(**kwargs):  # noqa: N802 - a class made on first use, so importing this module stays cheap
    return _variant_spec_class()(**kwargs)


def _resnet50(batch: int, size: int):
    import torch

    from sample_models._common import calibrate_bn
    from sample_models.resnet import ResNet

    torch.manual_seed(0)
    model = ResNet([3, 4, 6, 3], [64, 128, 256, 512], 64, 1000)
    calibrate_bn(model, (2, 3, size, size))
    return model, (torch.randn((batch, 3, size, size), generator=torch.Generator().manual_seed(1)),)


def _transformer(family: str, batch: int, seq: int, layers: int):
    import torch

    from sample_models import transformers_models as tm

    if family == "bert":
        from transformers import BertConfig, BertModel

        config = BertConfig(**{**tm.BERT_BASE, "num_hidden_layers": layers})
        config._attn_implementation = "eager"
        torch.manual_seed(0)
        model = tm.LastHidden(BertModel(config, add_pooling_layer=False).eval(), config.vocab_size)
    else:
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(**{**tm.GPT2_SMALL, "n_layer": layers})
        config._attn_implementation = "eager"
        torch.manual_seed(0)
        model = tm.Logits(GPT2LMHeadModel(config).eval(), config.vocab_size)
    ids = torch.randint(0, config.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(1))
    return model, ((ids,) if family == "bert" else (ids, torch.ones(batch, seq, dtype=torch.int64)))
