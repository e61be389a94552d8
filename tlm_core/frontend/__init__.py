"""Models in: .pt2 archives, ONNX files, sample names and TVMScript operators -> LoadedModel."""

from tlm_core.frontend.loader import DEFAULT_MAX_BYTES, load_model, load_model_bytes
from tlm_core.frontend.model import InputSpec, LoadedModel, ModelLoadError

__all__ = ["DEFAULT_MAX_BYTES", "InputSpec", "LoadedModel", "ModelLoadError", "load_model", "load_model_bytes"]
