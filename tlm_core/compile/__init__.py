"""Whole-model compilation: every task's schedule from a method -> one Relax executable -> run and check.

Pipeline step 8 of 8, the last: the model the user runs, every task scheduled (tlm compile, the Run page).

run = compile_and_run(model, part, target, "heuristic")   # what `tlm compile` and the Run page do, in one call
schedules = schedules_for("tlm", part, target, space_of, generator=gen)   # or one step at a time:
compiled = compile_model(part, schedules, target)      # applies them to the fused module, tvm.compile
report = run_model(model, compiled, repeat=10)         # Relax VM, check vs PyTorch, median latency
data = bundle_zip(run)                                 # TVMScript, traces, records, results, README
"""

from tlm_core.compile.build import Compiled, compile_model, schedules_database
from tlm_core.compile.bundle import bundle_zip
from tlm_core.compile.database import (
    DATABASE_MAX_BYTES,
    CheckedDatabase,
    DatabaseError,
    check_database,
    load_database,
    save_database,
)
from tlm_core.compile.pipeline import BackgroundJob, ModelRun, cli_command, compile_and_run, method_label
from tlm_core.compile.run import RunReport, TorchCompileReport, pytorch_latencies, run_model, torch_compile_run
from tlm_core.compile.schedules import (
    METHODS,
    Progress,
    Schedule,
    TLMChoice,
    database_schedules,
    default_schedules,
    heuristic_schedules,
    measure_schedules,
    scheduled_module,
    schedules_for,
    search_schedules,
    tlm_schedule,
    tlm_schedules,
)

__all__ = [
    "DATABASE_MAX_BYTES",
    "METHODS",
    "BackgroundJob",
    "CheckedDatabase",
    "Compiled",
    "DatabaseError",
    "ModelRun",
    "Progress",
    "RunReport",
    "Schedule",
    "bundle_zip",
    "check_database",
    "cli_command",
    "compile_and_run",
    "compile_model",
    "database_schedules",
    "default_schedules",
    "heuristic_schedules",
    "load_database",
    "measure_schedules",
    "method_label",
    "pytorch_latencies",
    "run_model",
    "save_database",
    "scheduled_module",
    "schedules_database",
    "schedules_for",
    "search_schedules",
    "torch_compile_run",
    "TorchCompileReport",
    "tlm_schedule",
    "tlm_schedules",
    "TLMChoice",
]
