"""The Generate page's library side (tlm_core.viz.sentence, language.token_roles) over real generations."""

import math

import pytest

from tlm_core.generator import Generator, Step
from tlm_core.language import ROLES, token_ids, token_roles
from tlm_core.model import new_model, preset
from tlm_core.program import apply_decisions
from tlm_core.space import COMPUTE_LOCATION, TILE
from tlm_core.viz.sentence import (
    candidates_table,
    choice_steps,
    decisions_table,
    entropy_figure,
    generation_diff,
    generation_points,
    measured_key,
    sentence_html,
    sentence_summary,
    step_figure,
    step_text,
    steps_table,
    token_meaning,
)


@pytest.fixture(scope="module")
def gen():
    return Generator(new_model(preset("tiny"), seed=0))  # untrained but real: every step comes from its logits


@pytest.fixture(scope="module")
def conv(workload_spaces):
    return workload_spaces["conv2d_relu_8"]


@pytest.fixture(scope="module")
def greedy(gen, conv):
    return gen.greedy(conv)


def test_token_roles_follow_the_prompts_parts(greedy):
    sentence = greedy.sentence
    roles = token_roles(sentence)
    assert len(roles) == len(sentence.tokens) and set(roles) <= set(ROLES)
    prompt = roles[: sentence.prompt_len]
    assert prompt[0] == "start" and prompt[sentence.tokens.index("<hw>")] == "hardware"
    assert prompt[sentence.tokens.index("<op>")] == "operator" and prompt[-1] == "sketch"  # "<dec>"
    order = [ROLES.index(r) for r in prompt]
    assert order == sorted(order) and {"hardware", "operator", "sketch"} <= set(prompt)  # parts in order
    assert "cpu" in [t for t, r in zip(sentence.tokens, roles, strict=True) if r == "hardware"]
    assert [r == "decision" for r in roles[sentence.prompt_len :]] == sentence.decision_mask[sentence.prompt_len :]
    for s in greedy.steps:  # every generated token is a decision; contexts are given
        assert roles[s.position] == "decision"


def test_points_tables_and_meanings(greedy, conv):
    points = generation_points(conv, greedy)
    assert len(points) == len(greedy.decisions)
    assert all(d in p.choices for p, d in zip(points, greedy.decisions, strict=True))
    rows = steps_table(greedy, points)
    assert len(rows) == len(greedy.steps)
    vocab = len(token_ids())
    assert all(r["legal"] + r["masked"] == vocab for r in rows)
    assert {r["how"] for r in rows} == {"model", "only legal token"}
    assert [rows[i]["how"] for i in choice_steps(greedy)] == ["model"] * len(choice_steps(greedy))
    decisions = decisions_table(greedy, points)
    for row, p in zip(decisions, points, strict=True):
        assert row["chosen"] == p.describe(greedy.decisions[p.index]) and row["legal choices"] == len(p.choices)
        probs = [s.prob for s in greedy.steps if s.point == p.index]
        assert row["probability"] == pytest.approx(math.prod(probs)) and not row["forced"]
    tile = next(p for p in points if p.kind == TILE)
    assert token_meaning("2^3", tile) == "× 8" and token_meaning(";", tile) == "end of this factor"
    assert token_meaning("s1", None) == "sketch 1" and token_meaning("<eos>", None) == "end of the sentence"
    loc = next((p for p in points if p.kind == COMPUTE_LOCATION), None)
    if loc is not None:
        assert token_meaning("L-2", loc) == "inline" and token_meaning("L-1", loc) == "root"


def test_sentence_html_reveals_tokens_up_to_a_step(greedy):
    tokens = greedy.sentence.tokens
    full = sentence_html(greedy)
    assert "\n\n" not in full  # one HTML block for st.markdown
    assert "&lt;bos&gt;" in full and "&lt;eos&gt;" in full and "more tokens" not in full
    assert full.count("padding:1px 3px") == len(tokens) and "outline" not in full
    i = choice_steps(greedy)[1]
    part = sentence_html(greedy, i)
    shown = greedy.steps[i].position + 1
    assert part.count("padding:1px 3px") == shown and part.count("outline:2px") == 1
    assert f"… {len(tokens) - shown} more tokens" in part


