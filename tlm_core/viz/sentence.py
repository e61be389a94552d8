"""Views of a generation: the tensor sentence token by token, each step's candidates, tables, an override's diff.

A generation's steps are its generated tokens (tlm_core.generator.Step); a decision point is written by several
of them (a tile's factors token by token). `generation_points` replays the generation's path to get each point
with the choices that were legal there, which every view below uses to say what a token means.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from tlm_core.generator import Generation, Step
from tlm_core.language import EOS, token_roles
from tlm_core.language.decisions import write_order
from tlm_core.language.numbers import END, ONE
from tlm_core.space import CATEGORICAL, COMPUTE_LOCATION, TILE, DecisionPoint, Space, replay

ROLE_COLOURS = {
    "start": "#e5e7eb",
    "hardware": "#dbeafe",
    "operator": "#dcfce7",
    "sketch": "#fef3c7",
    "context": "#f3f4f6",
    "decision": "#fbcfe8",
}
ROLE_NAMES = {
    "start": "start",
    "hardware": "hardware (prompt)",
    "operator": "operator (prompt)",
    "sketch": "sketches (prompt)",
    "context": "decision context (given)",
    "decision": "generated decision",
}


def generation_points(space: Space, generation: Generation) -> list[DecisionPoint]:
    """The decision points along the generation's path, each with the choices legal given the earlier decisions."""
    sketch = space.sketches[generation.sketch_index]
    return replay(sketch, lambda p: generation.decisions[p.index]).points


def choice_steps(generation: Generation) -> list[int]:
    """Indices of the steps where the model chose among several legal tokens (not forced, not the only one)."""
    return [i for i, s in enumerate(generation.steps) if s.num_legal > 1 and not s.forced]


def how_chosen(step: Step) -> str:
    if step.forced:
        return "forced"
    return "model" if step.num_legal > 1 else "only legal token"


def token_meaning(token: str, point: DecisionPoint | None) -> str:
    """What a generated token says, in words: a factor, the end of a number, a candidate, a location, a sketch."""
    if token == EOS:
        return "end of the sentence"
    if token == END:
        return "end of this factor"
    if token == ONE:
        return "factor 1"
    if "^" in token:
        p, e = token.split("^")
        return f"× {int(p) ** int(e)}"
    if point is not None and point.kind == CATEGORICAL and token.startswith("c"):
        return point.describe(int(token[1:]))
    if point is not None and point.kind == COMPUTE_LOCATION and token.startswith("L"):
        return point.describe(int(token[1:]))
    if point is None and token.startswith("s") and token[1:].isdigit():
        return f"sketch {token[1:]}"
    return token


def _point_of(step: Step, points: list[DecisionPoint]) -> DecisionPoint | None:
    return points[step.point] if step.point is not None else None


def sentence_html(generation: Generation, upto: int | None = None) -> str:
    """The sentence as shaded tokens: prompt tokens by role, then the generated part up to step `upto` (its token
    outlined); later tokens are left out. One HTML block (no blank line), safe for st.markdown."""
    sentence = generation.sentence
    roles = token_roles(sentence)
    steps = {s.position: s for s in generation.steps}
    end = len(sentence.tokens) if upto is None else generation.steps[upto].position + 1
    spans = []
    for i, (tok, role) in enumerate(zip(sentence.tokens[:end], roles[:end], strict=True)):
        tip = ROLE_NAMES[role]
        if i in steps:
            s = steps[i]
            tip += f" · p={s.prob:.2f} · {s.num_legal} legal · {how_chosen(s)}"
        outline = "outline:2px solid #dc2626;" if upto is not None and i == end - 1 else ""
        spans.append(
            f'<span title="{html.escape(tip)}" style="background:{ROLE_COLOURS[role]};{outline}'
            f'padding:1px 3px;margin:1px;border-radius:3px;display:inline-block">{html.escape(tok)}</span>'
        )
    hidden = len(sentence.tokens) - end
    if hidden:
        spans.append(f'<span style="color:#6b7280;margin-left:4px">… {hidden} more tokens</span>')
    legend = " ".join(
        f'<span style="background:{ROLE_COLOURS[r]};padding:1px 6px;border-radius:3px">{ROLE_NAMES[r]}</span>'
        for r in ROLE_COLOURS
    )
    body = "".join(spans)
    return (
        f'<div style="font-family:monospace;font-size:0.8rem;line-height:1.9">'
        f'<div style="margin-bottom:6px">{legend}</div>{body}</div>'
    )


