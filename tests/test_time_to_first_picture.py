"""Time to first picture: the two one-off costs that made a model's graph and a first space wait, kept cheap.

- the Space Builder's start-up imports TVM's tensor intrinsics with `inspect.getmodule` remembering frames'
  files that belong to no module (space/startup.py);
- partitioning compiles each structurally distinct PrimFunc that FoldConstant evaluates once (partition/fuse.py).
Both only skip repeated work: the spaces and partitions they give are checked by test_space.py and
test_partition.py.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np
import tvm
from tvm import te

from tlm_core.partition.fuse import _one_build_per_function
from tlm_core.partition.task import te_prim_func
from tlm_core.space import SpaceBuilder, startup
from tlm_core.target import host_target


def _frame_of_a_file_without_module():
    scope: dict = {}
    exec(compile("import sys\nframe = sys._getframe()", "<no module>", "exec"), scope)  # noqa: S102
    return scope["frame"]


def test_a_file_without_module_is_looked_up_once_while_the_intrinsics_import(monkeypatch):
    frame = _frame_of_a_file_without_module()
    real, asked = inspect.getmodule, []

    def counting(obj, _filename=None):
        asked.append(obj)
        return real(obj, _filename)

    monkeypatch.setattr(inspect, "getmodule", counting)
    with startup._moduleless_files_remembered():
        assert inspect.getmodule(frame) is None
        first = len(asked)  # inspect's own getsourcefile asks too
        assert inspect.getmodule(frame) is None
        assert inspect.getmodule(frame.f_code) is None  # its code object: the same file
        assert len(asked) == first  # answered without asking (scanning sys.modules) again
        module = inspect.getmodule(_frame_of_a_file_without_module)  # anything else goes through
        assert module is sys.modules[__name__]
        assert len(asked) == first + 1
    assert inspect.getmodule is counting  # put back


def test_the_space_builder_has_the_intrinsics_and_leaves_inspect_alone():
    before = inspect.getmodule
    SpaceBuilder.for_target(host_target())
    assert "tvm.s_tir.tensor_intrin" in sys.modules
    assert inspect.getmodule is before
    startup.import_tensor_intrinsics()  # again: nothing to do


def _add_one():
    a = te.placeholder((8,), name="A")
    func = te_prim_func([a, te.compute((8,), lambda i: a[i] + 1.0, name="B")])
    return func.with_attr("global_symbol", "tir_function")  # as FoldConstant names it


def test_constant_folding_builds_each_distinct_primfunc_once():
    real = tvm.get_global_func("tirx.build")
    built = []

    def counting(mod, target=None, pipeline="default"):
        built.append(mod)
        return real(mod, target, pipeline)

    tvm.register_global_func("tirx.build", counting, override=True)
    try:
        with _one_build_per_function():
            build = tvm.get_global_func("tirx.build")
            first = build(_add_one(), tvm.target.Target("llvm"))
            again = build(_add_one(), tvm.target.Target("llvm"))  # a new object, structurally the same
            assert len(built) == 1
            assert first.same_as(again)
            a = tvm.runtime.tensor(np.ones(8, "float32"))
            b = tvm.runtime.empty((8,), "float32")
            again["tir_function"](a, b)
            assert b.numpy().tolist() == [2.0] * 8
        tvm.get_global_func("tirx.build")(_add_one(), tvm.target.Target("llvm"))
        assert len(built) == 2  # outside fuse: every build is done again
    finally:
        tvm.register_global_func("tirx.build", real, override=True)
