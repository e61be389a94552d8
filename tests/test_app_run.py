"""The Run page, driven headless with AppTest: compile the default (tiny) sample with the heuristic, check it,
see the bundle offered, time torch.compile beside it. (Uploaded databases: tests/test_compile_database.py.)"""

import io
import json
import time
import zipfile

import pytest
from streamlit.testing.v1 import AppTest

import sample_models
from tests.apptest import app_page, metrics


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def finish(at: AppTest, timeout: float = 600) -> None:
    """Rerun the page (as the browser's polling does) until the background run has been collected."""
    deadline = time.monotonic() + timeout
    while "run_job" in at.session_state:
        assert time.monotonic() < deadline, "the run did not finish"
        time.sleep(1.0)
        at.run()
        assert not at.exception, at.exception


@pytest.fixture(scope="module")
def page() -> AppTest:
    return app_page("views/run.py")


def test_compile_the_default_sample_with_the_heuristic(page):
    page.radio(key="run_method").set_value("heuristic").run()
    page.slider(key="run_repeat").set_value(3).run()
    button(page, "run_go").click().run()
    assert not page.exception, page.exception
    finish(page)
    assert "run_error" not in page.session_state or page.session_state["run_error"] is None
    (run,) = page.session_state["runs"]
    doc = run["doc"]
    assert doc["model"] == sample_models.DEFAULT and doc["method"] == "heuristic" and doc["ok"]
    assert len(doc["latencies_s"]) == 3 and len(doc["pytorch_latencies_s"]) == 3
    m = metrics(page)
    assert m["Output check"] == "passed" and m["End to end (median)"].endswith(" ms")
    assert any("Matches PyTorch" in s.value for s in page.success)
    tasks = next(d.value for d in page.dataframe if "kernel check" in d.value.columns)
    assert len(tasks) == len(doc["tasks"]) and set(tasks["method"]) == {"heuristic"}
    assert (tasks["kernel check"] == "passed").all() and (tasks["kernel latency (µs)"] > 0).all()
    assert any("End-to-end compilation" in md.value for md in page.markdown)  # the teaching expander
    from tlm_core.target import caches_kib, host_target, kib_text

    l1 = caches_kib(host_target())[0]  # the machine's caches beside its CPU name
    assert not l1 or any(f"L1d {kib_text(l1)}" in md.value for md in page.markdown)
    with zipfile.ZipFile(io.BytesIO(run["bundle"])) as z:
        assert json.loads(z.read("results.json"))["latency_s"] == doc["latency_s"]
        assert doc["command"] in z.read("README.md").decode()


def test_torch_compile_beside_the_run(page):
    button(page, "run_tc_go").click().run()
    assert not page.exception, page.exception
    m = metrics(page)
    assert m["torch.compile output"] == "passed" and m["torch.compile (median)"].endswith(" ms")
    assert m["vs torch.compile"].endswith("×") and float(m["vs torch.compile"][:-1]) > 0


def test_the_database_method_waits_for_both_files(page):
    page.radio(key="run_method").set_value("database").run()
    assert not page.exception, page.exception
    assert button(page, "run_go").disabled  # nothing to compile with until both files are uploaded
    assert any("Upload both files" in i.value for i in page.info)
