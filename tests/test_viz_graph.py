"""The Model page's graph (tlm_core.viz.groups, tlm_core.viz.graph): repeated blocks found in the call sequence,
collapsed into labelled boxes, expanded on demand, every call labelled, the overlays colouring boxes too."""

from __future__ import annotations

import math

import networkx as nx
import pytest

from tlm_core.viz.graph import (
    COLLAPSE,
    EXPAND,
    FADED,
    GROUP_VALUE,
    MAX_PX,
    NO_RESULT,
    call_label,
    expanded_after_click,
    graph_figure,
    graph_view,
    group_value,
)
from tlm_core.viz.groups import all_groups, data_flow_cuts, group_of, repeated_groups


def _partition_graph(name: str) -> nx.DiGraph:
    import sample_models  # noqa: F401  (registers the samples)
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition
    from tlm_core.target import host_target

    return partition(load_model(name), host_target()).graph


@pytest.fixture(scope="module")
def bert_tiny() -> nx.DiGraph:
    return _partition_graph("bert-tiny")


@pytest.fixture(scope="module")
def resnet_tiny() -> nx.DiGraph:
    return _partition_graph("resnet50-tiny")


def _call(g: nx.DiGraph, n: int, task: str, kind: str, preds=(), flops: float = 100.0) -> None:
    g.add_node(n, task=task, kind=kind, func=f"fused_{task}", ops=[kind], flops=flops, inputs=[], outputs=[])
    g.add_edges_from((p, n) for p in preds)


def resnet_like(blocks=(3, 4, 6, 3)) -> nx.DiGraph:
    """ResNet-50's call graph in miniature: stem conv and pool, stages of bottlenecks (the first of a stage has
    a downsampling conv, and other shapes: other tasks), then mean, reshape, fc."""
    g = nx.DiGraph()
    _call(g, 0, "stem", "conv")
    _call(g, 1, "pool", "pool", [0])
    x = 1
    for s, count in enumerate(blocks):
        for b in range(count):
            n, t = len(g), f"s{s}{'first' if b == 0 else 'rest'}"
            _call(g, n, f"{t}-a", "conv", [x])
            _call(g, n + 1, f"{t}-b", "conv", [n])
            if b == 0:  # the projection shortcut
                _call(g, n + 2, f"{t}-c", "conv", [n + 1])
                _call(g, n + 3, f"{t}-down+add", "conv", [x, n + 2])
            else:
                _call(g, n + 2, f"{t}-c+add", "conv", [x, n + 1])
            x = len(g) - 1
    n = len(g)
    _call(g, n, "mean", "reduce", [x])
    _call(g, n + 1, "reshape", "layout", [n])
    _call(g, n + 2, "fc", "matmul", [n + 1])
    return g


def pre_norm_decoder(layers: int = 3) -> nx.DiGraph:
    """GPT-2's shape: embeddings, then per layer LN -> attention -> add(residual), LN -> MLP -> add, final LN."""
    g = nx.DiGraph()
    _call(g, 0, "embed", "gather")
    x = 0
    for _ in range(layers):
        for part in ("attn", "mlp"):
            n = len(g)
            _call(g, n, "ln", "norm", [x])
            _call(g, n + 1, f"{part}-in", "matmul", [n])
            _call(g, n + 2, f"{part}-mid", "softmax" if part == "attn" else "elementwise", [n + 1])
            _call(g, n + 3, f"{part}-out", "matmul", [n + 2])
            _call(g, n + 4, "add", "layout", [x, n + 3])
            x = n + 4
    _call(g, len(g), "ln", "norm", [x])
    return g


