"""A method's row on one task (MethodResult), the methods' names and labels, and what builds a row: from a
measurement, a trace as text, a whole trace matched back to the space's (sketch, decisions).

subgraph.py runs the methods; database.py makes the row of a user's database; results.py keeps the rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlm_core.measure import MeasureResult
from tlm_core.space import Decision, Space, decision_to_json

METHODS = ("default", "heuristic", "heuristic-top-k", "tlm", "tlm-best-of-k", "search", "database")
LABELS = {
    "default": "TVM default (no tuning)",
    "heuristic": "Roller-style heuristic, Top-1",
    "heuristic-top-k": "Roller-style heuristic, Top-k (measured)",
    "tlm": "TLM, top-1 (greedy)",
    "tlm-best-of-k": "TLM, best of k (beam, measured)",
    "search": "Ansor-style evolutionary search, MetaSchedule implementation",
    "database": "your MetaSchedule database (re-measured here)",
}


@dataclass
class MethodResult:
    task_id: str
    method: str  # one of METHODS
    label: str
    ok: bool  # a program was found, built, ran and matched the reference
    latency: float | None = None  # seconds, median of the Measurer's repeats
    gflops: float | None = None
    compile_s: float = 0.0  # time to choose the schedule (see the module docstring)
    trials: int = 0  # programs measured to choose it
    error: str | None = None
    max_rel_error: float | None = None  # vs the untuned reference (None: checked inside a search trial)
    sketch_index: int | None = None  # None for the untuned default and foreign traces
    decisions: list[Decision] | None = None
    trace: str | None = None  # the MetaSchedule trace as Python text
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. search: convergence; best-of-k: every latency
    mod: Any = field(default=None, repr=False, compare=False)  # the scheduled program, to measure it again
    side_by_side: float | None = None  # seconds: measured again beside the other methods' programs (side_by_side)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly, with the CLI's key names (latency_s, compile_s)."""
        return {
            "id": self.task_id,
            "method": self.method,
            "label": self.label,
            "ok": self.ok,
            "latency_s": self.latency,
            "gflops": self.gflops,
            "compile_s": self.compile_s,
            "trials": self.trials,
            "error": self.error,
            "max_rel_error": self.max_rel_error,
            "sketch": self.sketch_index,
            "decisions": None if self.decisions is None else [decision_to_json(d) for d in self.decisions],
            "side_by_side_s": self.side_by_side,
            **self.extra,
        }


def from_measurement(space: Space, method: str, result: MeasureResult, **fields: Any) -> MethodResult:
    label = fields.pop("label", LABELS[method])
    return MethodResult(
        task_id=space.task.id,
        method=method,
        label=label,
        ok=result.ok,
        latency=result.latency,
        gflops=result.gflops,
        error=result.error,
        max_rel_error=result.max_rel_error,
        **fields,
    )


def trace_text(trace: Any) -> str | None:
    return None if trace is None else "\n".join(str(line) for line in trace.as_python())


def match_trace(space: Space, trace: Any) -> tuple[int, list[Decision]] | None:
    """(sketch index, decisions) of the space that give the same program as a whole trace (a search's or a
    database's), or None (see tlm_core.dataset.traces.SketchMatcher)."""
    from tlm_core.dataset.traces import SketchMatcher, trace_json

    return SketchMatcher(space).match(trace_json(trace))
