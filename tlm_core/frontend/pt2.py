"""Load a torch.export archive (.pt2) without running anything it contains.

What torch.export.load deserialises in torch 2.13 (evidence, so we do not call it on untrusted files):
- torch/export/__init__.py `load` -> torch/export/pt2_archive/_package.py `load_pt2`, which reads every
  `models/*.json` (JSON -> schema dataclasses via serde/serialize.py `_bytes_to_dataclass`), then
  * `_load_state_dict` / `_load_constants`: raw tensor bytes when a payload's `use_pickle` is false, but
    `torch.load(..., weights_only=False)` (full pickle: arbitrary code) when it is true, and for constants
    `torch._C._pickle_load_obj` (custom_obj_*, TorchScript pickles) and plain `pickle.loads` (opaque_obj_*);
  * sample inputs (data/sample_inputs/model.pt) and legacy weights (data/weights/model.pt) go through
    serde/serialize.py `deserialize_torch_artifact`: `torch.load(weights_only=True)`, and on *any* failure
    a silent retry with `weights_only=False` (full pickle);
  * every `data/aotinductor/<model>/` folder is loaded by `_load_aoti` (a compiled shared library: native code);
  * if that fails, `load` falls back to the torch <= 2.7 zip format, whose .pt members use the same fallback.
- serde/serialize.py `GraphModuleDeserializer`: `deserialize_operator` resolves a node target string by
  getattr chains from `torch`, `operator` or `math` (so "torch.serialization.os.system" would resolve, and run
  when the graph runs); `deserialize_metadata` does the same for `source_fn_stack`; `_parse_sym_expr` passes
  each `expr_str` to `sympy.sympify`, which evaluates the string as Python.

So torch.export.load is not safe on untrusted archives. This loader reimplements it for the safe subset:
pt2_archive.py checks the zip (layout, names, sizes, CRCs) and refuses AOTInductor code, pickled custom
objects and legacy formats; the JSON configs must mark every payload `use_pickle: false` (raw bytes, read
with torch.frombuffer); the sample inputs are unpickled only with `torch.load(weights_only=True)` (torch's
restricted unpickler) and refused if that fails; operator targets must be ATen/prims/higher-order ops or a
few pure `operator`/`math`/`torch.sym_*` functions; symbolic expressions must be plain shape arithmetic; node
metadata that names Python objects is dropped. Then torch's own ExportedProgramDeserializer builds the program.

Checked by crafting archives (tests/test_frontend.py keeps them): torch.export.load ran a payload from a
sample-inputs pickle, a use_pickle weight, an opaque_obj_ constant, a legacy data/weights/model.pt and a sympy
expr_str; an os.system node target was stopped only by the ExportedProgram verifier (torch/_export/verifier.py),
after it had been resolved. This loader refuses each of them, and AOTInductor members and unsafe member paths,
before anything is deserialised.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path
from typing import Any

import torch
from torch._export.serde import schema
from torch._export.serde.serialize import (
    ExportedProgramDeserializer,
    _dict_to_dataclass,
    deserialize_scalar_type,
    deserialize_size,
    deserialize_storage_offset,
    deserialize_stride,
)
from torch._export.serde.union import _Union

from tlm_core.errors import first_line
from tlm_core.frontend.model import DynamicShapeError, LoadedModel, ModelLoadError
from tlm_core.frontend.pt2_archive import Pt2Archive, open_pt2
from tlm_core.frontend.torch_program import import_exported, static_program

_OP_TARGET = re.compile(r"torch\.ops\.(aten|prims)\.(\w+)\.(\w+)")
_HIGHER_ORDER_TARGET = re.compile(r"torch\.ops\.higher_order\.[a-z]\w*")
_PURE_TARGETS = {f"_operator.{n}" for n in "getitem add sub mul truediv floordiv mod pow neg pos abs".split()}
_PURE_TARGETS |= {f"_operator.{n}" for n in "eq ne lt le gt ge and_ or_ xor not_ invert".split()}
_PURE_TARGETS |= {f"math.{n}" for n in "ceil floor trunc sqrt".split()}
_PURE_TARGETS |= {f"torch.{n}" for n in "sym_float sym_int sym_max sym_min sym_not sym_ite sym_sum".split()}
_PURE_TARGETS |= {"torch._sym_sqrt"}

# torch 2.13 writes sympy's srepr, e.g. "Mul(Integer(2), Symbol('s77', positive=True, integer=True))".
# Allowed: these names (sympy classes, the torch.utils._sympy functions the deserializer provides, assumption
# keywords), symbol names, quoted symbol names, integers and operators. sympy evaluates powers eagerly, so a
# huge exponent would hang the loader: Pow only with a small literal exponent (s0**2 from attention's
# seq x seq masks); left shifts not at all.
_SYM_NAMES = set("Symbol Integer Rational Float Add Mul Max Min Eq Ne Lt Le Gt Ge And Or Not Mod Abs".split())
_SYM_NAMES |= set("floor ceiling oo True False Piecewise".split())
_SYM_NAMES |= set(
    "FloorDiv ModularIndexing Where PythonMod CleanDiv CeilToInt FloorToInt CeilDiv RShift FloatTrueDiv"
    " IntTrueDiv IsNonOverlappingAndDenseIndicator TruncToFloat TruncToInt RoundToInt RoundDecimal ToFloat"
    " Identity".split()
)
_SYM_NAMES |= set("positive negative nonnegative nonpositive integer real finite zero nonzero even odd".split())
_SYM_TOKEN = re.compile(r"\s+|\d{1,20}(?:\.\d{1,20})?|[A-Za-z_]\w*|'[a-z]+\d+'|\"[a-z]+\d+\"|[-+*/%(),<>=!&|~]")
_SYMBOL = re.compile(r"[a-z]+\d+")  # s0, s77, u3, ...
_KEPT_METADATA = ("stack_trace", "nn_module_stack")  # plain strings; the rest may name Python objects


def load_pt2(
    path: Path, name: str, max_bytes: int, input_shapes: dict[str, tuple[int, ...]] | None = None
) -> LoadedModel:
    try:
        archive = open_pt2(str(path), max_bytes)
        with archive.zf:
            ep, notes = exported_program(archive)
        ep = static_program(ep, name, input_shapes or {}, notes)
        model = import_exported(ep, name, "pt2")
    except DynamicShapeError:
        raise  # names the file already, and carries the suggested shapes
    except ModelLoadError as err:
        raise ModelLoadError(f"{name}: {err}") from err
    model.notes.extend(notes)
    return model


def exported_program(archive: Pt2Archive) -> tuple[torch.export.ExportedProgram, list[str]]:
    """The checked archive's program, deserialised without any unpickling beyond weights-only."""
    program = _read_json(archive, "models/model.json", schema.ExportedProgram)
    _check_program(program)
    notes: list[str] = []
    weights = _read_json(archive, "data/weights/model_weights_config.json", schema.PayloadConfig)
    state_dict = _tensors(archive, "data/weights/", weights, notes)
    constants: dict[str, Any] = {}
    if "data/constants/model_constants_config.json" in archive.names:
        config = _read_json(archive, "data/constants/model_constants_config.json", schema.PayloadConfig)
        constants = _tensors(archive, "data/constants/", config, notes)
    example_inputs = _sample_inputs(archive)
    try:
        ep = ExportedProgramDeserializer().deserialize(program, state_dict, constants, example_inputs)
    except Exception as err:
        raise ModelLoadError(f"cannot deserialise the exported program: {first_line(err)}") from err
    return ep, sorted(set(notes))


