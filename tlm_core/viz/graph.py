"""The partitioned graph as a layered top-to-bottom DAG of fused subgraphs."""

from __future__ import annotations

import networkx as nx
import plotly.graph_objects as go

from tlm_core.partition import KINDS

COLORS = dict(
    zip(
        KINDS,
        ["#d62728", "#1f77b4", "#9467bd", "#8c564b", "#17becf", "#2ca02c", "#ff7f0e", "#7f7f7f", "#bcbd22"],
        strict=True,
    )
)


FADED = "#e3e3e3"


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


def _hover(node: int, data: dict) -> str:
    ins = "<br>".join(f"  {i['from']}: {i['shape']} {i['dtype']}" for i in data["inputs"])
    outs = "<br>".join(f"  {o['shape']} {o['dtype']}" for o in data["outputs"])
    return (
        f"<b>#{node} {data['func']}</b><br>kind: {data['kind']}  task: {data['task']}<br>"
        f"ops: {' + '.join(data['ops'])}<br>FLOPs: {data['flops']:,.0f}<br>in:<br>{ins}<br>out:<br>{outs}"
    )


def graph_figure(
    graph: nx.DiGraph, selected: int | None = None, height: int | None = None, highlight: set[int] | None = None
) -> go.Figure:
    """Nodes coloured by kind, the selected one enlarged; with `highlight`, the other nodes are greyed out."""
    pos = layered_positions(graph)
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
                customdata=nodes,
                marker={
                    "size": [16 if n == selected else 11 for n in nodes],
                    "color": [
                        COLORS[kind] if highlight is None or n in highlight or n == selected else FADED for n in nodes
                    ],
                    "line": {"width": [3 if n == selected else 0 for n in nodes], "color": "black"},
                },
                unselected={"marker": {"opacity": 1.0}},  # a click picks a node; it must not fade the others
                hovertext=[_hover(n, graph.nodes[n]) for n in nodes],
                hoverinfo="text",
            )
        )
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
