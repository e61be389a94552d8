"""Measure scheduled programs of a task: build, run, check against the reference, time.

The Measurer owns a pool of long-lived worker processes (tlm_core.measure.pool / worker) that import TVM
once and then build and run many programs, so a batch costs no process start-up. Programs travel as
`tvm.ir.save_json` text (~1.5 ms to save and load; TVMScript round trips take ~15-80 ms). A worker that
crashes or hangs is killed and replaced; the program it held is reported as failed.

With several workers only one runs a kernel at a time, but builds still overlap the timed run, so more
workers only pay off with spare cores (on a 2-core machine two workers measured ~430 programs/min against
~720 for one).
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tvm
from tvm.target import Target

from tlm_core.measure.inputs import index_bounds, output_indices
from tlm_core.measure.pool import Job, WorkerPool
from tlm_core.measure.reference import reference_file
from tlm_core.measure.result import MeasureResult
from tlm_core.partition.task import Task, workload_mod
from tlm_core.target import host_target, target_to_dict


def default_cache_dir() -> Path:
    return Path(os.environ.get("TLM_CACHE_DIR", ".tlm-cache"))


class Measurer:
    """Build and time programs of tasks on the local target, in isolated worker processes.

    target: a Target, a kind ("llvm", "cuda", "auto") or None for host_target("auto").
    number, repeat, min_repeat_ms, flush_cache: as TVM's time_evaluator (latency = median of `repeat`
    means of `number` runs; number grows until a repeat lasts min_repeat_ms).
    input_seed: seed of the deterministic random inputs (see tlm_core.measure.inputs).
    cache_dir: references are cached in cache_dir/references/ (default $TLM_CACHE_DIR or .tlm-cache).
    """

    def __init__(
        self,
        target: Target | str | None = None,
        workers: int = 1,
        timeout_s: float = 30.0,
        number: int = 1,
        repeat: int = 5,
        min_repeat_ms: int = 5,
        flush_cache: bool = False,
        input_seed: int = 0,
        cache_dir: str | Path | None = None,
        reference_timeout_s: float = 600.0,
    ) -> None:
        self.target = _as_target(target)
        self.timeout_s = timeout_s
        self.reference_timeout_s = reference_timeout_s
        self.timing = {"number": number, "repeat": repeat, "min_repeat_ms": min_repeat_ms, "flush_cache": flush_cache}
        self.input_seed = input_seed
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._reference_errors: dict[str, str] = {}  # reference key -> why it failed (not retried)
        # task id -> (indices of its output params, exclusive bounds of its index params)
        self._param_roles: dict[str, tuple[list[int], dict[int, int]]] = {}
        self._lock = threading.Lock()
        self._created = time.perf_counter()
        self._pool = WorkerPool(workers)

    # -- public -------------------------------------------------------------------------------------

    def measure(
        self,
        task: Task,
        mods: list[tvm.IRModule],
        progress: Callable[[int, MeasureResult], None] | None = None,
    ) -> list[MeasureResult]:
        """One result per module, in order. progress(index, result) is called as each one finishes."""
        if not mods:
            return []
        with self._lock:  # one batch at a time (a GUI may call from several threads)
            return self._measure(task, mods, progress)

    def side_by_side(self, task: Task, mods: dict[str, tvm.IRModule], rounds: int = 3) -> dict[str, float | None]:
        """Each named module's median latency over `rounds` batches of all of them, in rotated order (None:
        it failed every time). Programs chosen by different methods compare fairly only this way: a best-of-N
        latency is the minimum of N noisy measurements, and this machine's speed drifts within minutes."""
        names = list(mods)
        times: dict[str, list[float]] = {n: [] for n in names}
        for k in range(rounds if names else 0):
            order = names[k % len(names) :] + names[: k % len(names)]
            for n, r in zip(order, self.measure(task, [mods[n] for n in order]), strict=True):
                if r.ok and r.latency is not None:
                    times[n].append(r.latency)
        return {n: statistics.median(v) if v else None for n, v in times.items()}

    def _measure(self, task: Task, mods: list[tvm.IRModule], progress) -> list[MeasureResult]:
        results: list[MeasureResult | None] = [None] * len(mods)

        def done(index: int, result: MeasureResult) -> None:
            results[index] = result
            if progress is not None:
                progress(index, result)

        base = self._base_payload(task)
        reference_error = self._ensure_reference(task, base)
        jobs = []
        for i, mod in enumerate(mods):
            if reference_error:
                done(i, MeasureResult.failure(f"reference failed: {reference_error}"))
                continue
            try:
                text = tvm.ir.save_json(workload_mod(mod) if isinstance(mod, tvm.tirx.PrimFunc) else mod)
            except Exception as err:
                done(i, MeasureResult.failure(f"could not serialise the module: {err}"))
                continue
            jobs.append(Job(i, {**base, "kind": "candidate", "mod": text}, self.timeout_s))
        self._pool.run(jobs, lambda i, raw: done(i, _to_result(task, raw)))
        return results  # type: ignore[return-value]

    def wait_ready(self) -> float:
        """Block until every worker has imported TVM; seconds since this Measurer was created."""
        self._pool.wait_ready()
        return time.perf_counter() - self._created

    @property
    def workers_started(self) -> int:
        """Processes started so far (more than `workers` after crashes or hangs)."""
        return self._pool.spawned

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> Measurer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten close() must not leave workers behind
        if getattr(self, "_pool", None) is not None:
            try:
                self.close()
            except Exception:
                pass

    # -- references ---------------------------------------------------------------------------------

    def reference_path(self, task: Task) -> Path:
        return reference_file(self.cache_dir, task.id, self.input_seed)

    def _reference_target(self) -> Target:
        """References run the untuned task on the CPU: an unscheduled GPU kernel would not even build."""
        if self.target.kind.name == "llvm":
            return self.target
        return self.target.host if self.target.host is not None else host_target("llvm")

    def _ensure_reference(self, task: Task, base: dict) -> str | None:
        """None when the reference outputs are on disk (computing them once if needed), else why not."""
        path = self.reference_path(task)
        key = str(path)
        if key in self._reference_errors:
            return self._reference_errors[key]
        if path.exists():
            return None
        payload = {
            **base,
            "kind": "reference",
            "mod": tvm.ir.save_json(task.mod),
            "target": target_to_dict(self._reference_target()),
        }
        raw: dict = {}
        self._pool.run([Job(0, payload, self.reference_timeout_s)], lambda _, r: raw.update(r))
        if not raw.get("ok"):
            self._reference_errors[key] = raw.get("error") or "unknown error"
            return self._reference_errors[key]
        return None

    def _base_payload(self, task: Task) -> dict:
        return {
            "task_id": task.id,
            "seed": self.input_seed,
            "params": task.params,
            "outputs": self._roles(task)[0],
            "index_bounds": self._roles(task)[1],
            "target": target_to_dict(self.target),
            "ref_path": str(self.reference_path(task)),
            **self.timing,
        }

    def _roles(self, task: Task) -> tuple[list[int], dict[int, int]]:
        if task.id not in self._param_roles:
            self._param_roles[task.id] = (output_indices(task.func), index_bounds(task.func))
        return self._param_roles[task.id]


def _as_target(target: Target | dict | str | None) -> Target:
    if isinstance(target, Target):
        return target
    if isinstance(target, dict):
        return Target(target)
    return host_target(target or "auto")


def _to_result(task: Task, raw: dict) -> MeasureResult:
    ok = bool(raw.get("ok"))
    latencies = [float(t) for t in raw.get("latencies") or []] if ok else []
    latency = float(np.median(latencies)) if latencies else None
    return MeasureResult(
        ok=ok and latency is not None,
        error=None if ok else raw.get("error") or "unknown error",
        latency=latency,
        latencies=latencies,
        gflops=task.flops / latency / 1e9 if latency and task.flops else None,
        build_secs=float(raw.get("build_secs") or 0.0),
        measure_secs=float(raw.get("measure_secs") or 0.0),
        max_abs_error=raw.get("max_abs_error"),
        max_rel_error=raw.get("max_rel_error"),
    )
