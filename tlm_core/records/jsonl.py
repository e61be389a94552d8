"""Crash-safe JSON-lines files: one write + flush + fsync per line, and repair of a torn last line.

A process killed mid-append leaves at most one partial last line; `repair` truncates it back to the last
newline, so every earlier line stays loadable. Writers hold an flock on the file while they append, so
several processes may share one file.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def dumps(obj) -> str:
    """Compact JSON as TVM writes it: no spaces, sorted keys, bools as 0/1 (trace attributes)."""
    return json.dumps(_ints_for_bools(obj), separators=(",", ":"), sort_keys=True)


def _ints_for_bools(obj):
    if isinstance(obj, bool):
        return int(obj)
    if isinstance(obj, list | tuple):
        return [_ints_for_bools(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _ints_for_bools(v) for k, v in obj.items()}
    return obj


def repair(path: Path) -> int:
    """Truncate a torn last line (no trailing newline); returns the bytes removed."""
    if not path.exists():
        return 0
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        # scan back in blocks for the last newline
        end = size
        while end > 0:
            start = max(0, end - 65536)
            f.seek(start)
            block = f.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            end = start
        else:
            keep = 0
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
        return size - keep


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (created if missing) across processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def append_line(path: Path, line: str) -> None:
    """Append one line durably: a single write of the whole line, then flush and fsync."""
    assert "\n" not in line
    repair(path)  # never glue a new line onto a torn one
    data = (line + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        if written != len(data):  # a short write on a regular file means the disk is full
            raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path) -> list[str]:
    """The complete lines of a file (a torn last line is left out), without their newlines."""
    if not path.exists():
        return []
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1].decode().splitlines()
