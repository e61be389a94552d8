"""A long method (search takes minutes) in a background thread, with progress any thread can read.

The GUI starts a Job and polls it; the page never blocks on it. Events (e.g. search trials) are appended by the
work function through `report`, and read as a copy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from tlm_core.errors import summary


class Job:
    def __init__(self, work: Callable[[Callable[[Any], None]], Any], name: str = "job", total: int = 0) -> None:
        """work(report) runs in a daemon thread; report(event) records progress; total: events expected."""
        self.name = name
        self.total = total
        self._work = work
        self._events: list[Any] = []
        self._lock = threading.Lock()
        self.result: Any = None
        self.error: str | None = None
        self.started = time.perf_counter()
        self.finished: float | None = None
        self._thread = threading.Thread(target=self._run, name=f"tlm-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.result = self._work(self.report)
        except Exception as err:  # the page shows it; the thread must not die silently
            self.error = summary(err)
        finally:
            self.finished = time.perf_counter()

    def report(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)

    @property
    def events(self) -> list[Any]:
        with self._lock:
            return list(self._events)

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def elapsed(self) -> float:
        return (self.finished or time.perf_counter()) - self.started

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done
