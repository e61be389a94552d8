"""The loop nest of a (scheduled) PrimFunc: one row per loop or block, drawn as a nested staircase."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import tvm
from tvm import tirx
from tvm.s_tir import SBlockRealize

LOOP_KINDS = ("serial", "parallel", "vectorized", "unrolled", "thread", "block")
KIND_COLORS = {
    "serial": "#9ecae1",
    "parallel": "#d62728",
    "vectorized": "#2ca02c",
    "unrolled": "#ff7f0e",
    "thread": "#9467bd",
    "block": "#d9d9d9",
}
_FOR_KINDS = {
    tirx.ForKind.SERIAL: "serial",
    tirx.ForKind.PARALLEL: "parallel",
    tirx.ForKind.VECTORIZED: "vectorized",
    tirx.ForKind.UNROLLED: "unrolled",
    tirx.ForKind.THREAD_BINDING: "thread",
}


@dataclass
class LoopRow:
    depth: int  # nesting depth (0 = outermost)
    name: str  # loop variable or block name
    kind: str  # one of LOOP_KINDS
    extent: int | None = None  # loops: trip count (None when not a constant)
    note: str = ""  # annotations worth showing, e.g. "auto-unroll ≤ 512"

    def label(self) -> str:
        if self.kind == "block":
            return f"block {self.name}"
        extent = "?" if self.extent is None else self.extent
        tag = "" if self.kind == "serial" else f" · {self.kind}"
        return f"{self.name} × {extent}{tag}"


def loop_nest(func: tirx.PrimFunc | tvm.IRModule) -> list[LoopRow]:
    """Loops and blocks in program order (pre-order), with their depth. The root block is looked through."""
    if isinstance(func, tvm.IRModule):
        func = func["main"]
    rows: list[LoopRow] = []
    _walk(func.body, 0, rows)
    return rows


def _walk(stmt: Any, depth: int, rows: list[LoopRow]) -> None:
    if stmt is None:
        return
    if isinstance(stmt, tirx.For):
        extent = int(stmt.extent) if isinstance(stmt.extent, tirx.IntImm) else None
        rows.append(LoopRow(depth, stmt.loop_var.name, _FOR_KINDS.get(stmt.kind, "serial"), extent, _note(stmt)))
        _walk(stmt.body, depth + 1, rows)
    elif isinstance(stmt, SBlockRealize):
        block = stmt.block
        inner = depth
        if block.name_hint != "root":
            rows.append(LoopRow(depth, block.name_hint, "block", note=_note(block)))
            inner = depth + 1
        if block.init is not None:
            _walk(block.init, inner, rows)
        _walk(block.body, inner, rows)
    elif isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            _walk(s, depth, rows)
    elif isinstance(stmt, tirx.IfThenElse):
        _walk(stmt.then_case, depth, rows)
        _walk(stmt.else_case, depth, rows)
    else:
        _walk(getattr(stmt, "body", None), depth, rows)


def _note(node: Any) -> str:
    ann = dict(node.annotations or {})
    parts = []
    if "pragma_auto_unroll_max_step" in ann:
        parts.append(f"auto-unroll ≤ {int(ann['pragma_auto_unroll_max_step'])}")
    for key, value in ann.items():
        if key.startswith("meta_schedule.") and key != "meta_schedule.tiling_structure":
            parts.append(f"{key.removeprefix('meta_schedule.')} = {value}")
    return ", ".join(parts)


def loop_nest_figure(rows: list[LoopRow], height: int | None = None) -> go.Figure:
    """Each row a bar from its depth to the right edge: nesting reads as a staircase, colour = loop kind."""
    right = max((r.depth for r in rows), default=0) + 4
    fig = go.Figure()
    for kind in LOOP_KINDS:
        idx = [i for i, r in enumerate(rows) if r.kind == kind]
        if not idx:
            continue
        fig.add_trace(
            go.Bar(
                orientation="h",
                name=kind,
                y=idx,
                base=[rows[i].depth for i in idx],
                x=[right - rows[i].depth for i in idx],
                width=[0.85] * len(idx),  # one row each (Plotly would size bars by the trace's own spacing)
                marker={"color": KIND_COLORS[kind], "line": {"width": 0.5, "color": "white"}},
                text=[rows[i].label() + (f"  ({rows[i].note})" if rows[i].note else "") for i in idx],
                textposition="inside",
                insidetextanchor="start",
                textfont={"size": 11, "color": "black"},
                hovertext=[_hover(rows[i]) for i in idx],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        barmode="overlay",
        bargap=0.08,
        height=height or max(220, 22 * len(rows) + 70),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"visible": False, "range": [0, right]},
        yaxis={"visible": False, "autorange": "reversed"},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom"},
        uniformtext={"minsize": 8, "mode": "show"},
    )
    return fig


def _hover(row: LoopRow) -> str:
    text = f"<b>{row.label()}</b><br>depth {row.depth}"
    return text + (f"<br>{row.note}" if row.note else "")
