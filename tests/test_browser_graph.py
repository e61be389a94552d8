"""The Model page's graph at paper size in a real browser: BERT-base's 292 calls drawn as labelled groups ("layer
×12", its layers as boxes) and labelled calls, not as unlabelled dots; drag pans, the wheel zooms, and a click on a
layer's box expands it to its calls. Slow: loading and partitioning BERT-base takes 10-15 s (more under load)."""

from __future__ import annotations

import re

import pytest

from tests.browser import SLOW, choose, click_graph_node, expect, figure_points, screenshot, wait_for_graph, wait_idle

pytestmark = pytest.mark.slow
PAPER = "bert"  # 12 layers of 24 calls after a 4-call embedding


def drawn(page) -> dict[int | str, str]:
    """Every point of the graph figure, in view or not: customdata -> its text label; read twice alike, as a
    re-run can replace the figure (or leave it empty for a moment) between two reads."""
    last = None
    for _ in range(60):
        rows = page.locator(".js-plotly-plot").first.evaluate(
            "gd => (gd.data || []).flatMap(d => (d.customdata || []).map((n, i) => [n, (d.text || [])[i] || '']))"
        )
        if rows and rows == last:
            return {(n if isinstance(n, str) else int(n)): text for n, text in rows}
        last = rows
        page.wait_for_timeout(500)
    pytest.fail(f"the graph figure did not settle: {last}")


def y_range(page) -> list[float]:
    return page.locator(".js-plotly-plot").first.evaluate("gd => gd._fullLayout.yaxis.range.slice()")


def test_open_a_paper_size_model(page):
    expect(page.get_by_text("Subgraph calls", exact=True)).to_be_visible(timeout=SLOW)
    choose(page, "Sample model", PAPER)
    expect(page.get_by_text(f"{PAPER}: 292 subgraph calls").first).to_be_visible(timeout=SLOW)
    wait_idle(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="Subgraph calls")).to_contain_text("292")
    wait_for_graph(page)


def test_the_graph_shows_labelled_groups_not_292_dots(page):
    points = drawn(page)
    calls = {n: t for n, t in points.items() if isinstance(n, int)}
    boxes = {n: t for n, t in points.items() if isinstance(n, str) and n.startswith("expand:")}
    heads = {n: t for n, t in points.items() if isinstance(n, str) and n.startswith("collapse:")}
    # the current subgraph (the heaviest matmul, in layer 1) is shown: the stack and layer 1 are open, and the
    # eleven other layers are one labelled box each
    assert "layer ×12" in heads["collapse:g0"] and "layer 1" in heads["collapse:g0.0"]
    assert sorted(re.search(r"layer \d+", t).group() for t in boxes.values()) == sorted(
        f"layer {i}" for i in range(2, 13)
    )
    assert all("24 calls" in t for t in boxes.values())
    assert len(calls) == 4 + 24  # the embeddings and layer 1, each labelled "#n operator…"
    assert all(re.match(rf"#{n}( |$)", t) for n, t in calls.items()), calls
    in_view = figure_points(page)  # the figure opens on its top: the embeddings, layer 1 and the next layers' boxes
    assert 0 in in_view and "expand:g0.1" in in_view, in_view
    config = page.locator(".js-plotly-plot").first.evaluate("gd => [gd._context.scrollZoom, gd._fullLayout.dragmode]")
    assert config[0] and config[1] == "pan", config
    screenshot(page, "model.png", 1900)  # the README's picture: the whole figure below the model's summary


def test_drag_pans_and_the_wheel_zooms(page):
    graph = page.locator(".js-plotly-plot").first
    graph.evaluate("gd => gd.scrollIntoView({block: 'center'})")
    box = graph.locator(".nsewdrag").first.bounding_box()  # the plot area, where a drag pans
    before = y_range(page)
    x, y = box["x"] + 20, box["y"] + box["height"] - 40  # the left margin of the plot: empty
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x, y - 200, steps=10)
    page.mouse.move(x, y - 400, steps=10)
    page.mouse.up()
    page.wait_for_timeout(500)
    panned = y_range(page)
    assert panned[0] < before[0] and panned[1] - panned[0] == pytest.approx(before[1] - before[0])  # down the model
    page.mouse.move(x, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -400)  # zoom in
    page.wait_for_timeout(800)
    zoomed = y_range(page)
    assert zoomed[1] - zoomed[0] < panned[1] - panned[0], (panned, zoomed)


def test_click_a_layer_box_to_expand_it(page):
    visible = [n for n in figure_points(page) if isinstance(n, str) and n.startswith("expand:")]
    assert visible, "no layer box in view after panning down"
    target = visible[-1]
    gid = target.split(":", 1)[1]
    number = int(gid.split(".")[1]) + 1  # g0.6: layer 7
    first = 4 + 24 * (number - 1)
    for attempt in range(3):  # a click that lands while the page re-renders is lost
        click_graph_node(page, target)
        wait_idle(page)
        try:
            chosen = page.get_by_test_id("stMultiSelect").filter(has_text="Expanded groups")
            expect(chosen).to_contain_text(f"layer {number} (#", timeout=30_000)
            break
        except AssertionError:
            if attempt == 2:
                raise
    points = drawn(page)
    assert f"collapse:{gid}" in points and target not in points
    assert set(range(first, first + 24)) <= {n for n in points if isinstance(n, int)}  # its calls, labelled
    assert points[first].startswith(f"#{first} ")
    assert {f"collapse:{gid}", first} <= set(figure_points(page))  # the view moved to the group just expanded
    screenshot(page, "model-expanded.png", 1900)
