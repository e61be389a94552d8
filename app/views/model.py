"""Model page: pick a sample or upload a model, see it partitioned into fused subgraphs, pick the current one."""

import state
import streamlit as st

import sample_models
from tlm_core.compare import node_values
from tlm_core.frontend import DynamicShapeError, ModelLoadError, parse_input_shapes
from tlm_core.partition import KINDS
from tlm_core.viz.graph import GROUPS_HELP, expanded_after_click, graph_figure
from tlm_core.viz.groups import all_groups, repeated_groups
from tlm_core.viz.summary import model_summary, subgraph_rows
from tlm_core.viz.teach import fusion_text

ss = st.session_state
st.title("Model")


def _pick_sample() -> None:
    ss.sample, ss.source = ss.w_sample, "sample"


left, right = st.columns(2)
ss.setdefault("w_sample", ss.get("sample", sample_models.DEFAULT))
left.selectbox("Sample model", list(sample_models.SAMPLES), key="w_sample", on_change=_pick_sample)
limit = st.get_option("server.maxUploadSize")
file = right.file_uploader(f"… or open a .pt2 / .onnx file (up to {limit} MiB; its code is never run)")
folder = right.text_input(
    "… or a transformers checkpoint folder on this machine (config.json + safetensors)", key="w_folder"
)


def _open(name: str, opener, shapes: dict | None = None) -> None:
    """Load with `opener(shapes)`; on symbolic input dimensions keep the opener and ask for the shapes."""
    ss.upload_error, ss.pending = None, None
    with st.status(f"Loading and partitioning {name} ...") as status:
        try:
            ss.upload, ss.source = (name, *opener(shapes)), "upload"
            status.update(label=f"{name}: loaded", state="complete")
        except DynamicShapeError as err:
            ss.pending = (name, opener, err.suggested, str(err))
            status.update(label=f"{name}: give the shapes of its dynamic inputs", state="error")
        except ModelLoadError as err:
            ss.upload_error = str(err)
            status.update(label=f"{name}: not loaded", state="error")
        except Exception as err:  # anything else the importers raise: report it, keep the app up
            ss.upload_error = f"{name}: could not be imported ({type(err).__name__}: {err})"
            status.update(label=f"{name}: not loaded", state="error")


if file is not None and ss.get("upload_id") != file.file_id:
    ss.upload_id, data = file.file_id, file.getvalue()
    _open(file.name, lambda shapes: state.open_upload(data, file.name, shapes))
if folder and ss.get("folder_path") != folder:
    ss.folder_path = folder
    _open(folder, lambda shapes: state.open_folder(folder, shapes))
if ss.get("pending"):
    name, opener, suggested, message = ss.pending
    st.info(message)
    with st.form("shapes"):
        texts = {n: st.text_input(f"{n} shape", state.shape_text(s), key=f"w_shape_{n}") for n, s in suggested.items()}
        if st.form_submit_button(f"Open {name} with these shapes"):
            try:
                shapes = parse_input_shapes([f"{n}={t}" for n, t in texts.items()])
            except ValueError as err:
                st.error(str(err))
            else:
                _open(name, opener, shapes)
                st.rerun()
if (file is not None or folder) and ss.get("upload_error"):
    st.error(ss.upload_error)
if ss.get("source") == "upload" and "upload" in ss:
    st.button(f"Back to the sample {ss.w_sample}", on_click=_pick_sample)

label, model, part = state.current_model()
inputs = ", ".join(f"{i.name} {list(i.shape)} {i.dtype}" for i in model.inputs)
st.caption(" · ".join([f"Inputs: {inputs}", *model.notes]))
g = part.graph
summary = model_summary(part)
cols = st.columns(6)
cols[0].metric("Operators", summary["operators"], help=f"{summary['distinct operators']} distinct")
cols[1].metric("Parameters", "n/a" if summary["parameters"] is None else f"{summary['parameters']:,}")
cols[2].metric("GFLOP per inference", f"{summary['GFLOP']:.3f}")
cols[3].metric("Subgraph calls", summary["subgraph calls"])
cols[4].metric("Tuning tasks", summary["tasks"])
cols[5].metric("Inputs", len(model.inputs), help=inputs)

current = state.current_subgraph(label, part)


