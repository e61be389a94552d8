"""Schedule space page: the current subgraph's sketches, decision points, a decision vector and its program."""

import state
import streamlit as st
from widgets import decision_editor, reset_decisions, show_measurement, subgraph_header

from tlm_core.program import InvalidDecisions, apply_decisions
from tlm_core.viz import teach
from tlm_core.viz.loopnest import loop_nest, loop_nest_figure
from tlm_core.viz.space import (
    choices_table,
    points_table,
    replay_with,
    sketch_annotations,
    tiling_figure,
    tiling_grid,
)

ss = st.session_state
label, model, part, node, task = subgraph_header("Schedule space")
st.page_link("views/generate.py", label="Let the TLM write this schedule", icon=":material/auto_awesome:")
with st.status("Building the schedule space ...") as status:
    space = state.build_space(task.id, task)
    status.update(label=f"Schedule space of {task.name}", state="complete")

cols = st.columns(4)
cols[0].metric("Sketches", len(space.sketches))
cols[1].metric("Decision points", space.num_points)
cols[2].metric("Space size", f"10^{space.log10_size:.1f}", help="decision vectors, summed over sketches")
cols[3].metric("MFLOPs per call", f"{task.flops / 1e6:,.3f}")
with st.expander("Unscheduled TVMScript"):
    st.code(task.mod.script(), language="python")

sizes = [f"#{s.index}: {len(s.points)} points, 10^{s.log10_size:.1f}" for s in space.sketches]
index = st.radio("Sketch", range(len(space.sketches)), format_func=sizes.__getitem__, horizontal=True)
sketch = space.sketches[index]
prefix = f"dec-{task.id}-{index}"
st.subheader("Decisions, in program order")
st.caption("Each box offers only the choices legal at that point, given the ones before it.")
if sketch.points:
    replayed = decision_editor(sketch, prefix)
    st.button("Reset to TVM's sampled decisions", on_click=reset_decisions, args=(prefix,))
    st.dataframe(points_table(replayed.points, replayed.decisions), hide_index=True)
    with st.expander("All legal choices of one decision point"):
        i = st.selectbox("Decision point", range(len(sketch.points)), format_func=lambda i: sketch.points[i].title())
        st.dataframe(choices_table(replayed.points[i]), hide_index=True)
else:
    replayed = replay_with(sketch, {})
    st.info("This sketch has no decisions: the rules fix its schedule (e.g. parallel and vectorised loops).")

try:
    program = apply_decisions(space, index, replayed.decisions)
except InvalidDecisions as err:
    st.error(f"This decision vector gives no valid program: {err.reason}")
    st.stop()
annotations = sketch_annotations(sketch)
rows = loop_nest(program.mod)
tiles, nest = st.columns([2, 3])
with tiles:
    st.markdown("**Tiling**: where each tile factor lands, outer → inner")
    grid = tiling_grid(sketch, replayed.points, replayed.decisions)
    if grid.rows:
        st.plotly_chart(tiling_figure(grid), key="tiling")
    else:
        st.caption("No loop of this sketch is tiled.")
with nest:
    st.markdown("**Loop nest** of the scheduled program (colour = loop kind)")
    st.plotly_chart(loop_nest_figure(rows), key="loopnest")
structures = {b: a["tiling_structure"] for b, a in annotations.items() if "tiling_structure" in a}
for title, text in [
    ("Tiling", teach.tiling_text(replayed.points, replayed.decisions, structures)),
    ("Parallel", teach.parallel_text(rows, annotations)),
    ("Vectorize", teach.vectorize_text(rows)),
    ("Unroll", teach.unroll_text(replayed.points, replayed.decisions, rows)),
    ("Compute location", teach.compute_location_text(replayed.points, replayed.decisions)),
]:
    with st.expander(f"What is {title.lower()}? (this program)"):
        st.markdown(text)

script, trace = st.tabs(["Scheduled TVMScript", "Trace"])
script.code(program.script(), language="python")
trace.code("\n".join(str(line) for line in program.trace.as_python()), language="python")

key = (task.id, index, tuple(program.decisions))
measured = ss.setdefault("measured", {})
if st.button("Measure", type="primary"):
    with st.status("Building and timing the kernel on this CPU ...") as status:
        measured[key] = state.measurer().measure(task, [program.mod])[0]
        status.update(label="Measured", state="complete" if measured[key].ok else "error")
if key in measured:
    show_measurement(measured[key])
