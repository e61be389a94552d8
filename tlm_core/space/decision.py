"""A decision point: one sampling instruction of a sketch, with every choice that is legal there."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

# A decision in TVM's own encoding: a tile is a tuple of factors, a categorical is an index into its
# candidates, a compute location is -2 (inline), -1 (root) or the index of a loop of the first consumer.
Decision = tuple[int, ...] | int

TILE = "tile"
CATEGORICAL = "categorical"
COMPUTE_LOCATION = "compute_location"

# MetaSchedule's sampling instruction kinds -> our kinds.
KIND_OF_INSTRUCTION = {
    "SamplePerfectTile": TILE,
    "SampleCategorical": CATEGORICAL,
    "SampleComputeLocation": COMPUTE_LOCATION,
}


@dataclass
class DecisionPoint:
    index: int  # position among the sketch's decision points (the decision vector's index)
    inst_index: int  # position of the sampling instruction in the sketch's trace
    kind: str  # TILE | CATEGORICAL | COMPUTE_LOCATION
    block: str | None  # tile: first block under the loop; categorical: annotated block; location: the block
    choices: list[Decision]  # every legal decision here, given the decisions before it
    sampled: Decision  # the decision TVM sampled in the sketch
    loop: str | None = None  # tile: the loop that is split
    extent: int | None = None  # tile: that loop's extent (None when it is not a constant)
    n: int | None = None  # tile: the number of factors
    max_innermost_factor: int | None = None  # tile: limit on the last factor; -1 = none
    candidates: tuple[int, ...] | None = None  # categorical: the values; a decision is an index into them
    probs: tuple[float, ...] | None = None  # categorical: TVM's sampling probabilities
    used_by: str | None = None  # categorical: what consumes the value, e.g. "meta_schedule.unroll_explicit"
    consumer: str | None = None  # compute location: the first consumer block, whose loops are counted
    consumer_loops: tuple[str, ...] = field(default_factory=tuple)  # compute location: their names

    @property
    def log10_size(self) -> float:
        return math.log10(len(self.choices))

    def title(self) -> str:
        """What this point decides, e.g. "tile of loop i, extent 128"."""
        if self.kind == TILE:
            return f"tile of loop {self.loop}, extent {self.extent}"
        if self.kind == CATEGORICAL:
            return f"{self._use_name()} of block {self.block}"
        return f"compute location of block {self.block}"

    def describe(self, choice: Decision) -> str:
        """A decision in words, e.g. "[2, 8, 2, 2]", "unroll_explicit = 64", "at loop j_1 of D"."""
        if self.kind == TILE:
            return str(list(choice))  # type: ignore[arg-type]
        if self.kind == CATEGORICAL:
            return f"{self._use_name()} = {self.candidates[choice]}"  # type: ignore[index]
        if choice == -2:
            return "inline"
        if choice == -1:
            return "root"
        loops = self.consumer_loops
        loop = loops[choice] if 0 <= choice < len(loops) else f"#{choice}"  # type: ignore[operator]
        return f"at loop {loop} of {self.consumer}"

    def _use_name(self) -> str:
        return (self.used_by or "categorical").removeprefix("meta_schedule.")

    def normalize(self, value: Any) -> Decision:
        """A decision from any reasonable spelling (lists, numpy ints, JSON) in TVM's encoding.

        Raises TypeError/ValueError when the value has the wrong shape for this kind.
        """
        if self.kind == TILE:
            if isinstance(value, (int, str)) or not hasattr(value, "__iter__"):
                raise TypeError(f"expected a list of {self.n} factors, got {value!r}")
            return tuple(_as_int(v) for v in value)
        return _as_int(value)

    def check(self, value: Any) -> str | None:
        """Why `value` is not legal here, or None when it is one of `choices`."""
        try:
            choice = self.normalize(value)
        except (TypeError, ValueError) as err:
            return str(err)
        if choice in self.choices:
            return None
        if self.kind == TILE:
            return self._tile_reason(choice)  # type: ignore[arg-type]
        if self.kind == CATEGORICAL:
            n = len(self.candidates or ())
            return f"index {choice} is out of range for {n} candidates {list(self.candidates or ())}"
        legal = ", ".join(f"{c} ({self.describe(c)})" for c in self.choices)
        return f"location {choice} is not legal for block {self.block}; legal: {legal}"

    def _tile_reason(self, factors: tuple[int, ...]) -> str:
        if len(factors) != self.n:
            return f"expected {self.n} factors, got {len(factors)}: {list(factors)}"
        if any(f < 1 for f in factors):
            return f"factors {list(factors)} must all be positive"
        if math.prod(factors) != self.extent:
            return f"factors {list(factors)} multiply to {math.prod(factors)}, not {self.extent}"
        if self.max_innermost_factor != -1 and factors[-1] > (self.max_innermost_factor or 0):
            return (
                f"innermost factor {factors[-1]} of {list(factors)} exceeds "
                f"max_innermost_factor {self.max_innermost_factor}"
            )
        return f"factors {list(factors)} are not a legal tiling here"

    def to_dict(self, with_choices: bool = True) -> dict[str, Any]:
        """JSON-friendly (tuples become lists); `with_choices=False` leaves out the (long) list of choices."""
        out: dict[str, Any] = {
            "index": self.index,
            "inst_index": self.inst_index,
            "kind": self.kind,
            "title": self.title(),
            "block": self.block,
            "num_choices": len(self.choices),
            "sampled": decision_to_json(self.sampled),
        }
        if with_choices:
            out["choices"] = [decision_to_json(c) for c in self.choices]
        if self.kind == TILE:
            out |= {"loop": self.loop, "extent": self.extent, "n": self.n}
            out["max_innermost_factor"] = self.max_innermost_factor
        elif self.kind == CATEGORICAL:
            out |= {"candidates": list(self.candidates or ()), "used_by": self.used_by}
            out["probs"] = list(self.probs or ())
        else:
            out |= {"consumer": self.consumer, "consumer_loops": list(self.consumer_loops)}
        return out


def _as_int(v: Any) -> int:
    if isinstance(v, bool) or not float(v).is_integer():
        raise ValueError(f"expected an integer, got {v!r}")
    return int(v)


def decision_to_json(d: Decision) -> list[int] | int:
    return list(d) if isinstance(d, tuple) else d
