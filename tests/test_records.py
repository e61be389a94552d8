"""Records: MetaSchedule JSONDatabase files that TVM itself loads, and that survive a kill mid-append."""

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tvm
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms
from workloads import matmul_128, softmax_64

from tlm_core.measure import MeasureResult
from tlm_core.partition.task import task_from_primfunc
from tlm_core.records import FAILED_RUN_SECS, RecordStore
from tlm_core.target import host_target

TARGET = host_target("llvm")


def split_schedule(task, factor: int) -> s_tir.Schedule:
    sch = s_tir.Schedule(task.mod)
    i = sch.get_loops(sch.get_sblock("C"))[0]
    i0, _ = sch.split(i, [None, factor])
    sch.parallel(i0)
    return sch


def measured(latency: float | None) -> MeasureResult:
    if latency is None:
        return MeasureResult.failure("worker crashed (signal 11) while running")
    return MeasureResult(ok=True, latency=latency, latencies=[latency, latency * 1.1, latency * 0.9])


@pytest.fixture
def matmul():
    return task_from_primfunc(matmul_128, "matmul")


@pytest.fixture
def filled(tmp_path, matmul):
    """A store with three matmul programs: 20 us, 10 us and a failure."""
    store = RecordStore(tmp_path / "db")
    for factor, latency in [(4, 2e-5), (8, 1e-5), (16, None)]:
        store.append(matmul, split_schedule(matmul, factor).trace, measured(latency), TARGET)
    return store


def test_round_trip_through_tvm_json_database(filled, matmul):
    db = ms.database.JSONDatabase(path_workload=str(filled.workload_path), path_tuning_record=str(filled.record_path))
    assert len(db) == 3
    top = db.get_top_k(db.commit_workload(matmul.mod), 5)  # TVM leaves the failed record out
    assert [float(top[0].run_secs[0]), float(top[1].run_secs[0])] == pytest.approx([1e-5, 2e-5])
    assert str(top[0].trace) == str(split_schedule(matmul, 8).trace)
    best = db.query_ir_module(matmul.mod, TARGET, "main")
    tvm.ir.assert_structural_equal(best, split_schedule(matmul, 8).mod)
    assert len(filled.tvm_database()) == 3


def test_lines_are_what_tvm_itself_writes(tmp_path, matmul):
    ours = RecordStore(tmp_path / "ours")
    sch = split_schedule(matmul, 8)
    ours.append(matmul, sch.trace, measured(1e-5), TARGET)
    (tmp_path / "theirs").mkdir()  # TVM does not create the directory
    theirs = ms.database.JSONDatabase(work_dir=str(tmp_path / "theirs"))
    workload = theirs.commit_workload(matmul.mod)
    args = ms.arg_info.ArgInfo.from_prim_func(matmul.func)
    run_secs = measured(1e-5).latencies
    theirs.commit_tuning_record(ms.database.TuningRecord(sch.trace, workload, run_secs, TARGET, args))
    assert ours.workload_path.read_text() == Path(theirs.path_workload).read_text()
    # identical but for how floats are spelled (TVM prints 20 digits, we print the shortest exact form)
    assert json.loads(ours.record_path.read_text()) == json.loads(Path(theirs.path_tuning_record).read_text())


def test_records_best_and_failures(filled, matmul):
    records = filled.records()
    assert len(filled) == 3 and [r.task_id for r in records] == [matmul.id] * 3
    assert [r.ok for r in records] == [True, True, False]
    assert records[2].run_secs == [FAILED_RUN_SECS] and records[2].latency is None  # as MetaSchedule does
    assert records[1].latency == pytest.approx(1e-5) and records[1].target["kind"] == "llvm"
    assert records[0].trace[0][2][0] == "Split" and records[0].decisions == []
    assert filled.best(matmul.id) == records[1]
    assert filled.best("no-such-task") is None
    softmax = task_from_primfunc(softmax_64, "softmax")
    filled.append(softmax, s_tir.Schedule(softmax.mod).trace, measured(3e-6), TARGET)
    assert filled.records(softmax.id)[0].workload_index == 1 and len(filled) == 4


def test_sampling_decisions_are_kept(tmp_path, matmul):
    sch = s_tir.Schedule(matmul.mod, seed=1)
    i = sch.get_loops(sch.get_sblock("C"))[0]
    factors = sch.sample_perfect_tile(i, n=2, max_innermost_factor=16)
    sch.split(i, factors)
    store = RecordStore(tmp_path)
    record = store.append(matmul, sch.trace, measured(1e-5), TARGET)
    decided = [int(x) for x in sch.trace.decisions[sch.trace.insts[2]]]
    assert record.decisions == [[2, decided]]
    top = store.tvm_database().get_top_k(ms.database.Workload(matmul.mod), 1)
    assert [int(x) for x in top[0].trace.decisions[top[0].trace.insts[2]]] == decided


