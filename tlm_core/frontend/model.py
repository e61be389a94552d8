"""What every frontend returns: a Relax module, its input specs and an optional reference."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm


class ModelLoadError(ValueError):
    """A model could not be loaded; the message names the problem in one line."""


@dataclass(frozen=True)
class InputSpec:
    name: str  # argument name of the model's entry function
    shape: tuple[int, ...]  # static shape (dynamic dimensions are resolved or refused at load)
    dtype: str  # numpy/TVM dtype string, e.g. "float32", "int64"
    low: int = 0  # for integer inputs: values are drawn from [low, high) (token ids, ...)
    high: int = 2


@dataclass
class LoadedModel:
    name: str  # sample name or file name
    source: str  # "sample", "pt2", "onnx" or "tvmscript"
    mod: tvm.IRModule  # Relax module ("main"), weights bound as constants; or one PrimFunc for tvmscript
    inputs: list[InputSpec]
    # Runs the original model (PyTorch / ONNX) on numpy inputs; None where there is nothing to run.
    reference: Callable[[list[np.ndarray]], list[np.ndarray]] | None = None
    # The torch.nn.Module behind a PyTorch reference (for torch.compile); None for other sources.
    torch_module: Any = None
    # How many times each call of the graph really runs, by call index, where the loaded graph stands for a
    # bigger one (LLaMA-7B keeps one decoder layer of 32); calls not listed run once.
    call_repeats: dict[int, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # shown to users: approximations, what cannot run here

    @property
    def reference_name(self) -> str:
        """What `reference` runs, for labels: the framework a user compares against."""
        return "onnxruntime" if self.source == "onnx" else "PyTorch eager"

    def random_inputs(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        out = []
        for spec in self.inputs:
            if spec.dtype.startswith(("int", "uint")):
                out.append(rng.integers(spec.low, spec.high, size=spec.shape).astype(spec.dtype))
            elif spec.dtype == "bool":
                out.append(np.ones(spec.shape, dtype=bool))
            else:
                out.append(rng.standard_normal(spec.shape).astype(spec.dtype))
        return out


# Symbolic dimension names taken to be the batch size, which defaults to 1 (and says so in notes).
BATCH_DIM_NAMES = {"n", "batch", "batch_size", "batchsize", "b", "bs"}


class DynamicShapeError(ModelLoadError):
    """Some input dimensions are symbolic and no shape was given: `suggested` holds a shape per input."""

    def __init__(self, message: str, suggested: dict[str, tuple[int, ...]]) -> None:
        super().__init__(message)
        self.suggested = suggested


def resolve_shapes(
    model: str,
    inputs: list[tuple[str, str, list[int | str]]],
    given: dict[str, tuple[int, ...]],
    notes: list[str],
) -> list[tuple[int, ...]]:
    """Static shapes for inputs (name, dtype, dims; a dim is a size or a symbol's name) from the user's.

    A symbol takes the size given for it in any input (ids and mask share "sequence"); a leading batch
    symbol defaults to 1. Anything else unresolved raises DynamicShapeError naming it, with a suggestion.
    """
    known = [name for name, _, _ in inputs]
    for name in given:
        if name not in known:
            raise ModelLoadError(f"{model}: --input-shape names {name!r}, which is not an input; inputs: {known}")
    symbols: dict[str, int] = {}
    for name, _, dims in inputs:
        if name not in given:
            continue
        shape = given[name]
        if len(shape) != len(dims) or any(s <= 0 for s in shape):
            raise ModelLoadError(f"{model}: input {name!r} has {len(dims)} dimensions {_show(dims)}; given {shape}")
        for i, (dim, size) in enumerate(zip(dims, shape, strict=True)):
            if isinstance(dim, int) and dim != size:
                raise ModelLoadError(f"{model}: input {name!r} dimension {i} is fixed at {dim}; given {size}")
            if isinstance(dim, str) and dim:
                symbols.setdefault(dim, size)
    shapes, missing, suggested = [], [], {}
    for name, dtype, dims in inputs:
        if name in given:
            shapes.append(tuple(given[name]))
            continue
        shape = []
        for i, dim in enumerate(dims):
            if isinstance(dim, int):
                shape.append(dim)
            elif dim in symbols:
                shape.append(symbols[dim])
            elif i == 0 and dim.lower() in BATCH_DIM_NAMES:
                shape.append(1)
                notes.append(f"input {name!r}: symbolic batch dimension {dim!r} set to 1")
            else:
                what = repr(dim) if dim else "unknown"
                missing.append(f"input {name!r} dimension {i} is dynamic ({what})")
                shape.append(0)
        shapes.append(tuple(shape))
        if 0 in shape:
            suggested[name] = _suggest(dtype, dims)
    if missing:
        example = " ".join(f"--input-shape {n}={'x'.join(map(str, s))}" for n, s in suggested.items())
        raise DynamicShapeError(f"{model}: {'; '.join(missing)}: give the shape, e.g. {example}", suggested)
    return shapes


def _suggest(dtype: str, dims: list[int | str]) -> tuple[int, ...]:
    """A sensible shape for symbolic dims: batch 1, 128 tokens for integer (id) inputs, 224 pixels for images."""
    image = len(dims) == 4 and dtype.startswith("float")
    return tuple(
        d if isinstance(d, int) else 1 if i == 0 else 224 if image and i >= 2 else 3 if image else 128
        for i, d in enumerate(dims)
    )


def _show(dims: list[int | str]) -> str:
    return "(" + ", ".join(str(d) if isinstance(d, int) else repr(d or "?") for d in dims) + ")"


def parse_input_shapes(texts: list[str]) -> dict[str, tuple[int, ...]]:
    """`name=1x128` strings (the CLI's --input-shape) -> {name: (1, 128)}; a clear ValueError otherwise."""
    shapes = {}
    for text in texts:
        name, sep, dims = text.partition("=")
        try:
            shape = tuple(int(d) for d in dims.lower().split("x"))
        except ValueError:
            shape = ()
        if not sep or not name or not shape or min(shape) <= 0:
            raise ValueError(f"--input-shape {text!r}: write NAME=DIMxDIM..., e.g. input_ids=1x128")
        shapes[name.strip()] = shape
    return shapes


def int_highs(mod: tvm.IRModule) -> dict[str, int]:
    """For integer inputs that index a table (token ids into an embedding): the table's row count.

    Random test inputs then cover the whole vocabulary instead of ids 0 and 1.
    """
    from tvm import relax

    main = mod["main"]
    params = {p: p.name for p in main.params}
    aliases: dict[relax.Var, str] = {}
    highs: dict[str, int] = {}
    for block in main.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, relax.Call) or not isinstance(value.op, tvm.ir.Op):
                continue
            args = list(value.args)
            source = [params.get(a) or aliases.get(a) for a in args]
            if value.op.name in ("relax.astype", "relax.reshape", "relax.expand_dims") and source[0]:
                aliases[binding.var] = source[0]
            elif value.op.name == "relax.where" and (source[1] or source[2]):  # ONNX Gather's negative ids
                aliases[binding.var] = source[2] or source[1]
            elif value.op.name == "relax.take" and source[1] and isinstance(args[0], tvm.ir.Constant):
                axis = int(value.attrs.axis) if value.attrs.axis is not None else 0
                rows = int(args[0].value.shape[axis])
                highs[source[1]] = min(highs.get(source[1], rows), rows)
    return highs
