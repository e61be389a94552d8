"""The search baseline: MetaSchedule's evolutionary search + XGBoost through our Measurer."""

import pytest

import tests.workloads as W
from tlm_core.baselines.search import LABEL, search, trial_budget
from tlm_core.partition import task_from_primfunc
from tlm_core.records import RecordStore
from tlm_core.target import host_target


def test_label_is_honest():
    assert "Ansor-style" in LABEL and "MetaSchedule" in LABEL


def test_budget_follows_flops_with_a_floor():
    big, small = task_from_primfunc(W.matmul_128, "big"), task_from_primfunc(W.add_64, "small")
    budget = trial_budget([big, small], 100, min_per_task=4)
    assert budget[big.id] > budget[small.id] == 4


@pytest.mark.slow
def test_a_tiny_search_finds_a_checked_best_and_writes_records_tvm_reads(measurer, space_builder, tmp_path):
    task = task_from_primfunc(W.matmul_128, "matmul_128")
    store = RecordStore(tmp_path / "records")
    seen = []
    result = search([task], host_target(), trials=8, measurer=measurer, store=store, per_iter=8, on_trial=seen.append)
    assert [t.index for t in result.trials] == list(range(len(result.trials))) and len(result.trials) >= 8
    assert seen == result.trials
    walls = [t.wall_s for t in result.trials]
    assert walls == sorted(walls)
    # the best is the fastest trial that passed its numeric check (how it compares with the untuned task:
    # benchmarks/speed_claims.py)
    passed = [t.latency for t in result.trials if t.latency is not None]
    assert passed and result.best[task.id] == min(passed) > 0
    assert result.convergence(task.id)[-1]["best_latency"] == result.best[task.id]
    db = store.tvm_database()  # TVM's own JSONDatabase reads what the search wrote
    assert len(db.get_all_tuning_records()) == len(result.trials)
    assert db.has_workload(task.mod) and db.get_top_k(db.commit_workload(task.mod), 1)
