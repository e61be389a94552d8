"""The benchmarks' quick modes run and write their JSON and markdown (into a temporary directory)."""

import json

import pytest

from benchmarks import models, operators, peak


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path))
    return tmp_path


def test_operators_quick_one_operator(results, space_builder):
    assert operators.main(["--quick", "--trials", "0", "--only", "matmul"]) == 0
    doc = json.loads((results / "operators-quick.json").read_text())
    (row,) = doc["rows"]
    assert row["ok"] and row["heuristic_speedup"] > 2
    assert "| operator |" in (results / "operators-quick.md").read_text()


def test_peak_quick_without_search(results, space_builder):
    assert peak.main(["--quick", "--n", "128", "--trials", "0"]) == 0
    rows = json.loads((results / "peak-quick.json").read_text())["rows"]
    assert [r["method"] for r in rows] == ["numpy (BLAS)", "heuristic top-1", "heuristic top-10"]
    assert all(r["of_peak"] > 0 for r in rows)


@pytest.mark.slow
def test_models_quick_one_model(results, space_builder):
    assert models.main(["--quick", "--models", "bert-tiny", "--repeat", "2"]) == 0
    (row,) = json.loads((results / "models-quick.json").read_text())["rows"]
    assert row["ok"] and row["heuristic_ms"] < row["default_ms"] and row["pytorch_ms"] > 0
