"""Reference outputs: the untuned task's outputs on the seeded inputs, one .npz file per (task, input seed, input
rule) in the cache, written once and read by every check (the Measurer's workers and the RPC measurer share it)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from tlm_core.measure.inputs import INPUT_RULE_VERSION


def reference_file(cache_dir: Path, task_id: str, seed: int) -> Path:
    return cache_dir / "references" / f"{task_id}-seed{seed}-rule{INPUT_RULE_VERSION}.npz"


def save_outputs(path: str | Path, outs: list[np.ndarray]) -> None:
    """Write the outputs atomically: a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp.npz")
    np.savez(tmp, **{f"out{i}": out for i, out in enumerate(outs)})
    os.replace(tmp, path)


def load_outputs(path: str | Path) -> list[np.ndarray]:
    with np.load(path) as data:
        return [data[f"out{i}"] for i in range(len(data.files))]
