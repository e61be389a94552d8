"""Progress on stderr for long steps, so that stdout stays clean for --json output."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


@contextmanager
def step(message: str, quiet: bool = False) -> Iterator[None]:
    """Print "message ..." and, when the step ends, how long it took."""
    start = time.perf_counter()
    if not quiet:
        print(f"{message} ...", end="", file=sys.stderr, flush=True)
    try:
        yield
    except BaseException:
        if not quiet:
            print(" failed", file=sys.stderr, flush=True)
        raise
    if not quiet:
        print(f" {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


def bar(items: Iterable[T], desc: str, total: int | None = None, quiet: bool = False) -> Iterable[T]:
    return tqdm(items, desc=desc, total=total, file=sys.stderr, disable=quiet, leave=False, dynamic_ncols=True)