def test_step_figure_and_entropy_figure(greedy, conv):
    points = generation_points(conv, greedy)
    i = choice_steps(greedy)[0]
    step = greedy.steps[i]
    bars = step_figure(step, points[step.point] if step.point is not None else None).data[0]
    assert list(bars.x[: len(step.top)]) == [p for _, p in step.top]
    red = [y for y, c in zip(bars.y, bars.marker.color, strict=True) if c == "#dc2626"]
    assert len(red) == 1 and red[0].startswith(f"{step.token}  (")
    # more legal tokens than are listed: the rest is one grey bar carrying the remaining probability
    wide = Step(9, 0, "2^1", 0.4, [("2^1", 0.4), ("1", 0.3)], 4, 733, 1.2)
    bars = step_figure(wide, None).data[0]
    assert bars.y[-1] == "2 other legal tokens" and bars.x[-1] == pytest.approx(0.3)
    order = choice_steps(greedy)
    fig = entropy_figure(greedy, order, i)
    assert list(fig.data[0].y) == [greedy.steps[j].entropy for j in order]
    assert list(fig.data[1].y) == [math.log(greedy.steps[j].num_legal) for j in order]
    assert list(fig.data[0].marker.color).count("#dc2626") == 1


def test_step_text_explains_legality_and_entropy(greedy, conv):
    points = generation_points(conv, greedy)
    n = len(conv.sketches)
    assert f"{n} sketches" in step_text(greedy, 0, points, n)
    tile_steps = [i for i in choice_steps(greedy) if greedy.steps[i].point is not None]
    i = next(i for i in tile_steps if points[greedy.steps[i].point].kind == TILE)
    text = step_text(greedy, i, points, n)
    step = greedy.steps[i]
    assert f"{step.num_legal} of {step.num_legal + step.num_masked} vocabulary tokens" in text
    assert "factor 1 of" in text and "Entropy" in text and "tiling" in text.lower()
    single = next(j for j, s in enumerate(greedy.steps) if s.num_legal == 1 and s.point is not None)
    assert "Only one token is legal" in step_text(greedy, single, points, n)


def test_override_diff_marks_the_forced_and_redecided_decisions(gen, conv, greedy):
    points = generation_points(conv, greedy)
    at = next(p for p in points if p.kind == TILE and len(p.choices) > 2)
    value = next(c for c in at.choices if c != greedy.decisions[at.index])
    again = gen.override(conv, greedy, at.index, value)
    after = generation_points(conv, again)
    assert again.decisions[at.index] == value and value in after[at.index].choices
    diff = generation_diff(greedy, again, points, after)
    assert diff[0] == {"#": "sketch", "decides": "sketch", "before": str(greedy.sketch_index),
                       "after": str(again.sketch_index), "changed": False}  # fmt: skip
    changed = {int(r["#"]) for r in diff[1:] if r["changed"]}
    assert at.index in changed and min(changed) == at.index
    assert changed == {i for i, (a, b) in enumerate(zip(greedy.decisions, again.decisions, strict=True)) if a != b}
    forced = next(j for j, s in enumerate(again.steps) if s.point == at.index)
    assert again.steps[forced].forced and "forced" in step_text(again, forced, after, len(conv.sketches))
    assert decisions_table(again, after)[at.index]["forced"]


def test_candidates_table_with_a_measured_candidate(gen, conv, greedy, measurer):
    cands = gen.beam(conv, 3)
    program = apply_decisions(conv, cands[0].sketch_index, cands[0].decisions)
    measured = {measured_key(cands[0]): measurer.measure(conv.task, [program.mod])[0]}
    rows = candidates_table(cands, measured)
    assert [r["candidate"] for r in rows] == [0, 1, 2] and {r["method"] for r in rows} == {"beam"}
    assert rows[0]["check"] == "passed" and rows[0]["latency µs"] > 0
    assert rows[1]["latency µs"] is None and rows[1]["check"] is None
    assert rows[0]["log-probability"] >= rows[1]["log-probability"] >= rows[2]["log-probability"]
    assert measured_key(greedy) == (conv.task.id, greedy.sketch_index, tuple(greedy.decisions))


def test_sentence_summary_counts_this_sentences_tokens(gen, conv, greedy):
    roles = token_roles(greedy.sentence)
    text = sentence_summary(greedy)
    assert f"sentence of {len(roles)} tokens" in text and f"hardware ({roles.count('hardware')} tokens)" in text
    assert f"the model chose {len(choice_steps(greedy))} of them" in text and "forced" not in text
    points = generation_points(conv, greedy)
    at = next(p for p in points if p.kind == TILE and len(p.choices) > 1)
    again = gen.override(conv, greedy, at.index, next(c for c in at.choices if c != greedy.decisions[at.index]))
    forced = sum(s.forced for s in again.steps)
    assert forced > 0 and f"{forced} were forced by an override" in sentence_summary(again)
