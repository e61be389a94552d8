"""tlm_core.compare: every method on one tiny task, the results store, the roofline, the diff, a user's database."""

import math

import networkx as nx
import pytest

import tests.workloads as W
from tlm_core.compare import (
    DatabaseError,
    Job,
    Results,
    database_from_files,
    database_result,
    decision_diff,
    machine_ceilings,
    node_values,
    read_database,
    roofline_points,
    run_method,
    side_by_side,
    task_bytes,
    task_table,
)
from tlm_core.partition import task_from_primfunc
from tlm_core.program import apply_decisions
from tlm_core.records import RecordStore


@pytest.fixture(scope="module")
def generator():
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint

    return Generator.from_checkpoint(default_checkpoint())  # the shipped TLM, as the app uses it


@pytest.fixture(scope="module")
def matmul(workload_spaces, measurer, generator):
    """matmul_128's space and one result of each quick method on it."""
    space = workload_spaces["matmul_128"]
    results = Results()
    for method in ("default", "heuristic", "tlm", "tlm-best-of-k"):
        results.add(run_method(method, space, measurer, generator, k=3))
    return space, results


def test_every_quick_method_gives_a_measured_checked_row(matmul):
    space, results = matmul
    rows = results.of_task(space.task.id)
    assert [r.method for r in rows] == ["default", "heuristic", "tlm", "tlm-best-of-k"]
    for r in rows:
        assert r.ok, (r.method, r.error)
        assert r.latency > 0 and math.isclose(r.gflops, space.task.flops / r.latency / 1e9)
        assert r.max_rel_error is not None and r.max_rel_error < 1e-3  # checked against the untuned reference
        assert r.compile_s >= 0 and r.to_dict()["latency_s"] == r.latency
    heuristic, default = results.get(space.task.id, "heuristic"), results.get(space.task.id, "default")
    assert default.decisions is None and default.trials == 0
    for r in rows[1:]:  # a schedule from the space: its decisions rebuild a valid program
        assert apply_decisions(space, r.sketch_index, r.decisions).mod is not None and "sample" in r.trace.lower()
    best = results.get(space.task.id, "tlm-best-of-k")
    # 3 candidates measured, the 3 (all passed) again; the winner's latency is its second measurement
    assert len(best.extra["latencies_s"]) == 3 == len(best.extra["again_s"]) and best.trials == 6
    assert best.latency == min(best.extra["again_s"].values())
    assert results.speedup(space.task.id, "heuristic") == default.latency / heuristic.latency


def test_side_by_side_measures_every_program_again_and_a_new_run_clears_it(matmul, measurer):
    from tlm_core.viz.compare import results_table

    space, results = matmul
    rows = results.of_task(space.task.id)
    side_by_side(space, rows, measurer, rounds=2)
    assert all(r.side_by_side > 0 for r in rows)
    heuristic, default = results.get(space.task.id, "heuristic"), results.get(space.task.id, "default")
    assert heuristic.side_by_side < default.side_by_side
    assert [t["side by side (µs)"] for t in results_table(rows)] == [r.side_by_side * 1e6 for r in rows]
    results.add(run_method("heuristic", space, measurer))  # a later moment: the side-by-side figures go
    assert all(r.side_by_side is None for r in results.of_task(space.task.id))
    assert "side by side (µs)" not in results_table(results.of_task(space.task.id))[0]


def test_unknown_method_and_missing_inputs_are_refused(matmul, measurer):
    space, _ = matmul
    with pytest.raises(ValueError, match="unknown method"):
        run_method("magic", space, measurer)
    with pytest.raises(ValueError, match="generator"):
        run_method("tlm", space, measurer)


def test_whole_model_table_and_graph_overlay(matmul, workload_spaces, measurer):
    space, results = matmul
    other = workload_spaces["add_64"]
    results.add(run_method("default", other, measurer))
    tasks = [space.task, other.task]
    rows, totals = task_table(tasks, results)
    assert [r["task"] for r in rows] == [space.task.id, other.task.id]
    assert rows[0]["heuristic (µs)"] == results.latency(space.task.id, "heuristic") * 1e6
    assert rows[1]["heuristic (µs)"] is None  # not measured: said, not invented
    assert totals["heuristic"] is None
    expected = sum(results.latency(t.id, "default") * t.weight for t in tasks)
    assert totals["default"] == pytest.approx(expected)
    graph = nx.DiGraph()
    graph.add_node(0, task=space.task.id)
    graph.add_node(1, task=other.task.id)
    assert node_values(graph, results, "heuristic") == {0: results.latency(space.task.id, "heuristic")}
    assert node_values(graph, results, "default", "speedup") == {0: 1.0, 1: 1.0}


