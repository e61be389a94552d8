"""The Run page in a real browser: open it from the sidebar, compile the default sample with the heuristic in the
background, see the check pass, the latency chart and the bundle's download button."""

from __future__ import annotations

from tests.browser import SLOW, expect, screenshot, wait_idle


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
