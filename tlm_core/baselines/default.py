"""The "default" row: what TVM does with no tuning at all.

`untuned` is the task as the frontend produced it (naive loops, what `tvm.compile` builds for an
unscheduled task). `dlight` applies DLight's default CPU rules where one applies; in TVM 0.27 `dlight.cpu`
only has GEMV and Reduction rules, so matmuls and convolutions stay untuned under it.
"""

from __future__ import annotations

import tvm
from tvm.s_tir import dlight
from tvm.target import Target
from tvm_ffi.structural import structural_equal

from ..partition.task import Task

METHOD = "default"
LABEL = "TVM default (no tuning)"


def untuned_module(task: Task) -> tvm.IRModule:
    return task.mod


def dlight_module(task: Task, target: Target) -> tvm.IRModule | None:
    """The task under DLight's CPU rules, or None when no rule applies (the module would be unchanged)."""
    mod = tvm.IRModule({"main": task.func})  # ApplyDefaultSchedule mutates its input: give it a copy
    with target:
        scheduled = dlight.ApplyDefaultSchedule(dlight.cpu.GEMV(), dlight.cpu.Reduction())(mod)
    func = scheduled["main"]
    if structural_equal(func, task.func):
        return None
    return scheduled


def default_module(task: Task, target: Target, use_dlight: bool = True) -> tvm.IRModule:
    """DLight's schedule when a rule applies (and use_dlight), else the untuned task."""
    if use_dlight and target.kind.name == "llvm":
        try:
            scheduled = dlight_module(task, target)
        except Exception:  # a rule that fails on this workload: TVM's own fallback is the untuned task
            scheduled = None
        if scheduled is not None:
            return scheduled
    return untuned_module(task)
