"""Streamlit pieces shared by pages (no compiler logic: they wire tlm_core calls to widgets)."""

from __future__ import annotations

import state
import streamlit as st

from tlm_core.frontend import LoadedModel
from tlm_core.measure import MeasureResult
from tlm_core.partition import Partition, Task
from tlm_core.space import Replayed, Sketch
from tlm_core.viz.space import decision_labels, replay_with


def subgraph_header(title: str) -> tuple[str, LoadedModel, Partition, int, Task]:
    """A subgraph page's title, the current model and subgraph (label, model, partition, graph node, task), and a
    link back to the Model page to pick another."""
    st.title(title)
    label, model, part = state.current_model()
    node = state.current_subgraph(label, part)
    d = part.graph.nodes[node]
    task = part.task(d["task"])
    st.markdown(f"**{label}** · #{node} `{d['func']}` ({' + '.join(d['ops'])}) · task `{task.id}` × {task.weight}")
    st.page_link("views/model.py", label="Pick another subgraph on the Model page", icon=":material/account_tree:")
    return label, model, part, node, task


def decision_editor(sketch: Sketch, prefix: str, columns: int = 3) -> Replayed:
    """One selectbox per decision point, in program order, offering only the choices legal there.

    The sketch is replayed with the widgets' current labels first (compute-location choices depend on the
    decisions before them), then each widget is drawn with the legal choices of that replay.
    """
    ss = st.session_state
    keys = [f"{prefix}-{i}" for i in range(len(sketch.points))]
    replayed = replay_with(sketch, {i: ss[k] for i, k in enumerate(keys) if k in ss})
    cols = st.columns(columns)
    for point, decision, key in zip(replayed.points, replayed.decisions, keys, strict=True):
        ss[key] = point.describe(decision)
        labels = decision_labels(point)
        cols[point.index % columns].selectbox(
            f"#{point.index} {point.title()}",
            labels,
            key=key,
            help=f"{len(labels)} legal choices ({point.kind}); TVM sampled {point.describe(point.sampled)}",
        )
    return replayed


def reset_decisions(prefix: str) -> None:
    for key in [k for k in st.session_state if str(k).startswith(f"{prefix}-")]:
        del st.session_state[key]


def show_measurement(result: MeasureResult) -> None:
    if not result.ok:
        st.error(f"Measurement failed: {result.error}")
        return
    cols = st.columns(4)
    cols[0].metric("Latency (median)", f"{result.latency * 1e6:,.1f} µs")
    cols[1].metric("GFLOP/s", f"{result.gflops:,.2f}" if result.gflops else "n/a")
    cols[2].metric("Build time", f"{result.build_secs:.2f} s")
    cols[3].metric("Numeric check", "passed", help="max abs / rel error vs the untuned reference")
    st.caption(
        f"Output matches the untuned reference: max abs error {result.max_abs_error:.2e}, "
        f"max rel error {result.max_rel_error:.2e}; {len(result.latencies)} repeats."
    )
