"""Whole-model compilation: schedules applied to the fused module, run with the VM, checked vs PyTorch."""

import base64
import io
import json
import zipfile
from types import SimpleNamespace

import pytest
from tvm_ffi.structural import structural_equal

from tlm_core.compile import (
    DatabaseError,
    ModelRun,
    bundle_zip,
    compile_and_run,
    compile_model,
    database_schedules,
    default_schedules,
    heuristic_schedules,
    load_database,
    run_model,
    save_database,
    scheduled_module,
    tlm_schedules,
)
from tlm_core.frontend import load_model
from tlm_core.measure import MeasureResult
from tlm_core.partition import partition
from tlm_core.records import RecordStore
from tlm_core.space import random_decisions
from tlm_core.target import host_target


@pytest.fixture(scope="module")
def bert():
    model = load_model("bert-tiny")
    return model, partition(model, host_target())


@pytest.mark.slow
def test_default_and_heuristic_match_pytorch(bert, space_builder):
    model, part = bert
    target = host_target()
    default = run_model(model, compile_model(part, default_schedules(part), target), repeat=3)
    heuristic_compiled = compile_model(part, heuristic_schedules(part, space_builder.build), target)
    heuristic = run_model(model, heuristic_compiled, repeat=3)
    assert default.ok and heuristic.ok, (default, heuristic)
    assert heuristic_compiled.scheduled == len(part.tasks)
    assert heuristic.max_rel_error < 1e-3 and heuristic.pytorch_latency > 0
    assert heuristic.latency > 0 and default.latency > 0  # which is faster: benchmarks/speed_claims.py (~15x)


@pytest.mark.slow
def test_a_users_json_database_is_applied_per_task(bert, space_builder, tmp_path):
    model, part = bert
    target = host_target()
    heur = heuristic_schedules(part, space_builder.build)
    store = RecordStore(tmp_path / "db")
    chosen = part.tasks[:3]
    for task in chosen:  # a "user's" database that knows three tasks
        store.append(task, heur[task.id].trace, MeasureResult(ok=True, latency=1e-5, latencies=[1e-5]), target)
    schedules = database_schedules(load_database(tmp_path / "db"), part, target, "db")
    assert {t for t, s in schedules.items() if s.trace is not None} == {t.id for t in chosen}
    compiled = compile_model(part, schedules, target)
    assert compiled.scheduled == 3
    assert run_model(model, compiled, repeat=2, with_pytorch=False).ok


def test_load_database_refuses_a_directory_without_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="no MetaSchedule database"):
        load_database(tmp_path)


@pytest.fixture(scope="module")
def tlm_generator():
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint

    return Generator.from_checkpoint(default_checkpoint())


@pytest.mark.slow
def test_tlm_top1_and_best_of_k_compile_and_match_pytorch(bert, space_builder, measurer, tlm_generator, tmp_path):
    model, part = bert
    target = host_target()
    top1 = compile_and_run(model, part, target, "tlm", space_of=space_builder.build, generator=tlm_generator,
                           repeat=3, measure_kernels=True, measurer=measurer)  # fmt: skip
    assert top1.report.ok and top1.report.max_rel_error < 1e-3, top1.report
    assert top1.compiled.scheduled == len(part.tasks) and top1.label == "TLM top-1"
    assert all(s.method == "tlm" and s.trials == 0 and s.seconds > 0 for s in top1.schedules.values())
    assert all(k.ok for k in top1.kernels.values())  # every generated kernel passed its own check
    assert len(top1.report.pytorch_latencies) == 3 and top1.report.pytorch_latency > 0
    # best-of-3 on two tasks: 3 candidates each, measured; the fastest that passed its check is kept
    two = [t for t in part.tasks if space_builder.build(t).num_points > 2][:2]
    seen = {}

    class Recording:  # the session's Measurer, remembering each batch it measured
        def measure(self, task, mods):
            seen.setdefault(task.id, []).append((mods, measurer.measure(task, mods)))
            return seen[task.id][-1][1]

    best = tlm_schedules(SimpleNamespace(tasks=two), space_builder.build, tlm_generator, 3, Recording())
    for task in two:
        (mods, results), (again_mods, again) = seen[task.id]  # all 3 candidates, then the fastest again
        assert len(mods) == 3 and len(again_mods) == sum(r.ok for r in results) >= 2
        assert best[task.id].trials == 3 + len(again_mods) and best[task.id].seconds > 0
        fastest = min((r.latency, i) for i, r in enumerate(again) if r.ok)
        assert best[task.id].latency == fastest[0]
        assert structural_equal(scheduled_module(task, best[task.id]), again_mods[fastest[1]])
    mixed = {**top1.schedules, **best}
    assert run_model(model, compile_model(part, mixed, target), repeat=2, with_pytorch=False).ok


