"""The partitioned graph as a layered top-to-bottom DAG of fused subgraphs, its repeated blocks collapsible.

Drawn as Model Explorer and Netron draw a network: a run of repeated blocks (tlm_core.viz.groups: BERT's layer
stack, a ResNet stage) is one labelled box ("layer ×12") until it is expanded; an expanded group is a frame
around what it holds, under a header (its title), and its copies are boxes in turn ("layer 3"). Calls are dots
coloured by kind (or by a measured value), labelled "#7 conv2d…relu" beside the dot, with every detail in the
hover. The current subgraph is always shown: the groups that hold it are expanded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import networkx as nx
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from tlm_core.partition import KINDS
from tlm_core.viz.groups import Group, all_groups, group_of, repeated_groups

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
GROUP_VALUE = {"latency": "sum", "speedup": "geomean"}  # how a box's value gathers its calls' values
EXPAND, COLLAPSE = "expand:", "collapse:"  # customdata of a box (click: expand) and of a header (click: collapse)
GROUPS_HELP = (
    "Repeated blocks found in the sequence of calls (the same tasks back to back: a layer stack, a ResNet stage). "
    "A click on a box expands it, on an expanded group's title collapses it; the groups holding the current "
    "subgraph are always open."
)

BOX_W = 1.6  # a collapsed group's box, in x units (neighbouring calls are one unit apart)
LABEL_W = 1.4  # room right of a call's dot for its label, when nothing stands there
LEVEL_PX = 28  # figure height per layer of the layout
MAX_PX = 1200  # the figure's height at most: a deeper drawing opens around the current subgraph, to pan and zoom
PLOT_PX = 680  # the width labels are fitted to (the Model page's graph column on a wide screen)
CHAR_PX = 6.3  # one character of a label at 11 px

Item = int | str  # a call (its node), a collapsed group (its id) or an expanded group's header ("^" + its id)


def _overlay_scale(values: Iterable[float], metric: str) -> tuple[float, float, Callable[[float], float]]:
    """(lo, hi, position) on a log scale; speedups centred on 1 so that red is slower and green faster."""
    logs = [math.log10(v) for v in values if v > 0]
    if metric == "speedup":
        span = max([abs(x) for x in logs] + [0.1])
        lo, hi = -span, span
    else:
        lo, hi = (min(logs), max(logs)) if logs else (0.0, 1.0)
        hi = hi if hi > lo else lo + 1.0
    return lo, hi, lambda v: (math.log10(v) - lo) / (hi - lo)


def _order(item: Item) -> tuple:
    """Calls by execution order, then groups by id."""
    return (0, item, "") if isinstance(item, int) else (1, 0, item.lstrip("^"))


def layered_positions(graph: nx.DiGraph, width: Callable[[Item], float] = lambda _: 1.0) -> dict:
    """Layer = longest path from a source (so every edge points down). Within a layer, nodes are ordered by the
    mean x of their predecessors (fewer crossings), then by execution order, and centred; each is width() wide."""
    depth: dict = {}
    for node in nx.topological_sort(graph):
        depth[node] = max((depth[p] + 1 for p in graph.predecessors(node)), default=0)
    layers: dict[int, list] = {}
    for node, d in depth.items():
        layers.setdefault(d, []).append(node)
    pos: dict = {}
    for d in sorted(layers):

        def key(node):
            xs = [pos[p][0] for p in graph.predecessors(node)]
            return (sum(xs) / len(xs) if xs else 0.0, _order(node))

        nodes = sorted(layers[d], key=key)
        x = -sum(width(n) for n in nodes) / 2
        for node in nodes:
            pos[node] = (x + width(node) / 2, -d)
            x += width(node)
    return pos


@dataclass
class GraphView:
    """What is drawn: calls, collapsed groups (boxes), expanded groups (a header and a frame), laid out."""

    pos: dict[Item, tuple[float, float]]
    edges: list[tuple[Item, Item]]
    boxes: dict[str, Group]  # collapsed: one box each
    frames: dict[str, Group]  # expanded: a header "^id" and a frame around what it holds
    bounds: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)  # frame: x0, x1, y0, y1

    @property
    def calls(self) -> list[int]:
        return sorted(i for i in self.pos if isinstance(i, int))


def _parents(gid: str) -> list[str]:
    """The ids of a group's enclosing groups, outermost first: "g0.3" -> ["g0"]."""
    parts = gid.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def graph_view(
    graph: nx.DiGraph, groups: list[Group], expanded: Iterable[str] = (), reveal: Iterable[int] = ()
) -> GraphView:
    """The groups in `expanded` open (and their parents), and those holding a call in `reveal`; the rest boxes.

    Edges between calls become edges between what is drawn; one entering an expanded group passes its header,
    so that a frame's header sits above everything the frame holds."""
    index, holders = all_groups(groups), group_of(groups)
    open_ids = {p for gid in expanded if gid in index for p in [*_parents(gid), gid]}
    open_ids |= {gid for n in reveal for gid in holders.get(n, [])}

    def rep(n: int) -> Item:
        return next((gid for gid in holders.get(n, []) if gid not in open_ids), n)

    def inside(item: Item) -> list[str]:  # the expanded groups an item is drawn in, outermost first
        if isinstance(item, int):
            return holders.get(item, [])
        gid = item.lstrip("^")
        return _parents(gid) + ([gid] if item.startswith("^") else [])

    view = nx.DiGraph()
    view.add_nodes_from(sorted({rep(n) for n in graph.nodes} | {"^" + gid for gid in open_ids}, key=_order))
    for a, b in graph.edges:
        ra, rb = rep(a), rep(b)
        if ra != rb:
            outer = set(inside(ra))
            path = [ra] + ["^" + gid for gid in inside(rb) if gid not in outer] + [rb]
            view.add_edges_from(zip(path, path[1:], strict=False))
    for item in list(view.nodes):  # what a frame holds hangs below its header, even with no input from outside
        holder = [gid for gid in inside(item) if "^" + gid != item][-1:]
        if holder and view.in_degree(item) == 0:
            view.add_edge("^" + holder[0], item)

    def width(item: Item) -> float:
        return BOX_W if isinstance(item, str) and item in index and item not in open_ids else 1.0

    pos = layered_positions(view, width)
    boxes = {i: index[i] for i in view.nodes if isinstance(i, str) and i in index}
    out = GraphView(pos, list(view.edges), boxes, {gid: index[gid] for gid in sorted(open_ids)})
    for gid in sorted(open_ids, key=lambda g: -g.count(".")):  # innermost first: a frame encloses its children's
        extents = []
        for item in view.nodes:
            if gid in inside(item):
                x, y = pos[item]
                box = item in boxes
                extents.append((x - (BOX_W / 2 if box else 0.3), x + (BOX_W / 2 if box else LABEL_W), y - 0.4, y + 0.4))
        extents += [b for c, b in out.bounds.items() if c.startswith(gid + ".")]
        pad = 0.12
        out.bounds[gid] = (min(e[0] for e in extents) - pad, max(e[1] for e in extents) + pad,
                           min(e[2] for e in extents) - pad, max(e[3] for e in extents) + pad)  # fmt: skip
    return out


