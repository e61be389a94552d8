"""benchmarks/headroom.py --quick: one tiny task searched, search's best and the heuristic's Top-1 measured side by
side, results written; a second run resumes without searching again."""

import json
import sys

import pytest

from benchmarks import headroom


@pytest.mark.slow
def test_headroom_quick(tmp_path, monkeypatch):
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(sys, "argv", ["headroom.py", "--quick", "--rounds", "2", "--work", str(tmp_path / "work")])
    headroom.main()
    doc = json.loads((tmp_path / "results" / "headroom-quick.json").read_text())
    (row,) = doc["rows"]
    assert row["trials"] >= 4 and row["heuristic"] > 0 and row["search"] > 0
    (task,) = doc["tasks"]
    assert task["search_vs_heuristic"] == pytest.approx(row["heuristic"] / row["search"])
    assert doc["summary"]["geomean_search_vs_heuristic"] == pytest.approx(task["search_vs_heuristic"])
    assert "| model | task |" in (tmp_path / "results" / "headroom-quick.md").read_text()
    rows = (tmp_path / "work" / "rows.jsonl").read_text()
    headroom.main()  # resumed: the task is done, nothing is searched or measured again
    assert (tmp_path / "work" / "rows.jsonl").read_text() == rows
