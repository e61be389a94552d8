"""The TLM: transformers' GPT2LMHeadModel over the tensor language, trained from scratch.

Beside the pipeline: the network tlm_core.generator decodes with (step 5); tlm_core.train trains it.

model = new_model(preset("small"))        # or load_checkpoint("assets/tlm-small")
save_checkpoint(model, dir)               # safetensors + config + tokenizer, from_pretrained-loadable
default_checkpoint_for(target)            # a `tlm adapt` checkpoint for this hardware, else the shipped one
"""

from .adapted import adapted_checkpoint, adapted_root, checkpoint_label, default_checkpoint_for, hardware_key
from .checkpoint import default_checkpoint, load_checkpoint, new_model, num_parameters, save_checkpoint, train_state
from .config import PRESETS, TLMConfig, preset

__all__ = [
    "PRESETS",
    "adapted_checkpoint",
    "adapted_root",
    "checkpoint_label",
    "default_checkpoint",
    "default_checkpoint_for",
    "hardware_key",
    "TLMConfig",
    "load_checkpoint",
    "new_model",
    "num_parameters",
    "preset",
    "save_checkpoint",
    "train_state",
]
