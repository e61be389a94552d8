"""The GUI's library side (tlm_core.viz): tables, diagrams and teaching texts over real spaces and programs."""

import math

import networkx as nx
import pytest

from tests import workloads
from tlm_core.partition.task import task_from_primfunc
from tlm_core.program import apply_decisions
from tlm_core.space import COMPUTE_LOCATION, TILE
from tlm_core.viz import teach
from tlm_core.viz.graph import FADED, graph_figure
from tlm_core.viz.loopnest import LoopRow, loop_nest, loop_nest_figure
from tlm_core.viz.space import (
    choices_table,
    decision_labels,
    points_table,
    replay_with,
    sketch_annotations,
    tiling_figure,
    tiling_grid,
)
from tlm_core.viz.summary import fused_bytes_saved, model_summary, operator_counts, subgraph_rows


@pytest.fixture(scope="module")
def conv(space_builder):
    return space_builder.build(task_from_primfunc(workloads.conv2d_relu_8, "conv2d_relu_8"))


def _sketch_with_location(space):
    return next(s for s in space.sketches if any(p.kind == COMPUTE_LOCATION for p in s.points))


def test_points_and_choices_tables(conv):
    sketch = conv.sketches[0]
    rows = points_table(sketch.points, sketch.sampled_decisions)
    assert [r["#"] for r in rows] == list(range(len(sketch.points)))
    assert all(r["legal choices"] == len(p.choices) for r, p in zip(rows, sketch.points, strict=True))
    assert all(r["sampled"] == r["chosen"] for r in rows)
    tile = next(p for p in sketch.points if p.kind == TILE and p.extent == 8 and p.n == 4)
    assert rows[tile.index]["extent"] == 8 and rows[tile.index]["loop"] == tile.loop
    choices = choices_table(tile)
    assert len(choices) == len(tile.choices) and sum(c["sampled"] for c in choices) == 1
    assert all(math.prod(eval(c["encoding"])) == 8 for c in choices)


def test_labels_are_unique_and_round_trip_through_replay(conv):
    sketch = _sketch_with_location(conv)
    for point in sketch.points:
        labels = decision_labels(point)
        assert len(set(labels)) == len(labels)
    # ask for the last legal choice everywhere, by label: replay takes exactly those
    wanted = {p.index: decision_labels(p)[-1] for p in sketch.points if p.kind == TILE}
    replayed = replay_with(sketch, wanted)
    for p in replayed.points:
        if p.kind == TILE:
            assert p.describe(replayed.decisions[p.index]) == wanted[p.index]


def test_replay_with_falls_back_to_a_legal_choice(conv):
    sketch = _sketch_with_location(conv)
    loc = next(p for p in sketch.points if p.kind == COMPUTE_LOCATION)
    replayed = replay_with(sketch, {loc.index: 999, 0: "not a label"})
    assert replayed.decisions[loc.index] in replayed.points[loc.index].choices
    assert replayed.decisions[0] == sketch.points[0].sampled
    apply_decisions(conv, sketch.index, replayed.decisions)  # a legal vector


def test_tiling_grid_follows_the_tiling_structure(conv):
    sketch = conv.sketches[0]
    assert sketch_annotations(sketch)["conv"]["tiling_structure"] == "SSRSRS"
    grid = tiling_grid(sketch, sketch.points, sketch.sampled_decisions)
    assert grid.levels == ["S0", "S1", "R0", "S2", "R1", "S3"]
    roles = {r.loop: r.role for r in grid.rows}
    assert roles == {"n": "S", "k": "S", "h": "S", "w": "S", "c": "R", "r": "R", "s": "R"}
    for i, row in enumerate(grid.rows):
        cells = [grid.cell(i, j) for j in range(len(grid.levels))]
        assert [c for c in cells if c is not None] == list(row.factors)
        assert math.prod(row.factors) == row.extent
    fig = tiling_figure(grid)
    assert len(fig.data[0].z) == len(grid.rows)


def test_loop_nest_of_a_scheduled_program(conv):
    sketch = conv.sketches[0]
    program = apply_decisions(conv, 0, sketch.sampled_decisions)
    rows = loop_nest(program.mod)
    assert any(r.kind == "parallel" for r in rows)
    blocks = [r.name for r in rows if r.kind == "block"]
    assert "relu" in blocks or any("conv" in b for b in blocks)
    assert "root" not in blocks
    # depth grows by at most one from a row to the next (pre-order)
    assert rows[0].depth == 0 and all(b.depth <= a.depth + 1 for a, b in zip(rows, rows[1:], strict=False))
    fig = loop_nest_figure(rows)
    assert sum(len(t.y) for t in fig.data) == len(rows)
    # the unscheduled program: plain serial loops
    plain = loop_nest(conv.task.mod)
    assert {r.kind for r in plain} <= {"serial", "block"}
    assert [r.extent for r in plain[:4]] == [1, 4, 10, 10]