def step_figure(step: Step, point: DecisionPoint | None) -> go.Figure:
    """The step's most likely legal tokens (after masking) as horizontal bars; the chosen one in red."""
    labels = [f"{tok}  ({token_meaning(tok, point)})" for tok, _ in step.top]
    probs = [p for _, p in step.top]
    colours = ["#dc2626" if tok == step.token else "#60a5fa" for tok, _ in step.top]
    rest = step.num_legal - len(step.top)
    if rest > 0:
        labels.append(f"{rest} other legal tokens")
        probs.append(max(0.0, 1.0 - sum(probs)))
        colours.append("#d1d5db")
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=labels,
            orientation="h",
            marker_color=colours,
            text=[f"{p:.1%}" for p in probs],
            textposition="auto",
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        height=60 + 34 * len(labels),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        title={"text": f"chosen: {step.token} · {step.num_legal} legal, {step.num_masked} masked", "font_size": 13},
        xaxis={"range": [0, 1], "tickformat": ".0%", "title": None},
        yaxis={"autorange": "reversed"},
    )
    return fig


def entropy_figure(generation: Generation, steps: list[int], current: int | None = None) -> go.Figure:
    """Entropy of each listed step (bars, nats) against its maximum ln(legal tokens); the current step in red."""
    chosen = [generation.steps[i] for i in steps]
    x = list(range(1, len(steps) + 1))
    colours = ["#dc2626" if i == current else "#60a5fa" for i in steps]
    hover = [f"step {n}: {s.token} · {s.num_legal} legal · p={s.prob:.2f}" for n, s in zip(x, chosen, strict=True)]
    fig = go.Figure(
        [
            go.Bar(x=x, y=[s.entropy for s in chosen], marker_color=colours, name="entropy", hovertext=hover),
            go.Scatter(
                x=x,
                y=[math.log(s.num_legal) for s in chosen],
                mode="markers",
                marker={"symbol": "line-ew-open", "size": 12, "color": "#374151"},
                name="maximum: ln(legal)",
            ),
        ]
    )
    fig.update_layout(
        height=200,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        yaxis={"title": "nats"},
        xaxis={"title": None},
        legend={"orientation": "h", "y": 1.15},
        bargap=0.15,
    )
    return fig


def steps_table(generation: Generation, points: list[DecisionPoint]) -> list[dict[str, Any]]:
    """One row per generated token: what it decides, its meaning, probability, legal and masked counts, entropy."""
    rows = []
    for n, s in enumerate(generation.steps, start=1):
        point = _point_of(s, points)
        rows.append(
            {
                "step": n,
                "position": s.position,
                "decision": s.point,
                "decides": point.title() if point else ("end" if s.token == EOS else "sketch"),
                "token": s.token,
                "meaning": token_meaning(s.token, point),
                "probability": s.prob,
                "legal": s.num_legal,
                "masked": s.num_masked,
                "entropy": s.entropy,
                "how": how_chosen(s),
            }
        )
    return rows


def decisions_table(generation: Generation, points: list[DecisionPoint]) -> list[dict[str, Any]]:
    """One row per decision: the chosen value, the legal choices there, the model's probability of the whole
    decision (product over its tokens) and how many of its tokens were real choices."""
    by_point: dict[int, list[Step]] = {}
    for s in generation.steps:
        if s.point is not None:
            by_point.setdefault(s.point, []).append(s)
    rows = []
    for p in points:
        steps = by_point.get(p.index, [])
        rows.append(
            {
                "#": p.index,
                "kind": p.kind,
                "decides": p.title(),
                "chosen": p.describe(generation.decisions[p.index]),
                "legal choices": len(p.choices),
                "probability": math.prod(s.prob for s in steps),
                "model choices": sum(1 for s in steps if how_chosen(s) == "model"),
                "forced": any(s.forced for s in steps),
            }
        )
    return rows