def test_roofline_ceilings_are_measured_and_points_sit_under_or_near_them(matmul):
    space, results = matmul
    c = machine_ceilings()
    assert c is machine_ceilings()  # cached per process
    assert c.peak_gflops > 1 and c.bandwidth_gbs > 0.5 and c.ridge == c.peak_gflops / c.bandwidth_gbs
    assert c.roof(1e-3) == pytest.approx(c.bandwidth_gbs * 1e-3) and c.roof(1e6) == c.peak_gflops
    assert task_bytes(space.task) == 3 * 128 * 128 * 4
    points = roofline_points(space.task, results.of_task(space.task.id), c)
    assert {p.method for p in points} == {"default", "heuristic", "tlm", "tlm-best-of-k"}
    for p in points:
        assert p.intensity == pytest.approx(2 * 128**3 / (3 * 128 * 128 * 4))
        assert p.roof_gflops == c.roof(p.intensity) and p.fraction == p.gflops / p.roof_gflops


def test_decision_diff_same_and_different_sketches(matmul):
    space, results = matmul
    sk = space.sketches[0]
    same = decision_diff(space, (0, sk.sampled_decisions), (0, sk.sampled_decisions))
    assert same.same_sketch and same.changed == 0 and len(same.rows) == len(sk.points)
    tile = next(p for p in sk.points if p.kind == "tile" and len(p.choices) > 1)
    changed = list(sk.sampled_decisions)
    changed[tile.index] = next(c for c in tile.choices if c != tile.sampled)
    one = decision_diff(space, (0, sk.sampled_decisions), (0, changed))
    assert one.changed == 1 and [r.point for r in one.rows if r.changed] == [tile.title()]
    assert "1 of" in one.note
    assert len(space.sketches) > 1
    other = space.sketches[1]
    apart = decision_diff(space, (0, sk.sampled_decisions), (1, other.sampled_decisions))
    assert not apart.same_sketch and "Different sketches" in apart.note
    with pytest.raises(ValueError, match="decision points"):
        decision_diff(space, (0, sk.sampled_decisions[:-1]), (0, sk.sampled_decisions))


def test_a_users_database_is_matched_by_workload_and_remeasured(matmul, workload_spaces, measurer, tmp_path):
    space, results = matmul
    heuristic = results.get(space.task.id, "heuristic")
    program = apply_decisions(space, heuristic.sketch_index, heuristic.decisions)
    store = RecordStore(tmp_path / "theirs")
    (measured,) = measurer.measure(space.task, [program.mod])
    store.append(space.task, program.trace, measured)
    user = read_database(tmp_path / "theirs")
    other = workload_spaces["add_64"].task
    covered, missing, foreign = user.coverage([space.task, other])
    assert covered == [space.task.id] and missing == [other.id] and foreign == 0
    row = database_result(space, user, measurer)
    assert row.ok and row.method == "database" and row.latency > 0
    assert row.extra["recorded_latency_s"] == pytest.approx(measured.latency)
    assert (row.sketch_index, row.decisions) == (heuristic.sketch_index, heuristic.decisions)
    not_there = database_result(workload_spaces["add_64"], user, measurer)
    assert not not_there.ok and "no record of this task" in not_there.error
    # the same files uploaded as bytes
    files = [(tmp_path / "theirs" / n).read_bytes() for n in ("workload.json", "tuning_record.json")]
    again = database_from_files(*files, tmp_path / "upload")
    assert again.coverage([space.task])[0] == [space.task.id] and again.records == 1


