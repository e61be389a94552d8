"""Load an ONNX file: validate it, fix its input shapes, simplify it, import it into Relax, keep a reference.

ONNX files are protobuf data (no code). Weights stored as external data are read only from plain files next to
the model (no paths, no links out of its folder); an upload is a single file, so it must embed its weights.
Symbolic dimensions take the shape the user gives (a batch dimension defaults to 1); with every input static,
onnxscript's optimizer folds the shape arithmetic exporters write (same-padding computed from the input's
shape, mask shapes), which TVM's importer cannot take ("Dynamic pads are not supported yet"). The reference
is onnxruntime running the file as it is.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx.external_data_helper import ExternalDataInfo, uses_external_data

from tlm_core.errors import first_line, last_line
from tlm_core.frontend.model import InputSpec, LoadedModel, ModelLoadError, int_highs, resolve_shapes

_PROTOBUF_LIMIT = 2**31 - 1  # onnx.checker needs a path beyond this


def load_onnx(
    path: Path, name: str, max_bytes: int, input_shapes: dict[str, tuple[int, ...]] | None = None
) -> LoadedModel:
    model = _parse(path)
    _load_external_data(model, path, max_bytes)
    try:
        onnx.checker.check_model(model if model.ByteSize() < _PROTOBUF_LIMIT else str(path), full_check=True)
    except Exception as err:
        raise ModelLoadError(f"{name}: invalid ONNX model: {first_line(err)}") from err
    notes: list[str] = []
    onnx_names, inputs = _input_specs(model, name, input_shapes or {}, notes)
    reference = _reference(model, onnx_names, notes)
    model = _simplify(model, dict(zip(onnx_names, inputs, strict=True)), notes)
    _check_operators(model, name)
    mod = _import(model, name, onnx_names, inputs)
    # from_onnx may rename inputs to valid identifiers: the specs carry the Relax names.
    params = list(mod["main"].params)
    highs = int_highs(mod)
    inputs = [
        InputSpec(p.name, s.shape, s.dtype, s.low, highs.get(p.name, s.high))
        for p, s in zip(params, inputs, strict=False)
    ]
    return LoadedModel(name=name, source="onnx", mod=mod, inputs=inputs, reference=reference, notes=notes)


def _parse(path: Path) -> onnx.ModelProto:
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as err:  # protobuf DecodeError and friends
        raise ModelLoadError(
            f"{path.name}: not a valid ONNX file (truncated or corrupt protobuf): {first_line(err)}"
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
        raise ModelLoadError(f"{path.name}: cannot read external data: {first_line(err)}") from err


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


def _input_specs(
    model: onnx.ModelProto, name: str, given: dict[str, tuple[int, ...]], notes: list[str]
) -> tuple[list[str], list[InputSpec]]:
    initializers = {t.name for t in model.graph.initializer}
    names, found = [], []
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
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else d.dim_param for d in ttype.shape.dim]
        names.append(value.name)
        found.append((value.name, dtype, dims))
    shapes = resolve_shapes(name, found, given, notes)
    return names, [InputSpec(n, shape, dtype) for (n, dtype, _), shape in zip(found, shapes, strict=True)]


def _simplify(model: onnx.ModelProto, inputs: dict[str, InputSpec], notes: list[str]) -> onnx.ModelProto:
    """The model at static input shapes with its shape arithmetic folded into constants (onnxscript)."""
    from onnxscript import ir, optimizer

    model = onnx.ModelProto.FromString(model.SerializeToString()) if model.ByteSize() < _PROTOBUF_LIMIT else model
    for value in model.graph.input:
        if value.name in inputs:
            for dim, size in zip(value.type.tensor_type.shape.dim, inputs[value.name].shape, strict=True):
                dim.Clear()
                dim.dim_value = size
    # Shapes inferred for the symbolic sizes would keep the shape arithmetic alive: infer them again.
    del model.graph.value_info[:]
    for value in model.graph.output:
        for dim in value.type.tensor_type.shape.dim:
            dim.Clear()
    quiet = logging.getLogger("onnxscript.optimizer._constant_folding")
    level, quiet.level = quiet.level, logging.ERROR  # it warns for every node it cannot evaluate
    try:
        graph = ir.serde.deserialize_model(model)
        # onnxscript keeps ConstantOfShape by default (model size); exporters build small masks with it that
        # the rest of the shape arithmetic depends on, and TVM's converter fails on a scalar one.
        optimizer.fold_constants(graph, onnx_shape_inference=True, should_fold=_small_constant_of_shape)
        optimizer.optimize_ir(graph)  # inlines local functions too (TVM's importer knows none)
        return ir.serde.serialize_model(graph)
    except Exception as err:  # the import may still succeed without folding
        notes.append(f"onnxscript's optimizer could not simplify the model: {first_line(err)}")
        return onnx.inliner.inline_local_functions(model) if len(model.functions) else model
    finally:
        quiet.setLevel(level)


def _small_constant_of_shape(node) -> bool | None:
    """Fold a ConstantOfShape of a known shape into a constant of at most 64 Ki elements; else the default."""
    if node.op_type != "ConstantOfShape" or node.domain not in ("", "ai.onnx"):
        return None
    shape = node.inputs[0].const_value if node.inputs and node.inputs[0] is not None else None
    return True if shape is not None and int(np.prod(shape.numpy())) <= 65536 else None


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
        raise ModelLoadError(f"{name}: TVM's ONNX frontend cannot import this model: {last_line(err)}") from err


def _reference(model: onnx.ModelProto, onnx_names: list[str], notes: list[str]):
    """onnxruntime running the file as the user gave it (before our simplification)."""
    import onnxruntime

    try:
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as err:  # the reference is optional: models it cannot run simply have none
        notes.append(f"onnxruntime cannot run this model, so there is no reference output: {first_line(err)}")
        return None

    def reference(arrays: list[np.ndarray]) -> list[np.ndarray]:
        outs = session.run(None, dict(zip(onnx_names, arrays, strict=True)))
        return [np.asarray(o) for o in outs]

    return reference
