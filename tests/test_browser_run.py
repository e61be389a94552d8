"""The Run page in a real browser: open it from the sidebar, compile the default sample with the heuristic in the
background, see the check pass, the latency chart and the bundle; then upload the bundle's database (after a bad
file) and reproduce the run from it."""

from __future__ import annotations

import re
import zipfile

from tests.browser import SLOW, expect, screenshot, upload, wait_idle


def test_open_run_from_the_sidebar(page):
    expect(page.get_by_text("Subgraph calls", exact=True)).to_be_visible(timeout=SLOW)
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text("Run", exact=True).click()
    expect(page.get_by_text("Schedules from", exact=True)).to_be_visible(timeout=SLOW)
    expect(page.get_by_text("Pick a method and press the button")).to_be_visible()


def test_compile_with_the_heuristic_and_see_the_check_pass(page):
    page.get_by_text("Heuristic (Roller-style rules, no measurement)").click()
    button = page.get_by_role("button", name="Compile and run with heuristic (Roller-style)")
    expect(button).to_be_enabled()
    button.click()
    expect(page.get_by_test_id("stProgress").first).to_be_visible(timeout=60_000)  # the background run's progress
    check = page.get_by_test_id("stMetric").filter(has_text="Output check")
    expect(check).to_contain_text("passed", timeout=SLOW)
    expect(page.get_by_text("Matches PyTorch").first).to_be_visible()
    boxes = page.locator(".js-plotly-plot").first.evaluate("gd => gd.data.map(d => `${d.type}:${d.name}`)")
    assert boxes[0].startswith("box:PyTorch eager") and boxes[1] == "box:#1 heuristic (Roller-style)", boxes
    expect(page.get_by_test_id("stDownloadButton")).to_contain_text("Download the bundle")
    expect(page.get_by_text("What does compiling the whole model mean")).to_be_visible()
    screenshot(page, "run.png", 1300)


def test_the_bundle_reproduces_the_run_from_its_database(page, tmp_path):
    with page.expect_download() as download:
        page.get_by_test_id("stDownloadButton").locator("button").click()
    with zipfile.ZipFile(download.value.path()) as z:
        z.extractall(tmp_path)
    page.get_by_text("Your MetaSchedule database (JSONDatabase files)").click()
    expect(page.locator("input[type=file]")).to_have_count(2)
    bad = tmp_path / "bad.json"
    bad.write_text("this is not a database\n")
    upload(page, "workload.json", bad)
    upload(page, "tuning_record.json", tmp_path / "database" / "tuning_record.json")
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text("workload.json line 1 is not JSON")
    upload(page, "workload.json", tmp_path / "database" / "workload.json")
    button = page.get_by_role("button", name="Compile and run with your database")
    expect(button).to_be_enabled(timeout=60_000)
    button.click()
    expect(page.get_by_role("heading", name=re.compile("Run #2: .* with a database"))).to_be_visible(timeout=SLOW)
    expect(page.get_by_test_id("stMetric").filter(has_text="Output check")).to_contain_text("passed")
    expect(page.get_by_text("This session's runs")).to_be_visible()