def generation_diff(
    before: Generation, after: Generation, before_points: list[DecisionPoint], after_points: list[DecisionPoint]
) -> list[dict[str, Any]]:
    """Decision by decision, what an override (or any other generation) changed. Generations of different
    sketches have different points: the sketch row says so and decisions are listed by index."""
    rows = [
        {
            "#": "sketch",
            "decides": "sketch",
            "before": str(before.sketch_index),
            "after": str(after.sketch_index),
            "changed": before.sketch_index != after.sketch_index,
        }
    ]
    for i in range(max(len(before_points), len(after_points))):
        b = before_points[i].describe(before.decisions[i]) if i < len(before_points) else "—"
        a = after_points[i].describe(after.decisions[i]) if i < len(after_points) else "—"
        title = (after_points[i] if i < len(after_points) else before_points[i]).title()
        rows.append({"#": str(i), "decides": title, "before": b, "after": a, "changed": a != b})
    return rows


def measured_key(generation: Generation) -> tuple:
    """The key of a generation's program among measured results (the Schedule space page uses the same)."""
    return (generation.task_id, generation.sketch_index, tuple(generation.decisions))


def candidates_table(generations: list[Generation], measured: Mapping[tuple, Any]) -> list[dict[str, Any]]:
    """One row per candidate: how it was made, its sketch, log-probability, time, and latency once measured
    (`measured` maps measured_key to a tlm_core.measure.MeasureResult)."""
    rows = []
    for n, g in enumerate(generations):
        result = measured.get(measured_key(g))
        latency = result.latency * 1e6 if result is not None and result.ok else None
        rows.append(
            {
                "candidate": n,
                "method": g.method,
                "sketch": g.sketch_index,
                "log-probability": g.logprob,
                "probability": math.exp(g.logprob),
                "generation ms": g.seconds * 1e3,
                "latency µs": latency,
                "check": None if result is None else ("passed" if result.ok else "failed"),
            }
        )
    return rows


def sentence_summary(generation: Generation) -> str:
    """Markdown: how constrained decoding wrote this sentence, counted from its own tokens and steps."""
    roles = token_roles(generation.sentence)
    count = {r: roles.count(r) for r in ("hardware", "operator", "sketch", "context")}
    steps = generation.steps
    model = [s for s in steps if how_chosen(s) == "model"]
    forced = sum(1 for s in steps if s.forced)
    vocab = steps[0].num_legal + steps[0].num_masked
    text = (
        f"**Constrained decoding**, on this sentence of {len(roles)} tokens: the prompt describes the hardware "
        f"({count['hardware']} tokens), the operator ({count['operator']}) and the number of sketches "
        f"({count['sketch']}). Then {len(steps)} tokens are generated: the model chose {len(model)} of them among "
        f"several legal tokens, {len(steps) - len(model) - forced} had only one legal token (the mask decides, the "
        f"model is not called)"
    )
    text += f", {forced} were forced by an override" if forced else ""
    text += (
        f". Between decisions, {count['context']} context tokens describe each decision point (its block, loop, "
        "extent, number of factors or candidates) given the choices before it."
    )
    if model:
        mean_legal = sum(s.num_legal for s in model) / len(model)
        mean_entropy = sum(s.entropy for s in model) / len(model)
        text += (
            f" At the model's choices the mask left {mean_legal:.1f} legal tokens of {vocab} on average (mean "
            f"entropy {mean_entropy:.2f} nats), so the sentence is a legal program by construction: nothing is "
            "generated and then thrown away."
        )
    return text


