"""Cached library objects shared by the pages (one model, one partition per session choice)."""

from __future__ import annotations

import streamlit as st

from tlm_core.frontend import LoadedModel, load_model
from tlm_core.partition import Partition, partition
from tlm_core.target import host_target


@st.cache_resource(show_spinner=False, max_entries=4)
def open_sample(name: str) -> tuple[LoadedModel, Partition]:
    model = load_model(name)
    return model, partition(model, host_target())
