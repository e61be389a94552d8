"""Collect measured random programs for every task: the pre-training and fine-tuning data of the TLM.

For each task, legal decision vectors are sampled (tlm_core.program.random_program) with a seed fixed by
(seed, task id, sample index), measured, and appended one by one to a RecordStore (crash-safe). A resume
reads what is already there, counts the distinct programs of each task and continues; a program already
recorded is never measured again (its whole trace is the key), so a rerun only adds what is missing.

Tasks are filled in stages (8, then 32, then per_task programs each, cheapest tasks first), so that an
interrupted run covers every task a little before it covers a few tasks a lot. After the stages of 32
programs and more, the top_k programs of a task are measured again with more repeats (this machine is
noisy); the extra record lands next to the first, and the export takes the median over all of a program's
run times.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tvm.s_tir import Trace
from tvm.target import Target

from tlm_core.measure.result import MeasureResult
from tlm_core.partition.task import Task
from tlm_core.program import InvalidDecisions, Program, apply_decisions, random_program
from tlm_core.records import RecordStore
from tlm_core.space import Space, SpaceBuilder

from .files import read_records
from .traces import SketchMatcher, program_key, trace_json

STAGES = (8, 32)  # programs per task before the final per_task stage
REMEASURE_FROM = 32  # re-measure the top programs after the stages of at least this many programs
RANDOM_DIR = "random"  # sampled programs (and their re-measurements)
SEARCH_DIR = "search"  # programs found by an Ansor-style search (strong fine-tuning targets)
HEURISTIC_DIR = "heuristic"  # the Roller-style heuristic's best candidates, measured (strong targets, cheaply)
REFERENCE_FAILED = "reference failed"


class MeasurerLike(Protocol):
    """What collect needs from a measurer: tlm_core.measure.Measurer and dataset.rpc.RPCMeasurer both fit."""

    target: Target
    timing: dict

    def measure(
        self, task: Task, mods: list, progress: Callable[[int, MeasureResult], None] | None = None
    ) -> list[MeasureResult]: ...


# A searcher returns measured (trace, result) pairs of a task given a budget and the program keys its Source
# already holds for the task (so a rerun measures only what is new), e.g. the best of a short evolutionary
# search (tlm_core.dataset.search). collect stores them under their Source's directory.
Searcher = Callable[[Task, Space, MeasurerLike, int, set[str]], list[tuple[Trace, MeasureResult]]]


@dataclass(frozen=True)
class Source:
    """Programs found other than by random sampling, after the random stages; each run of collect asks the
    searcher again with what it found before (a search runs once per task; a changed heuristic adds the
    programs it now builds)."""

    name: str  # the RecordStore's directory in the collection: SEARCH_DIR or HEURISTIC_DIR
    find: Searcher
    budget: int  # search trials, or heuristic candidates measured


@dataclass
class CollectStats:
    measured: int = 0  # new programs measured in this run
    remeasured: int = 0  # top programs measured again with more repeats
    searched: int = 0  # records added by the searcher
    failed: int = 0  # new programs whose measurement failed (recorded as failures)
    duplicates: int = 0  # sampled programs already recorded (not measured again)
    skipped_tasks: list[str] = field(default_factory=list)  # tasks whose space or reference failed
    seconds: float = 0.0

    @property
    def per_minute(self) -> float:
        return 60.0 * self.measured / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict:
        return {**self.__dict__, "per_minute": round(self.per_minute, 1)}


def sample_seed(seed: int, task_id: str, index: int) -> random.Random:
    """The generator of sample `index` of a task: the same on every run, so a resume repeats no work."""
    return random.Random(f"{seed}:{task_id}:{index}")


def capacity(space: Space, limit: int) -> int:
    """About how many distinct programs the space holds, capped at limit (a task without decisions: 1)."""
    if limit <= 0:  # --per-task 0: no random programs, only the Sources'
        return 0
    if space.log10_size >= math.log10(limit):
        return limit
    return min(limit, max(1, round(10**space.log10_size)))


@contextmanager
def repeats(measurer: MeasurerLike, repeat: int) -> Iterator[None]:
    """Measure with `repeat` repeats for a while."""
    saved = dict(measurer.timing)
    measurer.timing["repeat"] = repeat
    try:
        yield
    finally:
        measurer.timing.clear()
        measurer.timing.update(saved)


class _Stop(Exception):
    pass


class Collector:
    """The collection loop over one store directory; see collect_tasks."""

    def __init__(
        self,
        directory: str | Path,
        measurer: MeasurerLike,
        builder: SpaceBuilder | None = None,
        seed: int = 0,
        batch: int = 16,
        top_k: int = 4,
        remeasure_repeat: int = 15,
        max_programs: int | None = None,
        log: Callable[[str], None] | None = None,
        quiet: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.measurer = measurer
        self.builder = builder or SpaceBuilder.for_target(measurer.target)
        self.seed, self.batch, self.top_k, self.remeasure_repeat = seed, batch, top_k, remeasure_repeat
        self.max_programs = max_programs
        self.quiet = quiet
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.store = RecordStore(self.directory / RANDOM_DIR)
        self.stats = CollectStats()
        self.spaces: dict[str, Space | None] = {}
        # task id -> program key -> (trace JSON, number of records, best latency or None)
        self.programs: dict[str, dict[str, tuple[list, int, float | None]]] = {}
        for r in read_records(self.directory / RANDOM_DIR):
            self._note(r.task_id, r.trace, r.latency)
        self.bar: Any = None
        self.per_task = 0

    def _note(self, task_id: str, trace: list, latency: float | None) -> None:
        known = self.programs.setdefault(task_id, {})
        key = program_key(trace)
        _, n, best = known.get(key, (trace, 0, None))
        lat = [x for x in (best, latency) if x is not None]
        known[key] = (trace, n + 1, min(lat) if lat else None)

    def count(self, task_id: str) -> int:
        """Distinct programs recorded for the task."""
        return len(self.programs.get(task_id, {}))

    def space(self, task: Task) -> Space | None:
        if task.id not in self.spaces:
            try:
                self.spaces[task.id] = self.builder.build(task)
                if self.bar is not None:  # the goal assumed per_task programs; small spaces hold fewer
                    self.bar.total -= self.per_task - capacity(self.spaces[task.id], self.per_task)
                    self.bar.refresh()
            except Exception as err:  # a task MetaSchedule cannot schedule: skip it, keep collecting
                self.log(f"skipping task {task.name} ({task.id}): {err}")
                self.stats.skipped_tasks.append(task.id)
                self.spaces[task.id] = None
        return self.spaces[task.id]

    # -- the loop --------------------------------------------------------------------------------------

    def run(self, tasks: list[Task], per_task: int, sources: tuple[Source, ...] = ()):
        start = time.perf_counter()
        self.per_task = per_task
        tasks = sorted(tasks, key=lambda t: t.flops)  # cheap tasks first: coverage grows fastest
        stages = sorted({min(s, per_task) for s in STAGES} | {per_task})
        from tlm_core.progress import bar

        goal = len(tasks) * per_task  # an upper bound: small spaces hold fewer programs
        done = sum(min(self.count(t.id), per_task) for t in tasks)
        self.bar = bar(range(goal), "programs", total=goal, quiet=self.quiet)
        self.bar.update(done)
        try:
            for stage in stages:
                for task in tasks:
                    space = self.space(task)
                    if space is None or task.id in self.stats.skipped_tasks:
                        continue
                    self._fill(task, space, capacity(space, stage))
                    if stage >= min(REMEASURE_FROM, per_task):  # the top of a handful is not worth it
                        self._remeasure_top(task, space)
            for source in sources:
                for task in tasks:
                    self._search(task, source)
        except _Stop:
            pass
        finally:
            self.bar.close()
            self.stats.seconds = time.perf_counter() - start
        return self.stats

    def _fill(self, task: Task, space: Space, want: int) -> None:
        """Sample and measure until the task has `want` distinct programs (or the attempts run out)."""
        index = self.count(task.id)
        attempts = 3 * max(0, want - index) + 20
        pending: dict[str, Program] = {}
        while self.count(task.id) + len(pending) < want and attempts > 0:
            attempts -= 1
            try:
                program = random_program(space, sample_seed(self.seed, task.id, index))
            except InvalidDecisions:
                program = None
            index += 1
            if program is None:
                continue
            key = program_key(trace_json(program.trace))
            if key in self.programs.get(task.id, {}) or key in pending:
                self.stats.duplicates += 1
                continue
            pending[key] = program
            if len(pending) >= self.batch:
                self._measure_new(task, list(pending.values()))
                pending.clear()
        if pending:
            self._measure_new(task, list(pending.values()))

    def _measure_new(self, task: Task, programs: list[Program]) -> None:
        if task.id in self.stats.skipped_tasks:
            return
        if self.max_programs is not None:
            programs = programs[: max(0, self.max_programs - self.stats.measured)]

        def done(i: int, result: MeasureResult) -> None:
            if result.error and result.error.startswith(REFERENCE_FAILED):
                if task.id not in self.stats.skipped_tasks:
                    self.log(f"skipping task {task.name} ({task.id}): {result.error}")
                    self.stats.skipped_tasks.append(task.id)
                return
            record = self.store.append(task, programs[i].trace, result, self.measurer.target)
            self._note(task.id, record.trace, record.latency)
            self.stats.measured += 1
            self.stats.failed += 0 if result.ok else 1
            self.bar.update(1)

        self.measurer.measure(task, [p.mod for p in programs], done)
        if self.max_programs is not None and self.stats.measured >= self.max_programs:
            raise _Stop

    def _remeasure_top(self, task: Task, space: Space) -> None:
        """Measure the task's fastest programs again with more repeats, once each."""
        if self.top_k <= 0 or task.id in self.stats.skipped_tasks:
            return
        known = self.programs.get(task.id, {})
        ranked = sorted((v for v in known.values() if v[2] is not None), key=lambda v: v[2])[: self.top_k]
        todo = [trace for trace, n, _ in ranked if n == 1]
        if not todo or len(known) < 2:
            return
        matcher = SketchMatcher(space)
        programs = []
        for trace in todo:
            found = matcher.match(trace)
            if found is not None:
                programs.append(apply_decisions(space, *found))
        with repeats(self.measurer, self.remeasure_repeat):
            results = self.measurer.measure(task, [p.mod for p in programs])
        for program, result in zip(programs, results, strict=True):
            if result.ok:  # a failed re-measurement of a program that ran before says nothing new
                record = self.store.append(task, program.trace, result, self.measurer.target)
                self._note(task.id, record.trace, record.latency)
                self.stats.remeasured += 1

    def _search(self, task: Task, source: Source) -> None:
        space = self.space(task)
        if space is None or space.num_points == 0 or task.id in self.stats.skipped_tasks:
            return
        store = RecordStore(self.directory / source.name)
        known = {program_key(r.trace) for r in store.records(task.id)}
        for trace, result in source.find(task, space, self.measurer, source.budget, known):
            store.append(task, trace, result, self.measurer.target)
            self.stats.searched += 1


def collect_tasks(
    tasks: list[Task],
    directory: str | Path,
    per_task: int,
    measurer: MeasurerLike,
    sources: tuple[Source, ...] = (),
    **options: Any,
) -> CollectStats:
    """Collect up to per_task measured random programs per task into directory/random (a RecordStore).

    options: builder, seed, batch, top_k, remeasure_repeat, max_programs (stop after that many new
    programs), log, quiet (no progress bar). Then each Source's programs of each task go to
    directory/<source.name>, once per task.
    """
    return Collector(directory, measurer, **options).run(tasks, per_task, sources)
