"""Open a transformers checkpoint folder (config.json + safetensors) with the standard inputs of its task.

This is what most users have on disk: `save_pretrained`'s output. Only data is read: the config as JSON, the
weights from safetensors (no pickles: a folder with only pytorch_model.bin is refused), and no remote code
(a config whose `auto_map` names code in the folder is refused). The model class is transformers' own, named
by the config's `architectures`; the folder is exported with torch.export on the inputs its task takes: token
ids and an attention mask for text, pixel values for vision.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import torch

from tlm_core.errors import first_line
from tlm_core.frontend.model import DynamicShapeError, LoadedModel, ModelLoadError, resolve_shapes
from tlm_core.frontend.torch_program import import_exported

DEFAULT_TOKENS = 128  # sequence length when the user gives none (capped by the model's positions)


def is_checkpoint_folder(path: Path) -> bool:
    return path.is_dir() and (path / "config.json").is_file()


def load_checkpoint_folder(
    path: Path, name: str, max_bytes: int, input_shapes: dict[str, tuple[int, ...]] | None = None
) -> LoadedModel:
    config = _config(path, name)
    _check_weights(path, name, max_bytes)
    model = _model(path, name, config)
    example, notes = _example_inputs(model, name, input_shapes or {})
    wrapped = (_Vision if "pixel_values" in example else _Text)(model).eval()
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            ep = torch.export.export(wrapped, tuple(example.values()))
    except Exception as err:
        raise ModelLoadError(f"{name}: torch.export cannot export {type(model).__name__}: {first_line(err)}") from err
    vocab = getattr(config, "vocab_size", None)
    loaded = import_exported(ep, name, "folder", int_high={"input_ids": vocab} if vocab else None)
    arch = type(model).__name__
    loaded.notes = [f"{arch} from {path.name}/ (transformers checkpoint folder)", *notes, *loaded.notes]
    return loaded


class _Text(torch.nn.Module):
    """The model as a text task calls it; its first output (logits, or the last hidden state)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)[0]


class _Vision(_Text):
    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return self.model(pixel_values=pixel_values, return_dict=True)[0]


def _config(path: Path, name: str):
    from transformers import AutoConfig

    try:
        raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"{name}: config.json is not valid JSON: {first_line(err)}") from err
    if not isinstance(raw, dict):
        raise ModelLoadError(f"{name}: config.json is not a JSON object")
    if raw.get("auto_map"):
        raise ModelLoadError(f"{name}: the config asks for custom code (auto_map): refused, code is never run")
    try:
        return AutoConfig.from_pretrained(path, local_files_only=True, trust_remote_code=False)
    except Exception as err:
        raise ModelLoadError(f"{name}: transformers cannot read config.json: {first_line(err)}") from err


def _check_weights(path: Path, name: str, max_bytes: int) -> None:
    files = sorted(path.glob("*.safetensors"))
    if not files:
        pickles = [p.name for p in path.iterdir() if p.suffix in (".bin", ".pt", ".pth", ".ckpt")]
        why = f" (only pickled weights: {', '.join(pickles)}, which are never unpickled)" if pickles else ""
        raise ModelLoadError(
            f"{name}: no .safetensors weights in the folder{why}; save with save_pretrained(safe_serialization=True)"
        )
    total = sum(p.stat().st_size for p in files)
    if total > max_bytes:
        raise ModelLoadError(f"{name}: the weights are {total / 1024**2:.1f} MiB, over the limit")


def _model(path: Path, name: str, config) -> torch.nn.Module:
    import transformers

    arch = (getattr(config, "architectures", None) or [None])[0]
    cls = getattr(transformers, arch, None) if isinstance(arch, str) else None
    if cls is None:
        cls = transformers.AutoModel
    bars = transformers.utils.logging.is_progress_bar_enabled()
    transformers.utils.logging.disable_progress_bar()  # "Loading weights" on stderr, for every load
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls.from_pretrained(
                path, config=config, local_files_only=True, use_safetensors=True, trust_remote_code=False
            )
    except Exception as err:
        raise ModelLoadError(f"{name}: transformers cannot build {arch or 'the model'}: {first_line(err)}") from err
    finally:
        if bars:
            transformers.utils.logging.enable_progress_bar()
    if getattr(config, "is_encoder_decoder", False):
        raise ModelLoadError(f"{name}: encoder-decoder models ({type(model).__name__}) are not supported yet")
    return model.eval()


def _example_inputs(
    model: torch.nn.Module, name: str, given: dict[str, tuple[int, ...]]
) -> tuple[dict[str, torch.Tensor], list[str]]:
    """The inputs of the model's task at the user's shape or a default one, as seeded example tensors."""
    config = model.config
    notes: list[str] = []
    quiet: list[str] = []  # "batch set to 1" needs no note here: the batch is ours
    if model.main_input_name == "pixel_values":
        size = getattr(config, "image_size", 224)
        h, w = (size, size) if isinstance(size, int) else tuple(size)[:2]
        channels = getattr(config, "num_channels", 3)
        (shape,) = resolve_shapes(name, [("pixel_values", "float32", ["batch", channels, h, w])], given, quiet)
        return {"pixel_values": torch.randn(shape, generator=torch.Generator().manual_seed(0))}, notes
    if model.main_input_name != "input_ids":
        raise ModelLoadError(f"{name}: inputs {model.main_input_name!r} are not supported (text ids or images)")
    positions = getattr(config, "max_position_embeddings", None) or DEFAULT_TOKENS
    tokens = min(DEFAULT_TOKENS, positions)
    dims: list[int | str] = ["batch", "sequence"]
    text = [("input_ids", "int64", dims), ("attention_mask", "int64", dims)]
    try:
        shapes = resolve_shapes(name, text, given, quiet)
    except DynamicShapeError:
        shapes = [(1, tokens)] * 2
        notes.append(f"sequence length {tokens} (give another with --input-shape input_ids=1xN)")
    if shapes[0][1] > positions:
        raise ModelLoadError(f"{name}: {shapes[0][1]} tokens is over the model's {positions} positions")
    ids = torch.randint(0, config.vocab_size, shapes[0], generator=torch.Generator().manual_seed(0))
    return {"input_ids": ids, "attention_mask": torch.ones(shapes[1], dtype=torch.int64)}, notes
