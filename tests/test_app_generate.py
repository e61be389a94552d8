"""The Generate page, driven headless with AppTest on the default (tiny) sample's current subgraph."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import app_page, metrics, table
from tlm_core.language import token_ids


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def shown(at: AppTest):
    """The generation on screen, from the page's session state."""
    (run,) = [r for r in at.session_state["generations"].values()]
    return run["candidates"][run["shown"]]


@pytest.fixture(scope="module")
def page() -> AppTest:
    return app_page("views/generate.py")


def test_greedy_generation_shows_its_steps(page):
    cands = table(page, "log-probability")
    assert list(cands["method"]) == ["greedy"] and cands["latency µs"].isna().all()
    m = metrics(page)
    legal, masked = int(m["Legal tokens"]), int(m["Masked tokens"])
    assert legal > 1 and legal + masked == len(token_ids())  # step 1 is a real choice: the sketch
    steps = table(page, "masked")  # every generated token (in its expander)
    g = shown(page)
    first = g.steps[0]  # the sketch choice
    assert m["Entropy"] == f"{first.entropy:.2f} nats" and (first.num_legal, first.point) == (legal, None)
    assert len(steps) == len(g.steps) and (steps["legal"] + steps["masked"] == len(token_ids())).all()
    assert (steps["legal"] > 1).any() and (steps["legal"] == 1).any()
    decisions = table(page, "model choices")
    assert len(decisions) == len(g.decisions) and (decisions["legal choices"] >= 1).all()
    assert any("sketches" in md.value and "legal" in md.value for md in page.markdown)  # the step's explanation
    assert any(md.value.startswith("**Constrained decoding**, on this sentence") for md in page.markdown)
    assert any("T.parallel" in c.value for c in page.code)  # the scheduled program
    assert any("sample_perfect_tile" in c.value for c in page.code)  # its trace


def test_step_through(page):
    assert page.slider(key="w_step").value == 1
    button(page, "Next").click().run()
    assert not page.exception, page.exception
    assert page.slider(key="w_step").value == 2
    g = shown(page)
    text = next(md.value for md in page.markdown if md.value.startswith("Decision #"))
    index = [i for i, s in enumerate(g.steps) if s.num_legal > 1 and not s.forced][1]
    assert f"#{g.steps[index].point} " in text and int(metrics(page)["Legal tokens"]) == g.steps[index].num_legal
    button(page, "Previous").click().run()
    assert page.slider(key="w_step").value == 1


def test_beam_search_candidates(page):
    page.radio(key="w_method").set_value("beam search").run()
    page.number_input(key="w_k").set_value(3).run()
    button(page, "Generate").click().run()
    assert not page.exception, page.exception
    cands = table(page, "log-probability")
    assert list(cands["method"]) == ["beam"] * 3
    assert cands["log-probability"].is_monotonic_decreasing


def test_override_regenerates_the_rest_legally(page):
    before = shown(page)
    decisions = table(page, "model choices")
    row = decisions[(decisions["kind"] == "tile") & (decisions["legal choices"] > 2)].iloc[0]
    index = int(row["#"])
    page.selectbox(key="w_override").set_value(index).run()
    box = next(s for s in page.selectbox if s.label == "New value (legal here)")
    assert box.value == row["chosen"] and len(box.options) == row["legal choices"]
    new = next(o for o in box.options if o != box.value)
    box.set_value(new).run()
    button(page, "Override and re-generate").click().run()
    assert not page.exception, page.exception
    assert not page.error, [e.value for e in page.error]
    after = shown(page)
    assert after.method == "override" and after.decisions[:index] == before.decisions[:index]
    decisions = table(page, "model choices")
    assert decisions["chosen"][index] == new and bool(decisions["forced"][index])
    diff = table(page, "before")
    changed = set(diff[diff["changed"]]["#"])
    assert str(index) in changed and "sketch" not in changed
    assert changed == {str(i) for i, (a, b) in enumerate(zip(before.decisions, after.decisions, strict=True)) if a != b}
    assert len(table(page, "log-probability")) == 4  # the override joins the candidates


def test_measure_the_shown_program(page):
    button(page, "Measure shown").click().run()
    assert not page.exception, page.exception
    assert not page.error, [e.value for e in page.error]
    m = metrics(page)
    assert m["Numeric check"] == "passed" and float(m["Latency (median)"].split()[0].replace(",", "")) > 0
    cands = table(page, "log-probability")
    # latencies go by program: a candidate that is the same program as the shown one shows it too
    assert cands["latency µs"].iloc[-1] > 0 and cands["latency µs"].dropna().nunique() == 1
    assert cands["check"].iloc[-1] == "passed"
