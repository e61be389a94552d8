"""A decision-level diff of two schedules of the same task's space.

Same sketch: one row per decision point (what it decides, value A, value B, changed). Different sketches:
the programs differ in structure (e.g. one caches the output, the other does not), so their decision points
do not line up one to one; rows are matched by what the point decides where both sketches have it, and the
note says so plainly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tlm_core.space import Decision, Space


@dataclass
class DiffRow:
    point: str  # what the decision point decides, e.g. "tile of loop i, extent 128"
    a: str | None  # value in schedule A, in words (None: A's sketch has no such point)
    b: str | None
    changed: bool


@dataclass
class DecisionDiff:
    sketch_a: int
    sketch_b: int
    rows: list[DiffRow]

    @property
    def same_sketch(self) -> bool:
        return self.sketch_a == self.sketch_b

    @property
    def changed(self) -> int:
        return sum(r.changed for r in self.rows)

    @property
    def note(self) -> str:
        if self.same_sketch:
            return f"Both use sketch {self.sketch_a}: {self.changed} of {len(self.rows)} decisions differ."
        return (
            f"Different sketches (A: {self.sketch_a}, B: {self.sketch_b}): the programs differ in structure, not only "
            f"in decisions. Points are matched by what they decide; '-' marks a point only one sketch has. "
            f"{self.changed} of {len(self.rows)} rows differ."
        )

    def to_dict(self) -> dict:
        return {"sketch_a": self.sketch_a, "sketch_b": self.sketch_b, "same_sketch": self.same_sketch,
                "note": self.note, "rows": [r.__dict__ for r in self.rows]}  # fmt: skip


def _described(space: Space, sketch: int, decisions: list[Decision]) -> dict[tuple[str, int], str]:
    """(title, occurrence) -> decision in words, in program order (titles can repeat across blocks)."""
    points = space.sketches[sketch].points
    if len(decisions) != len(points):
        raise ValueError(f"sketch {sketch} has {len(points)} decision points, got {len(decisions)} decisions")
    seen: Counter[str] = Counter()
    out = {}
    for point, d in zip(points, decisions, strict=True):
        title = point.title()
        out[(title, seen[title])] = point.describe(d)
        seen[title] += 1
    return out


def decision_diff(space: Space, a: tuple[int, list[Decision]], b: tuple[int, list[Decision]]) -> DecisionDiff:
    """Diff schedule A = (sketch index, decisions) against B, both of `space`."""
    da, db = _described(space, *a), _described(space, *b)
    keys = list(da) + [k for k in db if k not in da]
    rows = []
    for key in keys:
        va, vb = da.get(key), db.get(key)
        title = key[0] if key[1] == 0 else f"{key[0]} (#{key[1] + 1})"
        rows.append(DiffRow(title, va, vb, va != vb))
    return DecisionDiff(a[0], b[0], rows)