class ScriptedGenerator:
    """Stands in for the TLM: k fixed legal programs of the space, most likely first (no model to load)."""

    def __init__(self, space):
        self.asked = []
        sketch = space.sketches[0]
        self.gens = [SimpleNamespace(sketch_index=0, decisions=random_decisions(sketch, seed)) for seed in range(3)]

    def generate(self, space, candidates=1):
        self.asked.append(candidates)
        return self.gens[:candidates]


class ScriptedMeasurer:
    """Returns the given batches of results in turn (the last one again and again) instead of building and
    timing anything."""

    def __init__(self, *batches):
        self.batches, self.calls = batches, 0

    def measure(self, task, mods):
        results = self.batches[min(self.calls, len(self.batches) - 1)]
        self.calls += 1
        assert len(mods) == len(results)
        return results


def test_the_one_tlm_best_of_k_serves_compile_and_compare(workload_spaces):
    from tlm_core.compare.subgraph import run_tlm, run_tlm_best_of_k
    from tlm_core.compile.schedules import tlm_schedule

    space = workload_spaces["matmul_128"]
    task, gen = space.task, ScriptedGenerator(space)
    fail = MeasureResult.failure("output mismatch")
    # top-1: the greedy program, nothing measured
    top1, choice = tlm_schedule(task, space, gen)
    assert gen.asked == [1] and choice.results == [] and choice.best == 0 and choice.measure_s == 0
    assert (top1.trials, top1.latency) == (0, None) and top1.seconds == choice.seconds
    assert str(top1.trace) == str(choice.programs[0].trace)
    with pytest.raises(ValueError, match="needs a Measurer"):
        tlm_schedule(task, space, gen, 3)
    # best-of-3: every candidate measured, the fastest that passed measured again (the fastest first), and the
    # fastest of that second measurement wins: here the one that was slower the first time
    slow, fast = MeasureResult(ok=True, latency=2e-3), MeasureResult(ok=True, latency=1e-3)
    again = [MeasureResult(ok=True, latency=1.5e-3), MeasureResult(ok=True, latency=1.2e-3)]
    best, choice = tlm_schedule(task, space, gen, 3, ScriptedMeasurer([slow, fast, fail], again))
    assert choice.best == 0 and choice.latencies == [2e-3, 1e-3, None] and choice.again == {1: again[0], 0: again[1]}
    assert (best.trials, best.latency) == (5, 1.2e-3) and str(best.trace) == str(choice.programs[0].trace)
    assert choice.chosen is again[1] and best.seconds == choice.generate_s + choice.measure_s
    # one passed: it wins without a second measurement
    best, choice = tlm_schedule(task, space, gen, 3, ScriptedMeasurer([fail, fast, fail]))
    assert (choice.best, choice.again, best.trials, best.latency) == (1, {}, 3, 1e-3)
    # the winner of the first measurement fails its second check: the other one wins
    best, choice = tlm_schedule(task, space, gen, 3, ScriptedMeasurer([slow, fast, fail], [fail, slow]))
    assert (choice.best, best.latency) == (0, 2e-3)
    # none passed: no schedule reaches the model; compare's row shows the most likely candidate's failure
    failed, choice = tlm_schedule(task, space, gen, 2, ScriptedMeasurer([fail, fail]))
    assert choice.best is None and failed.trace is None and failed.latency is None
    row = run_tlm_best_of_k(space, ScriptedMeasurer([fail, fail]), gen, k=2)
    assert not row.ok and row.error == "output mismatch" and row.trials == 2 and row.decisions == gen.gens[0].decisions
    # compile's top-1 never measures, even with the measurer it keeps for the kernels; compare's measures once
    idle = ScriptedMeasurer([fast])
    tlm_schedules(SimpleNamespace(tasks=[task]), lambda _: space, gen, 1, idle)
    assert idle.calls == 0
    row = run_tlm(space, idle, gen)
    assert idle.calls == 1 and row.latency == 1e-3 and row.trials == 0


