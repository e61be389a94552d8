"""One measurement worker process as the parent sees it: start, talk, kill, and say how it died."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import tlm_core

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
