"""Decisions -> program: replay a sketch with a decision vector, then run the target's postprocessors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm
from tvm.s_tir import Schedule, Trace

from ..partition.task import Task
from ..space import Decision, DecisionPoint, ReplayError, Space, replay
from .errors import InvalidDecisions


@dataclass
class Program:
    task: Task
    sketch_index: int
    decisions: list[Decision]  # in TVM's encoding, one per decision point of the sketch
    schedule: Schedule  # after the sketch's instructions and the postprocessors
    trace: Trace  # the schedule's trace, postprocessing included (what a tuning record stores)

    @property
    def mod(self) -> tvm.IRModule:
        """The scheduled IRModule (one PrimFunc "main"), ready for `tvm.compile`."""
        return self.schedule.mod

    def script(self) -> str:
        """The scheduled program as TVMScript."""
        return self.mod.script()


def apply_decisions(space: Space, sketch_index: int, decisions: list[Any]) -> Program:
    """The program a decision vector describes. Never repairs: anything illegal raises InvalidDecisions.

    Each decision is checked against the legal choices at its point (given the decisions before it), the
    trace TVM replayed is compared with the request, and the target's postprocessors must all accept.
    """
    if not 0 <= sketch_index < len(space.sketches):
        raise InvalidDecisions(None, f"sketch {sketch_index} does not exist: the space has {len(space.sketches)}")
    sketch = space.sketches[sketch_index]
    want = len(sketch.points)
    if len(decisions) != want:
        raise InvalidDecisions(
            min(len(decisions), want), f"sketch {sketch_index} takes {want} decisions, got {len(decisions)}"
        )

    def validated(point: DecisionPoint) -> Decision:
        reason = point.check(decisions[point.index])
        if reason is not None:
            raise InvalidDecisions(point.index, f"decision {point.index} ({point.title()}): {reason}")
        return point.normalize(decisions[point.index])

    try:
        replayed = replay(sketch, validated)
    except ReplayError as err:
        where = "before the first decision" if err.index is None else f"after decision {err.index}"
        raise InvalidDecisions(err.index, f"{where}: {err}") from err
    # Belt and braces: TVM silently repairs what it cannot apply, so compare what it actually recorded.
    for i, (asked, got) in enumerate(zip(replayed.decisions, replayed.trace_decisions(), strict=True)):
        if asked != got:
            point = replayed.points[i]
            raise InvalidDecisions(
                i, f"decision {i} ({point.title()}): TVM applied {got} instead of {asked} (it repaired it)"
            )
    sch = replayed.schedule
    postprocess(space, sch)
    return Program(space.task, sketch_index, list(replayed.decisions), sch, sch.trace)


def postprocess(space: Space, sch: Schedule) -> None:
    """Run the target's postprocessors on a replayed sketch, in place (parallel, vectorize and unroll
    annotations become loops; verifiers check the result). Raises InvalidDecisions when one rejects it."""
    sch.enter_postproc()
    for postproc in space.postprocs:
        name = type(postproc).__name__
        try:
            ok = postproc.apply(sch)
        except Exception as err:  # a postprocessor that fails is a rejection too
            raise InvalidDecisions(None, f"postprocessor {name} failed on the program: {err}") from err
        if not ok:
            raise InvalidDecisions(None, f"postprocessor {name} rejected the program")


def traced_module(mod: tvm.IRModule, trace: Trace) -> tvm.IRModule:
    """An unscheduled module with a whole trace applied, postprocessing included (a search's or a database's
    record, a Schedule's trace): no decision is checked, TVM replays the trace as recorded."""
    sch = Schedule(mod)
    trace.apply_to_schedule(sch, remove_postproc=False)
    return sch.mod
