"""benchmarks/evaluation.py --quick: one held-out task, every method, resumable, JSON + markdown written."""

import json
import sys

import pytest

from benchmarks import evaluation


@pytest.mark.slow
def test_evaluation_quick(tmp_path, monkeypatch):
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path / "results"))
    # no search here (its ~1 min start-up; tests/test_baselines_search covers it): the wiring of the rest
    argv = ["evaluation.py", "--quick", "--search-trials", "0", "--work", str(tmp_path / "work")]
    monkeypatch.setattr(sys, "argv", argv)
    evaluation.main()
    doc = json.loads((tmp_path / "results" / "evaluation-quick.json").read_text())
    (task,) = doc["tasks"]
    assert doc["summary"]["valid"] == doc["summary"]["candidates"] == 2  # constrained decoding: all valid
    for key in ("tlm_top1_ms", "tlm_best10_ms", "random_top1_ms", "random_best10_ms", "heuristic_ms", "tlm_gen_s"):
        assert task[key] > 0, key
    assert task["search_ms"] is None
    assert task["tlm_best10_ms"] <= task["tlm_top1_ms"]
    assert "| model | task |" in (tmp_path / "results" / "evaluation-quick.md").read_text()
    # a second run resumes: every (task, method) is done, nothing is measured again
    rows = (tmp_path / "work" / "rows.jsonl").read_text()
    evaluation.main()
    assert (tmp_path / "work" / "rows.jsonl").read_text() == rows
