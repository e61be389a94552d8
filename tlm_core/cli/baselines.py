"""Baseline commands: heuristic, tune (search), compile (whole model with a method).

--json contract, per task: {"id", "name", "method", "latency_s", "compile_s", "trials", ...}.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tlm_core.cli.common import add_hardware_options, build_spaces, emit, fmt_secs, load_partition, table


def _measurer(target, args):
    from tlm_core.measure import Measurer

    return Measurer(target, timeout_s=getattr(args, "timeout", 30.0))


def _store(args, fallback: str | None = None):
    """The --records store, else one in `fallback` (a temporary directory), else None."""
    from tlm_core.records import RecordStore

    directory = getattr(args, "records", None) or fallback
    return RecordStore(Path(directory)) if directory else None


def _text_rows(rows: list[dict], extra: list[str]) -> str:
    shown = [
        {**r, "latency": fmt_secs(r.get("latency_s")), "compile": f"{r.get('compile_s') or 0:.2f} s"} for r in rows
    ]
    return table(shown, ["id", "name", "method", "latency", "compile", "trials", *extra])


def cmd_heuristic(args: argparse.Namespace) -> None:
    import time

    from tlm_core.baselines.default import default_module
    from tlm_core.baselines.heuristic import LABEL, heuristic_program, heuristic_top_k
    from tlm_core.progress import bar

    _, part, target = load_partition(args)
    tasks = [part.task(args.task)] if args.task else part.tasks
    spaces = build_spaces(args, tasks, target)
    store = _store(args)
    rows = []
    with _measurer(target, args) as m:
        for task in bar(tasks, "heuristic", quiet=args.quiet):
            space = spaces[task.id]
            start = time.perf_counter()
            top1 = heuristic_program(space)
            gen = time.perf_counter() - start
            default, result = m.measure(task, [default_module(task, target), top1.program.mod])
            if store is not None:
                store.append(task, top1.program.trace, result, target)
            row = {
                "id": task.id,
                "name": task.name,
                "method": "heuristic",
                "latency_s": result.latency,
                "compile_s": gen,
                "trials": 0,
                "ok": result.ok,
                "error": result.error,
                "sketch": top1.sketch_index,
                "decisions": [list(d) if isinstance(d, tuple) else d for d in top1.decisions],
                "default_latency_s": default.latency,
            }
            if args.top > 1:
                measured, secs = heuristic_top_k(space, m, k=args.top)
                best = measured[0] if measured and measured[0].latest.ok else None
                if store is not None:
                    for item in measured:
                        for result in (item.result, item.again):
                            if result is not None:
                                store.append(task, item.candidate.program.trace, result, target)
                row["top_k"] = {
                    "k": args.top,
                    "latency_s": best.latest.latency if best else None,
                    "compile_s": secs,
                    "trials": len(measured) + sum(m.again is not None for m in measured),
                }
            rows.append(row)
    doc = {"label": LABEL, "target": str(target), "tasks": rows, "records": args.records}
    for r in rows:
        r["default"] = fmt_secs(r["default_latency_s"])
        if "top_k" in r:
            r[f"top{args.top}"] = fmt_secs(r["top_k"]["latency_s"])
    extra = ["default"] + ([f"top{args.top}"] if args.top > 1 else [])
    emit(args, doc, f"{LABEL}\n" + _text_rows(rows, extra))


def cmd_tune(args: argparse.Namespace) -> None:
    from tlm_core.baselines.search import LABEL, search
    from tlm_core.progress import step

    _, part, target = load_partition(args)
    tasks = [part.task(args.task)] if args.task else part.tasks
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(args, tmp)
        with (
            step(f"searching ({args.trials} trials over {len(tasks)} tasks)", args.quiet),
            _measurer(target, args) as m,
        ):
            result = search(tasks, target, args.trials, m, store=store, per_iter=args.per_iter, seed=args.seed)
    rows = []
    for task in tasks:
        mine = result.trials_of(task.id)
        rows.append(
            {
                "id": task.id,
                "name": task.name,
                "method": "search",
                "latency_s": result.best.get(task.id),
                "compile_s": result.seconds * len(mine) / max(1, len(result.trials)),
                "trials": len(mine),
                "convergence": result.convergence(task.id),
            }
        )
    doc = {
        "label": LABEL,
        "target": str(target),
        "seconds": result.seconds,
        "trials": [t.__dict__ for t in result.trials],
        "tasks": rows,
        "records": args.records,
    }
    emit(args, doc, f"{LABEL}: {len(result.trials)} trials in {result.seconds:.1f} s\n" + _text_rows(rows, []))


def cmd_compile(args: argparse.Namespace) -> None:
    import contextlib
    import sys

    from tlm_core import compile as C

    model, part, target = load_partition(args)
    method, database = args.method, None
    if method not in C.METHODS or method == "database":
        if not Path(method).exists():
            raise ValueError(f"--method must be default, heuristic, tlm, search or a database path; got {method!r}")
        checked = C.check_database(method)  # every trace replayed in a helper process first
        for line in checked.problems:  # left out, with why: their tasks stay untuned
            print(f"{method}: left out: {line}", file=sys.stderr)
        method, database = "database", checked.db
    generator = None
    if method == "tlm":
        from tlm_core.generator import Generator
        from tlm_core.model import checkpoint_label, default_checkpoint_for

        path = args.checkpoint or default_checkpoint_for(target)
        generator = Generator.from_checkpoint(path)
        if not args.quiet:
            print(f"TLM checkpoint: {checkpoint_label(path, target)}", file=sys.stderr)
        from tlm_core.cli.tlm import task_notes

        task_notes(generator, part.tasks, args)  # tasks outside what it learnt, one line each
    shown = {"step": ""}

    def progress(fraction: float, message: str) -> None:
        step = message.split(" ")[0]  # "2/4 ...": one stderr line per step, not per task
        if not args.quiet and step != shown["step"]:
            shown["step"] = step
            print(f"{message} ...", file=sys.stderr, flush=True)

    store = _store(args)
    # a database's kernels are built and run alone in measuring workers first: one that crashes is left out
    kernels = method == "database"
    needs_measurer = method == "search" or (method == "tlm" and args.candidates > 1) or kernels
    with _measurer(target, args) if needs_measurer else contextlib.nullcontext() as m:
        run = C.compile_and_run(model, part, target, method, generator=generator, candidates=args.candidates,
                                trials=args.trials, measurer=m, store=store, database=database, repeat=args.repeat,
                                measure_kernels=kernels, progress=progress)  # fmt: skip
    for s in run.schedules.values():
        if s.dropped:
            print(f"task {s.task_id}: left out, runs untuned: {s.dropped}", file=sys.stderr)
    doc = run.to_dict()
    report = run.report
    text = (
        f"{model.name} with {run.label}: {fmt_secs(report.latency)} end to end "
        f"({model.reference_name} {fmt_secs(report.pytorch_latency)}), compile {doc['compile_s']:.1f} s, "
        f"max error {report.max_abs_error} ({'matches' if report.ok else 'DOES NOT match'} {model.reference_name}), "
        f"{run.compiled.scheduled}/{len(part.tasks)} tasks scheduled"
    )
    emit(args, doc, text)
    if not report.ok:
        raise RuntimeError(
            f"the compiled model does not match {model.reference_name} (max rel error {report.max_rel_error})"
        )


BENCHMARKS = ("operators", "models", "peak")


def cmd_bench(args: argparse.Namespace) -> None:
    """Run benchmarks/<name>.py of this checkout (it writes its JSON and markdown into benchmarks/results/)."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / f"{args.name}.py"
    if not script.exists():
        raise FileNotFoundError(f"{script} not found: `tlm bench` runs from a source checkout")
    argv = [sys.executable, str(script)] + (["--quick"] if args.quick else []) + list(args.rest)
    code = subprocess.call(argv)
    if code:
        raise RuntimeError(f"benchmark {args.name} exited with status {code}")


