"""Generate page: the TLM writes the current subgraph's schedule token by token; step, play, override, measure."""

import state
import streamlit as st
from widgets import show_measurement, subgraph_header

from tlm_core.language import LanguageError
from tlm_core.program import apply_decisions
from tlm_core.viz.loopnest import loop_nest, loop_nest_figure
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
)
from tlm_core.viz.space import decision_labels

ss = st.session_state
label, model, part, node, task = subgraph_header("Generate")
with st.status("Building the schedule space and loading the TLM ...") as status:
    space = state.build_space(task.id, task)
    gen = state.generator()
    status.update(label=f"Schedule space of {task.name}; TLM {state.checkpoint_caption()}", state="complete")
if note := gen.unseen_hardware(space):
    st.warning(note.capitalize())
if note := gen.unseen_task(space):  # a kind, layout or size outside its training data
    st.warning(note.replace("MODEL", model.name).capitalize())
if not space.num_points and len(space.sketches) < 2:
    st.info("This subgraph's schedule has no decisions: the rules fix it, there is nothing to generate.")
    st.stop()

# Session: per task, the candidates made so far, the one shown, and the one an override started from.
runs = ss.setdefault("generations", {})
if task.id not in runs:
    try:
        runs[task.id] = {"candidates": [gen.greedy(space)], "shown": 0, "before": None}
    except LanguageError as err:  # e.g. a loop without a constant extent: the language refuses, never guesses
        st.error(f"The tensor language cannot write this subgraph's space: {err}")
        st.stop()
run = runs[task.id]

st.subheader("Sampling settings")
cols = st.columns([2, 1, 1, 1, 1])
method = cols[0].radio("Decoding", ["greedy", "beam search", "sampling"], horizontal=True, key="w_method")
k = cols[1].number_input("Candidates", 1, 16, 4, disabled=method == "greedy", key="w_k")
temperature = cols[2].slider("Temperature", 0.1, 2.0, 1.0, 0.1, disabled=method != "sampling", key="w_temp")
top_k = cols[3].number_input("Top-k (0: all)", 0, 64, 0, disabled=method != "sampling", key="w_topk")
seed = cols[4].number_input("Seed", 0, 10_000, 0, disabled=method != "sampling", key="w_seed")
if st.button("Generate", type="primary"):
    with st.spinner(f"Generating ({method}) ..."):
        if method == "greedy":
            found = [gen.greedy(space)]
        elif method == "beam search":
            found = gen.beam(space, int(k))
        else:
            found = gen.sample(space, int(k), temperature, int(top_k) or None, int(seed))
    run.update(candidates=found, shown=0, before=None)
    ss.pop("w_step", None)

measured = ss.setdefault("measured", {})
cands = run["candidates"]
st.dataframe(candidates_table(cands, measured), hide_index=True)
st.caption("Log-probability: the sum over the tokens the model chose (an override's forced tokens are not counted).")
pick, measure_one, measure_all = st.columns([3, 1, 1])
shown = pick.selectbox(
    "Shown candidate",
    range(len(cands)),
    index=run["shown"],
    format_func=lambda i: f"#{i} {cands[i].method}, sketch {cands[i].sketch_index}, log p {cands[i].logprob:.2f}",
)
run["shown"] = shown
g = cands[shown]
points = generation_points(space, g)
one, every = measure_one.button("Measure shown"), measure_all.button("Measure all")
if one or every:
    to_measure = cands if every else [g]
    with st.status(f"Building and timing {len(to_measure)} kernel(s) on this CPU ...") as status:
        mods = [apply_decisions(space, c.sketch_index, c.decisions).mod for c in to_measure]
        for c, result in zip(to_measure, state.measurer().measure(task, mods), strict=True):
            measured[measured_key(c)] = result
        status.update(label="Measured", state="complete")
    st.rerun()

st.subheader("The tensor sentence, token by token")
ss.playing = ss.get("playing", False)
play, only = st.columns([1, 5], vertical_alignment="center")
only_choices = only.toggle("Only the model's real choices (more than one legal token)", value=True, key="w_only")
order = choice_steps(g) if only_choices else list(range(len(g.steps)))
order = order or list(range(len(g.steps)))


def _move(delta: int) -> None:
    ss.w_step = min(max(1, ss.get("w_step", 1) + delta), len(order))


