"""`tlm heuristic / tune / compile`: --json contracts (per task: method, latency, compile time, trials)."""

import json
from pathlib import Path

import pytest

from tlm_core.cli import main
from tlm_core.records import RecordStore

OPERATOR = str(Path(__file__).parent / "data" / "matmul_relu.py")
TASK_KEYS = {"id", "name", "method", "latency_s", "compile_s", "trials"}


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def test_heuristic_top1_and_top_k(capsys, space_builder, tmp_path):
    doc = run_json(capsys, "heuristic", OPERATOR, "--top", "3", "--records", str(tmp_path / "r"))
    (task,) = doc["tasks"]
    assert TASK_KEYS <= set(task) and task["method"] == "heuristic" and task["trials"] == 0
    # both measured and checked (which is faster: benchmarks/speed_claims.py)
    assert task["ok"] and task["latency_s"] > 0 and task["default_latency_s"] > 0
    # 3 candidates measured, the 3 again (tlm_core.measure.screen): every measurement is a record
    assert task["top_k"]["k"] == 3 and task["top_k"]["trials"] == 6 and task["top_k"]["latency_s"] > 0
    assert len(RecordStore(tmp_path / "r")) == 1 + 6


@pytest.mark.slow
def test_tune_an_operator_with_a_tiny_budget(capsys, space_builder, tmp_path):
    doc = run_json(capsys, "tune", OPERATOR, "--trials", "8", "--per-iter", "8", "--records", str(tmp_path / "r"))
    (task,) = doc["tasks"]
    assert TASK_KEYS <= set(task) and task["method"] == "search" and task["trials"] >= 8
    assert task["latency_s"] > 0 and task["convergence"][-1]["best_latency"] == task["latency_s"]
    assert "Ansor-style" in doc["label"] and len(doc["trials"]) == task["trials"]
    assert len(RecordStore(tmp_path / "r")) == task["trials"]


@pytest.mark.slow
def test_compile_a_tiny_sample_by_default_and_from_a_database(capsys, space_builder, tmp_path):
    doc = run_json(capsys, "compile", "bert-tiny", "--method", "default", "--repeat", "2")
    assert doc["ok"] and doc["latency_s"] > 0 and doc["pytorch_latency_s"] > 0 and doc["scheduled_tasks"] == 0
    assert doc["max_abs_error"] < 1e-3 and all(TASK_KEYS <= set(t) for t in doc["tasks"])
    assert {t["method"] for t in doc["tasks"]} == {"default"}
    # A database the user brings (here: an empty one): every task falls back to default, the model still runs.
    RecordStore(tmp_path / "db")
    (tmp_path / "db" / "workload.json").touch()
    (tmp_path / "db" / "tuning_record.json").touch()
    doc = run_json(capsys, "compile", "bert-tiny", "--method", str(tmp_path / "db"), "--repeat", "2")
    assert doc["ok"] and doc["scheduled_tasks"] == 0


@pytest.mark.slow
def test_compile_a_tiny_sample_with_the_tlm(capsys, space_builder):
    doc = run_json(capsys, "compile", "bert-tiny", "--method", "tlm", "--repeat", "2")
    assert doc["ok"] and doc["max_rel_error"] < 1e-3 and doc["label"] == "TLM top-1"
    assert doc["scheduled_tasks"] == len(doc["tasks"]) and {t["method"] for t in doc["tasks"]} == {"tlm"}
    assert all(TASK_KEYS <= set(t) and t["trials"] == 0 and t["compile_s"] > 0 for t in doc["tasks"])
    assert doc["command"] == "tlm compile bert-tiny --method tlm" and doc["pytorch_latency_s"] > 0


def test_compile_refuses_an_unknown_method(capsys):
    assert main(["compile", OPERATOR, "--method", "nonsense", "--quiet"]) == 2
    assert "--method must be" in capsys.readouterr().err
