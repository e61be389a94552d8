"""The Space Builder: a task's complete legal schedule space under MetaSchedule's default rules."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm.s_tir import Schedule
from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from ..errors import first_line
from ..partition.task import Task
from ..target import target_to_dict
from .decision import KIND_OF_INSTRUCTION, Decision, DecisionPoint
from .replay import replay
from .sketch import Sketch
from .startup import import_tensor_intrinsics


@dataclass
class Space:
    task: Task
    target: Target
    sketches: list[Sketch]
    postprocs: list[Any] = field(repr=False, default_factory=list)  # the target's postprocessors, initialised
    seconds: float = 0.0  # time to build the space

    @property
    def log10_size(self) -> float:
        """log10 of the total number of decision vectors: the sum over sketches."""
        sizes = [s.log10_size for s in self.sketches]
        top = max(sizes)
        return top + math.log10(sum(10 ** (s - top) for s in sizes))

    @property
    def num_points(self) -> int:
        return sum(len(s.points) for s in self.sketches)

    def to_dict(self, with_choices: bool = False) -> dict[str, Any]:
        """JSON-friendly; the legal choices of every point only when asked (a conv's run to megabytes)."""
        return {
            "task": {"id": self.task.id, "name": self.task.name, "ops": self.task.ops, "flops": self.task.flops},
            "target": target_to_dict(self.target),
            "log10_size": self.log10_size,
            "seconds": self.seconds,
            "postprocs": [type(p).__name__ for p in self.postprocs],
            "sketches": [s.to_dict(with_choices) for s in self.sketches],
        }


class SpaceBuilder:
    """Builds spaces for one target. Create it once per (process, target): see `for_target`.

    The first builder in a process imports TVM's tensor intrinsics (what the first TuneContext would), a few
    seconds (see startup.py); each task then takes milliseconds plus the replay that enumerates compute locations.
    """

    _cache: dict[str, SpaceBuilder] = {}
    _lock = threading.Lock()

    def __init__(self, target: Target, rules: str | None = None, seed: int = 0):
        """rules: MetaSchedule's rule set name ("llvm", "cuda", "cuda-tensorcore", ...); default: the
        target's kind. seed: TVM's sampling seed, so a task's sketches (and their sampled decisions) are
        the same on every build."""
        import_tensor_intrinsics()
        self.target = target
        self.rules = rules or _rules_for(target)
        self.seed = seed
        self._generator = ms.space_generator.PostOrderApply(
            sch_rules=self.rules, postprocs=self.rules, mutator_probs=self.rules
        )

    @classmethod
    def for_target(cls, target: Target, rules: str | None = None) -> SpaceBuilder:
        """The process-wide builder of a target (so the start-up cost is paid once)."""
        key = f"{target}|{rules}"
        with cls._lock:
            if key not in cls._cache:
                cls._cache[key] = cls(target, rules)
            return cls._cache[key]

    def build(self, task: Task) -> Space:
        """Every sketch of the task's design space, each with its decision points and their legal choices."""
        start = time.perf_counter()
        ctx = ms.TuneContext(
            mod=task.mod,
            target=self.target,
            space_generator=self._generator.clone(),  # each context initialises its own copy of the rules
            task_name=task.name,
            rand_state=self.seed,
            num_threads=1,  # only search uses threads
        )
        try:
            schedules = ctx.generate_design_space()
        except Exception as err:
            raise RuntimeError(
                f"MetaSchedule could not generate the design space of task {task.name} ({task.id}) "
                f"for {self.rules}: {first_line(err)}"
            ) from err
        if not schedules:
            raise RuntimeError(f"MetaSchedule generated no design space for task {task.name} ({task.id})")
        sketches = [sketch_from_schedule(i, sch, task.mod) for i, sch in enumerate(schedules)]
        postprocs = list(ctx.space_generator.postprocs)
        return Space(task, self.target, sketches, postprocs, time.perf_counter() - start)


def _rules_for(target: Target) -> str:
    kind = target.kind.name
    if kind in ("llvm", "cuda"):
        return kind
    raise ValueError(f"no default MetaSchedule rules for target kind {kind!r}: pass rules=...")


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
