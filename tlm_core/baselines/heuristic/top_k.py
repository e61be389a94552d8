"""Top-k: the model's k best candidates measured, the fastest few again (no measurement anywhere else)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ...space import Space
from ..hardware import Hardware
from .candidates import heuristic_candidates
from .construction import Candidate


@dataclass
class Measured:
    candidate: Candidate
    result: Any  # MeasureResult
    again: Any = None  # its second MeasureResult, when it was among the fastest (tlm_core.measure.screen)

    @property
    def latest(self) -> Any:
        return self.result if self.again is None else self.again


def heuristic_top_k(
    space: Space, measurer: Any, k: int = 10, hw: Hardware | None = None
) -> tuple[list[Measured], float]:
    """Top-k: the model's k best candidates, measured, the fastest few again. Returns (measured: the winner
    first, then by first measurement; seconds spent)."""
    from tlm_core.measure import fastest_again

    start = time.perf_counter()
    cands = heuristic_candidates(space, k=k, hw=hw)
    mods = [c.program.mod for c in cands]
    results = measurer.measure(space.task, mods)
    screened = fastest_again(space.task, mods, [r.latency if r.ok else None for r in results], measurer)
    measured = [Measured(c, r, screened.again.get(i)) for i, (c, r) in enumerate(zip(cands, results, strict=True))]
    order = sorted(range(len(measured)), key=lambda i: (i != screened.pick, not results[i].ok,
                                                        results[i].latency or math.inf))  # fmt: skip
    return [measured[i] for i in order], time.perf_counter() - start