def expanded_after_click(expanded: list[str], item) -> list[str] | None:
    """The expanded groups after a click on `item` (a figure point's customdata): a box adds its group, a header
    removes its group and everything inside it; None when the item is a call, not a group."""
    if not (isinstance(item, str) and item.startswith((EXPAND, COLLAPSE))):
        return None
    gid = item.split(":", 1)[1]
    keep = [g for g in expanded if g != gid and not g.startswith(gid + ".")]
    return keep + [gid] if item.startswith(EXPAND) else keep


def call_label(node: int, data: dict) -> str:
    """A call's label: "#7 conv2d…relu" (its first and last operator), "#5 matmul + add", "#13 softmax"."""
    ops = list(dict.fromkeys(data.get("ops") or [data.get("func", "?")]))
    text = ops[0] if len(ops) == 1 else f"{ops[0]} + {ops[1]}" if len(ops) == 2 else f"{ops[0]}…{ops[-1]}"
    return f"#{node} {text}"


def group_value(group: Group, values: dict[int, float], metric: str) -> tuple[float | None, int]:
    """A group's value from its calls' (GROUP_VALUE: latencies add up, speedups by geometric mean), and how many
    of its calls have one."""
    got = [values[n] for n in group.nodes if values.get(n, 0) > 0]
    if not got:
        return None, 0
    if GROUP_VALUE[metric] == "sum":
        return sum(got), len(got)
    return math.exp(sum(math.log(v) for v in got) / len(got)), len(got)


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


