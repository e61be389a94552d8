"""Per-task schedules chosen by a method: TVM's default, the heuristic, the TLM, search, or a MetaSchedule database.

A Schedule is one task's trace (None = leave the task untuned) with where it came from; compile_model
turns a {task id: Schedule} mapping into one executable. `schedules_for` is the one dispatcher the CLI and
the GUI share.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tvm.s_tir import Trace
from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from tlm_core.compile.database import load_database
from tlm_core.partition import Partition, Task

if TYPE_CHECKING:  # hints only: the generator imports torch, which most methods never need
    from tlm_core.generator import Generation, Generator
    from tlm_core.measure import Measurer, MeasureResult
    from tlm_core.program import Program
    from tlm_core.space import Space

METHODS = ("default", "heuristic", "tlm", "search", "database")  # database: a MetaSchedule JSONDatabase

# progress(fraction done in [0, 1], what is happening): how long steps report to a CLI bar or a GUI page
Progress = Callable[[float, str], None]


@dataclass
class Schedule:
    task_id: str
    method: str
    trace: Trace | None  # None: the untuned task (TVM's default)
    seconds: float = 0.0  # time to produce it (generation, or search including measurements)
    trials: int = 0  # programs measured to find it
    latency: float | None = None  # the kernel's measured latency when known, seconds
    dropped: str = ""  # why the method's schedule was left out (its kernel failed alone); the task runs untuned


def default_schedules(part: Partition) -> dict[str, Schedule]:
    """TVM with no tuning: every task keeps its naive loops."""
    return {t.id: Schedule(t.id, "default", None) for t in part.tasks}


def heuristic_schedules(
    part: Partition, space_of: Callable[[Task], object], progress: Progress | None = None
) -> dict[str, Schedule]:
    """Top-1 of the Roller-style heuristic for every task (no measurement)."""
    from tlm_core.baselines.heuristic import heuristic_program

    out = {}
    for i, task in enumerate(part.tasks):
        if progress:
            progress(i / len(part.tasks), f"heuristic: task {i + 1}/{len(part.tasks)} {task.name}")
        start = time.perf_counter()
        cand = heuristic_program(space_of(task))
        out[task.id] = Schedule(task.id, "heuristic", cand.program.trace, time.perf_counter() - start)
    return out


def database_schedules(db: ms.database.Database, part: Partition, target: Target, method: str) -> dict[str, Schedule]:
    """The best record of each task in a database (tasks it does not know stay untuned)."""
    out = {}
    for task in part.tasks:
        trace, latency = best_in_database(db, task, target)
        out[task.id] = Schedule(task.id, method, trace, latency=latency)
    return out


def best_in_database(db: ms.database.Database, task: Task, target: Target) -> tuple[Trace | None, float | None]:
    records = top_records(db, task, 1)
    if not records:
        return None, None
    secs = [float(s) for s in records[0].run_secs or []]
    return records[0].trace, (sorted(secs)[len(secs) // 2] if secs else None)


def top_records(db: ms.database.Database, task: Task, k: int) -> list:
    """The task's k fastest records in the database (TuningRecords: .trace, .run_secs), fastest first."""
    return db.get_top_k(db.commit_workload(task.mod), k) if db.has_workload(task.mod) else []


@dataclass
class Remeasured:
    """A database's k best records of a task, measured again now."""

    mod: Any  # the fastest one's module (None: none ran)
    latencies: list[float | None]  # every record's new latency, in the database's order (None: it failed)
    pick: int | None  # the fastest one's index


def remeasured_best(db: ms.database.Database, task: Task, measurer, k: int = 5) -> Remeasured:
    """The fastest of the task's k best records measured again now (a top record alone may be a lucky
    measurement: the minimum over a search's trials favours noise)."""
    from tlm_core.measure import fastest_again

    records = top_records(db, task, k)
    mods = [scheduled_module(task, Schedule(task.id, "database", r.trace)) for r in records]
    # the records' own medians rank them; all of them are measured again (a lone record is not)
    first = [statistics.median(float(s) for s in r.run_secs) if r.run_secs else math.inf for r in records]
    screened = fastest_again(task, mods, first, measurer, screen=len(mods))
    again = [screened.again[i] if i in screened.again else None for i in range(len(mods))]
    lat = [r.latency if r is not None and r.ok else None for r in again]
    return Remeasured(None if screened.pick is None else mods[screened.pick], lat, screened.pick)


