"""The Compare page in a real browser: open it from the sidebar, run two methods, see the table and the roofline."""

from __future__ import annotations

import time

from tests.browser import SAMPLE, SLOW, choose, expect, screenshot, wait_idle


def plotted(page) -> list[list[str]]:
    """Every Plotly figure on the page, as drawn: its traces as "type:name"."""
    return page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(gd => (gd.data || []).map(d => `${d.type}:${d.name || ''}`))"
    )


def wait_for_point(page, label: str) -> None:
    """Until the roofline shows a point for `label` (the page's run indicator can lag a long measurement)."""
    deadline = time.monotonic() + SLOW / 1000
    while not any(f"scatter:{label}" in traces for traces in plotted(page)):
        assert time.monotonic() < deadline, f"no roofline point for {label}: {plotted(page)}"
        page.wait_for_timeout(500)
    wait_idle(page)


def test_open_compare_from_the_sidebar(page):
    expect(page.get_by_text("Subgraph calls", exact=True)).to_be_visible(timeout=SLOW)
    choose(page, "Sample model", SAMPLE)
    expect(page.get_by_text(f"{SAMPLE}: ").first).to_be_visible(timeout=SLOW)
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text("Compare").click()
    expect(page.get_by_role("button", name="TVM default", exact=True)).to_be_visible(timeout=SLOW)
    wait_idle(page)
    expect(page.get_by_text("Nothing measured for this subgraph yet")).to_be_visible()


def test_run_two_methods_and_see_the_table_and_the_roofline(page):
    methods = {"TVM default": "TVM default (no tuning)", "Heuristic Top-1": "Roller-style heuristic, Top-1"}
    for name, label in methods.items():
        page.get_by_role("button", name=name, exact=True).click()
        wait_for_point(page, label)  # measured and drawn on the roofline
    expect(page.get_by_text("Nothing measured for this subgraph yet")).to_have_count(0)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    figures = plotted(page)
    roofline = next((traces for traces in figures if "scatter:roof (measured)" in traces), None)
    assert roofline is not None, figures
    assert "scatter:TVM default (no tuning)" in roofline and "scatter:Roller-style heuristic, Top-1" in roofline
    assert ["bar:"] * 3 in figures, figures  # latency, GFLOP/s and compile time, one bar per method each
    expect(page.get_by_text("What does a roofline say? (this subgraph)")).to_be_visible()
    screenshot(page, "compare.png", 2300)


def test_the_model_page_colours_the_graph_by_the_measured_speedup(page):
    page.get_by_test_id("stSidebarNav").get_by_text("Model").click()
    expect(page.get_by_text("Subgraph calls", exact=True)).to_be_visible(timeout=SLOW)
    wait_idle(page)
    choose(page, "Colour nodes by", "speedup vs default: heuristic")
    wait_idle(page)
    graph = page.locator(".js-plotly-plot").first
    deadline = time.monotonic() + 60
    while True:  # the re-drawn figure: a colour bar, and the measured subgraph's calls coloured, the rest grey
        colours = graph.evaluate(
            "gd => gd.data.filter(d => d.customdata).flatMap(d => d.marker.color)"
            ".concat(gd.data.some(d => d.marker && d.marker.showscale) ? ['scale'] : [])"
        )
        if "scale" in colours:
            break
        assert time.monotonic() < deadline, "the graph was not re-coloured"
        page.wait_for_timeout(500)
    measured = [c for c in colours if c not in ("scale", "#c8c8c8")]
    assert 1 <= len(measured) < len(colours) - 1  # only the calls of the one measured task
    screenshot(page, "model-overlay.png", 1250)
