"""One method's failure never aborts a comparison: its row says why (issue 34 item 5); the heuristic on the
operator kinds that once failed or ran long (a transposed and a 3-D convolution, tiny shapes)."""

import json
from pathlib import Path

import pytest
from tvm import te, topi

from tlm_core.baselines import heuristic
from tlm_core.compare import run_method
from tlm_core.partition import task_from_primfunc, te_prim_func
from tlm_core.program import InvalidDecisions, apply_decisions

OPERATOR = str(Path(__file__).parent / "data" / "matmul_relu.py")


def conv2d_transpose():
    x, w = te.placeholder((1, 8, 8, 8), name="X"), te.placeholder((8, 4, 3, 3), name="W")
    out = topi.nn.conv2d_transpose_nchw(x, w, (2, 2), (1, 1), "float32", (1, 1))
    return task_from_primfunc(te_prim_func([x, w, out]))


def conv3d():
    x, w = te.placeholder((1, 4, 6, 6, 6), name="X"), te.placeholder((8, 4, 3, 3, 3), name="W")
    return task_from_primfunc(te_prim_func([x, w, topi.nn.conv3d_ncdhw(x, w, 1, 1, 1, 1)]))


@pytest.mark.parametrize("make", [conv2d_transpose, conv3d], ids=["conv2d_transpose", "conv3d"])
def test_the_heuristic_writes_a_valid_program_for_transposed_and_3d_convolutions(space_builder, make):
    space = space_builder.build(make())
    cand = heuristic.heuristic_program(space)
    assert apply_decisions(space, cand.sketch_index, cand.decisions).mod is not None


def test_no_heuristic_program_names_each_sketchs_reason(workload_spaces, monkeypatch):
    from tlm_core.baselines.heuristic import candidates

    def refuse(space, index, *args, **kwargs):
        raise RuntimeError(f"no rule for sketch {index}'s loops")

    monkeypatch.setattr(candidates, "construct", refuse)
    space = workload_spaces["matmul_128"]
    with pytest.raises(InvalidDecisions) as err:
        heuristic.heuristic_program(space)
    text = str(err.value)
    assert text.startswith("the heuristic found no valid program for task matmul_128: sketch 0: RuntimeError")
    assert all(f"sketch {i}: RuntimeError: no rule for sketch {i}'s loops" in text for i in range(len(space.sketches)))


def test_a_failing_method_is_a_row_with_its_reason(workload_spaces, measurer, monkeypatch):
    def fail(space, *args, **kwargs):
        raise InvalidDecisions(None, f"the heuristic found no valid program for task {space.task.name}: why")

    monkeypatch.setattr(heuristic, "heuristic_program", fail)
    space = workload_spaces["add_64"]
    row = run_method("heuristic", space, measurer)
    assert not row.ok and row.latency is None and row.method == "heuristic"
    assert row.error == "heuristic failed: InvalidDecisions: the heuristic found no valid program for task add_64: why"
    assert run_method("default", space, measurer).ok  # the others go on


def test_compare_goes_on_when_one_method_fails(capsys, monkeypatch):
    from tlm_core.cli import main

    monkeypatch.setattr(heuristic, "heuristic_program", lambda space, *a, **k: 1 / 0)
    assert main(["compare", OPERATOR, "--candidates", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "failed: " in out and "heuristic failed: ZeroDivisionError: division by zero" in out
    assert main(["compare", OPERATOR, "--candidates", "2", "--quiet", "--json"]) == 0
    rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)["tasks"]}
    assert not rows["heuristic"]["ok"] and rows["heuristic"]["error"].startswith("heuristic failed")
    assert all(rows[m]["ok"] for m in ("default", "tlm", "tlm-best-of-k")), rows


@pytest.mark.slow
def test_a_search_stops_at_its_time_limit_with_the_trials_so_far(workload_spaces, measurer, tmp_path):
    from tlm_core.baselines.search import search
    from tlm_core.records import RecordStore

    task = workload_spaces["matmul_128"].task
    store = RecordStore(tmp_path)
    result = search([task], workload_spaces["matmul_128"].target, 4, measurer, store=store, per_iter=2, max_seconds=0)
    assert result.stopped and len(result.trials) == 2 and result.best[task.id] > 0  # the first batch only
    assert len(store.tvm_database().get_all_tuning_records()) == 2  # its records kept