def test_loop_nest_redraws_for_another_decision_vector(conv):
    sketch = conv.sketches[0]
    tile = next(p for p in sketch.points if p.kind == TILE and len(p.choices) > 2)
    other = next(c for c in tile.choices if c != tile.sampled)
    replayed = replay_with(sketch, {tile.index: other})
    a = loop_nest(apply_decisions(conv, 0, sketch.sampled_decisions).mod)
    b = loop_nest(apply_decisions(conv, 0, replayed.decisions).mod)
    assert [(r.name, r.extent) for r in a] != [(r.name, r.extent) for r in b]


def test_teaching_texts_name_the_example(conv):
    sketch = _sketch_with_location(conv)
    decisions = sketch.sampled_decisions
    program = apply_decisions(conv, sketch.index, decisions)
    rows = loop_nest(program.mod)
    ann = sketch_annotations(sketch)
    tiling = teach.tiling_text(sketch.points, decisions, {"conv": "SSRSRS"})
    assert "SSRSRS" in tiling and "extent" in tiling
    par = teach.parallel_text(rows, ann)
    assert next(r.name for r in rows if r.kind == "parallel") in par
    assert "Vectorisation" in teach.vectorize_text(rows)
    unroll = teach.unroll_text(sketch.points, decisions, rows)
    assert "unroll_explicit" in unroll
    loc = next(p for p in sketch.points if p.kind == COMPUTE_LOCATION)
    assert loc.describe(decisions[loc.index]) in teach.compute_location_text(sketch.points, decisions)
    assert "No loop" in teach.vectorize_text([LoopRow(0, "i", "serial", 4)])


def _toy_partition_graph() -> nx.DiGraph:
    g = nx.DiGraph()
    common = {"inputs": [{"shape": [4, 4], "dtype": "float32", "from": "weight"}], "repeat": 1}
    g.add_node(0, func="fused_matmul_add_relu", task="t0", kind="matmul", ops=["matmul", "add", "relu"],
               outputs=[{"shape": [4, 8], "dtype": "float32"}], flops=256.0, **common)  # fmt: skip
    g.add_node(1, func="softmax", task="t1", kind="reduce", ops=["softmax"],
               outputs=[{"shape": [4, 8], "dtype": "float32"}], flops=64.0, **common)  # fmt: skip
    g.add_edge(0, 1)
    return g


def test_subgraph_rows_search_and_kinds():
    g = _toy_partition_graph()
    assert [r["node"] for r in subgraph_rows(g)] == [0, 1]
    assert [r["node"] for r in subgraph_rows(g, "RELU")] == [0]
    assert [r["node"] for r in subgraph_rows(g, "t1")] == [1]
    assert [r["node"] for r in subgraph_rows(g, kinds=["reduce"])] == [1]
    assert subgraph_rows(g, "conv") == []
    # fusion keeps 2 intermediates of 4x8 float32 out of memory, each written and read once
    assert fused_bytes_saved(g, 0) == 2 * 2 * 32 * 4
    assert "matmul + add + relu" in teach.fusion_text(g, 0)
    fig = graph_figure(g, selected=0, highlight={1})
    calls = [t for t in fig.data if t.customdata is not None]  # the kinds' traces (the legend's have no points)
    colors = {n: c for t in calls for n, c in zip(t.customdata, t.marker.color, strict=True)}
    assert colors[0] != FADED and colors[1] != FADED  # selected and highlighted
    assert graph_figure(g, highlight=set()).data[1].marker.color[0] == FADED


def test_model_summary_on_a_sample():
    import sample_models  # noqa: F401  (the tiny default: fast)
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition
    from tlm_core.target import host_target

    part = partition(load_model("resnet50-tiny"), host_target())
    summary = model_summary(part)
    assert summary["subgraph calls"] == sum(t.weight for t in part.tasks)
    assert summary["tasks"] == len(part.tasks)
    assert summary["parameters"] and summary["parameters"] > 1000
    assert summary["operators"] >= summary["subgraph calls"]
    counts = operator_counts(part)
    assert counts[0]["count"] >= counts[-1]["count"] and any(c["operator"] == "conv2d" for c in counts)
