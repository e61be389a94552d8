"""Measurement: schedules of tiny tasks built and timed in workers, checked against the reference; kernels
that are wrong, fail to build, crash or hang are failed results that never take the caller down."""

import json
import time

import numpy as np
import pytest
from tvm import s_tir
from tvm.script import tirx as T
from workloads import advanced_index_1x32, matmul_128, matmul_relu_64, softmax_64

from tlm_core.measure import Measurer, MeasureResult
from tlm_core.measure.check import check_outputs, errors
from tlm_core.measure.inputs import index_bound, index_bounds, output_indices, random_arguments
from tlm_core.partition.task import task_from_primfunc, workload_mod
from tlm_core.target import cuda_available


@T.prim_func(s_tir=True)
def double_16(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)


@T.prim_func(s_tir=True)
def triple_16(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(3)


@T.prim_func(s_tir=True)
def segfault_16(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    # raise(SIGSEGV) from inside the kernel: as deterministic as a crash gets
    for i in range(16):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            T.evaluate(T.call_extern("int32", "raise", 11))
            B[vi] = A[vi] * T.float32(2)


@T.prim_func(s_tir=True)
def abort_16(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.sblock("B"):
            vi = T.axis.remap("S", [i])
            T.evaluate(T.call_extern("int32", "abort"))
            B[vi] = A[vi] * T.float32(2)


@T.prim_func(s_tir=True)
def hang_16(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    # 1e15 dependent float updates: LLVM cannot fold them, so this runs for days
    for i, j, k in T.grid(100000, 100000, 100000):
        with T.sblock("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[0] = B[0] * T.float32(0.999) + A[1]


@T.prim_func(s_tir=True)
def take_16(data: T.Buffer((64, 8), "float32"), idx: T.Buffer((16,), "int32"), out: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.sblock("take"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = data[idx[vi], vj]


def tiled_matmul(task, tile: int, vectorize: bool = True):
    """A CPU schedule of a matmul block "C": tile i, split j by 16, reorder, parallel, vectorize."""
    sch = s_tir.Schedule(task.mod)
    block = sch.get_sblock("C")
    i, j, k = sch.get_loops(block)[-3:]
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.parallel(i0)
    if vectorize:
        sch.vectorize(j1)
    return sch.mod


# -- pure helpers ------------------------------------------------------------------------------------


def test_output_params_come_from_block_writes():
    assert output_indices(task_from_primfunc(matmul_relu_64).func) == [2]  # D, not the intermediate C
    assert output_indices(task_from_primfunc(softmax_64).func) == [1]


def test_integer_inputs_are_valid_indices():
    params = task_from_primfunc(take_16).params
    assert index_bound(params, 1) == 8  # the smallest extent > 1 among the other buffers' dims
    args = random_arguments(params, seed=0)
    assert args[1].dtype == np.int32 and 0 <= args[1].min() and args[1].max() < 8
    again = random_arguments(params, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(args, again, strict=True))  # deterministic
    assert not np.array_equal(args[0], random_arguments(params, seed=1)[0])


def test_float32_tolerance_accepts_reordered_sums_and_rejects_wrong_values():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((32, 2048), dtype=np.float32), rng.standard_normal((2048, 32), dtype=np.float32)
    sequential = np.zeros((32, 32), np.float32)
    for k in range(2048):  # the naive loop's summation order
        sequential += np.outer(a[:, k], b[k])
    assert check_outputs([a @ b], [sequential])[2] is None
    _, rel, error = check_outputs([sequential * 1.3], [sequential])
    assert rel > 0.2 and error.startswith("wrong result: max rel error 0.")
    assert errors(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])) == (0.0, 0.0)
    assert check_outputs([np.array([1, 2])], [np.array([1, 3])])[2] is not None  # integers: exact


# -- through the workers -----------------------------------------------------------------------------


def test_schedules_of_a_matmul_are_measured(measurer):
    task = task_from_primfunc(matmul_128, "matmul")
    mods = [tiled_matmul(task, tile) for tile in (4, 8, 32)] + [task.mod]  # the last one untuned
    results = measurer.measure(task, mods)
    assert [r.ok for r in results] == [True] * 4, [r.error for r in results]
    for r in results:
        assert r.error is None and r.latency > 0 and len(r.latencies) == 3
        assert r.latency == pytest.approx(float(np.median(r.latencies)))
        assert r.gflops == pytest.approx(task.flops / r.latency / 1e9)
        assert r.build_secs > 0 and r.max_rel_error < 1e-4
    json.dumps(results[0].to_dict())  # plain data


def test_reference_is_cached_on_disk_and_reused(measurer):
    task = task_from_primfunc(matmul_relu_64, "matmul_relu")
    path = measurer.reference_path(task)
    path.unlink(missing_ok=True)  # the session's measurer may have met this workload in another test
    calls = []
    assert measurer.measure(task, [task.mod], progress=lambda i, r: calls.append((i, r.ok))) and calls == [(0, True)]
    assert path.exists() and path.is_relative_to(measurer.cache_dir / "references")
    stamp = path.stat().st_mtime_ns
    assert measurer.measure(task, [task.mod])[0].ok
    assert path.stat().st_mtime_ns == stamp


def test_gather_gets_in_range_indices(measurer):
    task = task_from_primfunc(take_16, "take")
    sch = s_tir.Schedule(task.mod)
    i, j = sch.get_loops(sch.get_sblock("take"))
    sch.parallel(i)
    assert measurer.measure(task, [sch.mod])[0].ok


def test_wrong_result_is_a_failure_with_its_error(measurer):
    task = task_from_primfunc(double_16, "double")
    good, wrong = measurer.measure(task, [task.mod, workload_mod(triple_16)])
    assert good.ok and good.max_abs_error == 0.0
    assert not wrong.ok and wrong.latency is None and wrong.latencies == []
    assert wrong.error.startswith("wrong result: max rel error") and wrong.error.endswith("> 0.001")
    assert wrong.max_rel_error > 0.1 and wrong.max_abs_error > 0.1


def test_side_by_side_measures_every_program_in_each_round_in_rotated_order(measurer, monkeypatch):
    task = task_from_primfunc(double_16, "double")
    good = measurer.side_by_side(task, {"good": task.mod, "wrong": workload_mod(triple_16)}, rounds=2)
    assert good["good"] > 0 and good["wrong"] is None  # a program that never ran has no latency
    orders, seconds = [], {"a": [3.0, 1.0, 2.0], "b": [5.0, 4.0, 6.0], "c": [7.0, 9.0, 8.0]}

    def fake(task, mods):  # each module's next latency, by name
        names = [m.name for m in mods]
        orders.append(names)
        return [MeasureResult(ok=True, latency=seconds[n].pop(0)) for n in names]

    monkeypatch.setattr(measurer, "measure", fake)
    mods = {n: type("Mod", (), {"name": n})() for n in "abc"}
    assert measurer.side_by_side(task, mods, rounds=3) == {"a": 2.0, "b": 5.0, "c": 8.0}  # medians
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert measurer.side_by_side(task, {}) == {}  # nothing that ran: nothing to compare


def test_build_failure_is_a_failure(measurer):
    task = task_from_primfunc(matmul_128, "matmul")
    sch = s_tir.Schedule(task.mod)
    i, j, _ = sch.get_loops(sch.get_sblock("C"))
    sch.parallel(i)
    sch.parallel(j)  # nested parallel loops: LLVM codegen refuses them
    (result,) = measurer.measure(task, [sch.mod])
    assert not result.ok and result.error.startswith("build failed:") and "parallel" in result.error


def test_crashing_kernels_cost_a_worker_not_the_caller(measurer):
    task = task_from_primfunc(double_16, "double")
    started = measurer.workers_started
    results = measurer.measure(task, [task.mod, workload_mod(segfault_16), workload_mod(abort_16), task.mod])
    assert [r.ok for r in results] == [True, False, False, True]
    assert results[1].error == "worker crashed (signal 11) while running"
    assert results[2].error == "worker crashed (signal 6) while running"
    assert measurer.workers_started == started + 2  # one replacement per crash


def test_a_task_whose_reference_crashes_fails_every_candidate(measurer):
    task = task_from_primfunc(segfault_16, "crashes")
    results = measurer.measure(task, [task.mod, task.mod])
    assert [r.error for r in results] == ["reference failed: worker crashed (signal 11) while running"] * 2


def test_cache_flush_between_repeats(measurer, monkeypatch):
    task = task_from_primfunc(matmul_128, "matmul")
    monkeypatch.setitem(measurer.timing, "flush_cache", True)
    assert measurer.measure(task, [tiled_matmul(task, 8)])[0].ok


def test_hang_times_out_with_two_workers_building_in_parallel(tmp_path):
    task = task_from_primfunc(double_16, "double")
    with Measurer(target="llvm", workers=2, timeout_s=2.0, repeat=2, min_repeat_ms=1, cache_dir=tmp_path) as m:
        m.wait_ready()
        start = time.perf_counter()
        results = m.measure(task, [task.mod, workload_mod(hang_16), task.mod, workload_mod(triple_16), task.mod])
        elapsed = time.perf_counter() - start
        assert [r.ok for r in results] == [True, False, True, False, True]
        assert results[1].error == "timed out after 2 s while running"
        assert results[3].error.startswith("wrong result")
        assert m.workers_started == 3
        assert elapsed < 60  # the hang was cut short (loose: the machine is shared)
        assert m.measure(task, [task.mod])[0].ok  # the pool still works


def test_a_timing_far_above_the_first_cold_call_counts_as_disturbed():
    from tlm_core.measure.worker import disturbed

    assert disturbed(20e-6, [15e-3] * 4 + [15e-6])  # CI's stalled 15 us matmul: timed again
    assert not disturbed(20e-6, [15e-6] * 3 + [15e-3] * 2)  # a stalled minority does not move the median
    assert not disturbed(1e-3, [1.2e-3] * 5) and not disturbed(5e-3, [1e-3] * 5)


def test_measure_result_failure_and_dict():
    result = MeasureResult.failure("timed out after 10 s while running", build_secs=0.1)
    assert result.to_dict()["error"] == "timed out after 10 s while running" and not result.ok


@pytest.mark.skipif(not cuda_available(), reason="no CUDA GPU")
def test_gpu_matmul_is_measured_on_the_gpu(tmp_path):
    task = task_from_primfunc(matmul_128, "matmul")
    sch = s_tir.Schedule(task.mod)
    i, j, k = sch.get_loops(sch.get_sblock("C"))
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1, k)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")
    with Measurer(target="cuda", repeat=3, cache_dir=tmp_path) as m:
        (result,) = m.measure(task, [sch.mod])
    assert result.ok, result.error


def test_a_raising_progress_callback_leaves_the_measurer_usable(measurer):
    task = task_from_primfunc(double_16, "double")

    def stop(index, result):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        measurer.measure(task, [task.mod, workload_mod(triple_16), task.mod], progress=stop)
    results = measurer.measure(task, [workload_mod(triple_16), task.mod])
    assert [r.ok for r in results] == [False, True]  # no stale result from the interrupted batch


def test_index_bounds_follow_copies_to_the_axis_they_index():
    # gpt2's causal-mask gather: mask[broadcast(i), broadcast(j)] with mask of shape (1, 32)

    assert index_bounds(advanced_index_1x32) == {1: 1, 2: 32}
    args = random_arguments(task_from_primfunc(advanced_index_1x32).params, 0, index_bounds(advanced_index_1x32))
    assert args[1].max() == 0 and args[2].max() < 32


def test_tvm_kernels_use_every_cpu():
    """TVM alone takes x86 CPUs for hyper-threads and runs on half of them; importing tlm_core fixes that."""
    import os
    import subprocess
    import sys

    from tlm_core.target import cpu_count

    env = {k: v for k, v in os.environ.items() if k != "TVM_NUM_THREADS"}
    code = "import tvm, tlm_core; print(tvm.get_global_func('runtime.NumThreads')())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.split()[-1]) == cpu_count()