def _read_json(archive: Pt2Archive, member: str, cls: type) -> Any:
    try:
        return _dict_to_dataclass(cls, json.loads(archive.read(member).decode("utf-8")))
    except Exception as err:  # bad UTF-8, bad JSON, or JSON that does not fit the schema
        raise ModelLoadError(f".pt2 member {member!r} is not valid: {first_line(err)}") from err


def _check_program(program: schema.ExportedProgram) -> None:
    """Refuse operator targets and symbolic expressions that would make torch run arbitrary code."""
    stack: list[Any] = [program]
    while stack:
        obj = stack.pop()
        if isinstance(obj, schema.Node):
            if not _is_operator(obj.target):
                raise ModelLoadError(
                    f"operator {obj.target!r} is refused: only registered ATen/prims operators can be loaded from .pt2"
                )
            obj.metadata = {k: v for k, v in obj.metadata.items() if k in _KEPT_METADATA}
        elif isinstance(obj, schema.SymExpr):
            _check_sym_expr(obj.expr_str)
        if isinstance(obj, _Union):
            stack.append(obj.value)
        elif dataclasses.is_dataclass(obj):
            stack.extend(getattr(obj, f.name) for f in dataclasses.fields(obj))
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())


def _is_operator(target: str) -> bool:
    """An ATen/prims overload whose schema torch has registered, a higher-order op, or a pure function.

    Deciding by the registered schema admits every real overload (aten.__and__.Tensor, which transformers'
    attention masks use) and nothing else: torch's deserializer resolves a target by attribute walks, so a
    name that is not a registered operator (e.g. torch.ops.aten.__class__.__init__) is never resolved.
    """
    if target in _PURE_TARGETS or _HIGHER_ORDER_TARGET.fullmatch(target):
        return True
    op = _OP_TARGET.fullmatch(target)
    if not op:
        return False
    namespace, name, overload = op.groups()
    try:
        torch._C._get_schema(f"{namespace}::{name}", "" if overload == "default" else overload)
    except RuntimeError:  # "Found no matching schema"
        return False
    return True