def test_torn_last_lines_are_repaired_on_open(filled, matmul):
    with open(filled.record_path, "ab") as f:
        f.write(b'[0,[[[["GetSBlock",[],["C","ma')  # a kill in the middle of a write
    with open(filled.workload_path, "ab") as f:
        f.write(b'["1234","hlEAAA')
    assert len(filled) == 3  # readers skip the torn line even before repair
    reopened = RecordStore(filled.directory)
    assert filled.record_path.read_bytes().endswith(b"]]\n")
    assert len(reopened) == 3 and len(reopened.tvm_database()) == 3
    reopened.append(matmul, split_schedule(matmul, 2).trace, measured(5e-6), TARGET)
    assert len(reopened) == 4 and reopened.best(matmul.id).latency == pytest.approx(5e-6)


def test_two_stores_on_one_directory_agree(tmp_path, matmul):
    a, b = RecordStore(tmp_path), RecordStore(tmp_path)
    softmax = task_from_primfunc(softmax_64, "softmax")
    a.append(matmul, split_schedule(matmul, 4).trace, measured(2e-5), TARGET)
    b.append(softmax, s_tir.Schedule(softmax.mod).trace, measured(3e-6), TARGET)
    a.append(softmax, s_tir.Schedule(softmax.mod).trace, measured(4e-6), TARGET)
    assert [r.task_id for r in b.records()] == [matmul.id, softmax.id, softmax.id]
    assert len(a.workload_path.read_text().splitlines()) == 2
    assert len(a.tvm_database().get_all_tuning_records()) == 3


APPEND_FOREVER = """
import sys
sys.path.insert(0, sys.argv[2])
from tvm import s_tir
from workloads import matmul_128
from tlm_core.measure import MeasureResult
from tlm_core.partition.task import task_from_primfunc
from tlm_core.records import RecordStore
task = task_from_primfunc(matmul_128)
store = RecordStore(sys.argv[1])
traces = []
for f in (2, 4, 8, 16, 32):
    sch = s_tir.Schedule(task.mod)
    sch.split(sch.get_loops(sch.get_sblock("C"))[0], [None, f])
    traces.append(sch.trace)
n = 0
while True:
    store.append(task, traces[n % 5], MeasureResult(ok=True, latency=1e-5, latencies=[1e-5 + n * 1e-9]))
    n += 1
"""


def test_sigkill_while_appending_leaves_a_loadable_store(tmp_path):
    directory = tmp_path / "db"
    tests_dir = str(Path(__file__).parent)
    proc = subprocess.Popen([sys.executable, "-c", APPEND_FOREVER, str(directory), tests_dir])
    try:
        record_file = directory / "tuning_record.json"
        deadline = time.monotonic() + 120
        while not (record_file.exists() and record_file.stat().st_size > 20000):
            assert proc.poll() is None, "the appending process died on its own"
            assert time.monotonic() < deadline, "no records appeared"
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    store = RecordStore(directory)
    records = store.records()
    assert len(records) >= 20 and all(r.ok for r in records)
    assert [r.run_secs[0] for r in records] == pytest.approx([1e-5 + n * 1e-9 for n in range(len(records))])
    assert len(store.tvm_database()) == len(records)


def test_untuned_program_has_an_empty_trace(tmp_path, matmul):
    store = RecordStore(tmp_path)
    record = store.append(matmul, None, measured(1.4e-3))
    assert record.trace == [[], []] and record.target == json.loads(str(host_target()))
    db = store.tvm_database()
    assert len(db) == 1  # TVM loads it, but its get_top_k skips records without instructions (IsValid)
    assert db.get_top_k(ms.database.Workload(matmul.mod), 1) == []


def test_measured_programs_go_into_the_store(tmp_path, matmul, measurer):
    schedules = [split_schedule(matmul, factor) for factor in (4, 32)]
    results = measurer.measure(matmul, [sch.mod for sch in schedules])
    store = RecordStore(tmp_path)
    for sch, result in zip(schedules, results, strict=True):
        store.append(matmul, sch.trace, result, measurer.target)
    fastest = min(range(2), key=lambda i: results[i].latency)
    assert store.best(matmul.id).latency == pytest.approx(results[fastest].latency)
    # TVM ranks by the mean of run_secs, the store by the median: on a noisy machine they may disagree
    fastest_mean = min(range(2), key=lambda i: statistics.mean(results[i].latencies))
    (top,) = store.tvm_database().get_top_k(ms.database.Workload(matmul.mod), 1)
    assert str(top.trace) == str(schedules[fastest_mean].trace)
