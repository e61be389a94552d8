"""Throughput of tlm_core.measure: how many small programs one Measurer builds, checks and times per minute.

Programs are hand-written CPU schedules (tile / reorder / parallel / vectorize / unroll) of three small
matmul and dense tasks, measured in batches per task, as dataset collection and search do. Start-up (worker
import) and the one-off reference runs are reported separately from the steady state.

    .venv/bin/python benchmarks/measure_throughput.py [--quick] [--programs N] [--workers W]

Writes benchmarks/results/measure_throughput.json and .md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import tvm
from tvm import s_tir
from tvm.script import from_source
from tvm.script import tirx as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tlm_core.measure import Measurer  # noqa: E402
from tlm_core.partition.task import Task, task_from_primfunc  # noqa: E402
from tlm_core.target import host_target  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def matmul(n: int, m: int, k: int):
    @T.prim_func(s_tir=True)
    def func(A: T.Buffer((n, k), "float32"), B: T.Buffer((k, m), "float32"), C: T.Buffer((n, m), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.sblock("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]

    return func


def dense(n: int, m: int, k: int):
    """Y = X W^T, the layout of nn.Linear."""

    @T.prim_func(s_tir=True)
    def func(X: T.Buffer((n, k), "float32"), W: T.Buffer((m, k), "float32"), C: T.Buffer((n, m), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.sblock("C"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + X[vi, vr] * W[vj, vr]

    return func


def schedules(task: Task):
    """Endless distinct schedules of a task's block "C"."""
    n, m = task.params[2][1]
    k = task.params[0][1][1]
    choices = itertools.product([2, 4, 8, 16], [4, 8, 16, 32], [1, 4, 8], [True, False], [0, 16, 64])
    for ti, tj, tk, vectorize, unroll in itertools.cycle(choices):
        if n % ti or m % tj or k % tk:
            continue
        sch = s_tir.Schedule(task.mod)
        block = sch.get_sblock("C")
        i, j, r = sch.get_loops(block)
        i0, i1 = sch.split(i, [None, ti])
        j0, j1 = sch.split(j, [None, tj])
        r0, r1 = sch.split(r, [None, tk])
        sch.reorder(i0, j0, r0, i1, r1, j1)
        sch.parallel(sch.fuse(i0, j0))
        if vectorize:
            sch.vectorize(j1)
        if unroll:
            sch.annotate(r0, "pragma_auto_unroll_max_step", unroll)
        yield sch.mod


def serialisation_ms(mods: list[tvm.IRModule]) -> dict:
    """Per-program cost of shipping a module as save_json text vs TVMScript (both directions)."""
    out = {}
    for name, dump, load in [
        ("save_json", tvm.ir.save_json, tvm.ir.load_json),
        ("tvmscript", lambda mod: mod.script(), from_source),
    ]:
        start = time.perf_counter()
        texts = [dump(mod) for mod in mods]
        mid = time.perf_counter()
        for text in texts:
            load(text)
        end = time.perf_counter()
        out[name] = {"dump_ms": (mid - start) / len(mods) * 1e3, "load_ms": (end - mid) / len(mods) * 1e3}
    return out


def run(programs: int, workers: int, batch: int) -> dict:
    tasks = [
        task_from_primfunc(matmul(128, 128, 128), "matmul_128"),
        task_from_primfunc(matmul(64, 64, 256), "matmul_64x64x256"),
        task_from_primfunc(dense(16, 256, 256), "dense_16x256x256"),
    ]
    generators = {task.id: schedules(task) for task in tasks}
    start = time.perf_counter()
    with Measurer(target=host_target("llvm"), workers=workers, cache_dir=tempfile.mkdtemp()) as measurer:
        startup = measurer.wait_ready()
        start = time.perf_counter()
        for task in tasks:  # the one-off reference (untuned build + run) of each task
            measurer.measure(task, [task.mod])
        references = time.perf_counter() - start

        results, schedule_secs, done = [], 0.0, 0
        start = time.perf_counter()
        while done < programs:
            for task in tasks:
                count = min(batch, programs - done)
                if count <= 0:
                    break
                t0 = time.perf_counter()
                mods = [next(generators[task.id]) for _ in range(count)]
                schedule_secs += time.perf_counter() - t0
                results += measurer.measure(task, mods)
                done += count
        wall = time.perf_counter() - start
    measure_wall = wall - schedule_secs  # making the schedules is the caller's work, not measurement
    ok = [r for r in results if r.ok]
    sample = [next(generators[tasks[0].id]) for _ in range(10)]
    return {
        "programs": programs,
        "workers": workers,
        "batch": batch,
        "ok": len(ok),
        "failed": len(results) - len(ok),
        "errors": sorted({r.error for r in results if not r.ok}),
        "startup_secs": startup,
        "references_secs": references,
        "measure_wall_secs": measure_wall,
        "programs_per_minute": programs / measure_wall * 60,
        "median_build_secs": statistics.median(r.build_secs for r in results),
        "median_measure_secs": statistics.median(r.measure_secs for r in ok),
        "median_overhead_secs": measure_wall / programs
        - statistics.median(r.build_secs for r in results)
        - statistics.median(r.measure_secs for r in ok),
        "median_latency_us": statistics.median(r.latency for r in ok) * 1e6,
        "best_gflops": max(r.gflops for r in ok),
        "timing": measurer.timing,
        "serialisation_ms": serialisation_ms(sample),
        "machine": {
            "cpu": host_target("llvm").attrs["mcpu"],
            "cores": len(os.sched_getaffinity(0)),
            "load_average": os.getloadavg(),
            "python": platform.python_version(),
            "tvm": tvm.__version__,
        },
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }


def markdown(r: dict) -> str:
    s = r["serialisation_ms"]
    rows = [
        ("programs measured (ok / failed)", f"{r['programs']} ({r['ok']} / {r['failed']})"),
        ("workers", r["workers"]),
        ("**programs per minute**", f"**{r['programs_per_minute']:.0f}**"),
        ("median build per program", f"{r['median_build_secs'] * 1e3:.1f} ms"),
        ("median check + timing per program", f"{r['median_measure_secs'] * 1e3:.1f} ms"),
        ("other per-program overhead (pipes, serialisation)", f"{r['median_overhead_secs'] * 1e3:.1f} ms"),
        ("start-up (workers import TVM), once", f"{r['startup_secs']:.2f} s"),
        ("references (3 untuned tasks), once per task", f"{r['references_secs']:.2f} s"),
        ("timing settings", ", ".join(f"{k}={v}" for k, v in r["timing"].items())),
        ("median kernel latency / best GFLOP/s", f"{r['median_latency_us']:.0f} us / {r['best_gflops']:.1f}"),
        (
            "save_json vs TVMScript round trip",
            f"{s['save_json']['dump_ms'] + s['save_json']['load_ms']:.1f} ms vs "
            f"{s['tvmscript']['dump_ms'] + s['tvmscript']['load_ms']:.1f} ms",
        ),
        (
            "machine",
            f"{r['machine']['cpu']}, {r['machine']['cores']} cores, load {r['machine']['load_average'][0]:.1f}",
        ),
    ]
    lines = [f"# Measure throughput ({r['date']})", "", "| | |", "|---|---|"]
    return "\n".join(lines + [f"| {k} | {v} |" for k, v in rows]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 programs instead of 300")
    parser.add_argument("--programs", type=int, default=None)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--batch", type=int, default=25, help="programs per measure() call")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    programs = args.programs or (30 if args.quick else 300)
    result = run(programs, args.workers, args.batch)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "measure_throughput.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "measure_throughput.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
