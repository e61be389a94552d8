"""Sample models by name: a registry that packages above tlm_core fill, and the export of a sample into Relax.

tlm_core names no sample package. A package registers its samples under the entry-point group
"tlm_core.samples" (pyproject.toml: [project.entry-points."tlm_core.samples"] NAME = "package"); the object
the entry point names has SAMPLES (name -> spec, in display order) and DEFAULT (the name opened first). An
embedder or a test calls register_samples(...) instead. A spec only describes and builds a model (`Sample`);
exporting it with torch.export and importing it into Relax happens here (`export_sample`).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tlm_core.frontend.model import LoadedModel

GROUP = "tlm_core.samples"


class Sample(Protocol):
    """What a registered sample provides; build() returns (torch.nn.Module in eval mode, example inputs).

    Optional, read when present: the module's `input_ranges` ({input: (low, high)} of integer inputs, high
    exclusive); the spec's `reference` (False: the built module stands in for a model it cannot run, so the
    loaded model has no reference), `call_repeats()` ({call index: times} where the built graph stands for a
    bigger one) and `build_variant(batch=, size=, layers=)` (the architecture at other shapes, for training
    data). `reference` and `call_repeats` describe the sample as registered, so builds with overrides skip them.
    """

    name: str
    description: str
    shape: str  # the input shape, as text
    tiny: bool  # a small variant for tests and demos
    notes: tuple[str, ...]

    def build(self, **overrides: Any) -> tuple[Any, tuple[Any, ...]]: ...


@dataclass
class Catalog:
    samples: dict[str, Sample] = field(default_factory=dict)  # in registration order
    default: str | None = None  # the first registration's DEFAULT
    errors: list[str] = field(default_factory=list)  # entry points that failed to load


class Registry:
    """The samples of the installed entry points (read on first use) and of register_samples calls."""

    def __init__(self, group: str | None = GROUP) -> None:
        self.group = group  # None: explicit registrations only (tests)
        self._registered: list[tuple[Iterable[Sample], str | None]] = []
        self._catalog: Catalog | None = None

    def register(self, samples: Mapping[str, Sample] | Iterable[Sample], default: str | None = None) -> None:
        specs = list(samples.values() if isinstance(samples, Mapping) else samples)
        self._registered.append((specs, default))
        self._catalog = None

    def catalog(self) -> Catalog:
        if self._catalog is None:
            found = Catalog()
            for specs, default in [*self._from_entry_points(found.errors), *self._registered]:
                found.samples.update({s.name: s for s in specs})  # a later registration replaces a name
                found.default = found.default or default
            self._catalog = found
        return self._catalog

    def _from_entry_points(self, errors: list[str]) -> list[tuple[Iterable[Sample], str | None]]:
        out = []
        found = sorted(entry_points(group=self.group), key=lambda e: e.name) if self.group else []
        for ep in found:
            try:
                obj = ep.load()
                out.append((list(obj.SAMPLES.values()), getattr(obj, "DEFAULT", None)))
            except Exception as err:  # a broken package must not break the other samples, nor file loading
                errors.append(f"{ep.name} ({ep.value}): {type(err).__name__}: {err}")
        return out


_registry = Registry()


def register_samples(samples: Mapping[str, Sample] | Iterable[Sample], default: str | None = None) -> None:
    """Add samples (by name, or an iterable of specs) to the catalog; a name registered again is replaced."""
    _registry.register(samples, default)


def catalog() -> Catalog:
    """Every registered sample: the entry points of group "tlm_core.samples", then register_samples calls."""
    return _registry.catalog()


def load_sample(name: str) -> LoadedModel:
    """The registered sample `name`, built, exported and imported into Relax. Raises ModelLoadError."""
    from tlm_core.frontend.model import ModelLoadError

    found = catalog()
    if name not in found.samples:
        if not found.samples:
            why = "; ".join(found.errors) or f"no package registers any (entry-point group {GROUP!r})"
            raise ModelLoadError(f"unknown model {name!r}: sample models are not available ({why})")
        known = ", ".join(sorted(found.samples))
        raise ModelLoadError(
            f"unknown sample model {name!r}; known samples: {known}. Or give the path of a .pt2 or .onnx file."
        )
    return export_sample(found.samples[name])


def export_sample(spec: Sample, **overrides: Any) -> LoadedModel:
    """Build the sample (builder overrides, e.g. layers=N), export it with torch.export, import it into Relax.

    Integer inputs take the module's input_ranges; the notes are the description, the spec's notes and the
    import's. Without overrides, the spec's `reference` and `call_repeats` apply (see `Sample`).
    """
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
    if not overrides:
        if not getattr(spec, "reference", True):
            model.reference = None  # a stand-in; dropping it also frees PyTorch's copy of the weights
        repeats = getattr(spec, "call_repeats", None)
        if repeats is not None and (found := repeats()):
            model.call_repeats = found
    return model