def test_bert_tiny_layers_are_one_group_of_two_copies(bert_tiny):
    (stack,) = repeated_groups(bert_tiny)
    assert stack.label == "layer ×2" and stack.copies == 2 and stack.unit == "layer"
    first, second = stack.children
    assert (first.label, second.label) == ("layer 1", "layer 2")
    assert len(first.nodes) == len(second.nodes) == 24 and stack.nodes == first.nodes + second.nodes
    tasks = [[bert_tiny.nodes[n]["task"] for n in c.nodes] for c in stack.children]
    assert tasks[0] == tasks[1]
    # the embeddings (ending with their LayerNorm) stay outside; post-norm: a layer ends with its LayerNorm
    assert bert_tiny.nodes[first.nodes[0] - 1]["kind"] == "norm"
    assert bert_tiny.nodes[first.nodes[-1]]["kind"] == "norm" and stack.nodes[-1] == max(bert_tiny.nodes)
    assert group_of([stack])[first.nodes[3]] == ["g0", "g0.0"]


def test_resnet_stages_gather_their_first_block():
    g = resnet_like()
    stages = repeated_groups(g)
    assert [s.label for s in stages] == ["stage 1: block ×3", "stage 2: block ×4", "stage 3: block ×6",
                                         "stage 4: block ×3"]  # fmt: skip
    for stage, count in zip(stages, (3, 4, 6, 3), strict=True):
        assert [len(c.nodes) for c in stage.children] == [4] + [3] * (count - 1)  # a downsampling block first
        assert stage.children[1].label.endswith("· block 2")
    assert stages[0].nodes[0] == 2 and stages[-1].nodes[-1] == len(g) - 4  # stem, pool and head stay outside


def test_a_pre_norm_layer_starts_at_its_layernorm():
    g = pre_norm_decoder()
    (stack,) = repeated_groups(g)
    assert stack.label == "layer ×3" and [len(c.nodes) for c in stack.children] == [10, 10, 10]
    assert stack.nodes[0] == 1 and g.nodes[1]["kind"] == "norm"  # not after it, where two tensors are live
    cuts = data_flow_cuts(g, sorted(g))
    assert cuts[1] == 1 and cuts[2] == 2


def test_no_repeats_no_groups(resnet_tiny):
    assert repeated_groups(resnet_tiny) == []  # four different bottlenecks: nothing repeats
    fig = graph_figure(resnet_tiny, selected=0)
    drawn = [n for t in fig.data if t.customdata is not None for n in t.customdata]
    assert sorted(drawn) == sorted(resnet_tiny.nodes)  # every call, none boxed
    texts = [s for t in fig.data if t.customdata is not None for s in t.text]
    assert all(s.startswith("#") for s in texts) and "#0 conv2d…relu" in texts


def _drawn(fig):
    """Every point with customdata (a call, EXPAND + a box's id, COLLAPSE + a header's) -> (trace index, point)."""
    return {
        d: (t, i) for t, tr in enumerate(fig.data) if tr.customdata is not None for i, d in enumerate(tr.customdata)
    }


def test_collapsed_boxes_reveal_the_current_subgraph_and_expand_on_demand(bert_tiny):
    (stack,) = repeated_groups(bert_tiny)
    layer1, layer2 = stack.children
    current = layer1.nodes[5]
    fig = graph_figure(bert_tiny, selected=current)
    drawn = _drawn(fig)
    # the current subgraph's groups open, the other layer one box, labelled
    assert current in drawn and set(layer1.nodes) <= set(drawn) and not set(layer2.nodes) & set(drawn)
    assert EXPAND + "g0.1" in drawn and COLLAPSE + "g0" in drawn and COLLAPSE + "g0.0" in drawn
    trace, i = drawn[EXPAND + "g0.1"]
    assert fig.data[trace].text[i].startswith("<b>layer 2</b> · 24 calls")
    assert "click to expand" in fig.data[trace].hovertext[i]
    trace, i = drawn[current]
    label = fig.data[trace].text[i]  # cut with "…" where its neighbour stands close: the hover has it all
    assert fig.data[trace].marker.size[i] == 16 and call_label(current, bert_tiny.nodes[current]).startswith(
        label.rstrip("…")
    )
    assert label.startswith(f"#{current} ") and f"<b>#{current} " in fig.data[trace].hovertext[i]
    # expanding layer 2 shows its members
    expanded = expanded_after_click([], EXPAND + "g0.1")
    assert expanded == ["g0.1"]
    assert set(layer2.nodes) <= set(_drawn(graph_figure(bert_tiny, selected=current, expanded=expanded)))
    # with the current subgraph outside the stack, everything collapses into one box
    outside = graph_figure(bert_tiny, selected=0)
    assert set(_drawn(outside)) == set(range(stack.nodes[0])) | {EXPAND + "g0"}
    assert expanded_after_click(["g0", "g0.1"], COLLAPSE + "g0") == [] and expanded_after_click([], 7) is None


