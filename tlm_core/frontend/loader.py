"""One entry point for every model source: sample names, .pt2, .onnx and (trusted callers only) TVMScript."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from tlm_core.frontend.model import LoadedModel, ModelLoadError

DEFAULT_MAX_BYTES = 2 * 1024**3  # the CLI's limit; the GUI passes a smaller one for uploads

MODEL_SUFFIXES = (".pt2", ".onnx")
CODE_SUFFIXES = (".py", ".tvmscript")
_PICKLE_SUFFIXES = (".pth", ".pt", ".pkl", ".pickle", ".ckpt", ".bin")
_EXPORT_HINT = (
    "export the model instead: ep = torch.export.export(model.eval(), example_inputs); "
    "torch.export.save(ep, 'model.pt2')"
)


Shapes = dict[str, tuple[int, ...]]


def load_model(
    source: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    allow_code: bool = False,
    input_shapes: Shapes | None = None,
) -> LoadedModel:
    """A sample name, a .pt2 archive, an ONNX file, a transformers checkpoint folder (config.json +
    safetensors), or a TVMScript file (only with allow_code=True).

    TVMScript is Python: loading it runs it, so only callers that trust the file (CLI, Python) pass
    allow_code=True; the GUI never does. input_shapes gives symbolic (dynamic) input dimensions their
    sizes, e.g. {"input_ids": (1, 128)}; without it a dynamic dimension raises DynamicShapeError with a
    suggestion. Raises ModelLoadError with a one-line reason.
    """
    if isinstance(source, str) and _is_sample_name(source):
        return _load_sample(source)
    path = Path(source)
    return _load_file(path, path.name, max_bytes, allow_code, input_shapes)


def load_model_bytes(
    data: bytes, filename: str, *, max_bytes: int = DEFAULT_MAX_BYTES, input_shapes: Shapes | None = None
) -> LoadedModel:
    """An uploaded file's bytes (.pt2 or .onnx). Never runs code: TVMScript uploads are refused."""
    name = Path(filename.replace("\\", "/")).name or "upload"
    if len(data) > max_bytes:
        raise ModelLoadError(f"{name}: the file is {_size(len(data))}, over the limit of {_size(max_bytes)}")
    suffix = Path(name).suffix.lower()
    _check_suffix(name, suffix, allow_code=False)
    # Only the suffix is taken from the user's name: the temporary file's name is ours.
    with tempfile.TemporaryDirectory(prefix="tlm-upload-") as tmp:
        path = Path(tmp) / f"model{suffix}"
        path.write_bytes(data)
        return _load_file(path, name, max_bytes, False, input_shapes)


def _is_sample_name(source: str) -> bool:
    # A bare word (no folder) that is not a file and has no file-type suffix is a sample name.
    if not source or "/" in source or "\\" in source or Path(source).exists():
        return False
    return Path(source).suffix.lower() not in MODEL_SUFFIXES + CODE_SUFFIXES + _PICKLE_SUFFIXES


def _load_sample(name: str) -> LoadedModel:
    # the samples registered under the entry points "tlm_core.samples" (imported lazily: they build models)
    from tlm_core.frontend.samples import load_sample

    return load_sample(name)


def _load_file(path: Path, name: str, max_bytes: int, allow_code: bool, input_shapes: Shapes | None) -> LoadedModel:
    if not path.exists():
        raise ModelLoadError(f"{path}: no such file")
    from tlm_core.frontend.checkpoint_folder import is_checkpoint_folder, load_checkpoint_folder

    if is_checkpoint_folder(path):
        return load_checkpoint_folder(path, name, max_bytes, input_shapes)
    if path.is_dir():
        raise ModelLoadError(f"{path}: a folder without config.json; give a transformers checkpoint folder or a file")
    if not path.is_file():
        raise ModelLoadError(f"{path}: not a regular file")
    suffix = path.suffix.lower()
    _check_suffix(name, suffix, allow_code)
    size = path.stat().st_size
    if size == 0:
        raise ModelLoadError(f"{name}: the file is empty")
    if size > max_bytes:
        raise ModelLoadError(f"{name}: the file is {_size(size)}, over the limit of {_size(max_bytes)}")
    # Import each frontend only when needed: ONNX and TVMScript loading pull in their own packages.
    if suffix == ".pt2":
        from tlm_core.frontend.pt2 import load_pt2

        return load_pt2(path, name, max_bytes, input_shapes)
    if suffix == ".onnx":
        from tlm_core.frontend.onnx_file import load_onnx

        return load_onnx(path, name, max_bytes, input_shapes)
    from tlm_core.frontend.tvmscript_file import load_tvmscript

    return load_tvmscript(path, name)


def _check_suffix(name: str, suffix: str, allow_code: bool) -> None:
    if suffix in MODEL_SUFFIXES:
        return
    if suffix in CODE_SUFFIXES:
        if allow_code:
            return
        raise ModelLoadError(
            f"{name}: TVMScript files are Python code and loading one runs it, so they are refused here; "
            "load files you trust from the CLI or Python (allow_code=True)"
        )
    if suffix in _PICKLE_SUFFIXES:
        raise ModelLoadError(
            f"{name}: pickled checkpoints ({suffix}) are refused, since unpickling can run arbitrary code; "
            + _EXPORT_HINT
        )
    shown = re.sub(r"[^\w.-]", "?", suffix) or "no extension"
    raise ModelLoadError(
        f"{name}: unsupported file type ({shown}); give a .pt2 (torch.export.save) or .onnx file, "
        "a TVMScript .py/.tvmscript file (CLI/Python only), or a sample name"
    )


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024**2 else f"{n / 1024**2:.1f} MiB"
