"""Whole-model compilation: schedules applied to the fused module, run with the VM, checked vs PyTorch."""

import pytest

from tlm_core.compile import (
    compile_model,
    database_schedules,
    default_schedules,
    heuristic_schedules,
    load_database,
    run_model,
)
from tlm_core.frontend import load_model
from tlm_core.measure import MeasureResult
from tlm_core.partition import partition
from tlm_core.records import RecordStore
from tlm_core.target import host_target


@pytest.fixture(scope="module")
def bert():
    model = load_model("bert-tiny")
    return model, partition(model, host_target())


@pytest.mark.slow
def test_default_and_heuristic_match_pytorch(bert, space_builder):
    model, part = bert
    target = host_target()
    default = run_model(model, compile_model(part, default_schedules(part), target), repeat=3)
    heuristic_compiled = compile_model(part, heuristic_schedules(part, space_builder.build), target)
    heuristic = run_model(model, heuristic_compiled, repeat=3)
    assert default.ok and heuristic.ok, (default, heuristic)
    assert heuristic_compiled.scheduled == len(part.tasks)
    assert heuristic.max_rel_error < 1e-3 and heuristic.pytorch_latency > 0
    assert heuristic.latency < default.latency  # measured ~15x on bert-tiny


@pytest.mark.slow
def test_a_users_json_database_is_applied_per_task(bert, space_builder, tmp_path):
    model, part = bert
    target = host_target()
    heur = heuristic_schedules(part, space_builder.build)
    store = RecordStore(tmp_path / "db")
    chosen = part.tasks[:3]
    for task in chosen:  # a "user's" database that knows three tasks
        store.append(task, heur[task.id].trace, MeasureResult(ok=True, latency=1e-5, latencies=[1e-5]), target)
    schedules = database_schedules(load_database(tmp_path / "db"), part, target, "db")
    assert {t for t, s in schedules.items() if s.trace is not None} == {t.id for t in chosen}
    compiled = compile_model(part, schedules, target)
    assert compiled.scheduled == 3
    assert run_model(model, compiled, repeat=2, with_pytorch=False).ok


def test_load_database_refuses_a_directory_without_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="no MetaSchedule database"):
        load_database(tmp_path)
