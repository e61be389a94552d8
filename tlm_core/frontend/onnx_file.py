"""Load an ONNX file: validate it, resolve its input shapes, import it into Relax, keep a numpy reference.

ONNX files are protobuf data (no code). Weights stored as external data are read only from plain files next to
the model (no paths, no links out of its folder); an upload is a single file, so it must embed its weights.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx.external_data_helper import ExternalDataInfo, uses_external_data

from tlm_core.frontend.model import InputSpec, LoadedModel, ModelLoadError

# Symbolic dimension names taken to be the batch size, which is set to 1 (and said so in notes).
BATCH_DIM_NAMES = {"n", "batch", "batch_size", "batchsize", "b", "bs"}
_PROTOBUF_LIMIT = 2**31 - 1  # onnx.checker needs a path beyond this


def load_onnx(path: Path, name: str, max_bytes: int) -> LoadedModel:
    model = _parse(path)
    _load_external_data(model, path, max_bytes)
    try:
        onnx.checker.check_model(model if model.ByteSize() < _PROTOBUF_LIMIT else str(path), full_check=True)
    except Exception as err:
        raise ModelLoadError(f"{name}: invalid ONNX model: {_first_line(err)}") from err
    if len(model.functions):  # TVM's frontend does not know model-local functions: inline them
        model = onnx.inliner.inline_local_functions(model)
    _check_operators(model, name)
    notes: list[str] = []
    onnx_names, inputs = _input_specs(model, name, notes)
    mod = _import(model, name, onnx_names, inputs)
    # from_onnx may rename inputs to valid identifiers: the specs carry the Relax names.
    params = list(mod["main"].params)
    inputs = [InputSpec(p.name, s.shape, s.dtype, s.low, s.high) for p, s in zip(params, inputs, strict=False)]
    reference = _reference(model, onnx_names)
    if reference is None:
        notes.append("onnx's reference evaluator cannot run this model: no reference output to compare with")
    return LoadedModel(name=name, source="onnx", mod=mod, inputs=inputs, reference=reference, notes=notes)


def _parse(path: Path) -> onnx.ModelProto:
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as err:  # protobuf DecodeError and friends
        raise ModelLoadError(
            f"{path.name}: not a valid ONNX file (truncated or corrupt protobuf): {_first_line(err)}"
        ) from err
    if model.ir_version == 0 or not model.HasField("graph") or not len(model.graph.node):
        raise ModelLoadError(f"{path.name}: not a valid ONNX file (no graph or IR version); is it really ONNX?")
    return model


def _tensors(graph: onnx.GraphProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of a graph, its nodes' attributes and subgraphs (If/Loop bodies)."""
    yield from graph.initializer
    yield from (s.values for s in graph.sparse_initializer)
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("g"):
                yield from _tensors(attr.g)
            for g in attr.graphs:
                yield from _tensors(g)


def _load_external_data(model: onnx.ModelProto, path: Path, max_bytes: int) -> None:
    external = [t for t in _tensors(model.graph) if uses_external_data(t)]
    if not external:
        return
    folder = path.parent.resolve()
    total = path.stat().st_size
    seen: set[str] = set()
    for tensor in external:
        info = ExternalDataInfo(tensor)
        loc = info.location
        target = folder / loc
        if not loc or loc != os.path.basename(loc) or loc in (".", "..") or "\\" in loc:
            raise ModelLoadError(
                f"{path.name}: tensor {tensor.name!r} points at external data {loc!r} outside the model's "
                "folder: refused"
            )
        if not target.is_file() or target.is_symlink():
            raise ModelLoadError(
                f"{path.name}: external data file {loc!r} for tensor {tensor.name!r} was not found next to the "
                "model (uploads must embed their weights: torch.onnx.export(..., external_data=False))"
            )
        size = target.stat().st_size
        if info.offset is not None and info.length is not None and info.offset + info.length > size:
            raise ModelLoadError(f"{path.name}: external data for {tensor.name!r} runs past the end of {loc!r}")
        if loc not in seen:
            seen.add(loc)
            total += size
    if total > max_bytes:
        raise ModelLoadError(f"{path.name}: model and external data are {total} bytes, over the limit of {max_bytes}")
    try:
        onnx.load_external_data_for_model(model, str(folder))
    except Exception as err:
        raise ModelLoadError(f"{path.name}: cannot read external data: {_first_line(err)}") from err


