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
