"""The TLM: transformers' GPT2LMHeadModel over the tensor language, trained from scratch.

Beside the pipeline: the network tlm_core.generator decodes with (step 5); tlm_core.train trains it.

model = new_model(preset("small"))        # or load_checkpoint("assets/tlm-small")
save_checkpoint(model, dir)               # safetensors + config + tokenizer, from_pretrained-loadable
"""

from .checkpoint import default_checkpoint, load_checkpoint, new_model, num_parameters, save_checkpoint, train_state
from .config import PRESETS, TLMConfig, preset

__all__ = [
    "PRESETS",
    "default_checkpoint",
    "TLMConfig",
    "load_checkpoint",
    "new_model",
    "num_parameters",
    "preset",
    "save_checkpoint",
    "train_state",
]
