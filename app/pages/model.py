"""Model page: pick a sample, see it partitioned into fused subgraphs and tuning tasks."""

import pandas as pd
import streamlit as st
from state import open_sample

import sample_models
from tlm_core.viz.graph import graph_figure

st.title("Model")
names = list(sample_models.SAMPLES)
name = st.selectbox("Sample model", names, index=names.index(sample_models.DEFAULT))
with st.status(f"Loading and partitioning {name} ...", expanded=False) as status:
    model, part = open_sample(name)
    status.update(label=f"{name}: partitioned", state="complete")
for note in model.notes:
    st.info(note)

g = part.graph
cols = st.columns(4)
cols[0].metric("Subgraph calls", g.number_of_nodes())
cols[1].metric("Tuning tasks", len(part.tasks))
cols[2].metric("GFLOP per inference", f"{part.total_flops / 1e9:.3f}")
cols[3].metric("Inputs", ", ".join(f"{i.name} {list(i.shape)}" for i in model.inputs))

with st.expander("What is fusion?"):
    st.write(
        "TVM merges each heavy operator with the cheap elementwise operators around it (a convolution with its "
        "BatchNorm, ReLU and residual add) into one kernel, a *fused subgraph*. Identical subgraphs are tuned "
        "once: each unique one is a *task*, weighted by how often the model calls it."
    )
left, right = st.columns([3, 2])
with left:
    event = st.plotly_chart(graph_figure(g), on_select="rerun", selection_mode="points", key="graph")
    picked = [p["customdata"] for p in event.selection.points if "customdata" in p] if event else []
    if picked:
        st.session_state["subgraph"] = int(picked[0])
with right:
    current = st.session_state.get("subgraph", 0)
    if current in g.nodes:
        d = g.nodes[current]
        st.subheader(f"#{current} {d['func']}")
        st.caption(f"kind {d['kind']} · task {d['task']} · {d['flops']:,.0f} FLOPs")
        st.write("Operators: " + " + ".join(d["ops"]))
    tasks = pd.DataFrame(
        [{"id": t.id, "name": t.name, "weight": t.weight, "MFLOPs": t.flops / 1e6} for t in part.tasks]
    )
    st.dataframe(tasks, hide_index=True, width="stretch")