def _op_types(graph: onnx.GraphProto) -> Iterator[tuple[str, str]]:
    for node in graph.node:
        yield node.domain, node.op_type
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _op_types(attr.g)
            for g in attr.graphs:
                yield from _op_types(g)


def _check_operators(model: onnx.ModelProto, name: str) -> None:
    from tvm.relax.frontend.onnx.onnx_frontend import _get_convert_map

    known = set(_get_convert_map()) | {"If", "Constant"}  # If and Constant are handled outside the map
    missing = set()
    for domain, op in _op_types(model.graph):
        if domain in ("", "ai.onnx"):
            if op not in known:
                missing.add(op)
        else:
            missing.add(f"{domain}::{op}")
    if missing:
        raise ModelLoadError(
            f"{name}: TVM's ONNX frontend does not support these operators: {', '.join(sorted(missing))}"
        )


def _input_specs(model: onnx.ModelProto, name: str, notes: list[str]) -> tuple[list[str], list[InputSpec]]:
    initializers = {t.name for t in model.graph.initializer}
    names, specs = [], []
    for value in model.graph.input:
        if value.name in initializers:  # older exporters list weights as inputs too
            continue
        if not value.type.HasField("tensor_type"):
            raise ModelLoadError(f"{name}: input {value.name!r} is not a tensor: not supported")
        ttype = value.type.tensor_type
        try:
            dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(ttype.elem_type)).name
        except Exception as err:
            raise ModelLoadError(f"{name}: input {value.name!r} has an unsupported element type") from err
        if not ttype.HasField("shape"):
            raise ModelLoadError(f"{name}: input {value.name!r} has no shape: export with static shapes")
        shape = []
        for i, dim in enumerate(ttype.shape.dim):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                shape.append(dim.dim_value)
            elif dim.HasField("dim_param") and i == 0 and dim.dim_param.lower() in BATCH_DIM_NAMES:
                shape.append(1)
                notes.append(f"input {value.name!r}: symbolic batch dimension {dim.dim_param!r} set to 1")
            else:
                what = repr(dim.dim_param) if dim.HasField("dim_param") else "unknown"
                raise ModelLoadError(
                    f"{name}: input {value.name!r} dimension {i} is dynamic ({what}): export with static shapes "
                    f"(only a leading batch dimension named {'/'.join(sorted(BATCH_DIM_NAMES))} is set to 1)"
                )
        names.append(value.name)
        specs.append(InputSpec(value.name, tuple(shape), dtype))
    return names, specs


def _import(model: onnx.ModelProto, name: str, onnx_names: list[str], inputs: list[InputSpec]):
    from tvm.relax.frontend.onnx import from_onnx

    try:
        return from_onnx(
            model,
            shape_dict={n: list(s.shape) for n, s in zip(onnx_names, inputs, strict=True)},
            dtype_dict={n: s.dtype for n, s in zip(onnx_names, inputs, strict=True)},
            keep_params_in_input=False,
        )
    except Exception as err:
        raise ModelLoadError(f"{name}: TVM's ONNX frontend cannot import this model: {_last_line(err)}") from err


def _reference(model: onnx.ModelProto, onnx_names: list[str]):
    from onnx.reference import ReferenceEvaluator

    try:
        session = ReferenceEvaluator(model)
    except Exception:  # the reference is optional: models it cannot run simply have none
        return None

    def reference(arrays: list[np.ndarray]) -> list[np.ndarray]:
        outs = session.run(None, dict(zip(onnx_names, arrays, strict=True)))
        return [np.asarray(o) for o in outs]

    return reference


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


def _last_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[-1][:300] if text else type(err).__name__
