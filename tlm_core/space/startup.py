"""TVM's one-off start-up before the first design space: importing its tensor intrinsics, without the slow part.

The first `TuneContext` in a process imports `tvm.s_tir.tensor_intrin`, which parses ~250 TVMScript
intrinsics. Every `@T.prim_func` (and the decorator TVM's parser evaluates again while parsing) calls
`inspect.stack()`, which asks `inspect.getmodule` for the module of every frame on the stack. For a frame whose
file belongs to no module (`<frozen importlib._bootstrap>` at every level of the nested imports, `<ast>` for the
parser's evaluated decorators; a Streamlit page script) `getmodule` finds nothing and scans the whole of
`sys.modules` again (2,300 modules with torch loaded, 3,200 after a model export), twice per frame: ~27,000
scans, 80-90 % of the import (60-90 s on a busy 2-core host, ~20 s idle).

`import_tensor_intrinsics` does that import once, remembering during it which such files have no module, so
each is scanned for once. What TVM parses and registers is unchanged: the same intrinsics, so the same spaces.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

_MODULE = "tvm.s_tir.tensor_intrin"
_lock = threading.Lock()


def import_tensor_intrinsics() -> None:
    """Import tvm.s_tir.tensor_intrin (what the first TuneContext would), fast; later calls return at once."""
    if _MODULE in sys.modules:
        return
    with _lock, _moduleless_files_remembered():
        import tvm.s_tir.tensor_intrin  # noqa: F401 -- registers the intrinsics MetaSchedule's rules name


@contextlib.contextmanager
def _moduleless_files_remembered() -> Iterator[set[tuple[str, str | None]]]:
    """While active, `inspect.getmodule` of a frame (or code object) whose file it found no module for
    answers None at once for that file again, instead of rescanning sys.modules.

    Exact while the import runs: the modules it adds are the intrinsics' own (and what they import), whose
    files no frame already on the stack (or evaluated by the parser) runs. Other objects go through unchanged.
    """
    original = inspect.getmodule
    nowhere: set[tuple[str, str | None]] = set()

    def getmodule(obj: Any, _filename: str | None = None) -> types.ModuleType | None:
        code = obj.f_code if isinstance(obj, types.FrameType) else obj if isinstance(obj, types.CodeType) else None
        if code is None:
            return original(obj, _filename)
        key = (code.co_filename, _filename)
        if key in nowhere:
            return None
        found = original(obj, _filename)
        if found is None:
            nowhere.add(key)
        return found

    inspect.getmodule = getmodule
    try:
        yield nowhere
    finally:
        inspect.getmodule = original
