"""`tlm compare`: every method per task, measured; the --json contract (per task: method, latency, compile, trials)."""

import json
from pathlib import Path

from tlm_core.cli import main

OPERATOR = str(Path(__file__).parent / "data" / "matmul_relu.py")
TASK_KEYS = {"id", "name", "method", "latency_s", "compile_s", "trials"}


def test_compare_an_operator_with_a_users_database(capsys, space_builder, tmp_path):
    db = tmp_path / "theirs"
    assert main(["heuristic", OPERATOR, "--records", str(db), "--json", "--quiet"]) == 0  # "their" tuning
    capsys.readouterr()
    assert main(["compare", OPERATOR, "--db", str(db), "--side-by-side", "2", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["method"]: r for r in doc["tasks"]}
    assert list(rows) == doc["methods"] == ["default", "heuristic", "tlm", "tlm-best-of-k", "database"]
    for r in rows.values():
        assert TASK_KEYS <= set(r) and r["ok"] and r["latency_s"] > 0, r
        assert r["roof_gflops"] > 0 and r["intensity"] > 0
    assert rows["tlm-best-of-k"]["trials"] == 4 + 3 and rows["tlm"]["trials"] == 0  # 4 candidates, 3 again
    assert rows["database"]["recorded_latency_s"] > 0
    assert rows["database"]["decisions"] == rows["heuristic"]["decisions"]  # the database's is the heuristic's
    # every program measured again beside the others (how close the two copies' figures are, and how the heuristic
    # compares with the default: benchmarks/speed_claims.py)
    assert all(r["side_by_side_s"] > 0 for r in rows.values())
    assert doc["database"]["covered"] == [rows["default"]["id"]]
    assert doc["kernel_time_s"]["default"] == rows["default"]["latency_s"]  # one task, called once
    assert doc["roofline"]["peak_gflops"] > 0 and doc["roofline"]["bandwidth_gbs"] > 0


def test_compare_says_when_the_database_is_missing(capsys, tmp_path):
    assert main(["compare", OPERATOR, "--db", str(tmp_path / "nothing"), "--quiet"]) == 2
    assert "holds no MetaSchedule database" in capsys.readouterr().err
