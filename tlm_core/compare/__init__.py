"""Compare the methods on one subgraph and on a whole model: TLM, search, heuristic, default, a user's database.

Beside the pipeline: each method through program -> measure (steps 6-7), its results side by side.

result = run_method("heuristic", space, measurer)        # one measured, checked row (subgraph.py)
results = Results(); results.add(result)                 # kept per (task, method) for tables and overlays
side_by_side(space, results.of_task(task.id), measurer)  # their programs measured again together (fair)
ceilings = machine_ceilings(); roofline_points(...)      # this machine's measured roofline (roofline.py)
decision_diff(space, (sketch_a, decisions_a), (sketch_b, decisions_b))   # decision-level diff (diff.py)
read_database(path) / database_result(space, db, measurer)              # a user's MetaSchedule DB (database.py)
"""

from tlm_core.compare.database import DatabaseError, UserDatabase, database_from_files, database_result, read_database
from tlm_core.compare.diff import DecisionDiff, DiffRow, decision_diff
from tlm_core.compare.job import Job
from tlm_core.compare.method import LABELS, METHODS, MethodResult
from tlm_core.compare.results import Results, node_values, task_table
from tlm_core.compare.roofline import Ceilings, RooflinePoint, machine_ceilings, roofline_points, task_bytes
from tlm_core.compare.subgraph import run_method, side_by_side

__all__ = [
    "LABELS",
    "METHODS",
    "Ceilings",
    "DatabaseError",
    "DecisionDiff",
    "DiffRow",
    "Job",
    "MethodResult",
    "Results",
    "RooflinePoint",
    "UserDatabase",
    "database_from_files",
    "database_result",
    "decision_diff",
    "machine_ceilings",
    "node_values",
    "read_database",
    "roofline_points",
    "run_method",
    "side_by_side",
    "task_bytes",
    "task_table",
]
