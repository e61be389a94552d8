"""The benchmarks' quick modes run and write their JSON and markdown (into a temporary directory)."""

import json

import pytest

from benchmarks import (
    heuristic_rule,
    models,
    operators,
    peak,
    search_ablation,
    small_kernels,
    speed_claims,
    vector_lanes,
)


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path))
    return tmp_path


def test_operators_quick_one_operator(results, space_builder):
    from tlm_core.model import default_checkpoint

    shipped = str(default_checkpoint())
    assert operators.main(["--quick", "--trials", "0", "--only", "matmul", "--compare", shipped]) == 0
    doc = json.loads((results / "operators-quick.json").read_text())
    (row,) = doc["rows"]
    # ratios of the same run's figures; which method is faster is the benchmark's finding, not a test's
    assert row["ok"] and row["heuristic_speedup"] == row["default_us"] / row["heuristic_us"]
    # the TLM's rows: top-1 measured beside the others, best-of-10 measured (a latency only a measured pick has)
    assert row["tlm_us"] > 0 and row["tlm_best_us"] > 0 and row["tlm_best_s"] > 0 and row["tlm_s"] > 0
    assert row["heuristic_vs_tlm"] == row["heuristic_us"] / row["tlm_us"]
    # a second checkpoint's programs beside the first's (here the same checkpoint: a ship check's plumbing)
    assert row["cmp_tlm_us"] > 0 and row["cmp_tlm_best_us"] > 0
    assert row["together_cmp_tlm_vs_tlm"] == row["together_cmp_tlm_us"] / row["together_tlm_us"]
    assert "| operator |" in (results / "operators-quick.md").read_text()


def test_operators_quick_side_by_side_after_a_search(results, space_builder):
    assert operators.main(["--quick", "--trials", "2", "--only", "sum"]) == 0
    doc = json.loads((results / "operators-quick.json").read_text())
    (row,) = doc["rows"]
    assert row["ok"] and row["search_trials"] >= 2
    # every method's program measured again beside the others, and the ratios taken from those figures
    assert all(row[f"together_{m}_us"] > 0 for m in ("heuristic", "top10", "tlm", "tlm_best", "search"))
    assert row["together_search_vs_tlm"] == row["together_search_us"] / row["together_tlm_us"]
    assert doc["geomean"]["together_search_vs_tlm"] == pytest.approx(row["together_search_vs_tlm"])


def test_peak_quick_without_search(results, space_builder):
    from tlm_core.model import default_checkpoint

    shipped = str(default_checkpoint())
    assert peak.main(["--quick", "--n", "128", "--trials", "0", "--compare", shipped]) == 0
    rows = json.loads((results / "peak-quick.json").read_text())["rows"]
    methods = ["numpy (BLAS)", "heuristic top-1", "heuristic top-10", "TLM top-1", "TLM best-of-10"]
    assert [r["method"] for r in rows] == methods + [f"{m} ({shipped})" for m in methods[3:]]
    assert all(r["of_peak"] > 0 for r in rows)
    assert rows[4]["compile_s"] > 0 and rows[3]["compile_s"] > 0  # compile times: the table's figures


def test_models_quick_one_model_one_method(results):
    # test_compile runs the heuristic end to end; here only the benchmark's wiring, on the cheapest method.
    assert models.main(["--quick", "--models", "bert-tiny", "--repeat", "2", "--methods", "default"]) == 0
    (row,) = json.loads((results / "models-quick.json").read_text())["rows"]
    assert row["ok"] and row["default_ms"] > 0 and row["pytorch_ms"] > 0 and row["default_vs_pytorch"] > 0


def test_models_torch_compile_row(results):
    assert models.main(["--quick", "--models", "bert-tiny", "--repeat", "2", "--methods", "torch_compile"]) == 0
    (row,) = json.loads((results / "models-quick.json").read_text())["rows"]
    assert row["ok"] and row["torch_compile_ms"] > 0 and row["torch_compile_compile_s"] > 0
    assert row["torch_compile_vs_pytorch"] == row["pytorch_ms"] / row["torch_compile_ms"]


def test_vector_lanes_programs_all_check(results):
    assert vector_lanes.main([]) == 0
    rows = json.loads((results / "vector_lanes.json").read_text())["rows"]
    assert len(rows) == 5 and all(r["ok"] and r["latency_us"] > 0 for r in rows)


def test_small_kernels_on_a_one_task_model(results, tiny_onnx):
    assert small_kernels.main(["--model", str(tiny_onnx[0])]) == 0
    doc = json.loads((results / "small_kernels.json").read_text())
    (row,) = doc["rows"]  # matmul + relu of a 1x16 input
    assert row["heuristic_us"] > 0 and row["tlm_us"] > 0 and row["error"] is None
    assert doc["geomean"] == pytest.approx(row["tlm_speed_vs_heuristic"], rel=1e-3)


def test_heuristic_rule_measures_the_changed_programs_side_by_side(tmp_path, monkeypatch):
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path))
    argv = ["--knob", "unroll=0", "--models", "mobilenetv2-tiny", "--limit", "1", "--rounds", "1"]
    assert heuristic_rule.main([*argv, "--work", str(tmp_path / "work"), "--results", "rule"]) == 0
    doc = json.loads((tmp_path / "rule.json").read_text())
    (row,) = doc["rows"]
    assert row["rules_ms"] > 0 and row["changed_ms"] > 0 and row["rules_decisions"] != row["changed_decisions"]
    with pytest.raises(SystemExit, match="name one of"):
        heuristic_rule.changed_knobs("no_such_knob=1")


def test_search_ablation_swaps_one_decision_at_a_time():
    heuristic = (1, [(1, 56, 1, 1), (24, 1), 1])
    search = (2, [(56, 1, 1, 1), (24, 1), 2])
    variants = search_ablation.variants(heuristic, search)
    assert variants == {
        "heuristic": heuristic,
        "search": search,
        "h+sketch": (2, heuristic[1]),
        "h+d0=(56, 1, 1, 1)": (1, [(56, 1, 1, 1), (24, 1), 1]),
        "s-d0=(1, 56, 1, 1)": (2, [(1, 56, 1, 1), (24, 1), 2]),
        "h+d2=2": (1, [(1, 56, 1, 1), (24, 1), 2]),
        "s-d2=1": (2, [(56, 1, 1, 1), (24, 1), 1]),
    }


def test_speed_claims_quick_measures_every_operator_claim(results, space_builder):
    assert speed_claims.main(["--quick"]) == 0
    doc = json.loads((results / "speed_claims-quick.json").read_text())
    # the figures exist and are positive; whether each claim holds is the benchmark's finding, not a test's
    assert len(doc["rows"]) == 4 and all(r["value"] > 0 and isinstance(r["holds"], bool) for r in doc["rows"])
    assert all(r["test"] and r["threshold"] for r in doc["rows"])
    assert "| claim |" in (results / "speed_claims-quick.md").read_text()