def _main_kind(graph: nx.DiGraph, group: Group) -> tuple[str, float]:
    """The kind doing most of a group's FLOPs (by calls when it does none), and its share."""
    weight: dict[str, float] = {}
    for n in group.nodes:
        d = graph.nodes[n]
        weight[d["kind"]] = weight.get(d["kind"], 0.0) + (d.get("flops") or 0.0) + 1e-9
    kind = max(weight, key=weight.get)
    return kind, weight[kind] / sum(weight.values())


def _group_hover(graph: nx.DiGraph, group: Group, kind: str, share: float, extra: list[str]) -> str:
    flops = sum(graph.nodes[n].get("flops") or 0.0 for n in group.nodes)
    tasks = len({graph.nodes[n]["task"] for n in group.nodes})
    lines = [
        f"<b>{group.label}</b>",
        f"calls #{group.nodes[0]}–#{group.nodes[-1]}: {len(group.nodes)} ({tasks} distinct tasks)",
        f"{flops / 1e9:,.3f} GFLOP, mostly {kind} ({share:.0%} of FLOPs)",
    ]
    if group.children:
        lines.append(f"{group.copies} × {group.unit} of {len(group.children[-1].nodes)} calls")
    return "<br>".join(lines + extra)


def graph_figure(
    graph: nx.DiGraph,
    selected: int | None = None,
    height: int | None = None,
    highlight: set[int] | None = None,
    values: dict[int, float] | None = None,
    metric: str = "latency",
    groups: list[Group] | None = None,
    expanded: Iterable[str] = (),
    focus: Item | None = None,
) -> go.Figure:
    """Calls coloured by kind, the selected one enlarged; with `highlight`, the others (and boxes holding none of
    it) are greyed out. With `values` (node -> latency in seconds, or speedup, by `metric`), calls are coloured by
    that value instead, grey without one, and a box by its calls' (GROUP_VALUE): an overlay of measured results.

    `groups` (default: repeated_groups(graph); [] draws every call) are boxes except those in `expanded` and
    those holding `selected`. A box's customdata is EXPAND + its id, an expanded group's header COLLAPSE + id.
    A drawing taller than MAX_PX opens on a window onto `focus`: a call or a group id (default: the group expanded
    last, else `selected`); pan and zoom it from there (uirevision keeps them until the groups drawn change)."""
    groups, expanded = repeated_groups(graph) if groups is None else groups, list(expanded)
    focus = focus if focus is not None else expanded[-1] if expanded else selected
    view = graph_view(graph, groups, expanded, [selected] if selected is not None else [])
    pos = view.pos
    group_values = {}
    if values is not None:
        group_values = {gid: group_value(g, values, metric) for gid, g in view.boxes.items()}
        scale, title, _ = OVERLAYS[metric]
        shown = [values[n] for n in view.calls if n in values] + [v for v, _ in group_values.values() if v]
        lo, hi, at = _overlay_scale(shown, metric)

    def value_color(v: float | None) -> str:
        return NO_RESULT if v is None or v <= 0 else sample_colorscale(scale, [min(1.0, max(0.0, at(v)))])[0]

    def kind_color(n: int, kind: str) -> str:
        return COLORS[kind] if highlight is None or n in highlight or n == selected else FADED

    ex, ey = [], []
    for a, b in view.edges:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        if ya - yb > 1:  # an edge skipping layers (a residual) bows out to the left, clear of what it passes
            bow = min(0.2 + 0.04 * (ya - yb), 0.5)
            ex += [xa, xa - bow, xb - bow, xb, None]
            ey += [ya, ya - 0.5, yb + 0.5, yb, None]
        else:
            ex += [xa, xb, None]
            ey += [ya, yb, None]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=ex, y=ey, mode="lines", line={"color": "#bbb", "width": 1}, hoverinfo="skip", showlegend=False)
    )
    xs = [x for x, _ in pos.values()]
    x_lo, x_hi = min(min(xs, default=0) - 0.9, -2.0), max(max(xs, default=0) + LABEL_W + 0.3, 2.5)
    room = _label_room(pos)
    px_per_unit = PLOT_PX / (x_hi - x_lo)
    labels = {n: _fit(call_label(n, graph.nodes[n]), room[n] * px_per_unit) for n in view.calls}
    for kind in KINDS:
        nodes = [n for n in view.calls if graph.nodes[n]["kind"] == kind]
        if not nodes:
            continue
        fig.add_trace(
            go.Scatter(
                x=[pos[n][0] for n in nodes],
                y=[pos[n][1] for n in nodes],
                mode="markers+text",
                name=kind,
                showlegend=False,  # the legend's own traces below: these carry the selection's size
                customdata=nodes,
                marker={
                    "size": [16 if n == selected else 11 for n in nodes],
                    "color": [value_color(values.get(n)) if values is not None else kind_color(n, kind) for n in nodes],
                    "line": {"width": [3 if n == selected else 0 for n in nodes], "color": "black"},
                },
                text=[labels[n] for n in nodes],
                textposition="middle right",
                textfont={"size": 11, "color": ["#111" if n == selected else "#444" for n in nodes]},
                unselected={"marker": {"opacity": 1.0}},  # a click picks a node; it must not fade the others
                hovertext=[_hover(n, graph.nodes[n], values, metric) for n in nodes],
                hoverinfo="text",
            )
        )
    if values is None:  # the legend: kinds (with an overlay, colour means the value, not the kind)
        for kind in KINDS:
            if any(graph.nodes[n]["kind"] == kind for n in view.calls):
                fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=kind, marker={"size": 11,
                              "color": COLORS[kind]}, hoverinfo="skip"))  # fmt: skip
    shapes = _frames(fig, graph, view)
    if view.boxes:
        _boxes(fig, shapes, graph, view, highlight, values, metric, group_values, value_color)
    if values:  # the colour scale's legend: one invisible point carrying the colour bar
        if view.boxes or view.frames:
            title += f"<br>box: {GROUP_VALUE[metric]} of its calls"
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
    height = height or int(min(MAX_PX, max(420, LEVEL_PX * (1 - min((y for _, y in pos.values()), default=0)) + 60)))
    fig.update_layout(
        height=height,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        xaxis={"visible": False, "range": [x_lo, x_hi]},
        yaxis={"visible": False, "range": _y_window(pos, focus, (height - 60) / LEVEL_PX)},
        legend={"orientation": "h", "x": 0, "y": 1, "yanchor": "bottom"},
        clickmode="event+select",
        dragmode="pan",
        shapes=shapes,
        hoverlabel={"align": "left"},
        # pan/zoom survive a click (which re-runs the page) and reset when the drawing changes
        uirevision=f"{len(graph)}:{min(graph.nodes, default=0)}:{','.join(sorted(view.frames))}",
    )
    return fig


