"""Models in: .pt2 archives, ONNX files, sample names and TVMScript operators -> LoadedModel.

Pipeline step 1 of 8 (frontend -> partition -> ... -> compile): tlm_core.partition splits the model next.
"""

from tlm_core.frontend.loader import DEFAULT_MAX_BYTES, load_model, load_model_bytes
from tlm_core.frontend.model import DynamicShapeError, InputSpec, LoadedModel, ModelLoadError, parse_input_shapes

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DynamicShapeError",
    "InputSpec",
    "LoadedModel",
    "ModelLoadError",
    "load_model",
    "load_model_bytes",
    "parse_input_shapes",
]
