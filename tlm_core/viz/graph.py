"""The partitioned graph as a layered top-to-bottom DAG of fused subgraphs."""

from __future__ import annotations

import math
from collections.abc import Callable

import networkx as nx
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from tlm_core.partition import KINDS

COLORS = dict(
    zip(
        KINDS,
        ["#d62728", "#1f77b4", "#9467bd", "#8c564b", "#17becf", "#2ca02c", "#ff7f0e", "#7f7f7f", "#bcbd22"],
        strict=True,
    )
)


FADED = "#e3e3e3"
NO_RESULT = "#c8c8c8"  # overlay: a node whose task has no measured result yet
OVERLAYS = {  # metric -> (colour scale, legend title, the value in words)
    "latency": ("Viridis", "latency (µs, log)", lambda v: f"{v * 1e6:,.1f} µs"),
    "speedup": ("RdYlGn", "speedup vs default (log)", lambda v: f"{v:.2f}× vs TVM default"),
}


def _overlay_scale(values: dict[int, float], metric: str) -> tuple[float, float, Callable[[float], float]]:
    """(lo, hi, position) on a log scale; speedups centred on 1 so that red is slower and green faster."""
    logs = [math.log10(v) for v in values.values() if v > 0]
    if metric == "speedup":
        span = max([abs(x) for x in logs] + [0.1])
        lo, hi = -span, span
    else:
        lo, hi = (min(logs), max(logs)) if logs else (0.0, 1.0)
        hi = hi if hi > lo else lo + 1.0
    return lo, hi, lambda v: (math.log10(v) - lo) / (hi - lo)


def layered_positions(graph: nx.DiGraph) -> dict[int, tuple[float, float]]:
    """Layer = longest path from a source (so every edge points down); nodes centred within a layer."""
    depth: dict[int, int] = {}
    for node in nx.topological_sort(graph):
        depth[node] = max((depth[p] + 1 for p in graph.predecessors(node)), default=0)
    layers: dict[int, list[int]] = {}
    for node, d in depth.items():
        layers.setdefault(d, []).append(node)
    pos = {}
    for d, nodes in layers.items():
        for i, node in enumerate(sorted(nodes)):
            pos[node] = (i - (len(nodes) - 1) / 2, -d)
    return pos


def _hover(node: int, data: dict, values: dict[int, float] | None = None, metric: str = "latency") -> str:
    ins = "<br>".join(f"  {i['from']}: {i['shape']} {i['dtype']}" for i in data["inputs"])
    outs = "<br>".join(f"  {o['shape']} {o['dtype']}" for o in data["outputs"])
    text = (
        f"<b>#{node} {data['func']}</b><br>kind: {data['kind']}  task: {data['task']}<br>"
        f"ops: {' + '.join(data['ops'])}<br>FLOPs: {data['flops']:,.0f}<br>in:<br>{ins}<br>out:<br>{outs}"
    )
    if values is not None:
        text += f"<br>{metric}: " + (OVERLAYS[metric][2](values[node]) if node in values else "not measured yet")
    return text


def graph_figure(
    graph: nx.DiGraph,
    selected: int | None = None,
    height: int | None = None,
    highlight: set[int] | None = None,
    values: dict[int, float] | None = None,
    metric: str = "latency",
) -> go.Figure:
    """Nodes coloured by kind, the selected one enlarged; with `highlight`, the other nodes are greyed out.

    With `values` (node -> latency in seconds, or speedup, by `metric`), nodes are coloured by that value
    instead, and nodes without one are grey: an overlay of measured results."""
    pos = layered_positions(graph)

    def kind_color(n: int, kind: str) -> str:
        return COLORS[kind] if highlight is None or n in highlight or n == selected else FADED

    color_of = None
    if values is not None:
        scale, title, _ = OVERLAYS[metric]
        lo, hi, at = _overlay_scale(values, metric)

        def color_of(n: int) -> str:
            v = values.get(n)
            return NO_RESULT if v is None or v <= 0 else sample_colorscale(scale, [min(1.0, max(0.0, at(v)))])[0]

    ex, ey = [], []
    for a, b in graph.edges:
        ex += [pos[a][0], pos[b][0], None]
        ey += [pos[a][1], pos[b][1], None]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=ex, y=ey, mode="lines", line={"color": "#bbb", "width": 1}, hoverinfo="skip", showlegend=False)
    )
    for kind in KINDS:
        nodes = [n for n, d in graph.nodes(data=True) if d["kind"] == kind]
        if not nodes:
            continue
        fig.add_trace(
            go.Scatter(
                x=[pos[n][0] for n in nodes],
                y=[pos[n][1] for n in nodes],
                mode="markers",
                name=kind,
                showlegend=values is None,  # with an overlay, colour means the value, not the kind
                customdata=nodes,
                marker={
                    "size": [16 if n == selected else 11 for n in nodes],
                    "color": [color_of(n) if color_of else kind_color(n, kind) for n in nodes],
                    "line": {"width": [3 if n == selected else 0 for n in nodes], "color": "black"},
                },
                unselected={"marker": {"opacity": 1.0}},  # a click picks a node; it must not fade the others
                hovertext=[_hover(n, graph.nodes[n], values, metric) for n in nodes],
                hoverinfo="text",
            )
        )
    if values:  # the colour scale's legend: one invisible point carrying the colour bar
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                showlegend=False,
                hoverinfo="skip",
                marker={"color": [lo], "cmin": lo, "cmax": hi, "colorscale": scale, "showscale": True,
                        "colorbar": {"title": {"text": title}, "tickvals": _ticks(lo, hi),
                                     "ticktext": [_tick_text(t, metric) for t in _ticks(lo, hi)]}},
            )
        )  # fmt: skip
    depth = -min((y for _, y in pos.values()), default=0) + 1
    fig.update_layout(
        height=height or int(min(4000, max(400, 28 * depth))),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"visible": False},
        yaxis={"visible": False},
        legend={"orientation": "h"},
        clickmode="event+select",
        dragmode="pan",
    )
    return fig


def _ticks(lo: float, hi: float) -> list[float]:
    return [lo + (hi - lo) * i / 4 for i in range(5)]


def _tick_text(log_value: float, metric: str) -> str:
    v = 10**log_value
    return f"{v:.2g}×" if metric == "speedup" else f"{v * 1e6:.3g} µs"