def test_layout_edges_point_down_and_frames_hold_their_calls(bert_tiny):
    groups = repeated_groups(bert_tiny)
    view = graph_view(bert_tiny, groups, expanded=["g0.1"], reveal=[10])
    assert set(view.frames) == {"g0", "g0.0", "g0.1"} and not view.boxes
    assert all(view.pos[a][1] > view.pos[b][1] for a, b in view.edges)
    for gid, group in view.frames.items():
        x0, x1, y0, y1 = view.bounds[gid]
        head = view.pos["^" + gid]
        assert all(view.pos[n][1] < head[1] for n in group.nodes)  # the header is above what it holds
        assert all(x0 < view.pos[n][0] < x1 and y0 < view.pos[n][1] < y1 for n in group.nodes)
    outer, inner = view.bounds["g0"], view.bounds["g0.1"]
    assert outer[0] < inner[0] and inner[1] < outer[1] and outer[2] < inner[2] and inner[3] < outer[3]
    # the prefix (embeddings) is outside every frame
    assert all(view.pos[n][1] > outer[3] for n in range(groups[0].nodes[0]))


def test_overlay_colours_boxes_by_their_calls(bert_tiny):
    (stack,) = repeated_groups(bert_tiny)
    layer2 = stack.children[1]
    values = {n: 1e-5 * (1 + n % 3) for n in bert_tiny.nodes if n != layer2.nodes[0]}  # one call not measured
    total, measured = group_value(layer2, values, "latency")
    assert measured == 23 and total == pytest.approx(sum(values[n] for n in layer2.nodes[1:]))
    speed = {n: 2.0 for n in layer2.nodes} | {layer2.nodes[0]: 0.5}
    assert group_value(layer2, speed, "speedup")[0] == pytest.approx(math.exp((23 * math.log(2) + math.log(0.5)) / 24))
    assert GROUP_VALUE == {"latency": "sum", "speedup": "geomean"}
    fig = graph_figure(bert_tiny, selected=stack.children[0].nodes[0], values=values)
    trace, i = _drawn(fig)[EXPAND + "g0.1"]
    assert fig.data[trace].marker.color[i] != NO_RESULT
    assert "sum over 23 of 24 calls measured" in fig.data[trace].hovertext[i]
    assert "box: sum of its calls" in fig.data[-1].marker.colorbar.title.text
    unmeasured = graph_figure(bert_tiny, selected=0, values={0: 1e-5})
    trace, i = _drawn(unmeasured)[EXPAND + "g0"]
    assert (
        unmeasured.data[trace].marker.color[i] == NO_RESULT
        and "not measured yet" in unmeasured.data[trace].hovertext[i]
    )


def test_search_fades_boxes_without_a_match(bert_tiny):
    (stack,) = repeated_groups(bert_tiny)
    fig = graph_figure(bert_tiny, selected=0, highlight={1})
    trace, i = _drawn(fig)[EXPAND + "g0"]
    assert fig.data[trace].marker.color[i] == FADED
    fig = graph_figure(bert_tiny, selected=0, highlight={stack.nodes[3], stack.nodes[30]})
    trace, i = _drawn(fig)[EXPAND + "g0"]
    assert fig.data[trace].marker.color[i] != FADED and "2 found" in fig.data[trace].text[i]


