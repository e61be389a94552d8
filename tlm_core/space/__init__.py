"""Space Builder: per task, MetaSchedule's sketches and each sketch's decision points with their legal choices.

Pipeline step 3 of 8, after tlm_core.partition: tlm_core.language writes a space as a sentence next.

space = SpaceBuilder.for_target(host_target()).build(task)
for sketch in space.sketches:
    for point in sketch.points: point.kind, point.choices, point.sampled
replay(sketch, choose)  # the one walk over decision points that everything else uses
"""

from .builder import Space, SpaceBuilder
from .decision import CATEGORICAL, COMPUTE_LOCATION, TILE, Decision, DecisionPoint, decision_to_json
from .replay import Chooser, Replayed, ReplayError, replay, trace_decisions
from .sampling import random_decisions, random_replay
from .sketch import Sketch
from .tiling import NO_INNERMOST_LIMIT, perfect_tilings

__all__ = [
    "CATEGORICAL",
    "COMPUTE_LOCATION",
    "NO_INNERMOST_LIMIT",
    "TILE",
    "Chooser",
    "Decision",
    "DecisionPoint",
    "ReplayError",
    "Replayed",
    "Sketch",
    "Space",
    "SpaceBuilder",
    "decision_to_json",
    "perfect_tilings",
    "random_decisions",
    "random_replay",
    "replay",
    "trace_decisions",
]