def _y_window(pos: dict[Item, tuple[float, float]], focus: Item | None, levels: float) -> list[float]:
    """The y range first shown: all layers, or as many as fit at LEVEL_PX (the figure is a canvas of at most
    MAX_PX, as in Netron, not a page-long strip: pan or zoom out for the rest): a group in focus from its top, a
    call in focus in the middle, unless the top window already shows it."""
    lo, hi = min((y for _, y in pos.values()), default=0) - 0.7, 0.7
    if hi - lo <= levels:
        return [lo, hi]
    if isinstance(focus, str) and ("^" + focus in pos or focus in pos):
        top = min(hi, max(lo + levels, pos.get("^" + focus, pos.get(focus))[1] + 2.5))
        return [top - levels, top]
    centre = pos[focus][1] if focus in pos else hi
    if centre > hi - levels + 2:  # it shows from the top: the model's input end first
        return [hi - levels, hi]
    top = min(hi, max(lo + levels, centre + levels / 2))
    return [top - levels, top]


def _label_room(pos: dict[Item, tuple[float, float]]) -> dict[Item, float]:
    """x units free right of each item's dot: up to the next item in its layer, at most LABEL_W."""
    rows: dict[float, list[tuple[float, Item]]] = {}
    for item, (x, y) in pos.items():
        rows.setdefault(y, []).append((x, item))
    room = {}
    for row in rows.values():
        row.sort(key=lambda r: r[0])
        for (x, item), nxt in zip(row, row[1:] + [None], strict=True):
            gap = LABEL_W if nxt is None else nxt[0] - x - (BOX_W / 2 if isinstance(nxt[1], str) else 0.2)
            room[item] = max(0.0, min(LABEL_W, gap - 0.1))
    return room


