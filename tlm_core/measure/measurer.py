"""Measure scheduled programs of a task: build, run, check against the reference, time.

The Measurer owns long-lived worker processes (tlm_core.measure.worker) that import TVM once and then
build and run many programs, so a batch costs no process start-up. Programs travel as
`tvm.ir.save_json` text (~1-4 ms to save and load; TVMScript round trips take ~40-80 ms). A worker that
crashes or hangs is killed and replaced; the program it held is reported as failed.

With several workers, builds run in parallel but only one worker runs a kernel at a time, so timings do not
disturb each other.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path

import numpy as np
import tvm
from tvm.target import Target

from tlm_core.measure.inputs import INPUT_RULE_VERSION, output_indices
from tlm_core.measure.pool import WorkerProcess
from tlm_core.measure.result import MeasureResult
from tlm_core.partition.task import Task, workload_mod
from tlm_core.target import host_target, target_to_dict

STARTUP_TIMEOUT_S = 300.0  # importing TVM takes ~2-3 s idle, far longer on a loaded machine


def default_cache_dir() -> Path:
    return Path(os.environ.get("TLM_CACHE_DIR", ".tlm-cache"))


@dataclass
class _Job:
    index: int
    payload: dict  # what the worker gets
    timeout_s: float  # for the build, and again for the run


@dataclass
class _Slot:
    worker: WorkerProcess
    job: _Job | None = None
    phase: str = "idle"  # starting (worker not ready yet) | building | waiting (for the run turn) | running
    deadline: float = float("inf")
    build_secs: float = 0.0


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
        self._gate = workers > 1  # several workers: one runs at a time
        self._reference_errors: dict[str, str] = {}  # reference key -> why it failed (not retried)
        self._output_indices: dict[str, list[int]] = {}  # task id -> indices of its output params
        self._log_dir = Path(tempfile.mkdtemp(prefix="tlm-measure-"))
        self._spawned = 0
        self._created = time.perf_counter()
        self._slots = [_Slot(self._spawn()) for _ in range(workers)]

    # -- public -------------------------------------------------------------------------------------

    def measure(
        self,
        task: Task,
        mods: list[tvm.IRModule],
        progress: Callable[[int, MeasureResult], None] | None = None,
    ) -> list[MeasureResult]:
        """One result per module, in order. progress(index, result) is called as each one finishes."""
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
            jobs.append(_Job(i, {**base, "kind": "candidate", "mod": text}, self.timeout_s))
        self._run(jobs, lambda i, raw: done(i, _to_result(task, raw)))
        return results  # type: ignore[return-value]

    def wait_ready(self) -> float:
        """Block until every worker has imported TVM; seconds since this Measurer was created."""
        for slot in self._slots:
            worker = slot.worker
            if not worker.ready and slot.job is None:
                if not worker.conn.poll(STARTUP_TIMEOUT_S):
                    raise RuntimeError("a measurement worker did not start in time")
                self._on_ready(slot, worker.conn.recv())
        return time.perf_counter() - self._created

    @property
    def workers_started(self) -> int:
        """Processes started so far (more than `workers` after crashes or hangs)."""
        return self._spawned

    def close(self) -> None:
        for slot in self._slots:
            slot.worker.close()
        self._slots = []
        shutil.rmtree(self._log_dir, ignore_errors=True)

    def __enter__(self) -> Measurer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten close() must not leave workers behind
        if getattr(self, "_slots", None):
            try:
                self.close()
            except Exception:
                pass

    # -- references ---------------------------------------------------------------------------------

    def reference_path(self, task: Task) -> Path:
        name = f"{task.id}-seed{self.input_seed}-rule{INPUT_RULE_VERSION}.npz"
        return self.cache_dir / "references" / name

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
            "gate": self._gate,
        }
        raw: dict = {}
        self._run([_Job(0, payload, self.reference_timeout_s)], lambda _, r: raw.update(r))
        if not raw.get("ok"):
            self._reference_errors[key] = raw.get("error") or "unknown error"
            return self._reference_errors[key]
        return None

    def _base_payload(self, task: Task) -> dict:
        return {
            "task_id": task.id,
            "seed": self.input_seed,
            "params": task.params,
            "outputs": self._outputs(task),
            "target": target_to_dict(self.target),
            "ref_path": str(self.reference_path(task)),
            "gate": self._gate,
            **self.timing,
        }

    def _outputs(self, task: Task) -> list[int]:
        if task.id not in self._output_indices:
            self._output_indices[task.id] = output_indices(task.func)
        return self._output_indices[task.id]

    # -- the worker pool --------------------------------------------------------------------------

    def _spawn(self) -> WorkerProcess:
        self._spawned += 1
        return WorkerProcess(self._log_dir / f"worker-{self._spawned}.log")

    def _replace(self, slot: _Slot) -> None:
        slot.worker.kill()
        slot.worker = self._spawn()

    def _run(self, jobs: list[_Job], on_done: Callable[[int, dict], None]) -> None:
        """Run jobs on the workers until each has a result; crashes and hangs become failed results."""
        queue = deque(jobs)
        waiting: deque[_Slot] = deque()  # built, waiting for their turn to run
        running: list[_Slot] = []  # at most one when gated

        def finish(slot: _Slot, raw: dict) -> None:
            on_done(slot.job.index, {"build_secs": slot.build_secs, **raw})
            if slot in running:
                running.remove(slot)
            if slot in waiting:
                waiting.remove(slot)
            slot.job, slot.phase, slot.deadline, slot.build_secs = None, "idle", float("inf"), 0.0

        def fail(slot: _Slot, error: str) -> None:
            finish(slot, {"ok": False, "error": error})
            self._replace(slot)

        while queue or any(slot.job for slot in self._slots):
            for slot in self._slots:
                if slot.job is None and queue:
                    self._dispatch(slot, queue.popleft())
            if waiting and not running:
                slot = waiting.popleft()
                slot.worker.send(("go",))
                slot.phase, slot.deadline = "running", time.perf_counter() + slot.job.timeout_s
                running.append(slot)

            busy = [slot for slot in self._slots if slot.job]
            timeout = max(0.0, min(slot.deadline for slot in busy) - time.perf_counter())
            ready = wait([slot.worker.conn for slot in busy], timeout=min(timeout, 3600.0))
            now = time.perf_counter()
            for slot in busy:
                if slot.worker.conn in ready:
                    try:
                        message = slot.worker.conn.recv()
                    except (EOFError, OSError):
                        error = f"worker {slot.worker.how_it_died()} while {slot.phase}"
                        if slot.phase == "starting":  # not the program's fault: say why
                            error += f": {slot.worker.log_tail()}"
                        fail(slot, error)
                        continue
                    kind = message[0]
                    if kind == "ready":
                        self._on_ready(slot, message)
                    elif kind == "built":
                        slot.build_secs = message[1]
                        if slot.job.payload["gate"]:
                            slot.phase, slot.deadline = "waiting", float("inf")
                            waiting.append(slot)
                        else:
                            slot.phase, slot.deadline = "running", now + slot.job.timeout_s
                            running.append(slot)
                    elif kind == "result":
                        finish(slot, message[1])
                elif now >= slot.deadline:
                    if slot.phase == "starting":
                        fail(slot, f"worker did not start within {STARTUP_TIMEOUT_S:g} s: {slot.worker.log_tail()}")
                    else:
                        fail(slot, f"timed out after {slot.job.timeout_s:g} s while {slot.phase}")

    def _dispatch(self, slot: _Slot, job: _Job) -> None:
        if not slot.worker.alive:  # died while idle (killed from outside, say)
            self._replace(slot)
        try:
            slot.worker.send(("job", job.payload))
        except OSError:
            self._replace(slot)
            slot.worker.send(("job", job.payload))
        slot.job = job
        if slot.worker.ready:
            slot.phase, slot.deadline = "building", time.perf_counter() + job.timeout_s
        else:
            slot.phase, slot.deadline = "starting", slot.worker.started + STARTUP_TIMEOUT_S

    def _on_ready(self, slot: _Slot, message: tuple) -> None:
        assert message[0] == "ready", message
        slot.worker.ready = True
        slot.worker.startup_secs = time.perf_counter() - slot.worker.started
        if slot.phase == "starting":
            slot.phase, slot.deadline = "building", time.perf_counter() + slot.job.timeout_s


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
