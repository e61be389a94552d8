"""Views of a schedule space: decision-point tables, the tiling grid of a decision vector, and the editor's chooser."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import plotly.graph_objects as go

from tlm_core.space import CATEGORICAL, COMPUTE_LOCATION, TILE, Decision, DecisionPoint, Replayed, Sketch, replay

_GET_BLOCK = re.compile(r'^(\w+) = sch\.get_sblock\(name="([^"]+)"')
_ANNOTATE = re.compile(r'^sch\.annotate\(block_or_loop=(\w+), ann_key="meta_schedule\.(\w+)", ann_val=("?)([^")]*)\3\)')


def points_table(points: list[DecisionPoint], decisions: list[Decision] | None = None) -> list[dict]:
    """One row per decision point: what it decides, how many choices are legal, TVM's sample and the chosen one."""
    rows = []
    for p in points:
        row = {
            "#": p.index,
            "kind": p.kind,
            "decides": p.title(),
            "block": p.block,
            "loop": p.loop if p.kind == TILE else (p.consumer if p.kind == COMPUTE_LOCATION else None),
            "extent": p.extent,
            "legal choices": len(p.choices),
            "sampled": p.describe(p.sampled),
        }
        if decisions is not None:
            row["chosen"] = p.describe(decisions[p.index])
        rows.append(row)
    return rows


def choices_table(point: DecisionPoint, limit: int = 5000) -> list[dict]:
    """The legal choices of one point (TVM's encoding and in words), the sampled one marked."""
    rows = []
    for c in point.choices[:limit]:
        row = {"choice": point.describe(c), "encoding": str(list(c) if isinstance(c, tuple) else c)}
        if point.kind == CATEGORICAL and point.probs:
            row["TVM probability"] = point.probs[c]  # type: ignore[index]
        row["sampled"] = c == point.sampled
        rows.append(row)
    return rows


def sketch_annotations(sketch: Sketch) -> dict[str, dict[str, str]]:
    """meta_schedule.* annotations the sketch's trace puts on blocks: {block: {"tiling_structure": "SSRSRS", ...}}.

    Values that are sampled (e.g. unroll_explicit = v60) are kept as the variable's name.
    """
    blocks: dict[str, str] = {}
    out: dict[str, dict[str, str]] = {}
    for line in sketch.trace.as_python(remove_postproc=True):
        line = str(line)
        if m := _GET_BLOCK.match(line):
            blocks[m.group(1)] = m.group(2)
        elif m := _ANNOTATE.match(line):
            block = blocks.get(m.group(1), m.group(1))
            out.setdefault(block, {})[m.group(2)] = m.group(4)
    return out


def replay_with(sketch: Sketch, wanted: dict[int, Decision | str]) -> Replayed:
    """Replay the sketch taking `wanted[i]` at point i (a decision, or its label from `point.describe`) when it
    is still legal there, else TVM's sample (when legal), else the first legal choice. Legal choices of compute
    locations depend on earlier decisions, so this is how an editor keeps a vector legal after any change."""

    def choose(point: DecisionPoint) -> Decision:
        want = wanted.get(point.index)
        if isinstance(want, str):
            want = next((c for c in point.choices if point.describe(c) == want), None)
        for candidate in (want, point.sampled):
            if candidate is not None and candidate in point.choices:
                return candidate
        return point.choices[0]

    return replay(sketch, choose)


@dataclass
class TilingRow:
    block: str | None
    loop: str | None
    extent: int | None
    role: str  # "S" (spatial), "R" (reduction) or "?" (no tiling structure known)
    factors: tuple[int, ...]
    columns: list[int] = field(default_factory=list)  # position of each factor in the nest, outer to inner


@dataclass
class TilingGrid:
    rows: list[TilingRow]
    levels: list[str]  # column labels, outer to inner, e.g. ["S0", "S1", "R0", "S2", "R1", "S3"]

    def cell(self, row: int, column: int) -> int | None:
        r = self.rows[row]
        return r.factors[r.columns.index(column)] if column in r.columns else None


def tiling_grid(sketch: Sketch, points: list[DecisionPoint], decisions: list[Decision]) -> TilingGrid:
    """Where each tile factor lands in the final loop nest.

    Multi-level tiling interleaves spatial and reduction tiles by the block's tiling structure (on CPU
    "SSRSRS": two spatial levels, a reduction level, a spatial, a reduction, a spatial). A loop's k-th factor
    goes to the k-th level of its role. Tiles without a structure (e.g. rfactor splits) fill levels L0, L1, ...
    """
    structures = {b: a["tiling_structure"] for b, a in sketch_annotations(sketch).items() if "tiling_structure" in a}
    levels: list[str] = []
    rows: list[TilingRow] = []
    for p in points:
        if p.kind != TILE:
            continue
        factors = tuple(decisions[p.index])  # type: ignore[arg-type]
        structure = structures.get(p.block or "")
        role = _role(p, structure, sketch) if structure else "?"
        if role == "?":
            labels = [f"L{k}" for k in range(len(factors))]
        else:
            labels = [f"{role}{k}" for k in range(len(factors))]
            for k, letter in enumerate(structure or ""):
                name = f"{letter}{structure[:k].count(letter)}"  # type: ignore[index]
                if name not in levels:
                    levels.append(name)
        for label in labels:
            if label not in levels:
                levels.append(label)
        rows.append(TilingRow(p.block, p.loop, p.extent, role, factors, [levels.index(x) for x in labels]))
    return TilingGrid(rows, levels)


def _role(point: DecisionPoint, structure: str, sketch: Sketch) -> str:
    n_s, n_r = structure.count("S"), structure.count("R")
    if point.n == n_s and n_s != n_r:
        return "S"
    if point.n == n_r and n_s != n_r:
        return "R"
    kinds = _iter_kinds(sketch, point.block)
    return kinds.get(f"v_{point.loop}", "?")


def _iter_kinds(sketch: Sketch, block_name: str | None) -> dict[str, str]:
    from tvm.s_tir import Schedule

    sch = Schedule(sketch.workload)
    try:
        block = sch.get(sch.get_sblock(block_name))
    except Exception:
        return {}
    return {iv.var.name: ("R" if int(iv.iter_type) == 2 else "S") for iv in block.iter_vars}


def tiling_figure(grid: TilingGrid) -> go.Figure:
    """A heat map: rows = tiled loops, columns = tile levels outer to inner, cell = the factor (colour: log2)."""
    z, text, hover = [], [], []
    for i, row in enumerate(grid.rows):
        zr, tr, hr = [], [], []
        for j, level in enumerate(grid.levels):
            f = grid.cell(i, j)
            zr.append(None if f is None else math.log2(f))
            tr.append("" if f is None else str(f))
            hr.append(
                ""
                if f is None
                else f"loop {row.loop} (extent {row.extent}) of {row.block}<br>level {level}: factor {f}"
                f"<br>all factors {list(row.factors)}"
            )
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=grid.levels,
            y=[f"{r.loop} ({r.extent}) · {r.role}" for r in grid.rows],
            text=text,
            texttemplate="%{text}",
            hovertext=hover,
            hoverinfo="text",
            colorscale="Blues",
            zmin=0,
            showscale=False,
            xgap=2,
            ygap=2,
        )
    )
    fig.update_layout(
        height=max(180, 32 * len(grid.rows) + 60),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"side": "top", "title": None},
        yaxis={"autorange": "reversed"},
    )
    return fig


def decision_labels(point: DecisionPoint) -> list[str]:
    """A point's legal choices in words (unique per choice), for a selectbox; `replay_with` takes them back."""
    return [point.describe(c) for c in point.choices]