def _toggle_play() -> None:
    ss.playing = not ss.playing
    if ss.playing and ss.get("w_step", 1) >= len(order):
        ss.w_step = 1


play.button(
    "Pause" if ss.playing else "Play",
    icon=":material/pause:" if ss.playing else ":material/play_arrow:",
    on_click=_toggle_play,
    help="one step a second; only the steps below are redrawn",
)


@st.fragment(run_every=1.0 if ss.playing else None)
def step_view() -> None:
    """Its own reruns (stepping, playing) redraw only this part of the page."""
    if ss.playing:
        _move(1)
    ss.w_step = min(ss.get("w_step", 1), len(order))
    prev, next_, slider = st.columns([1, 1, 8], vertical_alignment="bottom")
    prev.button("Previous", icon=":material/chevron_left:", on_click=_move, args=(-1,))
    next_.button("Next", icon=":material/chevron_right:", on_click=_move, args=(1,))
    if len(order) > 1:
        n = slider.slider("Step", 1, len(order), key="w_step", help="generated tokens, in order")
    else:
        n = 1
    index = order[n - 1]
    step = g.steps[index]
    st.markdown(sentence_html(g, index), unsafe_allow_html=True)
    left, right = st.columns([2, 3])
    with left:
        cols = st.columns(3)
        cols[0].metric("Legal tokens", step.num_legal)
        cols[1].metric("Masked tokens", step.num_masked)
        cols[2].metric("Entropy", f"{step.entropy:.2f} nats")
        st.plotly_chart(step_figure(step, points[step.point] if step.point is not None else None), key="step")
    with right:
        st.markdown(step_text(g, index, points, len(space.sketches)))
        st.plotly_chart(entropy_figure(g, order, index), key="entropy")
    if ss.playing and n == len(order):
        ss.playing = False
        st.rerun()


step_view()
with st.expander("How constrained decoding wrote this sentence"):
    st.markdown(sentence_summary(g))
with st.expander("Every generated token"):
    st.dataframe(steps_table(g, points), hide_index=True)

st.subheader("Decisions")
st.dataframe(decisions_table(g, points), hide_index=True)
st.markdown("**Override** a decision: the choices offered are those legal given the decisions before it.")
cols = st.columns([2, 2, 1])
editable = [p.index for p in points if len(p.choices) > 1]
which = cols[0].selectbox(
    "Decision to override",
    [-1, *editable],  # -1: the sketch
    format_func=lambda i: "the sketch" if i < 0 else f"#{i} {points[i].title()}",
    key="w_override",
)
if which < 0:
    options = [f"sketch {i}" for i in range(len(space.sketches))]
    current = options[g.sketch_index]
else:
    options = decision_labels(points[which])
    current = points[which].describe(g.decisions[which])
key = f"w_value-{task.id}-{shown}-{which}"  # one per generation and decision: its current value is the default
new = cols[1].selectbox("New value (legal here)", options, index=options.index(current), key=key)
if cols[2].button("Override and re-generate", disabled=new == current):
    if which < 0:
        again = gen.force(space, {}, options.index(new))
    else:
        again = gen.override(space, g, which, points[which].choices[options.index(new)])
    cands.append(again)
    run.update(shown=len(cands) - 1, before=g)
    ss.pop("w_step", None)
    st.rerun()
if run["before"] is not None:
    before = run["before"]
    diff = generation_diff(before, g, generation_points(space, before), points)
    changed = [r["#"] for r in diff if r["changed"]]
    st.markdown(
        f"Overridden from candidate log p {before.logprob:.2f}: decisions changed: **{', '.join(changed) or 'none'}** "
        "(the forced one and those the model re-decided after it)."
    )
    st.dataframe(diff, hide_index=True)

program = apply_decisions(space, g.sketch_index, g.decisions)
st.subheader("The program")
script, trace, nest = st.tabs(["Scheduled TVMScript", "Trace", "Loop nest"])
script.code(program.script(), language="python")
trace.code("\n".join(str(line) for line in program.trace.as_python()), language="python")
nest.plotly_chart(loop_nest_figure(loop_nest(program.mod)), key="loopnest")
if measured_key(g) in measured:
    show_measurement(measured[measured_key(g)])
