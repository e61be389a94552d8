"""Models in: .pt2 archives, ONNX files, sample names and TVMScript operators -> LoadedModel."""

from tlm_core.frontend.model import InputSpec, LoadedModel, ModelLoadError

__all__ = ["InputSpec", "LoadedModel", "ModelLoadError"]
