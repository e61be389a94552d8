"""Best-of-k on a noisy machine: the few fastest candidates of a first measurement are measured again, in one
batch, and the fastest of that second measurement wins.

The minimum of k single measurements favours a lucky one (the more so the larger k): on this shared machine
one program measured 40 ms once and 0.15 ms in the next batch. The second measurement does not know which
candidate the first one favoured, so the winner's latency is an honest one. The one rule for every measured
best-of-k: the TLM's candidates, the heuristic's Top-k, a search's best records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tlm_core.measure.result import MeasureResult

SCREEN = 3  # candidates measured again: the first measurement's fastest


@dataclass
class Screened:
    pick: int | None  # the winner's index among the candidates (None: none passed)
    again: dict[int, MeasureResult] = field(default_factory=dict)  # candidate index -> its second measurement

    def latency(self, first: list[float | None]) -> float | None:
        """The winner's latency: its second measurement when it had one."""
        if self.pick is None:
            return None
        return self.again[self.pick].latency if self.pick in self.again else first[self.pick]


def fastest_again(task: Any, mods: list, first: list[float | None], measurer: Any, screen: int = SCREEN) -> Screened:
    """Measure the `screen` fastest of `mods` by their `first` latencies (None: failed) again; the fastest of
    those that pass again wins. A single passing candidate wins without a second measurement."""
    ranked = sorted((x, i) for i, x in enumerate(first) if x is not None)[:screen]
    if len(ranked) <= 1:
        return Screened(ranked[0][1] if ranked else None)
    chosen = [i for _, i in ranked]
    again = dict(zip(chosen, measurer.measure(task, [mods[i] for i in chosen]), strict=True))
    passed = [i for i in chosen if again[i].ok and again[i].latency is not None]
    return Screened(min(passed, key=lambda i: again[i].latency) if passed else None, again)