def register(sub: argparse._SubParsersAction, add) -> None:
    sp = add(sub, "heuristic", cmd_heuristic, "Roller-style rule-based schedules per task (Top-1, or measured Top-k)",
             example="tlm heuristic bert-tiny --top 10")  # fmt: skip
    sp.add_argument("--top", type=int, default=1, help="also measure the k best by the heuristic's own model")
    sp.add_argument("--task", help="one task (id, id prefix or name); default: all")
    sp.add_argument("--records", help="append the measured programs to this RecordStore directory")
    sp.add_argument("--timeout", type=float, default=30.0)

    sp = add(sub, "tune", cmd_tune, "Ansor-style evolutionary search (MetaSchedule implementation) with a budget",
             example="tlm tune bert-tiny --trials 64 --records out/search")  # fmt: skip
    sp.add_argument("--trials", type=int, default=64, help="trial budget for the whole model")
    sp.add_argument("--per-iter", type=int, default=16, help="programs measured per search iteration")
    sp.add_argument("--task", help="one task (id, id prefix or name); default: all")
    sp.add_argument("--records", help="RecordStore directory for every measured program")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--timeout", type=float, default=30.0)

    sp = add(sub, "compile", cmd_compile, "compile the whole model with a method; run, check and time it vs PyTorch",
             example="tlm compile bert-tiny --method tlm --candidates 10")  # fmt: skip
    sp.add_argument("--method", default="heuristic", help="default | heuristic | tlm | search | a JSONDatabase path")
    sp.add_argument(
        "--candidates",
        type=int,
        default=1,
        metavar="K",
        help="method tlm: 1 = the greedy program (top-1); K > 1 = best of K measured (beam search)",
    )
    sp.add_argument("--checkpoint", help="method tlm: checkpoint folder (default: `tlm adapt`'s for this hardware, "
                    "else the shipped assets/tlm-small)")  # fmt: skip
    add_hardware_options(sp)
    sp.add_argument("--trials", type=int, default=64, help="search budget (method search)")
    sp.add_argument("--records", help="RecordStore directory for the search's programs")
    sp.add_argument("--repeat", type=int, default=10, help="timed end-to-end runs (the median is reported)")
    sp.add_argument("--timeout", type=float, default=30.0)

    sp = add(
        sub,
        "bench",
        cmd_bench,
        "run a benchmark: operators, models or peak (tables in benchmarks/results)",
        model=False,
        example="tlm bench operators --quick",
    )
    sp.add_argument("name", choices=BENCHMARKS)
    sp.add_argument("--quick", action="store_true", help="the CI smoke-test size")
    sp.add_argument("rest", nargs=argparse.REMAINDER, help="further options for the benchmark script")
