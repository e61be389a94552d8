"""This machine's roofline, measured: a compute ceiling and a memory ceiling, and each schedule as a point.

Ceilings: peak GFLOP/s = numpy's fp32 GEMM (BLAS, all its threads) and bandwidth = a large numpy copy split
over the cores (bytes read + written), each the median of repeats, measured once per process. A kernel's
point: arithmetic intensity = FLOPs / bytes of the task's inputs and outputs (each touched once: the best
case), against its achieved GFLOP/s. Small kernels whose data stays in cache can sit above the memory roof,
which is DRAM's.
"""

from __future__ import annotations

import math
import os
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np

from tlm_core.partition import Task

GEMM_N = 1024
COPY_MIB = 128  # well beyond any L3 here, so the copy streams from DRAM


@dataclass(frozen=True)
class Ceilings:
    peak_gflops: float  # numpy fp32 GEMM GEMM_N^3, median
    bandwidth_gbs: float  # numpy copy of COPY_MIB MiB over `threads` threads, median, GB/s
    threads: int
    seconds: float  # time the measurement took

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the memory roof meets the compute roof."""
        return self.peak_gflops / self.bandwidth_gbs

    def roof(self, intensity: float) -> float:
        """The best GFLOP/s a kernel of this intensity can reach on this machine."""
        return min(self.peak_gflops, self.bandwidth_gbs * intensity)

    def to_dict(self) -> dict:
        return asdict(self) | {"ridge": self.ridge}


def _median_time(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up (page faults, BLAS thread start)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def gemm_gflops(n: int = GEMM_N, repeat: int = 7) -> float:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    return 2 * n**3 / _median_time(lambda: np.matmul(a, b, out=c), repeat) / 1e9


def copy_gbs(mib: int = COPY_MIB, threads: int | None = None, repeat: int = 7) -> float:
    """GB/s of a copy (read + write), the array split into one chunk per thread (numpy drops the GIL to copy)."""
    threads = threads or os.cpu_count() or 1
    src = np.ones(mib * 1024**2 // 4, dtype=np.float32)
    dst = np.empty_like(src)
    bounds = np.linspace(0, src.size, threads + 1, dtype=np.int64)
    chunks = [(dst[lo:hi], src[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(threads) as pool:

        def copy() -> None:
            list(pool.map(lambda pair: np.copyto(*pair), chunks))

        seconds = _median_time(copy, repeat)
    return 2 * src.nbytes / seconds / 1e9


_lock = threading.Lock()
_cached: Ceilings | None = None


def machine_ceilings(refresh: bool = False) -> Ceilings:
    """Measured once per process (about a second); refresh=True measures again."""
    global _cached
    with _lock:
        if _cached is None or refresh:
            start = time.perf_counter()
            threads = os.cpu_count() or 1
            bandwidth = max(copy_gbs(threads=1), copy_gbs(threads=threads))
            _cached = Ceilings(gemm_gflops(), bandwidth, threads, time.perf_counter() - start)
        return _cached


def task_bytes(task: Task) -> int:
    """Bytes of the task's inputs and outputs (every buffer argument once)."""
    return sum(math.prod(shape) * np.dtype(dtype).itemsize for _, shape, dtype in task.params)


@dataclass
class RooflinePoint:
    method: str
    label: str
    intensity: float  # FLOP per byte
    gflops: float  # achieved
    roof_gflops: float  # the ceiling at this intensity

    @property
    def fraction(self) -> float:
        """Share of the attainable ceiling this schedule reaches (can exceed 1 from cache)."""
        return self.gflops / self.roof_gflops


def roofline_points(task: Task, results: list, ceilings: Ceilings) -> list[RooflinePoint]:
    """One point per measured result (MethodResult) of the task that has a GFLOP/s."""
    intensity = task.flops / max(1, task_bytes(task))
    return [
        RooflinePoint(r.method, r.label, intensity, r.gflops, ceilings.roof(intensity))
        for r in results
        if r.ok and r.gflops
    ]
