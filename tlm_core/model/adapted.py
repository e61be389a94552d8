"""Local checkpoints adapted to one machine (`tlm adapt`), and which checkpoint a target gets by default.

`tlm adapt` fine-tunes the shipped checkpoint on programs measured on this machine and writes it to
adapted_checkpoint(target): <root>/<hardware key>/checkpoint, root = $TLM_ADAPTED_DIR, else
$XDG_CACHE_HOME/tlm-studio/adapted, else ~/.cache/tlm-studio/adapted. default_checkpoint_for(target) then
prefers it over the shipped assets/tlm-small for that hardware (`tlm generate`, `tlm compile --method tlm`,
the GUI): only when its train_state.json lists the target's hardware prompt, so a checkpoint adapted for one
CPU, core count or cache size is never used for another.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from .checkpoint import default_checkpoint, train_state

ADAPTED_ENV = "TLM_ADAPTED_DIR"


def adapted_root() -> Path:
    """Where adapted checkpoints live (one folder per hardware key)."""
    if os.environ.get(ADAPTED_ENV):
        return Path(os.environ[ADAPTED_ENV])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tlm-studio" / "adapted"


def hardware_prompt(target) -> str:
    """The target's hardware as the TLM's prompt spells it (what a checkpoint's train_state lists)."""
    from ..language import hardware_of, hardware_tokens

    return hardware_of(hardware_tokens(target))


def hardware_key(target) -> str:
    """A folder name for a target's hardware: readable part + a hash of its whole prompt, e.g.
    llvm-haswell-1c-3f9a12bc (two machines with one CPU name but other caches get different keys)."""
    attrs = dict((target.host if target.kind.name != "llvm" and target.host is not None else target).attrs)
    cpu = re.sub(r"[^A-Za-z0-9_.-]", "_", str(attrs.get("mcpu", "generic")))
    cores = int(attrs.get("num-cores", 1))
    digest = hashlib.sha1(hardware_prompt(target).encode()).hexdigest()[:8]
    return f"{target.kind.name}-{cpu}-{cores}c-{digest}"


def adapted_checkpoint(target) -> Path:
    """The folder `tlm adapt` writes the checkpoint for this target's hardware into (may not exist yet)."""
    return adapted_root() / hardware_key(target) / "checkpoint"


def adapted_for(directory: str | Path, target) -> bool:
    """A checkpoint folder that exists and was trained on this target's hardware."""
    directory = Path(directory)
    state = train_state(directory) if (directory / "config.json").exists() else {}
    return hardware_prompt(target) in state.get("hardware", [])


def default_checkpoint_for(target=None) -> Path:
    """The checkpoint to generate with for a target: the local adapted one when `tlm adapt` wrote one for
    this hardware, else the shipped assets/tlm-small. target None: the shipped one."""
    if target is not None:
        local = adapted_checkpoint(target)
        if adapted_for(local, target):
            return local
    return default_checkpoint()


def checkpoint_label(directory: str | Path, target=None) -> str:
    """For people: which checkpoint, and for which hardware, e.g. "assets/tlm-small (shipped; trained on cpu
    emeraldrapids, znver4, znver5)" or "<path> (adapted by tlm adapt for cpu haswell, 1 core)"."""
    from ..language.hardware import hardware_fields

    directory = Path(directory)
    state = train_state(directory)
    trained = state.get("hardware", [])
    if target is not None and state.get("adapted") and hardware_prompt(target) in trained:
        f = hardware_fields(hardware_prompt(target))
        cores = f.get("cores", 1)
        return f"{directory} (adapted by tlm adapt for cpu {f.get('cpu', '?')}, {cores} core{'s' * (cores != 1)})"
    names = {str(hardware_fields(h).get("cpu", "?")) for h in trained}
    cpus = ", ".join(sorted(names - {"cpu?"})) or "unknown hardware"
    cpus += "; other CPUs by their vector width and caches" * ("cpu?" in names)
    shipped = directory.resolve() == default_checkpoint().resolve()
    name = "assets/tlm-small (shipped; " if shipped else f"{directory} ("
    return f"{name}trained on cpu {cpus})"