def _check_sym_expr(expr: str) -> None:
    pos, safe = 0, len(expr) <= 2000 and "**" not in expr  # "**": powers only as Pow(base, small integer)
    tokens = []
    for m in _SYM_TOKEN.finditer(expr):
        word = m.group()
        is_name = word[0].isalpha() or word[0] == "_"
        if m.start() != pos or (is_name and word not in _SYM_NAMES | {"Pow"} and not _SYMBOL.fullmatch(word)):
            safe = False
            break
        pos = m.end()
        if not word.isspace():
            tokens.append(word)
    if not safe or pos != len(expr) or not _small_powers(tokens):
        raise ModelLoadError(f"symbolic shape expression {expr[:80]!r} is refused: not plain shape arithmetic")


def _small_powers(tokens: list[str]) -> bool:
    """Every Pow(...) call's last argument is Integer(n) with n <= 16, no Pow nests in another (a tower of
    powers is a huge number too), and the parentheses balance."""
    frames: list[tuple[bool, int]] = []  # per open parenthesis: (opens a Pow call, where its last argument starts)
    for i, word in enumerate(tokens):
        if word == "(":
            is_pow = i > 0 and tokens[i - 1] == "Pow"
            if is_pow and any(p for p, _ in frames):
                return False
            frames.append((is_pow, i + 1))
        elif word == "," and frames:
            frames[-1] = (frames[-1][0], i + 1)
        elif word == ")":
            if not frames:
                return False
            is_pow, start = frames.pop()
            exponent = tokens[start:i]
            small = len(exponent) == 4 and exponent[:2] == ["Integer", "("] and exponent[3] == ")"
            if is_pow and not (small and exponent[2].isdigit() and int(exponent[2]) <= 16):
                return False
    return not frames


def _tensors(archive: Pt2Archive, folder: str, config: schema.PayloadConfig, notes: list[str]) -> dict:
    """Weights or constants from raw bytes; pickled payloads are refused, never read."""
    storages: dict[str, torch.Tensor] = {}
    out: dict[str, torch.Tensor] = {}
    for fqn, meta in config.config.items():
        if meta.use_pickle or meta.tensor_meta is None:
            raise ModelLoadError(
                f"{fqn!r} is stored as a pickle (a tensor subclass or custom object): refused. "
                "Only plain tensors can be loaded from .pt2 files."
            )
        if not re.fullmatch(r"(weight|tensor)_\d+", meta.path_name) or folder + meta.path_name not in archive.names:
            raise ModelLoadError(f"{fqn!r} points at a missing or invalid archive member {meta.path_name!r}")
        tm = meta.tensor_meta
        try:
            dtype = deserialize_scalar_type(tm.dtype)
            size = deserialize_size(tm.sizes)
            if meta.path_name not in storages:
                storages[meta.path_name] = _storage(archive.read(folder + meta.path_name), dtype, size)
            flat = storages[meta.path_name]
            if flat.dtype != dtype:
                raise ValueError(f"shares bytes with a {flat.dtype} tensor")
            stride = deserialize_stride(tm.strides)
            tensor = torch.as_strided(flat, size, stride, deserialize_storage_offset(tm.storage_offset))
        except Exception as err:  # sizes that do not fit the bytes, symbolic sizes, unknown dtypes
            raise ModelLoadError(f"tensor {fqn!r} in the .pt2 archive is invalid: {first_line(err)}") from err
        if tm.device.type != "cpu":
            notes.append(f"tensors saved on {tm.device.type} were loaded on the CPU")
        out[fqn] = torch.nn.Parameter(tensor, requires_grad=tm.requires_grad) if meta.is_param else tensor
    return out


def _storage(data: bytes, dtype: torch.dtype, size: tuple[int, ...]) -> torch.Tensor:
    if not data:  # torch.export.save writes empty tensors as empty members
        return torch.zeros(size, dtype=dtype).reshape(-1)
    element = torch.empty(0, dtype=dtype).element_size()
    if len(data) % element:
        raise ValueError(f"{len(data)} bytes is not a whole number of {dtype} elements")
    return torch.frombuffer(bytearray(data), dtype=dtype)


def _sample_inputs(archive: Pt2Archive) -> Any:
    member = "data/sample_inputs/model.pt"
    if member not in archive.names or archive.size(member) == 0:
        return None
    try:
        return torch.load(io.BytesIO(archive.read(member)), weights_only=True)
    except Exception as err:
        raise ModelLoadError(
            f".pt2 member {member!r} is refused: the weights-only unpickler rejected it "
            f"(it holds more than plain tensors): {_unpickler_reason(err)}"
        ) from err


def _unpickler_reason(err: BaseException) -> str:
    # torch's message starts with advice to retry with weights_only=False: show only the reason.
    found = re.search(r"WeightsUnpickler error:\s*(.+?)(?:\n\n|$)", str(err), re.S)
    reason = found.group(1).strip() if found else first_line(err)
    return reason.split(" Please use")[0][:300]  # drop the advice on how to allowlist it
