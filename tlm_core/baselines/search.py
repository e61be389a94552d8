"""The search baseline: Ansor-style evolutionary search, MetaSchedule implementation.

Ansor's `auto_scheduler` left TVM in 0.20; its algorithm lives on as MetaSchedule's evolutionary search
guided by an XGBoost cost model, over the same design space the Space Builder enumerates (PostOrderApply
with the target's default rules). This module runs it through MetaSchedule's task scheduler (`tune_tasks`,
gradient scheduler) with a trial budget per model, but measures with our Measurer instead of MetaSchedule's
LocalBuilder/LocalRunner: those start a process pool and import the tensor intrinsics on every batch
(~20-28 s), while our long-lived isolated workers build, run and check each program against the reference.

Every trial is logged (trial index, task, wall time, latency) for convergence curves, and every measured
program goes into a RecordStore (MetaSchedule JSONDatabase files).
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tvm
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
from tvm.s_tir.meta_schedule.runner import PyRunner
from tvm.s_tir.meta_schedule.runner.local_runner import LocalRunnerFuture
from tvm.target import Target

from tlm_core.measure import Measurer, MeasureResult
from tlm_core.partition import Task
from tlm_core.records import RecordStore
from tlm_core.space.startup import import_tensor_intrinsics

METHOD = "search"
LABEL = "Ansor-style evolutionary search, MetaSchedule implementation"


@dataclass
class Trial:
    index: int  # 0-based, over the whole run (all tasks)
    task_id: str
    wall_s: float  # seconds since the search started, when this trial's result came back
    latency: float | None  # seconds; None when it failed (build, run, or numeric check)
    error: str | None = None


@dataclass
class SearchResult:
    trials: list[Trial] = field(default_factory=list)
    best: dict[str, float] = field(default_factory=dict)  # task id -> best latency found
    seconds: float = 0.0  # wall time of the whole search, start-up included
    budget: dict[str, int] = field(default_factory=dict)  # task id -> trials it was given
    stopped: bool = False  # stopped at its time limit (max_seconds), with the trials measured so far

    def trials_of(self, task_id: str) -> list[Trial]:
        return [t for t in self.trials if t.task_id == task_id]

    def convergence(self, task_id: str | None = None) -> list[dict]:
        """Best latency so far after each trial (of one task, or the sum over tasks of the whole run)."""
        out, best = [], math.inf
        for t in self.trials if task_id is None else self.trials_of(task_id):
            if t.latency is not None:
                best = min(best, t.latency)
            out.append({"trial": t.index, "wall_s": t.wall_s, "best_latency": None if best == math.inf else best})
        return out

    def to_dict(self) -> dict:
        return {
            "label": LABEL,
            "seconds": self.seconds,
            "budget": self.budget,
            "stopped": self.stopped,
            "best": self.best,
            "trials": [asdict(t) for t in self.trials],
        }


class SearchStopped(Exception):
    """Raised from the runner when the search's time is up: MetaSchedule has no time limit of its own."""


class _Bridge:
    """What our builder and runner share: built modules by key, their tasks, and the trial log."""

    def __init__(
        self,
        tasks: list[Task],
        measurer: Measurer,
        on_trial: Callable[[Trial], None] | None,
        max_seconds: float | None = None,
    ):
        self.tasks = tasks
        self.measurer = measurer
        self.on_trial = on_trial
        self.pending: dict[str, tuple[Task, tvm.IRModule]] = {}
        self.trials: list[Trial] = []
        self.start = time.perf_counter()
        self.max_seconds = max_seconds
        self.stopped = False
        self._next = 0

    def task_of(self, mod: tvm.IRModule) -> Task:
        """The task a scheduled module belongs to: the same parameters, then the most block names in common
        (MetaSchedule hands the builder modules without saying which task they came from)."""
        func = mod["main"]
        params = [(tuple(int(d) for d in p.shape), str(p.dtype)) for p in func.params]
        same = [t for t in self.tasks if [(s, d) for _, s, d in t.params] == params]
        if len(same) == 1:
            return same[0]
        names = _block_names(func.body)
        pool = same or self.tasks
        return max(pool, key=lambda t: len(names & _block_names(t.func.body)))

    def add(self, mod: tvm.IRModule) -> str:
        key = f"tlm-search-{self._next}"
        self._next += 1
        self.pending[key] = (self.task_of(mod), mod)
        return key

    def run(self, keys: list[str]) -> list[MeasureResult]:
        over = self.max_seconds is not None and time.perf_counter() - self.start > self.max_seconds
        if over and self.trials:  # one batch at least, so a stopped search still has a best program
            self.stopped = True
            raise SearchStopped(f"search stopped after {self.max_seconds:.0f} s, {len(self.trials)} trials")
        results: dict[str, MeasureResult] = {}
        by_task: dict[str, list[str]] = {}
        for key in keys:
            by_task.setdefault(self.pending[key][0].id, []).append(key)
        for group in by_task.values():
            task = self.pending[group[0]][0]
            measured = self.measurer.measure(task, [self.pending[k][1] for k in group])
            for key, res in zip(group, measured, strict=True):
                results[key] = res
                trial = Trial(
                    len(self.trials),
                    task.id,
                    time.perf_counter() - self.start,
                    res.latency if res.ok else None,
                    None if res.ok else res.error,
                )
                self.trials.append(trial)
                if self.on_trial:
                    self.on_trial(trial)
        for key in keys:
            self.pending.pop(key, None)
        return [results[k] for k in keys]


