"""Whole-model compilation: every task's schedule from a method -> one Relax executable -> run and check.

schedules = heuristic_schedules(part, builder)        # or database_schedules(db, part), {} for the default
compiled = compile_model(part, schedules, target)      # applies them to the fused module, tvm.compile
report = run_model(model, compiled, repeat=10)         # Relax VM, check vs PyTorch, median latency
"""

from tlm_core.compile.build import Compiled, compile_model, schedules_database
from tlm_core.compile.run import RunReport, pytorch_latency, run_model
from tlm_core.compile.schedules import (
    METHODS,
    Schedule,
    database_schedules,
    default_schedules,
    heuristic_schedules,
    load_database,
    search_schedules,
)

__all__ = [
    "METHODS",
    "Compiled",
    "RunReport",
    "Schedule",
    "compile_model",
    "database_schedules",
    "default_schedules",
    "heuristic_schedules",
    "load_database",
    "pytorch_latency",
    "run_model",
    "schedules_database",
    "search_schedules",
]