def step_text(generation: Generation, index: int, points: list[DecisionPoint], num_sketches: int) -> str:
    """Markdown about step `index` of the generation: what the token decides, why exactly these tokens were legal
    (and the rest masked), and what the entropy says about the model's confidence."""
    step = generation.steps[index]
    point = _point_of(step, points)
    legal = f"{step.num_legal} of {step.num_legal + step.num_masked} vocabulary tokens"
    if point is None and step.token == EOS:
        what = "After the last decision the sentence must end: only `<eos>` is legal."
    elif point is None:
        what = (
            f"First the model picks one of the task's **{num_sketches} sketches** (MetaSchedule's schedule "
            f"templates: which blocks are multi-level tiled, cached, inlined); the tokens `s0`…`s{num_sketches - 1}` "
            f"are legal, every other token is masked. It chose **sketch {generation.sketch_index}**."
        )
    elif point.kind == TILE:
        what = _tile_text(generation, index, point)
    elif point.kind == CATEGORICAL:
        what = (
            f"Decision #{point.index} picks **{point.title()}** among {len(point.candidates or ())} candidates "
            f"{list(point.candidates or ())}; each is a token `c0`, `c1`, …, all legal. "
            f"{_categorical_meaning(point)} Chosen: **{point.describe(generation.decisions[point.index])}**."
        )
    else:
        what = (
            f"Decision #{point.index} places block `{point.block}` relative to its consumer `{point.consumer}` "
            f"(a **compute location**): `inline` recomputes it inside the consumer, `root` computes the whole "
            f"tensor first, *at loop L* computes the slice each iteration of L needs. Of the consumer's "
            f"{len(point.consumer_loops)} loops plus inline and root, TVM accepts {len(point.choices)} here, given "
            "the tiles chosen before (they create those loops); the others would break a data dependence, so "
            f"their tokens are masked. Chosen: **{point.describe(generation.decisions[point.index])}**."
        )
    how = how_chosen(step)
    if how == "forced":
        return f"{what}\n\nThis token was **forced** by an override: the model was not asked."
    if how == "only legal token":
        return f"{what}\n\nOnly one token is legal here ({legal}), so the model is not even consulted."
    ratio = step.entropy / math.log(step.num_legal)
    if ratio > 0.9:
        verdict = "close to uniform: the model has almost no preference among the legal tokens"
    elif ratio < 0.3:
        verdict = "low: the model is confident"
    else:
        verdict = "in between: the model leans towards some tokens but keeps others likely"
    pick = "the most likely legal token" if step.token == step.top[0][0] else "sampled, not the most likely token"
    return (
        f"{what}\n\n**{legal}** were legal at this token; the mask removed the other {step.num_masked}, so the "
        f"probabilities are renormalised over the legal ones. It wrote `{step.token}` "
        f"({token_meaning(step.token, point)}, p = {step.prob:.2f}, {pick}). Entropy {step.entropy:.2f} nats of at "
        f"most ln {step.num_legal} = {math.log(step.num_legal):.2f} ({ratio:.0%}): {verdict}."
    )


def _tile_text(generation: Generation, index: int, point: DecisionPoint) -> str:
    factors = list(generation.decisions[point.index])  # type: ignore[arg-type]
    earlier = [s for s in generation.steps[:index] if s.point == point.index]
    k = sum(1 for s in earlier if s.token == END)  # factors completed before this token
    done = math.prod(factors[i] for i in write_order(len(factors))[:k])
    remaining = (point.extent or 1) // done
    limit = point.max_innermost_factor
    cap = f"; the innermost is at most {limit}" if limit is not None and limit > 0 else ""
    text = (
        f"Decision #{point.index} is the **{point.title()}**: **tiling** splits the loop into {point.n} nested "
        f"loops whose trip counts multiply to {point.extent}{cap}. The model writes the innermost factor first "
        f"(the loop that is vectorised), then the outermost (the parallel loop), then the others from the inside "
        f"out, each as prime powers ending with `;`. This token belongs to factor {k + 1} of {point.n} in that "
        f"order"
    )
    if k == 0:
        text += ", the first: it must divide the extent (and respect the cap), "
    elif k == (point.n or 0) - 1:
        text += f": the factors before it multiply to {done}, so this last one must be exactly {remaining}, "
    else:
        text += f": the factors before it multiply to {done}, so this one must divide the remaining {remaining}, "
    text += (
        f"which is what makes a token legal here. Chosen tiling: **{factors}** ({len(point.choices)} legal tilings)."
    )
    return text


def _categorical_meaning(point: DecisionPoint) -> str:
    use = point.used_by or ""
    if "unroll" in use:
        return (
            "**Unrolling**: inner loop nests up to that many iterations are unrolled (copied out, no branch back); "
            "0 means no automatic unrolling."
        )
    if "parallel" in use:
        return "**Parallel**: the largest number of loop iterations per core fused into the parallel outer loop."
    if "vectorize" in use:
        return "**Vectorise**: the widest inner loop turned into SIMD instructions."
    return "A categorical choice the sketch's rules sample."
