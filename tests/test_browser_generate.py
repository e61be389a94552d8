"""Generate page in a real browser: open it from the sidebar, generate, step and play through the sentence,
override a decision and see the decisions the model re-generated after it."""

from __future__ import annotations

import re
import time

from tests.browser import SLOW, expect, screenshot, selectbox, wait_idle


def step_slider(page):
    return page.locator('input[type=range][aria-label="Step"]')


def step_value(page) -> int:
    return int(step_slider(page).input_value())


def widget_value(page, label: str, pattern: str = "") -> str:
    """The value of the one widget input with this label, once it matches `pattern`: a widget whose key changes
    is drawn anew and its old copy stays on screen for a while, so wait until only one is left."""
    inputs = page.locator(f'input[aria-label="{label}"]')
    deadline = time.monotonic() + 60
    while True:
        values = inputs.evaluate_all("els => els.map(e => e.value)")
        if len(values) == 1 and re.match(pattern, values[0]):
            return values[0]
        assert time.monotonic() < deadline, f"{label}: {values}, expected one matching {pattern!r}"
        page.wait_for_timeout(250)


def options_of(page, label: str) -> list[str]:
    """Open a selectbox and list its options (a click that lands while the page re-renders may not open it)."""
    for attempt in range(3):
        selectbox(page, label).locator("input").click()
        try:
            expect(page.get_by_role("option").first).to_be_visible(timeout=10_000)
            return [t.strip() for t in page.get_by_role("option").all_inner_texts()]
        except AssertionError:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    raise AssertionError("unreachable")


def test_open_generate_from_the_sidebar_and_generate(page):
    expect(page.get_by_text("Subgraph calls", exact=True)).to_be_visible(timeout=SLOW)
    page.get_by_test_id("stSidebarNav").get_by_text("Generate").click()
    expect(page.get_by_test_id("stMetric").filter(has_text="Legal tokens")).to_be_visible(timeout=SLOW)
    wait_idle(page)
    page.get_by_text("beam search", exact=True).click()
    wait_idle(page)
    page.get_by_role("button", name="Generate", exact=True).click()
    wait_idle(page)
    expect(page.get_by_text("The tensor sentence, token by token")).to_be_visible()
    expect(page.get_by_text("&lt;dec&gt;")).to_have_count(0)  # tokens are escaped once, shown as themselves
    expect(page.get_by_text("<dec>", exact=True)).to_be_visible()


def test_step_and_play(page):
    assert step_value(page) == 1
    for n in (2, 3):
        page.get_by_role("button", name="Next").click()
        expect(step_slider(page)).to_have_value(str(n), timeout=30_000)
    expect(page.get_by_text(re.compile(r"^Decision #\d+ ")).first).to_be_visible()
    masked = page.get_by_test_id("stMetric").filter(has_text="Masked tokens")
    expect(masked).to_contain_text(re.compile(r"\d{3}"))
    page.get_by_role("button", name="Play").click()
    expect(step_slider(page)).not_to_have_value("3", timeout=30_000)
    page.get_by_role("button", name="Pause").click()  # the page stayed responsive while playing
    wait_idle(page)
    expect(page.get_by_role("button", name="Play")).to_be_visible()


def test_override_a_decision_and_see_the_rest_regenerated(page):
    options = options_of(page, "Decision to override")
    decision = next(t for t in options if t.startswith("#") and "tile of loop" in t)
    page.get_by_role("option", name=decision, exact=True).click()
    current = widget_value(page, "New value (legal here)", r"\[\d")  # the tile's factors
    new = next(t for t in options_of(page, "New value (legal here)") if t != current)
    page.get_by_role("option", name=new, exact=True).click()
    override = page.get_by_role("button", name="Override and re-generate")
    expect(override).to_be_enabled(timeout=60_000)
    wait_idle(page)
    override.click()
    index = decision.split()[0][1:]
    changed = page.get_by_text("decisions changed:")
    expect(changed).to_be_visible(timeout=60_000)
    assert index in re.findall(r"\d+", changed.inner_text().split("changed:")[1])
    assert widget_value(page, "New value (legal here)", re.escape(new) + "$") == new  # the new generation takes it
    assert widget_value(page, "Decision to override").startswith(f"#{index} ")
    wait_idle(page)
    screenshot(page, "generate.png", 2900)