def _block_names(stmt) -> set[str]:
    from tlm_core.baselines.heuristic.analysis import block_realizes

    return {r.block.name_hint for r in block_realizes(stmt)}


def _builder(bridge: _Bridge) -> ms.builder.Builder:
    @derived_object
    class MeasurerBuilder(PyBuilder):
        """Hands each module to the runner by key: our workers build and run in one step."""

        def build(self, build_inputs):
            return [BuilderResult(bridge.add(b.mod), None) for b in build_inputs]

    return MeasurerBuilder()


def _runner(bridge: _Bridge) -> ms.runner.Runner:
    @derived_object
    class MeasurerRunner(PyRunner):
        """Measures a batch with the Measurer (isolated, numerically checked); futures come back done."""

        def run(self, runner_inputs):
            results = bridge.run([str(r.artifact_path) for r in runner_inputs])
            return [
                LocalRunnerFuture(res=list(r.latencies)) if r.ok else LocalRunnerFuture(error_message=r.error)
                for r in results
            ]

    return MeasurerRunner()


def trial_budget(tasks: list[Task], trials: int, min_per_task: int = 8) -> dict[str, int]:
    """Trials per task for a model budget: tasks with decisions share it by FLOPs x calls, at least a few
    each (tasks without decisions need one trial)."""
    weights = {t.id: max(t.flops, 1.0) * t.weight for t in tasks}
    total = sum(weights.values())
    return {t.id: max(min_per_task, round(trials * weights[t.id] / total)) for t in tasks}


def search(
    tasks: list[Task],
    target: Target,
    trials: int,
    measurer: Measurer,
    store: RecordStore | None = None,
    per_iter: int = 16,
    seed: int = 0,
    on_trial: Callable[[Trial], None] | None = None,
    work_dir: str | Path | None = None,
    max_seconds: float | None = None,
) -> SearchResult:
    """Tune the tasks with a global budget of `trials` (MetaSchedule's gradient task scheduler shares it,
    capped per task by `trial_budget`). Every measured program is appended to `store` when given.

    max_seconds: stop before the first batch that would start later (the trials so far are kept). Each
    batch is preceded by MetaSchedule's evolution of its population, ~50-70 s per 16 trials here whatever
    the task's size (a 3-D convolution's is the slowest), so a long budget takes minutes per task."""
    start = time.perf_counter()
    bridge = _Bridge(tasks, measurer, on_trial, max_seconds)
    budget = trial_budget(tasks, trials)
    import_tensor_intrinsics()  # what the first TuneContext would import, without its slow part
    contexts = [
        ms.TuneContext(
            mod=t.mod,
            target=target,
            space_generator="post-order-apply",
            search_strategy="evolutionary",
            task_name=t.name,
            rand_state=seed + i,
            num_threads=1,
        )
        for i, t in enumerate(tasks)
    ]
    db = ms.database.MemoryDatabase()  # ours: it keeps the records of a search stopped at its time limit
    with tempfile.TemporaryDirectory() as tmp, _stoppable(bridge):
        ms.tune.tune_tasks(
            tasks=contexts,
            task_weights=[float(t.weight) for t in tasks],
            work_dir=str(work_dir or tmp),
            max_trials_global=max(trials, len(tasks)),
            max_trials_per_task=max(budget.values()),
            num_trials_per_iter=per_iter,
            builder=_builder(bridge),
            runner=_runner(bridge),
            database=db,
            cost_model="xgb",
            # MetaSchedule's default list also removes build artifacts from disk; ours never write any.
            measure_callbacks=[ms.measure_callback.AddToDatabase(), ms.measure_callback.UpdateCostModel()],
            task_scheduler="gradient",
        )
    result = SearchResult(trials=bridge.trials, seconds=time.perf_counter() - start, budget=budget,
                          stopped=bridge.stopped)  # fmt: skip
    for task in tasks:
        ok = [t.latency for t in result.trials_of(task.id) if t.latency is not None]
        if ok:
            result.best[task.id] = min(ok)
    if store is not None:
        save_records(db, tasks, target, store)
    return result


@contextlib.contextmanager
def _stoppable(bridge: _Bridge):
    """Ends the search quietly when the bridge stopped it (the error comes back through TVM's FFI)."""
    try:
        yield
    except Exception:
        if not bridge.stopped:
            raise


def save_records(db: ms.database.Database, tasks: list[Task], target: Target, store: RecordStore) -> int:
    """Copy the search's records (failed ones included) into the project's store; returns how many."""
    by_hash = {t.id: t for t in tasks}
    from tlm_core.partition.task import task_id

    count = 0
    for record in db.get_all_tuning_records():
        task = by_hash.get(task_id(record.workload.mod))
        if task is None:
            continue
        secs = [float(s) for s in record.run_secs or []]
        ok = bool(secs) and all(s < 1e9 for s in secs)
        res = MeasureResult(ok=ok, latency=sorted(secs)[len(secs) // 2] if ok else None, latencies=secs if ok else [])
        if not ok:
            res.error = "failed during search"
        store.append(task, record.trace, res, target)
        count += 1
    return count