def _fit(text: str, px: float) -> str:
    """The label cut to `px` pixels ("…"), or nothing when not even its number fits: the hover still has it."""
    chars = int(px / CHAR_PX)
    if chars >= len(text):
        return text
    number = text.split(" ")[0]
    return text[: chars - 1] + "…" if chars > len(number) + 2 else (number if chars >= len(number) else "")


def _frames(fig: go.Figure, graph: nx.DiGraph, view: GraphView) -> list[dict]:
    """Expanded groups: a frame around what each holds and, on top, its header (click it to collapse)."""
    shapes = []
    for _, (x0, x1, y0, y1) in sorted(view.bounds.items(), key=lambda b: b[0].count(".")):  # outer frames first
        shapes.append({"type": "rect", "x0": x0, "x1": x1, "y0": y0, "y1": y1, "layer": "below",
                       "line": {"color": "#9a9a9a", "width": 1, "dash": "dot"},
                       "fillcolor": "rgba(120, 120, 140, 0.06)"})  # fmt: skip
    if view.frames:
        heads = list(view.frames)
        fig.add_trace(
            go.Scatter(
                x=[view.pos["^" + g][0] for g in heads],
                y=[view.pos["^" + g][1] for g in heads],
                mode="markers+text",
                name="expanded groups",
                showlegend=False,
                customdata=[COLLAPSE + g for g in heads],
                marker={"symbol": "triangle-down", "size": 12, "color": "#555"},
                text=[f"<b>{view.frames[g].label}</b> · {len(view.frames[g].nodes)} calls" for g in heads],
                textposition="middle right",
                textfont={"size": 12, "color": "#222"},
                unselected={"marker": {"opacity": 1.0}},
                hovertext=[_group_hover(graph, view.frames[g], *_main_kind(graph, view.frames[g]),
                                        ["expanded: click to collapse (the groups holding the current subgraph stay "
                                         "open)"]) for g in heads],
                hoverinfo="text",
            )
        )  # fmt: skip
    return shapes


def _boxes(fig, shapes, graph, view, highlight, values, metric, group_values, value_color) -> None:
    """Collapsed groups: a box each, coloured by the kind doing most of its FLOPs (or by its value), labelled."""
    ids = list(view.boxes)
    colors, hovers, labels = [], [], []
    for gid in ids:
        group = view.boxes[gid]
        kind, share = _main_kind(graph, group)
        extra = []
        matches = len(highlight & set(group.nodes)) if highlight is not None else None
        if values is not None:
            v, measured = group_values[gid]
            colors.append(value_color(v))
            told = "not measured yet" if v is None else OVERLAYS[metric][2](v)
            extra.append(f"{metric}: {told} ({GROUP_VALUE[metric]} over {measured} of {len(group.nodes)} calls "
                         "measured)")  # fmt: skip
        else:
            colors.append(FADED if matches == 0 else COLORS[kind])
        if matches is not None:
            extra.append(f"{matches} of its calls match the search")
        extra.append("click to expand")
        hovers.append(_group_hover(graph, group, kind, share, extra))
        found = f" · {matches} found" if matches else ""
        labels.append(f"<b>{group.label}</b> · {len(group.nodes)} calls{found}")
        x, y = view.pos[gid]
        shapes.append({"type": "rect", "x0": x - BOX_W / 2 + 0.05, "x1": x + BOX_W / 2 - 0.05, "y0": y - 0.36,
                       "y1": y + 0.36, "layer": "below", "line": {"color": colors[-1], "width": 2},
                       "fillcolor": colors[-1], "opacity": 0.35})  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=[view.pos[g][0] for g in ids],
            y=[view.pos[g][1] for g in ids],
            mode="markers+text",
            name="groups",
            showlegend=False,
            customdata=[EXPAND + g for g in ids],
            marker={"symbol": "square", "size": 26, "color": colors, "opacity": 0.0},
            text=labels,
            textposition="middle center",
            textfont={"size": 11, "color": "#111"},
            selected={"marker": {"opacity": 0.0}},
            unselected={"marker": {"opacity": 0.0}},
            hovertext=hovers,
            hoverinfo="text",
        )
    )


def _ticks(lo: float, hi: float) -> list[float]:
    return [lo + (hi - lo) * i / 4 for i in range(5)]


def _tick_text(log_value: float, metric: str) -> str:
    v = 10**log_value
    return f"{v:.2g}×" if metric == "speedup" else f"{v * 1e6:.3g} µs"
