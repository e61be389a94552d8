"""A sketch: one design-space schedule from MetaSchedule, with its decision points."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm.s_tir import Schedule, Trace

from .decision import KIND_OF_INSTRUCTION, Decision, DecisionPoint, decision_to_json
from .replay import replay


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


def sketch_from_schedule(index: int, sch: Schedule, workload: tvm.IRModule) -> Sketch:
    """A sketch from one of `generate_design_space()`'s schedules: enumerate its points along TVM's path."""
    sketch = Sketch(index=index, trace=sch.trace, workload=workload, uses=_uses(sch))

    def keep_sampled(point: DecisionPoint) -> Decision:
        # TVM's own sample is legal on its own path; if it is not among our choices, enumeration is wrong.
        if point.sampled not in point.choices:
            raise AssertionError(
                f"sketch {index}, decision {point.index} ({point.title()}): TVM sampled {point.sampled}, "
                f"which the enumeration of {len(point.choices)} legal choices does not contain"
            )
        return point.sampled

    sketch.points = replay(sketch, keep_sampled).points
    return sketch


def _uses(sch: Schedule) -> dict[int, tuple[str, str | None]]:
    """For each sampling instruction, the first instruction that consumes its value and what that acts on.

    A categorical value is only meaningful through its use (e.g. the unroll depth annotated on the root
    block), which comes later in the trace than the decision: resolve it once on the sketch's schedule.
    """
    insts = list(sch.trace.insts)
    out: dict[int, tuple[str, str | None]] = {}
    for i, inst in enumerate(insts):
        if inst.kind.name not in KIND_OF_INSTRUCTION or not inst.outputs:
            continue
        value = inst.outputs[0]
        for later in insts[i + 1 :]:
            if any(_same(x, value) for x in later.inputs):
                if later.kind.name == "Annotate":
                    out[i] = (str(later.attrs[0]), _name_of(sch, later.inputs[0]))
                else:
                    out[i] = (later.kind.name, _name_of(sch, later.inputs[0]))
                break
    return out


def _same(x: Any, y: Any) -> bool:
    return hasattr(x, "same_as") and x.same_as(y)


def _name_of(sch: Schedule, rv: Any) -> str | None:
    """The block's or loop's name behind a random variable of the sketch's schedule."""
    try:
        stmt = sch.get(rv)
    except Exception:  # not a block/loop variable
        return None
    if hasattr(stmt, "name_hint"):
        return str(stmt.name_hint)
    if hasattr(stmt, "loop_var"):
        return str(stmt.loop_var.name)
    return None
