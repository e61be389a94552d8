"""Apply per-task schedules to the fused Relax module and build one executable.

The schedules go into a MetaSchedule database and `MetaScheduleApplyDatabase` rewrites the PrimFuncs of
*our* fused module (not `compile_relax`, which fuses again and silently falls back to untuned code when its
task names differ); tasks without a schedule keep their naive loops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import tvm
from tvm import relax
from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from tlm_core.compile import fast_math
from tlm_core.compile.schedules import Schedule
from tlm_core.partition import Partition

fast_math.install()  # vectorizable exp and erf in every kernel this process builds


@dataclass
class Compiled:
    executable: object  # tvm.compile's result (a Relax VM executable, or a PrimFunc module)
    target: Target
    mod: tvm.IRModule  # the module after the schedules were applied
    compile_secs: float  # applying the schedules + tvm.compile
    scheduled: int  # tasks that got a schedule
    relax: bool  # True when the module has a Relax "main" (run it with the VM)


def schedules_database(part: Partition, schedules: dict[str, Schedule], target: Target) -> ms.database.Database:
    """An in-memory MetaSchedule database with one record per scheduled task."""
    db = ms.database.MemoryDatabase()
    for task in part.tasks:
        sched = schedules.get(task.id)
        if sched is None or sched.trace is None:
            continue
        workload = db.commit_workload(task.mod)
        args = ms.arg_info.ArgInfo.from_prim_func(task.func)
        run_secs = [sched.latency if sched.latency else 1.0]  # the only record of its task: any time works
        db.commit_tuning_record(ms.database.TuningRecord(sched.trace, workload, run_secs, target, args))
    return db


def compile_model(part: Partition, schedules: dict[str, Schedule], target: Target) -> Compiled:
    start = time.perf_counter()
    db = schedules_database(part, schedules, target)
    with target, db:
        mod = relax.transform.MetaScheduleApplyDatabase(enable_warning=False)(part.mod)
    executable = tvm.compile(mod, target=target)
    scheduled = sum(1 for s in schedules.values() if s.trace is not None)
    has_main = any(isinstance(f, relax.Function) for f in mod.functions.values())
    return Compiled(executable, target, mod, time.perf_counter() - start, scheduled, has_main)