def search_schedules(
    part: Partition, target: Target, trials: int, measurer, store, on_trial=None, progress: Progress | None = None
):
    """Ansor-style evolutionary search over every task (records into `store`), then each task's best.

    Returns (schedules, SearchResult); a task's seconds are its share of the search's wall time by trials."""
    from tlm_core.baselines.search import search

    budget = max(trials, len(part.tasks))  # the search's global budget (it may overshoot by part of an iteration)

    def trial_done(trial) -> None:
        if on_trial:
            on_trial(trial)
        if progress:
            progress(min(1.0, (trial.index + 1) / budget), f"search: trial {trial.index + 1} of about {budget}")

    result = search(part.tasks, target, trials, measurer, store=store, on_trial=trial_done)
    out = database_schedules(store.tvm_database(), part, target, "search")
    total = max(1, len(result.trials))
    for task in part.tasks:
        mine = len(result.trials_of(task.id))
        out[task.id].trials = mine
        out[task.id].seconds = result.seconds * mine / total
    return out, result


@dataclass
class TLMChoice:
    """How tlm_schedule chose one task's program: every candidate, its measurement, the winner, the times.

    The Compare page and `tlm compare` report all of it; a whole-model compile keeps only the Schedule."""

    generations: list[Generation]  # most likely first (one, greedy, for top-1)
    programs: list[Program]  # generations[i] applied to the space
    results: list[MeasureResult]  # one per candidate; empty for top-1 (nothing measured)
    best: int | None  # the chosen candidate: 0 for top-1; None when no measured candidate passed its check
    generate_s: float  # generation and apply_decisions, seconds
    measure_s: float = 0.0  # measuring the candidates (and the fastest again), seconds
    again: dict[int, MeasureResult] = field(default_factory=dict)  # the fastest few, measured again

    @property
    def seconds(self) -> float:
        """Time to choose the schedule: generation plus every measurement the choice needed."""
        return self.generate_s + self.measure_s

    @property
    def latencies(self) -> list[float | None]:
        return [r.latency for r in self.results]

    @property
    def chosen(self) -> MeasureResult | None:
        """The winner's last measurement (its second when it was measured again)."""
        if self.best is None or not self.results:
            return None
        return self.again.get(self.best, self.results[self.best])


def tlm_schedule(
    task: Task, space: Space, generator: Generator, candidates: int = 1, measurer: Measurer | None = None
) -> tuple[Schedule, TLMChoice]:
    """One task's schedule written by the TLM: the one best-of-k of `tlm compile` and `tlm compare`.

    No measurer: top-1, the greedy program, unmeasured (candidates must be 1). With a measurer: the
    `candidates` programs of Generator.candidates (greedy, then beam search's most likely), each measured,
    the fastest few measured again (tlm_core.measure.screen); the fastest of those that passed the numeric
    check twice wins, and a task none of whose candidates passed gets trace None (untuned): a schedule that
    fails its check must never reach the model."""
    from tlm_core.measure import fastest_again
    from tlm_core.program import apply_decisions

    if candidates > 1 and measurer is None:
        raise ValueError("best-of-k needs a Measurer to pick the fastest candidate")
    start = time.perf_counter()
    gens = generator.generate(space, candidates=candidates)
    # decoding is constrained, so every generation is a legal program (apply_decisions would raise if not)
    programs = [apply_decisions(space, g.sketch_index, g.decisions) for g in gens]
    generated = time.perf_counter()
    if measurer is None:
        choice = TLMChoice(gens, programs, [], 0, generated - start)
        return Schedule(task.id, "tlm", programs[0].trace, choice.seconds), choice
    mods = [p.mod for p in programs]
    results = measurer.measure(task, mods)
    screened = fastest_again(task, mods, [r.latency if r.ok else None for r in results], measurer)
    best = screened.pick
    choice = TLMChoice(gens, programs, results, best, generated - start, time.perf_counter() - generated,
                       screened.again)  # fmt: skip
    schedule = Schedule(
        task.id,
        "tlm",
        programs[best].trace if best is not None else None,
        choice.seconds,
        trials=len(programs) + len(screened.again),
        latency=choice.chosen.latency if choice.chosen else None,
    )
    return schedule, choice