def test_pan_zoom_and_a_flat_drawing_on_request(bert_tiny):
    fig = graph_figure(bert_tiny, selected=0, groups=[])
    assert fig.layout.dragmode == "pan" and fig.layout.uirevision
    assert sorted(n for n in _drawn(fig)) == sorted(bert_tiny.nodes)
    # the view keeps the user's pan and zoom while it stays the same drawing, and resets when a group opens
    assert graph_figure(bert_tiny, selected=0).layout.uirevision == fig.layout.uirevision
    assert graph_figure(bert_tiny, selected=0, expanded=["g0"]).layout.uirevision != fig.layout.uirevision


def test_ids_are_unique_and_describe_the_range(bert_tiny):
    index = all_groups(repeated_groups(resnet_like()))
    assert len(index) == 4 + 3 + 4 + 6 + 3
    assert index["g2"].describe().startswith("stage 3: block ×6 (#")


@pytest.mark.slow
def test_resnet50_stages_are_three_four_six_three():
    """The paper-size ResNet-50: 57 calls in four stages of [3, 4, 6, 3] bottlenecks (loading it: ~15 s)."""
    g = _partition_graph("resnet50")
    stages = repeated_groups(g)
    assert [s.label for s in stages] == ["stage 1: block ×3", "stage 2: block ×4", "stage 3: block ×6",
                                         "stage 4: block ×3"]  # fmt: skip
    view = graph_view(g, stages)
    assert len(view.pos) == len(g) - sum(len(s.nodes) for s in stages) + 4  # stem, pool, head and four boxes


def test_the_model_page_draws_groups_and_expands_the_chosen_one():
    """The Model page (AppTest): bert-tiny's second layer is a box; choosing it under "Expanded groups" draws its
    calls; another model's group ids are dropped, not an error."""
    import json

    from tests.apptest import start

    def drawn(at) -> set:
        (chart,) = [c for c in at.get("plotly_chart") if "graph" in str(c.proto.id)]
        return {n for t in json.loads(chart.proto.spec)["data"] for n in t.get("customdata", [])}

    at = start()
    at.selectbox(key="w_sample").set_value("bert-tiny").run()
    assert not at.exception, at.exception
    expand = at.multiselect(key="w_expand")
    assert expand.options == ["layer ×2 (#4–#51)", "layer 1 (#4–#27)", "layer 2 (#28–#51)"]
    assert EXPAND + "g0.1" in drawn(at) and 28 not in drawn(at)
    expand.set_value(["g0.1"]).run()
    assert not at.exception, at.exception
    assert set(range(28, 52)) <= drawn(at) and COLLAPSE + "g0.1" in drawn(at)
    at.selectbox(key="w_sample").set_value("resnet50-tiny").run()  # no groups there: the choice is dropped
    assert not at.exception, at.exception
    assert at.session_state["w_expand"] == []


def test_a_deep_drawing_opens_on_its_focus(bert_tiny):
    """Taller than MAX_PX: a window of the drawing, at the group just expanded or at the current call."""

    def in_view(fig, item) -> bool:
        trace, i = _drawn(fig)[item]
        lo, hi = fig.layout.yaxis.range
        return lo < fig.data[trace].y[i] < hi

    both = ["g0.0", "g0.1"]  # both layers open: 50 layers of drawing, more than MAX_PX shows
    fig = graph_figure(bert_tiny, selected=5, expanded=both)
    assert fig.layout.height == MAX_PX and in_view(fig, COLLAPSE + "g0.1") and not in_view(fig, 0)
    fig = graph_figure(bert_tiny, selected=5, expanded=both, focus=5)
    assert in_view(fig, 5) and in_view(fig, 0) and not in_view(fig, 51)  # from the top
    fig = graph_figure(bert_tiny, selected=50, expanded=both, focus=50)
    assert in_view(fig, 50) and not in_view(fig, 0)
