"""The whole path for one method, as `tlm compile` and the GUI's Run page both take it.

run = compile_and_run(model, part, target, "tlm", candidates=10, progress=print_progress)
run.report.latency, run.report.ok, run.to_dict()      # the --json document of `tlm compile`

Steps: schedule spaces (heuristic, tlm) -> per-task schedules (schedules_for) -> one executable -> run, check
against PyTorch and time it -> optionally each task's kernel measured alone (needed for a bundle).
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tvm.target import Target

from tlm_core.compile.build import Compiled, compile_model
from tlm_core.compile.run import RunReport, run_model
from tlm_core.compile.schedules import Progress, Schedule, measure_schedules, schedules_for
from tlm_core.frontend import LoadedModel
from tlm_core.partition import Partition, Task


def method_label(method: str, candidates: int = 1, trials: int = 64) -> str:
    """How a method is named in tables and on the GUI."""
    if method == "tlm":
        return "TLM top-1" if candidates <= 1 else f"TLM best-of-{candidates}"
    if method == "search":
        return f"search, {trials} trials (Ansor-style, MetaSchedule)"
    named = {"default": "TVM default (no tuning)", "heuristic": "heuristic (Roller-style)", "database": "a database"}
    return named.get(method, method)


def cli_command(model: str, method: str, candidates: int = 1, trials: int = 64, database: str = "DATABASE") -> str:
    """The `tlm compile` command that runs the same method on the same model."""
    if method == "database":
        return f"tlm compile {model} --method {database}"
    extra = {"tlm": f" --candidates {candidates}" if candidates > 1 else "", "search": f" --trials {trials}"}
    return f"tlm compile {model} --method {method}{extra.get(method, '')}"


@dataclass
class ModelRun:
    model: str  # the model's name (a sample name or a file name)
    method: str  # one of METHODS
    label: str  # method_label(...)
    command: str  # cli_command(...)
    target: Target
    part: Partition
    schedules: dict[str, Schedule]
    compiled: Compiled
    report: RunReport
    spaces_s: float  # building the schedule spaces (heuristic, tlm; search builds its own inside its time)
    kernels: dict | None = None  # task id -> MeasureResult of its kernel alone (measure_kernels=True)

    @property
    def compile_s(self) -> float:
        """Everything from the fused model to the executable: schedule spaces, the schedules (generation, or
        search with its measurements) and tvm.compile."""
        return self.spaces_s + self.compiled.compile_secs + sum(s.seconds for s in self.schedules.values())

    def task_rows(self) -> list[dict]:
        rows = []
        for t in self.part.tasks:
            s = self.schedules[t.id]
            row = {"id": t.id, "name": t.name, "weight": t.weight, "method": s.method if s.trace is not None else
                   "default", "latency_s": s.latency, "compile_s": s.seconds, "trials": s.trials,
                   "dropped": s.dropped}  # fmt: skip
            if self.kernels is not None:
                k = self.kernels[t.id]
                row.update(kernel_latency_s=k.latency, kernel_ok=k.ok, kernel_error=k.error)
            rows.append(row)
        return rows

    def to_dict(self) -> dict:
        r = self.report
        return {
            "model": self.model,
            "method": self.method,
            "label": self.label,
            "command": self.command,
            "target": str(self.target),
            "latency_s": r.latency,
            "latencies_s": r.latencies,
            "pytorch_latency_s": r.pytorch_latency,
            "pytorch_latencies_s": r.pytorch_latencies,
            "speedup_vs_pytorch": (r.pytorch_latency / r.latency) if r.pytorch_latency else None,
            "compile_s": self.compile_s,
            "build_s": self.compiled.compile_secs,
            "spaces_s": self.spaces_s,
            "max_abs_error": r.max_abs_error,
            "max_rel_error": r.max_rel_error,
            "ok": r.ok,
            "scheduled_tasks": self.compiled.scheduled,
            "tasks": self.task_rows(),
        }


def compile_and_run(
    model: LoadedModel,
    part: Partition,
    target: Target,
    method: str,
    *,
    space_of: Callable[[Task], object] | None = None,
    generator=None,
    candidates: int = 1,
    trials: int = 64,
    measurer=None,
    store=None,
    database=None,
    repeat: int = 10,
    measure_kernels: bool = False,
    with_pytorch: bool = True,
    progress: Progress | None = None,
) -> ModelRun:
    """Compile the whole model with `method` (see schedules_for), run it, check it against PyTorch, time it.

    progress(fraction of the whole, message) as each step advances. A Measurer is started (and closed) when
    the method or measure_kernels needs one and none is given; search without a store keeps its programs in
    a temporary RecordStore. with_pytorch=False: PyTorch is run for the check but not timed."""
    from tlm_core.measure import Measurer
    from tlm_core.records import RecordStore
    from tlm_core.space import SpaceBuilder

    needs_spaces = method in ("heuristic", "tlm")
    needs_measurer = method == "search" or (method == "tlm" and candidates > 1) or measure_kernels
    steps = ["spaces"] * needs_spaces + ["schedules"] + ["kernels"] * measure_kernels + ["compile", "run"]

    def reporter(step: str) -> Progress:
        def report(fraction: float, message: str) -> None:
            if progress:
                i = steps.index(step)
                progress((i + min(max(fraction, 0.0), 1.0)) / len(steps), f"{i + 1}/{len(steps)} {message}")

        return report

    own_measurer = measurer is None and needs_measurer
    if own_measurer:
        measurer = Measurer(target)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            if needs_spaces:
                build = space_of or SpaceBuilder.for_target(target).build
                spaces, step = {}, reporter("spaces")
                for i, task in enumerate(part.tasks):
                    step(i / len(part.tasks), f"schedule space {i + 1}/{len(part.tasks)} {task.name}")
                    spaces[task.id] = build(task)
                space_of = lambda t: spaces[t.id]  # noqa: E731
            spaces_s = time.perf_counter() - start
            if method == "search" and store is None:
                store = RecordStore(Path(tmp))
            schedules = schedules_for(method, part, target, space_of, generator=generator, candidates=candidates,
                                      trials=trials, measurer=measurer, store=store, database=database,
                                      progress=reporter("schedules"))  # fmt: skip
        kernels = None
        if measure_kernels:  # first, in workers: a kernel that fails alone is left out of the model
            kernels = measure_schedules(part, schedules, measurer, reporter("kernels"))
        reporter("compile")(0.0, "compiling the model (applying the schedules, tvm.compile)")
        compiled = compile_model(part, schedules, target)
        reporter("run")(0.0, f"running, checking against PyTorch and timing ({repeat} repeats)")
        report = run_model(model, compiled, repeat=repeat, with_pytorch=with_pytorch)
        if progress:
            progress(1.0, "done")
    finally:
        if own_measurer:
            measurer.close()
    label = method_label(method, candidates, trials)
    command = cli_command(model.name, method, candidates, trials)
    return ModelRun(model.name, method, label, command, target, part, schedules, compiled, report, spaces_s, kernels)


class BackgroundJob:
    """work(progress) in a daemon thread, so that a GUI stays responsive through minutes of search: poll
    `fraction` and `message`, and once `done`, read `result` or `error` (one line)."""

    def __init__(self, work: Callable[[Progress], object]) -> None:
        self.fraction, self.message = 0.0, "starting"
        self.result: object = None
        self.error: str | None = None
        self.started = time.time()
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True, name="tlm-background-job")
        self._thread.start()

    def _progress(self, fraction: float, message: str) -> None:
        self.fraction, self.message = fraction, message

    def _run(self, work: Callable[[Progress], object]) -> None:
        try:
            self.result = work(self._progress)
        except Exception as err:  # reported to the user; the GUI keeps running
            self.error = f"{type(err).__name__}: {err}"

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done
