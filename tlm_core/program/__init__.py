"""Decisions -> program: a decision vector applied to a sketch, postprocessed, ready to build.

Pipeline step 6 of 8, after tlm_core.generator (or a baseline): tlm_core.measure builds and times it next.

program = apply_decisions(space, sketch_index, decisions)   # raises InvalidDecisions, never repairs
program.mod, program.script(), program.trace
postprocess(space, sch)                                      # the target's postprocessors on a replayed schedule
random_program(space, rng)                                   # random legal decisions: tlm_core.space
"""

from .errors import InvalidDecisions
from .program import Program, apply_decisions, postprocess, traced_module
from .sampling import random_program

__all__ = ["InvalidDecisions", "Program", "apply_decisions", "postprocess", "random_program", "traced_module"]
