"""What the pages share: cached library objects and the session's current model and subgraph.

Session keys: "sample" (chosen sample name), "upload" ((label, model, partition) of an uploaded file),
"source" ("sample" or "upload"), "subgraph" ((model label, graph node)), "measured" (results by program).
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import streamlit as st

import sample_models
from tlm_core.compile.database import DATABASE_MAX_BYTES
from tlm_core.frontend import LoadedModel, ModelLoadError, load_model, load_model_bytes
from tlm_core.generator import Generator
from tlm_core.measure import Measurer
from tlm_core.model import checkpoint_label, default_checkpoint_for
from tlm_core.partition import Partition, Task, partition
from tlm_core.space import Space, SpaceBuilder
from tlm_core.target import host_target

DATABASE_MIB = DATABASE_MAX_BYTES // 1024**2  # per uploaded JSONDatabase file; the upload widgets show it


@st.cache_resource(show_spinner=False, max_entries=4)
def open_sample(name: str) -> tuple[LoadedModel, Partition]:
    model = load_model(name)
    return model, partition(model, host_target())


def upload_limit_bytes() -> int:
    """The app's upload limit (server.maxUploadSize in .streamlit/config.toml, MiB); the loader enforces it too."""
    return int(st.get_option("server.maxUploadSize")) * 1024**2


def open_upload(data: bytes, filename: str, input_shapes: dict | None = None) -> tuple[LoadedModel, Partition]:
    """Load an uploaded .pt2/.onnx (never runs its code); raises ModelLoadError with a one-line reason
    (DynamicShapeError, with suggested shapes, when an input has symbolic dimensions and none were given)."""
    model = load_model_bytes(data, filename, max_bytes=upload_limit_bytes(), input_shapes=input_shapes)
    return model, partition(model, host_target())


def open_folder(path: str, input_shapes: dict | None = None) -> tuple[LoadedModel, Partition]:
    """A transformers checkpoint folder on this machine (config.json + safetensors; no code is run)."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ModelLoadError(f"{path}: not a folder on this machine")
    model = load_model(folder, max_bytes=upload_limit_bytes(), input_shapes=input_shapes)
    return model, partition(model, host_target())


def shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


@st.cache_resource(show_spinner=False, max_entries=32)
def build_space(task_id: str, _task: Task) -> Space:
    """A task's schedule space for this CPU (keyed by the task's structural hash, so shared across models)."""
    return SpaceBuilder.for_target(host_target()).build(_task)


@st.cache_resource(show_spinner=False)
def _space_builder_starting() -> threading.Thread:
    def start() -> None:
        with contextlib.suppress(Exception):  # build_space raises it again, where a page can show it
            SpaceBuilder.for_target(host_target())

    thread = threading.Thread(target=start, name="space-builder-start-up", daemon=True)
    thread.start()
    return thread


def start_space_builder() -> None:
    """Once per server, in the background: the Space Builder's one-off start-up (TVM's tensor intrinsics, a
    few seconds), so that the first schedule space a page asks for is ready in milliseconds. Spaces themselves
    are built only when a page needs one task's (build_space); a build meanwhile waits for the start-up."""
    _space_builder_starting()


@st.cache_resource(show_spinner=False)
def measurer() -> Measurer:
    """One Measurer (worker process, reference cache) for the whole server."""
    return Measurer(host_target())


def checkpoint() -> Path:
    """The TLM checkpoint for this machine: `tlm adapt`'s for its hardware when there is one, else the shipped
    assets/tlm-small (tlm_core.model.default_checkpoint_for)."""
    return default_checkpoint_for(host_target())


def checkpoint_caption() -> str:
    """Which checkpoint the pages use, and for which hardware."""
    return checkpoint_label(checkpoint(), host_target())


def generator() -> Generator:
    """The TLM of checkpoint(), loaded once per checkpoint for the whole server (a `tlm adapt` that finishes
    while the server runs is picked up by the next page)."""
    return _generator(str(checkpoint()))


@st.cache_resource(show_spinner=False)
def _generator(path: str) -> Generator:
    return Generator.from_checkpoint(path)


def current_model() -> tuple[str, LoadedModel, Partition]:
    """(label, model, partition) of the session's model: the uploaded one when chosen, else a sample."""
    ss = st.session_state
    if ss.get("source") == "upload" and "upload" in ss:
        start_space_builder()
        return ss["upload"]
    name = ss.get("sample", sample_models.DEFAULT)
    with st.status(f"Loading and partitioning {name} ...", expanded=False) as status:
        model, part = open_sample(name)
        status.update(label=f"{name}: {part.graph.number_of_nodes()} subgraph calls, {len(part.tasks)} tasks")
        status.update(state="complete")
    start_space_builder()  # after the model: the graph is what the user waits for first
    return name, model, part


def current_subgraph(label: str, part: Partition) -> int:
    """The session's current graph node; by default the call with the most FLOPs."""
    chosen = st.session_state.get("subgraph")
    if chosen and chosen[0] == label and chosen[1] in part.graph.nodes:
        return chosen[1]
    return max(part.graph.nodes, key=lambda n: (part.graph.nodes[n]["flops"], -n))


def set_subgraph(label: str, node: int) -> None:
    st.session_state["subgraph"] = (label, int(node))
