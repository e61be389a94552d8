"""Shape variants of the sample models, so that the training tasks cover several shapes of each operator.

The shapes are named here (TRAIN_VARIANTS); the models are built by the registered samples of the same name
(tlm_core.frontend.samples: a spec's build_variant(batch=, size=, layers=)). Transformer variants keep 2
layers: every layer of BERT or GPT-2 has the same tasks, so 2 give the full model's unique workloads at a
fraction of the import time (the task weights are the 2-layer model's, which training does not use).
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
        if self.family == "zoo":
            from .zoo import build

            return build(self.name)
        if self.family not in SHAPE_FAMILIES:
            raise ValueError(f"no shape variants for {self.family!r}")
        return _family_spec(self.family).build_variant(batch=self.batch, size=self.size, layers=self.layers)


SHAPE_FAMILIES = ("resnet50", "bert", "gpt2")  # registered samples whose build_variant builds other shapes


def _family_spec(family: str):
    from tlm_core.frontend.samples import catalog

    spec = catalog().samples.get(family)
    if spec is None or not hasattr(spec, "build_variant"):
        raise ValueError(f"no shape variants for {family!r}: no registered sample {family!r} builds them")
    return spec


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
    from tlm_core.frontend import load_model
    from tlm_core.frontend.samples import export_sample

    if variant.family == "zoo":
        description = (
            f"Operator zoo part {variant.name}: 8 single operators of one kind at seeded random shapes "
            "(tlm_core.dataset.zoo)."
        )
        notes = ("Random weights and shapes, seeded by the name.",)
        return export_sample(_VariantSample(variant.name, description, "per operator", notes, variant))
    if variant.family in SHAPE_FAMILIES:
        spec = _family_spec(variant.family)
        return export_sample(_VariantSample(variant.name, spec.description, spec.shape, tuple(spec.notes), variant))
    return load_model(variant.name, allow_code=True)


@dataclass(frozen=True)
class _VariantSample:
    """A variant as a tlm_core.frontend.samples.Sample: its family's description and notes, its own build."""

    name: str
    description: str
    shape: str
    notes: tuple[str, ...]
    variant: Variant
    tiny: bool = False

    def build(self, **overrides: Any) -> tuple[Any, tuple[Any, ...]]:
        return self.variant.build()


def variant_tasks(variant: Variant, target) -> list:
    """The tasks (tlm_core.partition.Task) of a variant: its model partitioned for `target`, or, for the
    TE/TOPI zoo parts ("zoo-topi-<i>", "zoo-gemm-<i>"), built directly (single operators with no model around)."""
    from .zoo import TE_KINDS, topi_tasks

    if variant.family == "zoo" and variant.name.split("-")[1] in TE_KINDS:
        return topi_tasks(variant.name)
    from tlm_core.partition import partition

    return partition(load_variant(variant), target).tasks