def _graph_pick() -> None:
    """A click on a call makes it current; on a group's box expands the group, on its header collapses it."""
    points = ss.graph["selection"]["points"]
    picked = [p["customdata"] for p in points if "customdata" in p]
    if picked:
        item = picked[0][0] if isinstance(picked[0], list) else picked[0]
        if (expanded := expanded_after_click(ss.get("w_expand", []), item)) is not None:
            ss.w_expand, ss.graph_focus = expanded, expanded[-1] if expanded else None
        else:
            state.set_subgraph(label, item)


def _table_pick() -> None:
    if selected := ss.table["selection"]["rows"]:
        state.set_subgraph(label, ss.table_nodes[selected[0]])


graph_col, info_col = st.columns([3, 2])
with info_col:
    ss.w_node = current
    st.selectbox("Current subgraph", list(g.nodes), key="w_node", format_func=lambda n: f"#{n} {g.nodes[n]['func']}",
                 on_change=lambda: state.set_subgraph(label, ss.w_node))  # fmt: skip
    d = g.nodes[current]
    st.caption(f"kind {d['kind']} · task {d['task']} · {d['flops']:,.0f} FLOPs per call")
    st.write("Operators: " + " + ".join(d["ops"]))
    st.page_link("views/space.py", label="Open its schedule space", icon=":material/grid_on:")
    st.page_link("views/compare.py", label="Compare methods on it", icon=":material/leaderboard:")
    with st.expander("What is fusion? (this subgraph)"):
        st.markdown(fusion_text(g, current))
    f1, f2 = st.columns(2)
    query = f1.text_input("Search subgraphs", placeholder="name, operator or task id", key="w_search")
    kinds = f2.multiselect("Kinds", [k for k in KINDS if any(d["kind"] == k for _, d in g.nodes(data=True))])
    rows = subgraph_rows(g, query, kinds)
    ss.table_nodes = [r["node"] for r in rows]
    st.dataframe(rows, hide_index=True, on_select=_table_pick, selection_mode="single-row", key="table", height=360)
with graph_col:
    # Overlay: colour by a method's measured latency, or its speedup vs TVM default (results from the Compare page).
    results = ss.get("compare_results")
    methods = results.methods() if results is not None else []
    overlays = {"kind": None} | {f"latency: {m}": (m, "latency") for m in methods}
    if "default" in methods:
        overlays |= {f"speedup vs default: {m}": (m, "speedup") for m in methods if m != "default"}
    if ss.get("w_colour") not in overlays:
        ss.w_colour = "kind"
    c1, c2 = st.columns(2)
    colour = c1.selectbox("Colour nodes by", list(overlays), key="w_colour",
                          help="Measured results come from the Compare page; nodes without one stay grey.")  # fmt: skip
    values, metric = None, "latency"
    if overlays[colour] is not None:
        method, metric = overlays[colour]
        values = node_values(g, results, method, metric)
    what = "kind" if values is None else f"{metric} of {method} (grey: not measured yet)"
    groups = repeated_groups(g)  # a layer stack, ResNet stages: each one box until expanded (milliseconds)
    index = all_groups(groups)
    ss.w_expand = [gid for gid in ss.get("w_expand", []) if gid in index]  # another model's groups: gone
    if ss.get("graph_current") != (label, current):  # a new current subgraph: the view opens on it
        ss.graph_current, ss.graph_focus = (label, current), current
    if groups:
        c2.multiselect(
            "Expanded groups",
            list(index),
            key="w_expand",
            format_func=lambda i: index[i].describe(),
            help=GROUPS_HELP,
            on_change=lambda: ss.update(graph_focus=(ss.w_expand or [None])[-1]),
        )
    st.caption(f"Click a node (or pick a row on the right) to make it the current subgraph; scroll to zoom, drag to "
               f"pan, hover for details. Colour = {what}.")  # fmt: skip
    shown = {r["node"] for r in rows} if (query or kinds) else None
    fig = graph_figure(g, current, highlight=shown, values=values, metric=metric, groups=groups,
                       expanded=ss.w_expand, focus=ss.graph_focus)  # fmt: skip
    st.plotly_chart(fig, on_select=_graph_pick, selection_mode="points", key="graph",
                    config={"scrollZoom": True, "displaylogo": False})  # fmt: skip
with st.expander(f"Tuning tasks: {len(part.tasks)} unique workloads, weight = calls"):
    tasks = [{"id": t.id, "name": t.name, "weight": t.weight, "MFLOPs": t.flops / 1e6} for t in part.tasks]
    st.dataframe(tasks, hide_index=True, key="tasks")
