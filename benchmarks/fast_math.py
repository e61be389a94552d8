"""What tlm_core.compile.fast_math buys: exp, sigmoid, tanh and erf kernels, and whole models, with TVM's own
lowering (scalar libm calls per vector lane) and with the vectorizable polynomials, in one process.

    .venv/bin/python benchmarks/fast_math.py                      # the four functions, then the default models
    .venv/bin/python benchmarks/fast_math.py --models efficientnet-b0 bert

Models: the heuristic's Top-1 program per task (the same schedules both ways), compiled twice, each output
checked against PyTorch, then timed in alternating rounds (medians). Writes benchmarks/results/fast_math.json
and .md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import ms, write  # noqa: E402

N = 96 * 112 * 112  # EfficientNet-B0's widest SiLU: 96 channels at 112x112
MODELS = ["efficientnet-b0", "bert", "gpt2", "llama-7b"]


def function_rows(rounds: int) -> list[dict]:
    import numpy as np
    import scipy.special
    import tvm
    from tvm import te

    from tlm_core.compile.fast_math import exact, install
    from tlm_core.target import host_target

    install()
    funcs = {"exp": (te.exp, np.exp), "sigmoid": (te.sigmoid, scipy.special.expit), "tanh": (te.tanh, np.tanh),
             "erf": (te.erf, scipy.special.erf)}  # fmt: skip
    x = np.random.default_rng(0).normal(0, 4, N).astype("float32")
    dev = tvm.cpu()
    a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(np.zeros(N, "float32"), dev)
    rows = []
    for name, (te_f, np_f) in funcs.items():
        A = te.placeholder((N,), name="A")
        B = te.compute((N,), lambda i: te_f(A[i]), name="B")  # noqa: B023
        sch = tvm.s_tir.Schedule(te.create_prim_func([A, B]))
        outer, inner = sch.split(sch.get_loops(sch.get_sblock("B"))[0], [None, 16])
        sch.parallel(outer)
        sch.vectorize(inner)
        with exact():
            slow = tvm.compile(sch.mod, target=host_target()).mod
        fast = tvm.compile(sch.mod, target=host_target()).mod
        ref = np_f(x.astype("float64"))
        row: dict = {"kernel": f"{name}, {N:,} float32"}
        times: dict[str, list[float]] = {"libm": [], "fast": []}
        for label, m in (("libm", slow), ("fast", fast)):
            m["main"](a, b)
            row[f"{label}_max_err"] = float(np.max(np.abs(b.numpy() - ref) / np.maximum(np.abs(ref), 1.0)))
        for _ in range(rounds):  # alternating, so both see the same moments of a shared machine
            for label, m in (("libm", slow), ("fast", fast)):
                times[label].append(m.time_evaluator("main", dev, number=10, repeat=1)(a, b).mean)
        row.update(libm_ms=ms(statistics.median(times["libm"])), fast_ms=ms(statistics.median(times["fast"])))
        row["speedup"] = row["libm_ms"] / row["fast_ms"]
        rows.append(row)
        print(row, flush=True)
    return rows


def model_row(name: str, rounds: int) -> dict:
    from benchmarks.models import load_paper_model, side_by_side
    from tlm_core.compile import compile_model
    from tlm_core.compile.fast_math import exact
    from tlm_core.compile.schedules import schedules_for
    from tlm_core.partition import partition
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    model = load_paper_model(name, Path("out/fast_math"))
    part = partition(model, target)
    build = SpaceBuilder.for_target(target).build
    spaces = {t.id: build(t) for t in part.tasks}
    schedules = schedules_for("heuristic", part, target, lambda t: spaces[t.id])
    with exact():
        slow = compile_model(part, schedules, target)
    fast = compile_model(part, schedules, target)
    timed = side_by_side(model, {"libm": slow.executable, "fast": fast.executable}, rounds)
    row: dict = {"model": name, "tasks": len(part.tasks)}
    for label, r in timed.items():
        row.update({f"{label}_max_rel_err": r["max_rel_err"], f"{label}_ok": r["ok"], f"{label}_ms": r["ms"]})
    row["speedup"] = row["libm_ms"] / row["fast_ms"]
    print(row, flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", default=MODELS, help="paper-size samples (none: the kernels only)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--results", default="fast_math")
    args = p.parse_args(argv)
    rows = function_rows(args.rounds * 3)
    models = [model_row(m, args.rounds) for m in args.models]
    columns = ["kernel", "model", "tasks", "libm_ms", "fast_ms", "speedup", "libm_max_err", "fast_max_err",
               "libm_max_rel_err", "fast_max_rel_err", "fast_ok"]  # fmt: skip
    notes = [
        "libm: TVM's own lowering (tirx.exp -> llvm.exp, a scalar expf call per vector lane; erf -> scalar erff); "
        "fast: tlm_core.compile.fast_math (TOPI's fast_exp / fast_erf polynomials as LLVM intrinsic lowerings).",
        "Kernels: one parallel loop, 16 lanes vectorized, inputs N(0, 4^2); max_err against float64 numpy/scipy, "
        "absolute where |f(x)| < 1, relative above; timed in "
        "alternating rounds, medians.",
        "Models: the heuristic's Top-1 schedules, the same both ways; outputs checked against PyTorch (max rel "
        "error); the two executables timed in alternating rounds (3 runs each), medians.",
    ]
    md = write(args.results, {"kernels": rows, "models": models}, columns, [*rows, *models],
               "Vectorizable exp and erf: TVM's libm lowering vs tlm_core.compile.fast_math", notes)  # fmt: skip
    print(md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