@pytest.mark.slow
def test_bundle_database_reproduces_the_same_schedules(bert, space_builder, measurer, tmp_path):
    model, part = bert
    target = host_target()
    run = compile_and_run(model, part, target, "heuristic", space_of=space_builder.build, repeat=2,
                          measure_kernels=True, measurer=measurer, with_pytorch=False)  # fmt: skip
    assert run.report.ok and run.report.pytorch_latency is None  # checked against PyTorch, not timed
    data = bundle_zip(run)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = set(z.namelist())
        z.extractall(tmp_path)
    assert {"README.md", "results.json", "database/workload.json", "database/tuning_record.json"} <= names
    assert sum(n.startswith("tasks/") for n in names) == len(part.tasks)
    assert sum(n.startswith("traces/") for n in names) == run.compiled.scheduled == len(part.tasks)
    assert run.command in (tmp_path / "README.md").read_text()
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["ok"] and results["latency_s"] == run.report.latency and len(results["tasks"]) == len(part.tasks)
    # TVM loads the bundle's database; every task gets back the very program the run compiled
    again = database_schedules(load_database(tmp_path / "database"), part, target, "database")
    for task in part.tasks:
        want, got = run.schedules[task.id], again[task.id]
        assert got.trace is not None and got.latency == pytest.approx(run.kernels[task.id].latency)
        assert structural_equal(scheduled_module(task, got), scheduled_module(task, want)), task.name
    reproduced = run_model(model, compile_model(part, again, target), repeat=2, with_pytorch=False)
    assert reproduced.ok


class _CrashOn:
    """The session Measurer, except that one task's scheduled kernel "crashes its worker" (a crash itself is
    caught by the Measurer, tests/test_measure.py; here: what compile_and_run does with the failure)."""

    def __init__(self, measurer, task_id: str) -> None:
        self.measurer, self.task_id = measurer, task_id

    def measure(self, task, mods):
        if task.id == self.task_id and not structural_equal(mods[0], task.mod):
            return [MeasureResult.failure("worker crashed (signal 11) while running")]
        return self.measurer.measure(task, mods)


@pytest.mark.slow
def test_a_kernel_that_fails_alone_is_left_out_of_the_model(bert, space_builder, measurer):
    model, part = bert
    bad = part.tasks[0].id
    run = compile_and_run(model, part, host_target(), "heuristic", space_of=space_builder.build, repeat=2,
                          measure_kernels=True, measurer=_CrashOn(measurer, bad))  # fmt: skip
    assert run.schedules[bad].trace is None and "signal 11" in run.schedules[bad].dropped
    assert run.compiled.scheduled == len(part.tasks) - 1 and run.report.ok  # the rest still run, and match
    row = next(r for r in run.task_rows() if r["id"] == bad)
    assert row["method"] == "default" and row["dropped"] and not row["kernel_ok"]


def test_bundle_needs_measured_kernels():
    run = ModelRun("m", "default", "TVM default", "tlm compile m", None, None, {}, None, None, 0.0)
    with pytest.raises(ValueError, match="measure each task's kernel"):
        bundle_zip(run)


def test_an_uploaded_database_is_checked_as_data(tmp_path):
    good_workload = b'["123","' + base64.b64encode(b"{}") + b'"]\n'
    cases = {
        "not JSON": (b"{not json", b""),
        "not UTF-8": (b"\xff\xfe", b""),
        "is not \\[structural hash": (b'{"a": 1}\n', b""),
        "not base64": (b'["123","***"]\n', b""),
        "is not \\[workload index": (good_workload, b'["x", 1]\n'),
        "no workload 3": (good_workload, b"[3, [[[], []], [1.0], {}, []]]\n"),
        "the trace is not": (good_workload, b"[0, [1, [1.0], {}, []]]\n"),
        "run_secs are not numbers": (good_workload, b'[0, [[[], []], ["fast"], {}, []]]\n'),
        "limit is": (b"x" * 2048, b""),
    }
    for reason, (workload, records) in cases.items():
        with pytest.raises(DatabaseError, match=reason):
            save_database(workload, records, tmp_path / "db", max_bytes=1024)
    assert not (tmp_path / "db").exists()
    # well-formed lines that TVM itself cannot load (the module is not a TVM object): a clear error, no crash
    directory = save_database(good_workload, b"", tmp_path / "db")
    with pytest.raises(DatabaseError, match="TVM could not load"):
        load_database(directory)
