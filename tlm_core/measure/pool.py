"""The pool of measurement worker processes: start them, hand them jobs, and survive their deaths.

A job is built by a worker, then run; a worker that crashes or outlives a deadline is killed and replaced,
and its job gets a failed result. With several workers (`gate`), builds run in parallel but only one worker
runs a kernel at a time, so kernels do not disturb each other's timings.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path

import tlm_core

STARTUP_TIMEOUT_S = 300.0  # importing TVM takes ~2-3 s idle, far longer on a loaded machine

_PROJECT_ROOT = str(Path(tlm_core.__file__).resolve().parents[1])  # so the child imports this tlm_core


class WorkerProcess:
    """A child running tlm_core.measure.worker, connected by a socket pair (its stdout is free for TVM's
    chatter, which goes to `log_path`). Starting returns at once; the child says "ready" after importing
    TVM (~2-3 s)."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        ours, theirs = multiprocessing.Pipe()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_PROJECT_ROOT, os.environ.get("PYTHONPATH")])))
        code = "import sys; from tlm_core.measure.worker import main; main(int(sys.argv[1]), int(sys.argv[2]))"
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno()), str(os.getpid())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        theirs.close()  # only the child holds the other end now: its death reads as EOF here
        self.conn = ours
        self.started = time.perf_counter()
        self.ready = False
        self.startup_secs: float | None = None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: tuple) -> None:
        self.conn.send(message)

    def kill(self) -> None:
        if self.alive:
            self.proc.kill()
        self.proc.wait()
        self.conn.close()

    def how_it_died(self) -> str:
        """'crashed (signal 11)' or 'exited with code 1' (waits for the exit status)."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        if code < 0:
            return f"crashed (signal {-code})"
        return f"exited with code {code}"

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def close(self, grace_s: float = 2.0) -> None:
        """Ask politely, then kill."""
        if self.alive:
            try:
                self.send(("quit",))
                self.proc.wait(timeout=grace_s)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


@dataclass
class Job:
    index: int
    payload: dict  # what the worker gets
    timeout_s: float  # for the build, and again for the run


@dataclass
class _Slot:
    worker: WorkerProcess
    job: Job | None = None
    phase: str = "idle"  # starting (worker not ready yet) | building | waiting (for the run turn) | running
    deadline: float = float("inf")
    build_secs: float = 0.0


class WorkerPool:
    """`workers` long-lived worker processes; `run` hands them jobs and returns when each has a result."""

    def __init__(self, workers: int = 1) -> None:
        self.gate = workers > 1  # several workers: one runs at a time
        self.spawned = 0  # processes started so far (more than `workers` after crashes or hangs)
        self._log_dir = Path(tempfile.mkdtemp(prefix="tlm-measure-"))
        self._slots = [_Slot(self._spawn()) for _ in range(workers)]

    def wait_ready(self) -> None:
        """Block until every idle worker has imported TVM."""
        for slot in self._slots:
            worker = slot.worker
            if not worker.ready and slot.job is None:
                if not worker.conn.poll(STARTUP_TIMEOUT_S):
                    raise RuntimeError("a measurement worker did not start in time")
                self._on_ready(slot, worker.conn.recv())

    def close(self) -> None:
        for slot in self._slots:
            slot.worker.close()
        self._slots = []
        shutil.rmtree(self._log_dir, ignore_errors=True)

    def _spawn(self) -> WorkerProcess:
        self.spawned += 1
        return WorkerProcess(self._log_dir / f"worker-{self.spawned}.log")

    def _replace(self, slot: _Slot) -> None:
        slot.worker.kill()
        slot.worker = self._spawn()

    def run(self, jobs: list[Job], on_done: Callable[[int, dict], None]) -> None:
        """Run jobs on the workers until each has a result, on_done(job.index, raw result dict) as each ends;
        crashes and hangs become failed results."""
        self._queue: deque[Job] = deque(jobs)
        self._waiting: deque[_Slot] = deque()  # built, waiting for their turn to run
        self._running: list[_Slot] = []  # at most one when gated
        self._on_done = on_done
        try:
            while self._queue or self._busy():
                for slot in self._slots:
                    if slot.job is None and self._queue:
                        self._dispatch(slot, self._queue.popleft())
                if self._waiting and not self._running:
                    self._start_running(self._waiting.popleft(), time.perf_counter(), send_go=True)
                busy = self._busy()
                timeout = max(0.0, min(slot.deadline for slot in busy) - time.perf_counter())
                ready = wait([slot.worker.conn for slot in busy], timeout=min(timeout, 3600.0))
                now = time.perf_counter()
                for slot in busy:
                    if slot.worker.conn in ready:
                        self._receive(slot, now)
                    elif now >= slot.deadline:
                        self._expire(slot)
        except BaseException:  # interrupted (Ctrl-C, a raising callback): drop the jobs in flight
            for slot in self._busy():
                slot.job, slot.phase, slot.deadline = None, "idle", float("inf")
                self._replace(slot)
            raise

    def _busy(self) -> list[_Slot]:
        return [slot for slot in self._slots if slot.job is not None]

    def _receive(self, slot: _Slot, now: float) -> None:
        try:
            message = slot.worker.conn.recv()
        except (EOFError, OSError):
            error = f"worker {slot.worker.how_it_died()} while {slot.phase}"
            if slot.phase == "starting":  # not the program's fault: say why
                error += f": {slot.worker.log_tail()}"
            self._fail(slot, error)
            return
        kind = message[0]
        if kind == "ready":
            self._on_ready(slot, message)
        elif kind == "built":
            slot.build_secs = message[1]
            if self.gate:
                slot.phase, slot.deadline = "waiting", float("inf")
                self._waiting.append(slot)
            else:
                self._start_running(slot, now, send_go=False)
        elif kind == "result":
            self._finish(slot, message[1])

    def _start_running(self, slot: _Slot, now: float, send_go: bool) -> None:
        if send_go:
            slot.worker.send(("go",))
        slot.phase, slot.deadline = "running", now + slot.job.timeout_s
        self._running.append(slot)

    def _expire(self, slot: _Slot) -> None:
        if slot.phase == "starting":
            self._fail(slot, f"worker did not start within {STARTUP_TIMEOUT_S:g} s: {slot.worker.log_tail()}")
        else:
            self._fail(slot, f"timed out after {slot.job.timeout_s:g} s while {slot.phase}")

    def _finish(self, slot: _Slot, raw: dict) -> None:
        job, build_secs = slot.job, slot.build_secs
        for turn in (self._running, self._waiting):
            if slot in turn:
                turn.remove(slot)
        slot.job, slot.phase, slot.deadline, slot.build_secs = None, "idle", float("inf"), 0.0
        self._on_done(job.index, {"build_secs": build_secs, **raw})  # last: it may raise

    def _fail(self, slot: _Slot, error: str) -> None:
        self._replace(slot)
        self._finish(slot, {"ok": False, "error": error})

    def _dispatch(self, slot: _Slot, job: Job) -> None:
        if not slot.worker.alive:  # died while idle (killed from outside, say)
            self._replace(slot)
        try:
            slot.worker.send(("job", {**job.payload, "gate": self.gate}))
        except OSError:
            self._replace(slot)
            slot.worker.send(("job", {**job.payload, "gate": self.gate}))
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
