"""The Compare page, driven headless with AppTest: methods on a small subgraph of bert-tiny, the roofline, the
diff, a tiny background search, the side-by-side re-measurement, a bad database upload, the whole-model table
and the Model page's overlay."""

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_page, table

SAMPLE = "bert-tiny"


def figure(at: AppTest, key: str) -> dict:
    """A Plotly chart's figure JSON, found by the chart's widget key."""
    charts = [c for c in at.get("plotly_chart") if key in str(c.proto.id)]
    assert charts, f"no chart {key}"
    return json.loads(charts[0].proto.spec)


def pick_matmul1(at: AppTest) -> None:
    node = next(o for o in at.selectbox(key="w_node").options if o.endswith(" matmul1"))  # a 262 kFLOP batch matmul
    at.session_state["subgraph"] = (SAMPLE, int(node.split()[0][1:]))


@pytest.fixture(scope="module")
def page() -> AppTest:
    return app_page("views/compare.py", state={"sample": SAMPLE}, before=pick_matmul1)


def test_nothing_is_measured_at_first_and_the_roofline_is_drawn(page):
    assert any("Nothing measured" in i.value for i in page.info)
    roof = figure(page, "cmp-roofline")
    names = [t["name"] for t in roof["data"]]  # the measured roof, the paper peak, no points yet
    assert names == ["roof (measured)", "nominal vector-FMA peak (not measured)"]
    assert any("roofline" in e.label for e in page.expander)


def test_run_default_heuristic_and_tlm_top1(page):
    for key in ("cmp-default", "cmp-heuristic", "cmp-tlm"):
        page.button(key=key).click().run()
        assert not page.exception, page.exception
    rows = table(page, "numeric check")
    assert list(rows["method"]) == ["TVM default (no tuning)", "Roller-style heuristic, Top-1", "TLM, top-1 (greedy)"]
    assert (rows["latency (µs)"] > 0).all() and rows["numeric check"].str.startswith("passed").all()
    names = [t["name"] for t in figure(page, "cmp-roofline")["data"][2:]]
    assert names == list(rows["method"])  # one roofline point per measured schedule
    diff = table(page, "changed")  # heuristic vs TLM, decision by decision
    assert len(diff) > 0 and set(diff.columns) == {"point", "a", "b", "changed"}


def test_a_tiny_search_runs_in_the_background(page):
    page.number_input(key="w_cmp_trials").set_value(2)
    page.button(key="cmp-search").click().run()
    assert not page.exception, page.exception
    deadline = time.monotonic() + 400
    while not table(page, "numeric check")["method"].str.startswith("Ansor-style").any():
        assert time.monotonic() < deadline, "the search did not finish"
        time.sleep(2)
        page.run()  # the page stays responsive meanwhile: every run returns at once
        assert not page.exception, page.exception
    rows = table(page, "numeric check")
    row = rows[rows["method"].str.startswith("Ansor-style")].iloc[0]
    assert row["trials"] >= 2 and row["latency (µs)"] > 0 and row["compile (s)"] > 0
    curve = figure(page, "cmp-convergence")
    assert any(t.get("name") == "TLM, top-1 (greedy)" for t in curve["data"])  # TLM drawn on the curve


def test_measure_the_results_side_by_side(page):
    page.button(key="cmp-side-by-side").click().run()
    assert not page.exception, page.exception
    rows = table(page, "numeric check")
    assert (rows["side by side (µs)"] > 0).all()  # default, heuristic, TLM and search measured again together


def test_a_bad_database_upload_gets_a_clear_error(page):
    page.file_uploader(key="w_db_workload").set_value(("workload.json", b"not json", "application/json"))
    page.file_uploader(key="w_db_records").set_value(("tuning_record.json", b"", "application/json")).run()
    assert not page.exception, page.exception
    assert any("workload.json line 1 is not JSON" in e.value for e in page.error), [e.value for e in page.error]


def test_a_users_database_covers_this_subgraph_and_is_remeasured(page, tmp_path):
    from tlm_core.frontend import load_model
    from tlm_core.measure import MeasureResult
    from tlm_core.partition import partition
    from tlm_core.program import apply_decisions
    from tlm_core.records import RecordStore
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    # "their" database: the heuristic's program of this subgraph, with the latency the page measured for it
    part = partition(load_model(SAMPLE), host_target())
    task = part.task(part.graph.nodes[page.session_state["subgraph"][1]]["task"])
    theirs = page.session_state["compare_results"].get(task.id, "heuristic")
    program = apply_decisions(SpaceBuilder.for_target(host_target()).build(task), theirs.sketch_index, theirs.decisions)
    store = RecordStore(tmp_path / "db")
    store.append(task, program.trace, MeasureResult(ok=True, latency=theirs.latency, latencies=[theirs.latency]))
    files = {n: (tmp_path / "db" / n).read_bytes() for n in ("workload.json", "tuning_record.json")}
    page.file_uploader(key="w_db_workload").set_value(("workload.json", files["workload.json"], "application/json"))
    page.file_uploader(key="w_db_records").set_value(
        ("tuning_record.json", files["tuning_record.json"], "application/json")
    ).run()
    assert not page.exception and not page.error, [e.value for e in page.error]
    assert any(f"cover **1 of {len(part.tasks)} tasks**" in m.value for m in page.markdown)
    page.button(key="cmp-database").click().run()
    assert not page.exception, page.exception
    assert not page.error, [e.value for e in page.error]
    rows = table(page, "numeric check")
    row = rows[rows["method"] == "your MetaSchedule database (re-measured here)"].iloc[0]
    assert row["latency (µs)"] > 0 and row["numeric check"].startswith("passed")
    assert row["sketch"] == theirs.sketch_index


def test_whole_model_table_and_the_model_page_overlay(page):
    rows = table(page, "calls")
    row = rows[rows["name"] == "matmul1"].iloc[0]
    assert row["heuristic (µs)"] > 0 and row["tlm (µs)"] > 0
    assert rows["heuristic (µs)"].isna().sum() == len(rows) - 1  # only this task measured: the rest said empty
    page.switch_page("views/model.py").run()
    colour = page.selectbox(key="w_colour")
    assert "latency: heuristic" in colour.options and "speedup vs default: tlm" in colour.options
    colour.set_value("speedup vs default: heuristic").run()
    assert not page.exception, page.exception
    nodes = [t for t in figure(page, "graph")["data"] if t.get("customdata") and t["name"] != "expanded groups"]
    colours = [c for t in nodes for c in t["marker"]["color"]]
    measured = sum(c != "#c8c8c8" for c in colours)
    assert measured == 2  # bert-tiny calls matmul1 twice (in layer 1, and in layer 2's box); the rest stays grey
