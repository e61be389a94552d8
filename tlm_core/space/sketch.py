"""A sketch: one design-space schedule from MetaSchedule, with its decision points (data only; the Space Builder
makes sketches from MetaSchedule's schedules)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm.s_tir import Trace

from .decision import Decision, DecisionPoint, decision_to_json


@dataclass
class Sketch:
    index: int  # position in the task's design space
    trace: Trace  # the sketch's instructions, with the decisions TVM sampled
    workload: tvm.IRModule  # the unscheduled module the trace applies to
    points: list[DecisionPoint] = field(default_factory=list)  # along TVM's sampled path, in program order
    # inst index of a sampled value -> (what consumes it, the block it acts on); for categorical points
    uses: dict[int, tuple[str, str | None]] = field(default_factory=dict)

    @property
    def log10_size(self) -> float:
        """log10 of the number of decision vectors (product of the choice counts along the sampled path)."""
        return sum(p.log10_size for p in self.points)

    @property
    def sampled_decisions(self) -> list[Decision]:
        return [p.sampled for p in self.points]

    def to_dict(self, with_choices: bool = False) -> dict[str, Any]:
        return {
            "index": self.index,
            "log10_size": self.log10_size,
            "num_points": len(self.points),
            "sampled": [decision_to_json(d) for d in self.sampled_decisions],
            "points": [p.to_dict(with_choices) for p in self.points],
            "trace": list(self.trace.as_python(remove_postproc=True)),
        }
