"""fp32 GEMM efficiency: the best schedule per method against this machine's measured BLAS peak.

The reference ceiling is numpy's GEMM (OpenBLAS / MKL) on the same shape and threads; efficiency =
numpy's latency / the method's latency. Both sides report their fastest repeat: the machine is shared, and
multi-threaded BLAS suffers most from a busy core, so medians would flatter TVM.

    .venv/bin/python benchmarks/peak.py            # 1024^3, heuristic Top-1 / Top-10, TLM, search 128 trials
    .venv/bin/python benchmarks/peak.py --quick    # 256^3, search 8 trials
    .venv/bin/python benchmarks/peak.py --trials 0 --checkpoint out/ftN --compare assets/tlm-small  # a ship check

Writes benchmarks/results/peak[-quick].json and .md (NAME.json and .md with --results NAME).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import us, write  # noqa: E402


def numpy_gemm(n: int, repeat: int = 20) -> float:
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    np.matmul(a, b, out=c)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        np.matmul(a, b, out=c)
        times.append(time.perf_counter() - start)
    return min(times)


def _best(result) -> float | None:
    """A program's fastest repeat: on a shared machine the closest to its unloaded speed (as for BLAS)."""
    return min(result.latencies) if result.ok and result.latencies else None


def _tlm_rows(task, space, measurer, checkpoints: dict[str, str | None]) -> list[dict]:
    """Per checkpoint (label -> folder, None: the shipped one), its greedy program (no measurement) and the best
    of its 10 most likely (beam, measured); all of them timed again here in one batch (fastest repeat)."""
    from types import SimpleNamespace

    from tlm_core.compile import scheduled_module, tlm_schedules
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint

    one, picks = SimpleNamespace(tasks=[task]), []
    for label, folder in checkpoints.items():
        generator = Generator.from_checkpoint(folder or default_checkpoint())
        top1 = tlm_schedules(one, lambda _: space, generator)[task.id]
        best = tlm_schedules(one, lambda _: space, generator, 10, measurer)[task.id]
        picks += [(f"TLM top-1{label}", top1), (f"TLM best-of-10{label}", best)]
    results = measurer.measure(task, [scheduled_module(task, s) for _, s in picks])
    return [
        {"method": name, "latency_us": us(_best(r)), "compile_s": s.seconds}
        for (name, s), r in zip(picks, results, strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--results", help="results name (another machine's run beside the committed one)")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--no-tlm", action="store_true", help="leave out the TLM rows (top-1 and best-of-10)")
    p.add_argument("--checkpoint", help="the TLM checkpoint folder (default: the shipped one)")
    p.add_argument("--compare", help="a second checkpoint, its TLM rows measured in the same batch")
    args = p.parse_args(argv)
    n = args.n or (256 if args.quick else 1024)
    trials = args.trials if args.trials is not None else (8 if args.quick else 128)

    from tvm import te, topi

    from tlm_core.baselines.heuristic import heuristic_candidates, heuristic_program
    from tlm_core.baselines.search import search
    from tlm_core.measure import Measurer
    from tlm_core.partition import task_from_primfunc, te_prim_func
    from tlm_core.records import RecordStore
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    a, b = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    task = task_from_primfunc(te_prim_func([a, b, topi.nn.matmul(a, b)]), f"gemm{n}")
    flops = 2.0 * n**3
    space = SpaceBuilder.for_target(target).build(task)
    rows = []
    # BLAS away from the measurement worker: its import, and TVM's threads spinning after a kernel, slow BLAS.
    blas = numpy_gemm(n)
    rows.append({"method": "numpy (BLAS)", "latency_us": us(blas), "compile_s": 0.0})
    with Measurer(target, repeat=7, min_repeat_ms=20, timeout_s=120.0) as m:
        t0 = time.perf_counter()
        top1 = heuristic_program(space)
        t1 = time.perf_counter() - t0
        cands = heuristic_candidates(space, k=10)
        t10 = time.perf_counter() - t0
        results = m.measure(task, [top1.program.mod] + [c.program.mod for c in cands])
        t10 = time.perf_counter() - t0
        rows.append({"method": "heuristic top-1", "latency_us": us(_best(results[0])), "compile_s": t1})
        best = min((_best(r) for r in results[1:] if r.ok), default=None)
        rows.append({"method": "heuristic top-10", "latency_us": us(best), "compile_s": t10})
        if not args.no_tlm:
            checkpoints = {"": args.checkpoint} | ({f" ({args.compare})": args.compare} if args.compare else {})
            rows += _tlm_rows(task, space, m, checkpoints)
        if trials:
            with tempfile.TemporaryDirectory() as tmp:
                store = RecordStore(tmp)
                res = search([task], target, trials, m, store=store)
                record = store.best(task.id)
            fastest = min(record.run_secs) if record else None
            row = {"method": f"search ({len(res.trials)} trials)", "latency_us": us(fastest), "compile_s": res.seconds}
            rows.append(row)
    blas = min(blas, numpy_gemm(n))  # the machine is shared: bracket the run with two BLAS measurements
    rows[0]["latency_us"] = us(blas)
    for r in rows:
        lat = r["latency_us"]
        r["gflops"] = flops / (lat * 1e-6) / 1e9 if lat else None
        r["of_peak"] = blas * 1e6 / lat if lat else None
    notes = [
        f"fp32 GEMM {n}x{n}x{n}; peak = numpy/BLAS on this machine (best of two runs bracketing the benchmark).",
        "of_peak: BLAS latency / method latency. search: Ansor-style evolutionary search, MetaSchedule implementation.",
        f"TLM ({args.checkpoint or 'the shipped checkpoint'}): its greedy program, and the best of its 10 most likely"
        " (beam search, measured); every TLM row's program timed again in one batch.",
    ]
    name = args.results or ("peak-quick" if args.quick else "peak")
    md = write(
        name,
        {"n": n, "rows": rows},
        ["method", "latency_us", "gflops", "of_peak", "compile_s"],
        rows,
        f"Peak: fp32 GEMM {n}^3 vs BLAS",
        notes,
    )
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
