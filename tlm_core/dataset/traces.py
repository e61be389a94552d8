"""Traces as plain JSON, and a record's trace back to (sketch index, decision vector) of a task's space.

A record stores MetaSchedule's trace JSON: [instructions, [[instruction index, decision], ...]], where the
instructions are the sketch's followed by "EnterPostproc" and the postprocessors'. The sketch is the one
whose instructions are exactly that prefix; the decision vector is read at its points' instruction indices.
A search's (or a user's database's) traces name and order their instructions differently: then each sketch is
tried with the trace's decisions in order and kept only if it rebuilds a structurally equal program. A program
that MetaSchedule's MutateParallel changed (a parallel extent, not a sampling decision) is outside the space.
"""

from __future__ import annotations

import json
from typing import Any

from tvm.s_tir import Trace

from tlm_core.records.jsonl import dumps
from tlm_core.space import TILE, Decision, Space

POSTPROC_MARK = "EnterPostproc"


def plain(obj: Any) -> Any:
    """TVM containers and immediates as Python lists, dicts, ints, floats and strings."""
    if isinstance(obj, bool | int | float | str) or obj is None:
        return obj
    if isinstance(obj, list | tuple) or type(obj).__name__ in ("Array", "List"):
        return [plain(x) for x in obj]
    if isinstance(obj, dict) or type(obj).__name__ in ("Map", "Dict"):
        return {str(k): plain(v) for k, v in obj.items()}
    if hasattr(obj, "value"):  # IntImm, FloatImm
        return obj.value
    return str(obj)


def trace_json(trace: Trace, remove_postproc: bool = False) -> list:
    """The trace as a record stores it (same normalisation as tlm_core.records)."""
    return json.loads(dumps(plain(trace.as_json(remove_postproc=remove_postproc))))


def program_key(trace: list) -> str:
    """Identity of a program: its whole trace JSON (instructions and decisions)."""
    return dumps(trace)


def sketch_prefix(trace: list) -> list:
    """The sketch part of a trace's instructions (everything before EnterPostproc)."""
    insts = trace[0]
    for i, inst in enumerate(insts):
        if inst[0] == POSTPROC_MARK:
            return insts[:i]
    return insts


class SketchMatcher:
    """Maps record traces of one task to (sketch index, decisions in tlm_core.space's encoding)."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self._prefixes = [dumps(trace_json(s.trace, remove_postproc=True)[0]) for s in space.sketches]

    def match(self, trace: list) -> tuple[int, list[Decision]] | None:
        """None when no sketch of the space gives the trace's program (a foreign or empty trace)."""
        return self._exact(trace) or self._rebuilt(trace)

    def _exact(self, trace: list) -> tuple[int, list[Decision]] | None:
        prefix = dumps(sketch_prefix(trace))
        if prefix not in self._prefixes:
            return None
        index = self._prefixes.index(prefix)
        by_inst = {i: d for i, d in trace[1]}
        decisions: list[Decision] = []
        for point in self.space.sketches[index].points:
            value = by_inst.get(point.inst_index)
            if value is None:
                return None
            decisions.append(tuple(int(x) for x in value) if point.kind == TILE else int(value))
        return index, decisions

    def _rebuilt(self, trace: list) -> tuple[int, list[Decision]] | None:
        from tvm.s_tir import Schedule
        from tvm_ffi.structural import structural_equal

        from tlm_core.program import InvalidDecisions, apply_decisions

        end = len(sketch_prefix(trace))
        values = [d for i, d in sorted(trace[1], key=lambda x: x[0]) if i < end]
        if not values:  # an untuned record: no decision vector to learn
            return None
        target = None
        for sketch in self.space.sketches:
            if len(sketch.points) != len(values):
                continue
            try:
                decisions = [tuple(v) if p.kind == TILE else int(v) for p, v in zip(sketch.points, values, strict=True)]
                program = apply_decisions(self.space, sketch.index, decisions)
            except (InvalidDecisions, TypeError, ValueError):
                continue
            if target is None:
                try:
                    sch = Schedule(self.space.task.mod)
                    Trace.apply_json_to_schedule(trace, sch)
                    target = sch.mod
                except Exception:  # a trace that does not apply to this task at all
                    return None
            if structural_equal(program.mod, target):
                return sketch.index, list(program.decisions)
        return None


def decisions_to_json(decisions: list[Decision]) -> list:
    """Tiles as lists, the rest as ints (JSON has no tuples)."""
    return [list(d) if isinstance(d, tuple) else d for d in decisions]
