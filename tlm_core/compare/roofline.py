"""This machine's roofline, measured: a compute ceiling and a memory ceiling, and each schedule as a point.

Ceilings: peak GFLOP/s = numpy's fp32 GEMM (BLAS, all its threads) and bandwidth = a large numpy copy split
over the cores (bytes read + written), measured once per process. A ceiling is an upper bound and this machine
is shared, so the roof uses the fastest of the repeats (as benchmarks/peak.py does: nothing runs faster than
the hardware allows, while a busy neighbour slows any one repeat); the medians are kept beside it. A kernel's
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
    peak_gflops: float  # numpy fp32 GEMM GEMM_N^3, fastest repeat
    bandwidth_gbs: float  # numpy copy of COPY_MIB MiB over `threads` threads, fastest repeat, GB/s
    threads: int
    seconds: float  # time the measurement took
    median_peak_gflops: float = 0.0  # the same, median repeat (what a busy machine gives most of the time)
    median_bandwidth_gbs: float = 0.0

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the memory roof meets the compute roof."""
        return self.peak_gflops / self.bandwidth_gbs

    def roof(self, intensity: float) -> float:
        """The best GFLOP/s a kernel of this intensity can reach on this machine."""
        return min(self.peak_gflops, self.bandwidth_gbs * intensity)

    def to_dict(self) -> dict:
        return asdict(self) | {"ridge": self.ridge}


def _times(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(fastest, median) seconds of `repeat` runs after a warm-up (page faults, BLAS thread start)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def gemm_gflops(n: int = GEMM_N, repeat: int = 7) -> tuple[float, float]:
    """(best, median) GFLOP/s of numpy's fp32 GEMM n x n x n."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    fastest, median = _times(lambda: np.matmul(a, b, out=c), repeat)
    return 2 * n**3 / fastest / 1e9, 2 * n**3 / median / 1e9


def copy_gbs(mib: int = COPY_MIB, threads: int | None = None, repeat: int = 7) -> tuple[float, float]:
    """(best, median) GB/s of a copy (read + write), the array split into one chunk per thread (numpy drops
    the GIL to copy)."""
    threads = threads or os.cpu_count() or 1
    src = np.ones(mib * 1024**2 // 4, dtype=np.float32)
    dst = np.empty_like(src)
    bounds = np.linspace(0, src.size, threads + 1, dtype=np.int64)
    chunks = [(dst[lo:hi], src[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(threads) as pool:

        def copy() -> None:
            list(pool.map(lambda pair: np.copyto(*pair), chunks))

        fastest, median = _times(copy, repeat)
    return 2 * src.nbytes / fastest / 1e9, 2 * src.nbytes / median / 1e9


_lock = threading.Lock()
_cached: Ceilings | None = None


def machine_ceilings(refresh: bool = False) -> Ceilings:
    """Measured once per process (a second or two); refresh=True measures again."""
    global _cached
    with _lock:
        if _cached is None or refresh:
            start = time.perf_counter()
            threads = os.cpu_count() or 1
            copies = [copy_gbs(threads=1), copy_gbs(threads=threads)]
            bandwidth = max(copies)  # (best, median) of the faster way to copy
            peak = gemm_gflops()
            seconds = time.perf_counter() - start
            _cached = Ceilings(peak[0], bandwidth[0], threads, seconds, peak[1], bandwidth[1])
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