@pytest.mark.parametrize(
    ("workload", "records", "message"),
    [
        (b"not json\n", b"", "line 1 is not JSON"),
        (b'["12", "%%%"]\n', b"", "not base64"),
        (b'{"a": 1}\n', b"", "structural hash"),
        (b'["12", "e30="]\n', b"[3, [[[], []], [1.0], {}, []]]\n", "no workload 3"),
        (b"\xff\xfe", b"", "not UTF-8"),
    ],
)
def test_bad_database_files_get_a_clear_error(tmp_path, workload, records, message):
    with pytest.raises(DatabaseError, match=message):
        database_from_files(workload, records, tmp_path / "db")


def test_database_files_over_the_limit_are_refused(tmp_path):
    with pytest.raises(DatabaseError, match="limit"):
        database_from_files(b"x" * 2048, b"", tmp_path / "db", max_bytes=1024)


def test_job_runs_in_the_background_and_reports():
    job = Job(lambda report: [report(i) for i in range(3)] and "done")
    assert job.wait(10) and job.result == "done" and job.events == [0, 1, 2] and job.error is None
    failing = Job(lambda report: 1 / 0)
    assert failing.wait(10) and failing.result is None and "ZeroDivisionError" in failing.error


@pytest.mark.slow
def test_a_tiny_search_row_has_its_convergence_and_decisions(space_builder, measurer):
    space = space_builder.build(task_from_primfunc(W.matmul_relu_64, "matmul_relu_64"))
    seen = []
    row = run_method("search", space, measurer, trials=4, on_trial=seen.append)
    assert row.ok and row.trials == len(seen) >= 4 and row.compile_s > 0
    curve = row.extra["convergence"]
    best = [c["best_latency"] for c in curve if c["best_latency"] is not None]
    assert best == sorted(best, reverse=True) and best[-1] == row.latency
    assert row.trace
    # MetaSchedule's MutateParallel (2% of its CPU mutations) changes a parallel extent, which no decision of our
    # space writes: such a best program has no decision vector. Every other one maps back to its decisions.
    if row.decisions is not None:
        assert apply_decisions(space, row.sketch_index, row.decisions)


def test_figures_and_tables_of_measured_results(matmul):
    from tlm_core.viz.compare import method_bars, results_table, roofline_figure, roofline_text

    space, results = matmul
    rows = results.of_task(space.task.id)
    table = results_table(rows)
    assert [r["method"] for r in table] == [r.label for r in rows]
    assert all(r["numeric check"].startswith("passed") for r in table)
    bars = method_bars(rows)
    assert len(bars.data) == 3 and all(list(b.y) == [r.label for r in rows] for b in bars.data)
    assert list(bars.data[0].x) == [r.latency * 1e6 for r in rows]
    c = machine_ceilings()
    points = roofline_points(space.task, rows, c)
    fig = roofline_figure(c, points, nominal_gflops=1000.0)
    assert [t.name for t in fig.data] == ["roof (measured)", "nominal vector-FMA peak (not measured)"] + [
        r.label for r in rows
    ]
    assert max(fig.data[0].y) == c.peak_gflops
    text = roofline_text(c, points, 1000.0)
    assert "compute-bound" in text or "memory-bound" in text
    assert f"{c.peak_gflops:.1f} GFLOP/s" in text


def test_graph_overlay_colours_measured_nodes_and_keeps_the_rest_grey(matmul):
    from tlm_core.viz.graph import NO_RESULT, graph_figure

    space, results = matmul
    graph = nx.DiGraph()
    for n, task in enumerate([space.task.id, "000000000000"]):
        graph.add_node(n, task=task, kind="matmul", func=f"f{n}", ops=["matmul"], flops=1.0, inputs=[], outputs=[])
    graph.add_edge(0, 1)
    values = node_values(graph, results, "heuristic", "speedup")
    fig = graph_figure(graph, selected=0, values=values, metric="speedup")
    (nodes,) = [t for t in fig.data if t.customdata is not None]
    assert list(nodes.customdata) == [0, 1] and nodes.marker.color[1] == NO_RESULT != nodes.marker.color[0]
    assert "speedup: " in nodes.hovertext[0] and "not measured yet" in nodes.hovertext[1]
    assert list(nodes.marker.size) == [16, 11]  # the selection is drawn as without an overlay
    plain = graph_figure(graph, selected=0)
    (kinds,) = [t for t in plain.data if t.customdata is not None]
    assert NO_RESULT not in kinds.marker.color
