"""benchmarks/evaluation.py --quick: one held-out task, every method, resumable, JSON + markdown written; the
side-by-side re-measurement, without search and again once a search's records are there."""

import json
import sys

import pytest

from benchmarks import evaluation
from benchmarks.tasks import held_out_tasks


@pytest.mark.slow
def test_evaluation_quick(tmp_path, monkeypatch, space_builder):
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path / "results"))
    # no search here (its ~1 min start-up; tests/test_baselines_search covers it): the wiring of the rest
    from tlm_core.model import default_checkpoint

    # --compare: the same checkpoint (its rows are the tlm rows), so that the side-by-side step has cmp_* programs
    argv = ["evaluation.py", "--quick", "--search-trials", "0", "--work", str(tmp_path / "work"),
            "--compare", str(default_checkpoint())]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    evaluation.main()
    doc = json.loads((tmp_path / "results" / "evaluation-quick.json").read_text())
    (task,) = doc["tasks"]
    assert doc["summary"]["valid"] == doc["summary"]["candidates"] == 2  # constrained decoding: all valid
    for key in ("tlm_top1_ms", "tlm_best10_ms", "random_top1_ms", "random_best10_ms", "heuristic_ms", "tlm_gen_s"):
        assert task[key] > 0, key
    assert task["search_ms"] is None
    # best-of-k as the product picks: both candidates measured again, the winner's second latency
    (tlm_row,) = [json.loads(x) for x in (tmp_path / "work" / "rows.jsonl").read_text().splitlines()
                  if '"method": "tlm2:' in x]  # fmt: skip
    assert sorted(tlm_row["again"]) == ["0", "1"] and tlm_row["best"] == tlm_row["again"][str(tlm_row["pick"])]
    assert tlm_row["best"] == min(tlm_row["again"].values())
    assert "| model | task |" in (tmp_path / "results" / "evaluation-quick.md").read_text()
    # a second run resumes: every (task, method) is done, nothing is measured again
    work = tmp_path / "work"
    rows = (work / "rows.jsonl").read_text()
    evaluation.main()
    assert (work / "rows.jsonl").read_text() == rows
    # side by side without search (no records): the TLM's, the other checkpoint's and the heuristic's programs
    (first,) = [json.loads(x) for x in rows.splitlines() if "together" in x]
    assert "search" not in first and all(first[r] > 0 for r in ("top1", "best", "cmp_top1", "cmp_best", "heuristic"))
    doc = json.loads((tmp_path / "results" / "evaluation-quick.json").read_text())
    assert doc["summary"]["geomean"]["together_cmp_top1_vs_heuristic"] > 0

    # together: a search's records, as Evaluation.search keeps them (here two: the heuristic's program, recorded
    # fastest, and a random one), and the next run measures each method's program again side by side
    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.measure import MeasureResult
    from tlm_core.program import random_program
    from tlm_core.records import RecordStore
    from tlm_core.target import host_target

    ((_, task, space),) = held_out_tasks(work, ["mobilenetv2-tiny"], 1, 0.3, space_builder, host_target())
    heuristic = heuristic_program(space).program
    trace = heuristic.trace
    # the heuristic's row keeps its program: the side-by-side step measures that one, not the rules' of the day
    (heur_row,) = [json.loads(x) for x in rows.splitlines() if '"method": "heuristic"' in x]
    assert heur_row["program"] == json.loads(json.dumps([heuristic.sketch_index, heuristic.decisions]))
    store = RecordStore(work / "search-0")
    store.append(task, trace, MeasureResult(ok=True, latency=1.0, latencies=[1.0]))
    other = random_program(space, rng=1).trace
    store.append(task, other, MeasureResult(ok=True, latency=2.0, latencies=[2.0]))
    evaluation.main()  # the side-by-side row lacks search, which now has records: measured again with it
    _, row = [json.loads(x) for x in (work / "rows.jsonl").read_text().splitlines() if "together" in x]
    assert row["rounds"] == 3 and all(
        row[r] > 0 for r in ("top1", "best", "cmp_top1", "cmp_best", "heuristic", "search")
    )
    # search's program: the faster of its two records measured again, not the one recorded fastest
    screened = row["search_screened"]
    assert len(screened) == 2 and screened[row["search_rank"]] == min(screened)
    if row["search_rank"] == 0:  # the heuristic's program: the same kernel, measured side by side, within noise
        assert 0.5 < row["search"] / row["heuristic"] < 2.0
    doc = json.loads((tmp_path / "results" / "evaluation-quick.json").read_text())
    assert doc["summary"]["geomean"]["together_heuristic_vs_search"] > 0
    assert doc["summary"]["geomean"]["together_cmp_top1_vs_search"] > 0


def test_reuse_search_seeds_rows_and_records_once(tmp_path, monkeypatch):
    import gzip

    results = tmp_path / "results"
    (results / "old-records").mkdir(parents=True)
    with gzip.open(results / "old-records" / "tuning_record.json.gz", "wt") as f:
        f.write('["a record"]\n')
    search = {"task": "t1", "method": "search:8", "best": 1e-3, "compile_s": 9.0}
    doc = {"summary": {"config": {"search_trials": 8}}, "rows": [search, {"task": "t1", "method": "random"}]}
    (results / "old.json").write_text(json.dumps(doc))
    monkeypatch.setenv("TLM_BENCH_RESULTS", str(results))
    work = tmp_path / "work"
    work.mkdir()
    for _ in range(2):  # a resumed run adds nothing twice
        ev = evaluation.Evaluation(work, k=2, search_trials=8)
        ev.reuse_search("old", "search:8")
        ev.measurer.close()
    rows = [json.loads(x) for x in (work / "rows.jsonl").read_text().splitlines()]
    assert rows == [{**search, "reused_from": "old"}]  # the search's row only: the rest is measured here
    assert (work / "search-8" / "tuning_record.json").read_text() == '["a record"]\n'
    ev = evaluation.Evaluation(work, k=2, search_trials=512)
    try:
        with pytest.raises(SystemExit, match="searched 8 trials, not 512"):
            ev.reuse_search("old", "search:512")
    finally:
        ev.measurer.close()
