"""benchmarks/models.py --paper's bookkeeping: resumable rows and the report (no timings asserted)."""

import argparse
import json

from benchmarks import models as M


def _rows(tmp_path):
    pt = {"method": "pytorch", "eager_ms": 10.0, "eager_latencies_ms": [10.0, 9.0], "torch_compile_ms": 5.0,
          "torch_compile_latencies_ms": [5.0], "torch_compile_ok": True, "torch_compile_compile_s": 1.0,
          "load_before": 0.5, "load_after": 0.7}  # fmt: skip
    tvm = {"tasks": 3, "compile_s": 2.0, "max_rel_error": 1e-5, "load_before": 0.5, "load_after": 0.6}
    rows = [
        {"model": "a", **pt},
        {"model": "a", "method": "heuristic", **tvm, "ok": True, "latency_ms": 5.0, "latencies_ms": [5.0, 4.5]},
        {"model": "a", "method": "tlm", **tvm, "ok": False, "max_rel_error": 0.5},  # a mismatch: no time
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_paper_report_counts_only_checked_rows(tmp_path, monkeypatch):
    _rows(tmp_path)
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path / "results"))
    assert set(M.done_rows(tmp_path / "rows.jsonl")) == {("a", "pytorch"), ("a", "heuristic"), ("a", "tlm")}
    args = argparse.Namespace(work=str(tmp_path), results="paper")
    assert M.paper_report(tmp_path, ["a", "b"], M.PAPER_METHODS, args) == 1  # incomplete
    doc = json.loads((tmp_path / "results" / "paper.json").read_text())
    assert not doc["complete"]
    assert doc["geomeans"]["heuristic_vs_eager"] == {"geomean": 2.0, "models": 1}
    assert doc["geomeans"]["tlm_vs_eager"]["models"] == 0
    md = (tmp_path / "results" / "paper.md").read_text()
    assert "output mismatch" in md and "(2.00× / 1.00×)" in md and "continues it" in md
