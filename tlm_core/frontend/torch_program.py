"""Import a torch.export ExportedProgram into Relax (shared by .pt2 files and the sample models)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.fx
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program

from tlm_core.errors import last_line
from tlm_core.frontend.model import InputSpec, LoadedModel, ModelLoadError, int_highs, resolve_shapes


def _user_inputs(ep: torch.export.ExportedProgram) -> list[tuple[str, str, list[int | str]]]:
    """(name, dtype, dims) of the program's tensor inputs; a symbolic dim is named by its symbol (s0, ...)."""
    found = []
    user_inputs = set(ep.graph_signature.user_inputs)
    for node in ep.graph.nodes:
        if node.op != "placeholder" or node.name not in user_inputs:
            continue
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise ModelLoadError(f"input {node.name!r} is not a tensor ({type(val).__name__}): not supported")
        dims = [d if isinstance(d, int) else str(d) for d in val.shape]
        found.append((node.name, str(val.dtype).removeprefix("torch."), dims))
    return found


def static_program(
    ep: torch.export.ExportedProgram, name: str, given: dict[str, tuple[int, ...]], notes: list[str]
) -> torch.export.ExportedProgram:
    """The program at static shapes: symbolic dims (torch.export.Dim) take the shapes given (or a batch of 1).

    The exported graph is traced again with example inputs of those shapes, so every shape is a number."""
    found = _user_inputs(ep)
    if not given and all(isinstance(d, int) for _, _, dims in found for d in dims):
        return ep
    shapes = resolve_shapes(name, found, given, notes)
    examples = tuple(
        torch.zeros(shape, dtype=getattr(torch, dtype)) for (_, dtype, _), shape in zip(found, shapes, strict=True)
    )
    try:
        return torch.export.export(ep.module(), examples)
    except Exception as err:
        raise ModelLoadError(f"cannot specialise the program to the shapes {shapes}: {last_line(err)}") from err


def _cumsum(node: torch.fx.Node, importer) -> relax.Var:
    """aten.cumsum that sums bools as int64, as PyTorch does.

    transformers 5.x builds its causal mask with cumsum on a bool tensor; TVM's converter keeps bool and the
    module then fails at LLVM codegen (GPT-2/LLaMA exported without an attention_mask).
    """
    x = importer.env[node.args[0]]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    dtype = node.kwargs.get("dtype")
    dtype = str(dtype).removeprefix("torch.") if dtype is not None else None
    if x.ty.dtype == "bool":
        x = importer.block_builder.emit(relax.op.astype(x, "int64"))
    return importer.block_builder.emit(relax.op.cumsum(x, dim, dtype))


CUSTOM_CONVERTERS = {"cumsum.default": _cumsum}


def import_exported(
    ep: torch.export.ExportedProgram,
    name: str,
    source: str,
    int_high: dict[str, int] | None = None,
) -> LoadedModel:
    """Relax module + input specs + a PyTorch reference for an exported program.

    int_high: exclusive upper bound of the values of integer inputs (token ids < vocabulary size).
    """
    found = _user_inputs(ep)
    for input_name, _, dims in found:
        for i, d in enumerate(dims):
            if isinstance(d, str):
                raise ModelLoadError(f"input {input_name!r} dimension {i} is dynamic ({d}): export with static shapes")
    try:
        mod = from_exported_program(
            ep,
            keep_params_as_input=False,
            unwrap_unit_return_tuple=True,
            custom_convert_map=CUSTOM_CONVERTERS,
        )
    except Exception as err:  # the frontend raises many kinds; name the operator when it tells us
        raise ModelLoadError(f"TVM's PyTorch frontend cannot import this model: {last_line(err)}") from err
    highs = {**int_highs(mod), **(int_high or {})}
    inputs = [InputSpec(n, tuple(dims), dtype, 0, highs.get(n, 2)) for n, dtype, dims in found]
    module = ep.module()
    return LoadedModel(name, source, mod, inputs, reference=numpy_call(module), torch_module=module)


def numpy_call(module) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """A PyTorch callable (eager module, or torch.compile's) as numpy arrays in, its tensor outputs out."""

    def call(arrays: list[np.ndarray]) -> list[np.ndarray]:
        with torch.no_grad():
            out = module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in arrays])
        outs = out if isinstance(out, (tuple, list)) else [out]
        return [o.detach().numpy() for o in outs if isinstance(o, torch.Tensor)]

    return call