def tlm_schedules(
    part: Partition,
    space_of: Callable[[Task], Space],
    generator: Generator,
    candidates: int = 1,
    measurer: Measurer | None = None,
    progress: Progress | None = None,
) -> dict[str, Schedule]:
    """Schedules written by the TLM (a tlm_core.generator.Generator) for every task (see tlm_schedule).

    candidates 1: the greedy program (top-1, no measurement, even when a measurer is given). candidates k > 1:
    Generator.candidates' k programs (greedy, then beam search), each measured with `measurer`; the
    Schedule's seconds are generation plus measurement wall time."""
    if candidates > 1 and measurer is None:
        raise ValueError("best-of-k needs a Measurer to pick the fastest candidate")
    out = {}
    for i, task in enumerate(part.tasks):
        if progress:
            what = "top-1" if candidates <= 1 else f"best-of-{candidates}"
            progress(i / len(part.tasks), f"TLM {what}: task {i + 1}/{len(part.tasks)} {task.name}")
        # the caller's measurer may be there only to time the kernels afterwards: top-1 never measures
        choose_with = measurer if candidates > 1 else None
        out[task.id] = tlm_schedule(task, space_of(task), generator, candidates, choose_with)[0]
    return out


def schedules_for(
    method: str,
    part: Partition,
    target: Target,
    space_of: Callable[[Task], object] | None = None,
    *,
    generator=None,
    candidates: int = 1,
    trials: int = 64,
    measurer=None,
    store=None,
    database: ms.database.Database | str | Path | None = None,
    progress: Progress | None = None,
) -> dict[str, Schedule]:
    """Every task's schedule by `method` (one of METHODS): the one dispatcher of the CLI and the GUI.

    heuristic and tlm need `space_of` (task -> Space); tlm needs `generator` (and `measurer` for
    candidates > 1); search needs `measurer` and a RecordStore `store` for its programs, and spends
    `trials` over the whole model; database needs `database` (a Database or a JSONDatabase path)."""
    if method == "default":
        return default_schedules(part)
    if method in ("heuristic", "tlm") and space_of is None:
        raise ValueError(f"method {method} needs the tasks' schedule spaces (space_of)")
    if method == "heuristic":
        return heuristic_schedules(part, space_of, progress)
    if method == "tlm":
        if generator is None:
            raise ValueError("method tlm needs a Generator (e.g. Generator.from_checkpoint(default_checkpoint()))")
        return tlm_schedules(part, space_of, generator, candidates, measurer, progress)
    if method == "search":
        if measurer is None or store is None:
            raise ValueError("method search needs a Measurer and a RecordStore for its programs")
        return search_schedules(part, target, trials, measurer, store, progress=progress)[0]
    if method == "database":
        if database is None:
            raise ValueError("method database needs a MetaSchedule database")
        db = database if isinstance(database, ms.database.Database) else load_database(database)
        return database_schedules(db, part, target, "database")
    raise ValueError(f"unknown method {method!r}: one of {', '.join(METHODS)}")


def scheduled_module(task: Task, schedule: Schedule):
    """The task's module with the schedule's trace applied (the untuned module when it has none)."""
    from tlm_core.program import traced_module

    return task.mod if schedule.trace is None else traced_module(task.mod, schedule.trace)


def measure_schedules(
    part: Partition, schedules: dict[str, Schedule], measurer, progress: Progress | None = None
) -> dict[str, object]:
    """Measure each task's kernel alone in the Measurer's worker processes (built, checked against the untuned
    reference, timed): task id -> MeasureResult. Schedules without a latency get the measured one when their
    check passed; a scheduled kernel that fails (build error, crash, hang, wrong output) is replaced by the
    untuned task with the reason in `dropped`, so the whole model is built only from kernels that worked alone
    (a hostile database trace that crashes LLVM or the kernel costs a worker, not the caller's process)."""
    out = {}
    for i, task in enumerate(part.tasks):
        if progress:
            progress(i / len(part.tasks), f"measuring kernel {i + 1}/{len(part.tasks)} {task.name}")
        sched = schedules[task.id]
        (result,) = measurer.measure(task, [scheduled_module(task, sched)])
        out[task.id] = result
        if result.ok and sched.latency is None:
            sched.latency = result.latency
        elif not result.ok and sched.trace is not None:
            reason = f"its {sched.method} kernel failed alone: {result.error}"
            schedules[task.id] = Schedule(task.id, sched.method, None, sched.seconds, sched.trials, dropped=reason)
    return out
