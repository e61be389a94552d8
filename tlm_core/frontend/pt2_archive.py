"""Inspect an untrusted .pt2 zip archive before anything in it is deserialised.

A torch.export archive is a zip with one root folder (named after the file) holding:
  archive_format ("pt2"), archive_version ("0"), byteorder, .data/version, .data/serialization_id,
  models/model.json                              the program, JSON
  data/weights/model_weights_config.json         JSON: fqn -> PayloadMeta (path, use_pickle, tensor_meta)
  data/constants/model_constants_config.json     the same for constants
  data/weights/weight_N, data/constants/tensor_N raw tensor bytes (use_pickle false) or torch.save pickles
  data/constants/custom_obj_N, opaque_obj_N      pickled custom objects (TorchScript / plain pickle)
  data/sample_inputs/model.pt                    example inputs, a torch.save pickle
  extra/*, data/aotinductor/*, data/weights/model.pt (legacy pickled state dict), ...
Only the members in `_ALLOWED` pass; everything else is refused by name (see pt2.py for why).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from tlm_core.frontend.model import ModelLoadError

# Members (below the root folder) that a plain torch.export.save of one program writes.
_ALLOWED = [
    re.compile(p)
    for p in (
        r"archive_format",
        r"archive_version",
        r"byteorder",
        r"\.data/version",
        r"\.data/serialization_id",
        r"models/model\.json",
        r"data/weights/model_weights_config\.json",
        r"data/constants/model_constants_config\.json",
        r"data/weights/weight_\d+",
        r"data/constants/tensor_\d+",
        r"data/sample_inputs/model\.pt",
        r"extra/[\w.-]+",  # extra_files: strings, never read here
    )
]

# Why a known-but-refused member is refused (prefix -> reason).
_REFUSED = {
    "data/aotinductor/": "AOTInductor compiled code (shared libraries would be loaded)",
    "data/executorch/": "ExecuTorch payloads",
    "data/mtia": "MTIA payloads",
    "xl_model_weights/": "external weight files",
    "data/constants/custom_obj_": "pickled TorchScript custom objects",
    "data/constants/opaque_obj_": "pickled opaque Python objects",
    "data/weights/model.pt": "a legacy pickled state dict",
    "data/constants/model.pt": "legacy pickled constants",
    "models/": "more than one program (only 'model' is loaded)",
    "serialized_": "the pre-2.5 archive format (pickled state dict)",
}


@dataclass
class Pt2Archive:
    """A checked archive: read members by their name below the root folder."""

    zf: zipfile.ZipFile
    root: str
    names: set[str]

    def read(self, name: str) -> bytes:
        return self.zf.read(f"{self.root}/{name}")

    def size(self, name: str) -> int:
        return self.zf.getinfo(f"{self.root}/{name}").file_size


def open_pt2(path: str, max_bytes: int) -> Pt2Archive:
    """Open and check the zip: structure, names, sizes, CRCs. Raises ModelLoadError."""
    # torch writes no zip comment, so a whole archive starts with a local header and ends with the
    # end-of-central-directory record. Checked first: a truncated .pt2 would otherwise open as the
    # sample-inputs zip stored inside it.
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(max(0, f.seek(0, 2) - 22))
        tail = f.read(4)
    if head != b"PK\x03\x04" or tail != b"PK\x05\x06":
        raise ModelLoadError("not a valid .pt2 archive (truncated or corrupt zip)")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise ModelLoadError(f"not a valid .pt2 archive (truncated or corrupt zip): {err}") from err
    try:
        return _check(zf, max_bytes)
    except BaseException:
        zf.close()
        raise


def _check(zf: zipfile.ZipFile, max_bytes: int) -> Pt2Archive:
    infos = zf.infolist()
    if not infos:
        raise ModelLoadError("the .pt2 archive is empty")
    full = [i.filename for i in infos]
    if len(set(full)) != len(full):
        raise ModelLoadError("the .pt2 archive has duplicate member names: refused")
    for name in full:
        p = PurePosixPath(name)
        if name.startswith("/") or "\\" in name or "\x00" in name or ".." in p.parts or ":" in p.parts[0]:
            raise ModelLoadError(f"the .pt2 archive has an unsafe member path {name!r}: refused")
    roots = {PurePosixPath(n).parts[0] for n in full}
    if len(roots) != 1 or any("/" not in n for n in full):
        raise ModelLoadError("not a torch.export archive: members must sit in one root folder")
    root = roots.pop()
    names = {n[len(root) + 1 :] for n in full}
    total = sum(i.file_size for i in infos)  # uncompressed: guards against zip bombs
    if total > max_bytes:
        raise ModelLoadError(f"the .pt2 archive unpacks to {total} bytes, over the limit of {max_bytes}")
    if any(i.flag_bits & 0x1 for i in infos):
        raise ModelLoadError("the .pt2 archive has encrypted members: refused")
    for name in sorted(names):
        if not any(p.fullmatch(name) for p in _ALLOWED):
            why = next((r for pre, r in _REFUSED.items() if name.startswith(pre)), "an unexpected member")
            raise ModelLoadError(
                f".pt2 archive member {name!r} is refused: {why}. Only programs saved with "
                "torch.export.save holding plain tensors can be loaded."
            )
    for needed in ("archive_format", "models/model.json", "data/weights/model_weights_config.json"):
        if needed not in names:
            raise ModelLoadError(f"not a torch.export archive: {needed!r} is missing")
    try:
        bad = zf.testzip()  # reads every member once: catches truncation and corruption early
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as err:
        raise ModelLoadError(f"the .pt2 archive is corrupt: {err}") from err
    if bad is not None:
        raise ModelLoadError(f"the .pt2 archive is corrupt: CRC mismatch in {bad!r}")
    archive = Pt2Archive(zf, root, names)
    fmt = archive.read("archive_format").decode(errors="replace").strip()
    if fmt != "pt2":
        raise ModelLoadError(f"not a torch.export archive (archive_format {fmt!r})")
    version = archive.read("archive_version").decode(errors="replace").strip() if "archive_version" in names else ""
    if version != "0":
        raise ModelLoadError(f"unsupported .pt2 archive version {version!r}: re-save with torch 2.13")
    order = archive.read("byteorder").decode(errors="replace").strip() if "byteorder" in names else "little"
    if order != "little":
        raise ModelLoadError(f"unsupported byte order {order!r} in the .pt2 archive")
    return archive
