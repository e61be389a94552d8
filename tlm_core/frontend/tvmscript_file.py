"""Load a TVMScript file holding one PrimFunc or one IRModule, so that a single operator can be studied.

TVMScript is Python: the file is executed to parse it, so only trusted callers reach this (allow_code=True).

Representation (source="tvmscript", no reference):
- one PrimFunc -> `mod` is an IRModule holding it as "main" (global_symbol "main"); nothing else;
- an IRModule -> kept as is; its "main" (a Relax function or a PrimFunc) describes the inputs; a module of
  one PrimFunc not named "main" has it renamed to "main";
- `inputs` are the buffers of a PrimFunc "main" that it only reads (destination-passing style: the buffers it
  writes are its outputs, named in `notes`), or the parameters of a Relax "main".
"""

from __future__ import annotations

import itertools
import sys
import types
from pathlib import Path
from typing import Any

import tvm
from tvm import relax, s_tir
from tvm.script import ir as I  # noqa: E741 (TVMScript's own names)
from tvm.script import relax as R
from tvm.script import tirx as T
from tvm.tirx import PrimFunc

from tlm_core.errors import summary
from tlm_core.frontend.model import InputSpec, LoadedModel, ModelLoadError

_counter = itertools.count()


def load_tvmscript(path: Path, name: str) -> LoadedModel:
    objects = _run(path, name)
    mods = {k: v for k, v in objects.items() if isinstance(v, tvm.IRModule)}
    funcs = {k: v for k, v in objects.items() if isinstance(v, PrimFunc)}
    if len(mods) > 1:
        raise ModelLoadError(f"{name}: holds {len(mods)} IRModules ({', '.join(mods)}): keep one")
    if mods:
        mod = _with_main(next(iter(mods.values())), name)
    elif len(funcs) == 1:
        mod = tvm.IRModule({"main": next(iter(funcs.values())).with_attr("global_symbol", "main")})
    elif funcs:
        raise ModelLoadError(
            f"{name}: holds {len(funcs)} PrimFuncs ({', '.join(funcs)}): keep one, or put them in an "
            "@I.ir_module with the one to study named 'main'"
        )
    else:
        raise ModelLoadError(f"{name}: holds no TVMScript PrimFunc or IRModule")
    notes = ["TVMScript: no reference implementation to compare with"]
    main = mod["main"]
    inputs = _prim_inputs(mod, name, notes) if isinstance(main, PrimFunc) else _relax_inputs(main, name)
    return LoadedModel(name=name, source="tvmscript", mod=mod, inputs=inputs, reference=None, notes=notes)


def _run(path: Path, name: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ModelLoadError(f"{name}: not a text file: {err}") from err
    try:
        code = compile(text, str(path), "exec")  # the real path: TVMScript's parser re-reads the source
    except SyntaxError as err:
        raise ModelLoadError(f"{name}: not valid Python/TVMScript: line {err.lineno}: {err.msg}") from err
    # A throwaway module: @I.ir_module looks its class's module up in sys.modules.
    module = types.ModuleType(f"_tlm_tvmscript_{next(_counter)}")
    module.__file__ = str(path)
    # T, I and R are predefined so that printed TVMScript (whose imports are comments) runs as it is.
    module.__dict__.update(T=T, I=I, R=R)
    sys.modules[module.__name__] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 -- trusted files only (allow_code=True)
    except Exception as err:
        raise ModelLoadError(f"{name}: running the TVMScript file failed: {summary(err)}") from err
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def _with_main(mod: tvm.IRModule, name: str) -> tvm.IRModule:
    names = [gv.name_hint for gv in mod.get_global_vars()]
    if "main" in names:
        return mod
    if len(names) == 1 and isinstance(mod[names[0]], PrimFunc):
        return tvm.IRModule({"main": mod[names[0]].with_attr("global_symbol", "main")})
    raise ModelLoadError(f"{name}: the IRModule has no function named 'main' (it has {', '.join(names)})")


def _static_shape(shape: Any, what: str, name: str) -> tuple[int, ...]:
    dims = []
    for i, d in enumerate(shape):
        if isinstance(d, int) or isinstance(d, tvm.tirx.IntImm):
            dims.append(int(d))
        else:
            raise ModelLoadError(f"{name}: {what} dimension {i} is dynamic ({d}): give static shapes")
    return tuple(dims)


def _prim_inputs(mod: tvm.IRModule, name: str, notes: list[str]) -> list[InputSpec]:
    func = mod["main"]
    for p in func.params:
        if type(p.ty).__name__ != "BufferType":
            raise ModelLoadError(f"{name}: parameter {p.name!r} is a scalar: only buffer parameters are supported")
    written = _written_params(mod)
    if written is None:  # no blocks to ask: assume the usual destination-passing order
        written = {func.params[-1].name}
        notes.append(f"no s_tir blocks: the last parameter ({func.params[-1].name}) is taken as the output")
    notes.append(f"outputs: {', '.join(p.name for p in func.params if p.name in written)}")
    return [
        InputSpec(p.name, _static_shape(p.shape, f"buffer {p.name!r}", name), str(p.dtype))
        for p in func.params
        if p.name not in written
    ]


def _written_params(mod: tvm.IRModule) -> set[str] | None:
    """Names of the parameters written by the blocks of "main"; None when it has no s_tir blocks."""
    try:
        sch = s_tir.Schedule(mod)
        root = sch.get_sblock("root", func_name="main")
        blocks = [sch.get(b) for b in sch.get_child_blocks(root)]
    except Exception:
        return None
    written = {region.source.name for block in blocks for region in block.writes}
    return {p.name for p in mod["main"].params if p.name in written}


def _relax_inputs(main: relax.Function, name: str) -> list[InputSpec]:
    specs = []
    for p in main.params:
        ty = p.ty
        if not isinstance(ty, relax.TensorType) or ty.shape is None:
            raise ModelLoadError(f"{name}: parameter {p.name!r} of main is not a tensor of known shape")
        specs.append(InputSpec(p.name, _static_shape(ty.shape.values, f"input {p.name!r}", name), str(ty.dtype)))
    return specs
