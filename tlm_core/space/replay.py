"""Replay: the one mechanism that walks a sketch's decision points in program order.

Enumerating the space along TVM's path, applying a decision vector, random sampling and the language model's
constrained generation all replay the sketch's trace on a fresh schedule and let a `choose` function pick each
decision. Legal choices are enumerated live, so they reflect the choices made before them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvm import tirx
from tvm.s_tir import SBlockRealize, Schedule, Trace

from ..errors import first_line
from .decision import CATEGORICAL, COMPUTE_LOCATION, KIND_OF_INSTRUCTION, TILE, Decision, DecisionPoint
from .tiling import perfect_tilings

if TYPE_CHECKING:
    from .sketch import Sketch

Chooser = Callable[[DecisionPoint], Decision]


@dataclass
class Replayed:
    schedule: Schedule  # the sketch applied with the chosen decisions (no postprocessing yet)
    points: list[DecisionPoint]  # the decision points met, with their legal choices on this path
    decisions: list[Decision]  # what `choose` returned at each

    def trace_decisions(self) -> list[Decision]:
        """The decisions as recorded in the schedule's trace (what TVM actually applied)."""
        return trace_decisions(self.schedule.trace)


class ReplayError(RuntimeError):
    """TVM could not apply the sketch's instructions after the decisions made so far."""

    def __init__(self, index: int | None, message: str):
        super().__init__(message)
        self.index = index  # the last decision made before the failure (None: before the first one)


def replay(sketch: Sketch, choose: Chooser) -> Replayed:
    """Apply the sketch's trace to a fresh schedule of its workload, asking `choose` at each decision point.

    `choose(point)` is called in program order; `point.choices` already holds the legal decisions given the
    earlier ones, and it must return a decision in TVM's encoding (an illegal one is silently repaired by
    TVM; callers that accept outside input validate with `point.check` first).
    Exceptions raised by `choose` propagate unchanged; a TVM failure raises ReplayError.
    """
    sch = Schedule(sketch.workload)
    points: list[DecisionPoint] = []
    decisions: list[Decision] = []
    raised: list[BaseException] = []
    inst_index = -1

    def provider(inst: Any, inputs: list[Any], attrs: list[Any], decision: Any) -> Any:
        nonlocal inst_index
        inst_index += 1
        name = inst.kind.name
        kind = KIND_OF_INSTRUCTION.get(name)
        if kind is None:
            if name.startswith("Sample"):
                raised.append(NotImplementedError(f"sampling instruction {name} is not supported"))
                raise raised[-1]
            return decision
        try:
            point = _decision_point(sch, sketch, kind, len(points), inst_index, inputs, attrs, decision)
            choice = point.normalize(choose(point))  # plain ints and tuples, whatever the chooser returns
        except BaseException as err:  # TVM's callback bridge would lose the type: keep it for re-raising
            raised.append(err)
            raise
        points.append(point)
        decisions.append(choice)
        return list(choice) if isinstance(choice, tuple) else choice

    try:
        sketch.trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=provider)
    except Exception as err:
        if raised:
            raise raised[0] from None
        last = len(points) - 1 if points else None
        raise ReplayError(last, f"TVM could not apply the sketch: {first_line(err)}") from err
    return Replayed(sch, points, decisions)


def trace_decisions(trace: Trace) -> list[Decision]:
    """The sampling decisions recorded in a trace, in program order, in TVM's encoding."""
    out: list[Decision] = []
    for inst in trace.insts:
        if inst.kind.name in KIND_OF_INSTRUCTION:
            out.append(decode(trace.get_decision(inst)))
    return out


def decode(decision: Any) -> Decision:
    """A TVM decision (Array of ints, or int) as a tuple or an int."""
    if hasattr(decision, "__len__"):
        return tuple(int(x) for x in decision)
    return int(decision)


def _decision_point(
    sch: Schedule,
    sketch: Sketch,
    kind: str,
    index: int,
    inst_index: int,
    inputs: list[Any],
    attrs: list[Any],
    decision: Any,
) -> DecisionPoint:
    sampled = decode(decision)
    if kind == TILE:
        loop = sch.get(inputs[0])
        extent = int(loop.extent) if isinstance(loop.extent, tirx.IntImm) else None
        n, max_innermost = int(attrs[0]), int(attrs[1])
        # A loop without a constant extent has one outcome: TVM's fixed (-1, 1, ..., 1).
        choices: list[Decision] = list(perfect_tilings(extent, n, max_innermost)) if extent else [sampled]
        return DecisionPoint(
            index,
            inst_index,
            kind,
            _first_block(loop),
            choices,
            sampled,
            loop=loop.loop_var.name,
            extent=extent,
            n=n,
            max_innermost_factor=max_innermost,
        )
    if kind == CATEGORICAL:
        candidates = tuple(int(c) for c in attrs[0])
        used_by, block = sketch.uses.get(inst_index, (None, None))
        return DecisionPoint(
            index,
            inst_index,
            kind,
            block,
            list(range(len(candidates))),
            sampled,
            candidates=candidates,
            probs=tuple(float(getattr(p, "value", p)) for p in attrs[1]),
            used_by=used_by,
        )
    assert kind == COMPUTE_LOCATION
    choices, consumer, loops = _legal_compute_locations(sch, inputs[0])
    return DecisionPoint(
        index,
        inst_index,
        kind,
        sch.get(inputs[0]).name_hint,
        choices,
        sampled,
        consumer=consumer,
        consumer_loops=loops,
    )


def _legal_compute_locations(sch: Schedule, block_rv: Any) -> tuple[list[Decision], str | None, tuple[str, ...]]:
    """The legal compute locations of a block right now: -2 (inline), -1 (root), or a consumer loop index.

    TVM does not expose its candidate list, but `sample_compute_location(block, decision=d)` keeps a
    legal d and snaps an illegal one to the largest legal location below it (-1, root, is always legal).
    So probe on a copy (sampling does not change the IR, and the copy keeps the replayed trace clean)
    from the deepest candidate down: each probe lands on the next legal location.
    """
    probe = sch.copy()
    consumers = probe.get_consumers(block_rv)
    loop_names: tuple[str, ...] = ()
    if consumers:
        loop_names = tuple(probe.get(lp).loop_var.name for lp in probe.get_loops(consumers[0]))
    legal: list[Decision] = []
    candidate = len(loop_names) - 1  # TVM's candidates are loops of the first consumer
    while candidate >= -2:
        got = _probe_compute_location(probe, block_rv, candidate)
        if got > candidate:  # only when -2 (inline) is illegal: TVM falls back to root
            break
        legal.append(got)
        candidate = got - 1
    consumer = probe.get(consumers[0]).name_hint if consumers else None
    return sorted(legal), consumer, loop_names


def _probe_compute_location(probe: Schedule, block_rv: Any, decision: int) -> int:
    """The location TVM settles on when asked for `decision` (equal to it exactly when it is legal)."""
    probe.sample_compute_location(block_rv, decision=decision)
    trace = probe.trace
    return int(trace.get_decision(trace.insts[-1]))


def _first_block(stmt: Any) -> str | None:
    """The name of the first block nested in a loop (the block whose iteration the loop drives)."""
    while stmt is not None:
        if isinstance(stmt, SBlockRealize):
            return stmt.block.name_hint
        if isinstance(stmt, tirx.SeqStmt):
            stmt = stmt.seq[0] if len(stmt.seq) else None
        else:
            stmt = getattr(stmt, "body", None)
    return None
