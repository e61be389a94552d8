"""Sample models end to end, per method, against PyTorch eager on the same inputs.

For each model: PyTorch's torch.compile, TVM default (untuned), Roller-style heuristic (Top-1 per task), the TLM
(top-1 per task) and, with a budget, Ansor-style evolutionary search (MetaSchedule implementation): end-to-end
latency (median of repeats, Relax VM), total compile time (schedule spaces, generation or search, tvm.compile),
max error vs PyTorch.

    .venv/bin/python benchmarks/models.py            # every tiny sample, search 20 trials per task
    .venv/bin/python benchmarks/models.py --quick    # bert-tiny and resnet50-tiny, no search
    .venv/bin/python benchmarks/models.py --paper    # paper size (resumable, hours): PyTorch eager and
        torch.compile, TVM default, heuristic, TLM top-1 and best-of-10 on resnet50, mobilenetv2,
        efficientnet-b0, bert, gpt2, llama-7b (2 layers) and the corpus' masked BERT-base and ConvNeXt-T

Writes benchmarks/results/models[-quick].json and .md (NAME.json and .md with --results NAME); --paper writes
benchmarks/results/models-paper-<llvm cpu>.json and .md from every row in --work (out/models-paper/rows.jsonl).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import ms, write  # noqa: E402

QUICK = ["bert-tiny", "resnet50-tiny"]
WORK = "out/models-paper"  # --paper's rows (rows.jsonl) and inputs, git-ignored


def eager_ms(name: str, repeat: int) -> float:
    """PyTorch eager's median latency, timed in a fresh process: TVM's thread pool, once started, keeps slowing
    PyTorch's threads in the process that ran it."""
    out = subprocess.run(
        [sys.executable, __file__, "--eager", name, "--repeat", str(repeat)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])["pytorch_ms"]


def print_eager_ms(name: str, repeat: int) -> None:
    from tlm_core.compile import pytorch_latencies
    from tlm_core.frontend import load_model

    model = load_model(name)
    print(json.dumps({"pytorch_ms": ms(statistics.median(pytorch_latencies(model, model.random_inputs(0), repeat)))}))


def bench(
    name: str, trials_per_task: int, builder, target, repeat: int, only: list[str] | None = None, generator=None
) -> dict:
    from tlm_core import compile as C
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition

    row: dict = {"model": name, "pytorch_ms": eager_ms(name, repeat)}
    model = load_model(name)
    part = partition(model, target)
    row["tasks"] = len(part.tasks)
    methods = ["default", "heuristic"] + ["tlm"] * (generator is not None) + ["search"] * (trials_per_task > 0)
    methods = [m for m in methods if not only or m in only]
    ok = True
    if not only or "torch_compile" in only:
        # before TVM runs: PyTorch's threads degrade while TVM's thread pool still holds the cores
        tc = C.torch_compile_run(model, repeat=repeat)
        row["torch_compile_ms"], row["torch_compile_compile_s"] = ms(tc.latency), tc.compile_s
        row["torch_compile_max_err"], ok = tc.max_abs_error, tc.ok
        print(f"  torch.compile: {row['torch_compile_ms']:.3f} ms, ok {tc.ok}", file=sys.stderr, flush=True)
    if {"heuristic", "tlm"} & set(methods):
        builder.build(part.tasks[0])  # TVM's one-off start-up (tens of seconds) is charged to no method
    for method in methods:
        # the library's one path for a whole model, as `tlm compile` takes it (search: a budget per task)
        # PyTorch eager is timed in its own process (eager_ms): here it only checks the output
        run = C.compile_and_run(model, part, target, method, space_of=builder.build, generator=generator,
                                trials=trials_per_task * len(part.tasks), repeat=repeat,
                                with_pytorch=False)  # fmt: skip
        report = run.report
        row[f"{method}_ms"] = ms(report.latency)
        row[f"{method}_compile_s"] = run.compile_s
        row[f"{method}_max_err"] = report.max_abs_error
        ok = ok and report.ok
        print(f"  {method}: {row[f'{method}_ms']:.3f} ms, ok {report.ok}", file=sys.stderr, flush=True)
    for method in methods + ["torch_compile"] * ("torch_compile_ms" in row):
        row[f"{method}_vs_pytorch"] = row["pytorch_ms"] / row[f"{method}_ms"]  # > 1: faster than PyTorch
    row["ok"] = ok
    return row


# ---------------------------------------------------------------------------------------------------------
# --paper: the paper-size models end to end, resumable (one JSONL row per (model, method) in a work folder).

PAPER = ["resnet50", "mobilenetv2", "efficientnet-b0", "corpus-convnext", "bert", "corpus-bert", "gpt2", "llama-7b"]
CORPUS = {"corpus-bert": "bert", "corpus-convnext": "convnext"}  # sample_models.user_models, size "full", .pt2
PAPER_METHODS = ["heuristic", "tlm", "tlm10", "default"]  # tlm10: TLM best-of-10 (default last: the slowest)
LABELS = {"default": "TVM default", "heuristic": "heuristic (top-1)", "tlm": "TLM top-1", "tlm10": "TLM best-of-10"}
TITLES = {"corpus-bert": "BERT-base, masked (corpus .pt2)", "corpus-convnext": "ConvNeXt-T (corpus .pt2)",
          "llama-7b": "LLaMA-7B, 2 decoder layers"}  # fmt: skip
TIME_BUDGET_S = 20.0  # a slow method gets fewer timed runs (at least 3): TVM default on LLaMA is ~a minute a run


def torch_module(name: str):
    """(the PyTorch module, its batch-1 example inputs as numpy): what eager and torch.compile run and what
    every method's output is checked against. LLaMA-7B: its two decoder layers (the sample's build)."""
    import sample_models
    from sample_models import user_models as U

    module, example = U.build(CORPUS[name], "full") if name in CORPUS else sample_models.SAMPLES[name].build()
    return module, [t.numpy() for t in example]


def load_paper_model(name: str, folder: Path):
    """The model as a user opens it: a sample by name, a corpus model exported to .pt2 and opened from the file
    (benchmarks/coverage.py's load_export). LLaMA-7B is loaded with its reference (PyTorch's 2 layers)."""
    import sample_models

    if name in CORPUS:
        from benchmarks.coverage import load_export
        from sample_models import user_models as U

        path, inputs = U.export(CORPUS[name], "full", "pt2", folder)
        return load_export(path, "pt2", inputs)
    if name == "llama-7b":  # the registered sample drops its reference (a stand-in); a build override keeps it
        return sample_models.load_spec(sample_models.SAMPLES[name], layers=2)
    return sample_models.load(name)


def pytorch_row(name: str, repeat: int, work: Path) -> dict:
    """PyTorch eager and torch.compile on the model's example inputs (saved for the TVM worker), in a process
    where TVM never ran; the top operators of PyTorch's profiler for the diagnosis."""
    import torch

    from tlm_core.compile import pytorch_latencies
    from tlm_core.compile.run import compare_outputs
    from tlm_core.frontend.torch_program import numpy_call

    load = os.getloadavg()[0]
    module, inputs = torch_module(name)
    np.savez(work / f"inputs-{name}.npz", *inputs)
    eager = numpy_call(module)
    refs = eager(inputs)
    row = {"model": name, "method": "pytorch", "load_before": load}
    times = pytorch_latencies(None, inputs, repeat, run=eager)
    row["eager_ms"], row["eager_latencies_ms"] = ms(statistics.median(times)), [ms(t) for t in times]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            eager(inputs)
    table = prof.key_averages(group_by_input_shape=True)
    top = sorted(table, key=lambda e: e.self_cpu_time_total, reverse=True)[:25]
    row["profile"] = [{"op": e.key, "shapes": str(e.input_shapes)[:200], "calls": e.count // 3,
                       "self_ms": e.self_cpu_time_total / 1e3 / 3} for e in top]  # fmt: skip
    start = time.perf_counter()
    compiled = numpy_call(torch.compile(module))
    outs = compiled(inputs)
    row["torch_compile_compile_s"] = time.perf_counter() - start
    row["torch_compile_max_abs_error"], row["torch_compile_max_rel_error"], ok = compare_outputs(outs, refs)
    row["torch_compile_ok"] = bool(ok and len(outs) == len(refs))
    times = pytorch_latencies(None, inputs, repeat, run=compiled)
    row["torch_compile_ms"], row["torch_compile_latencies_ms"] = ms(statistics.median(times)), [ms(t) for t in times]
    row["load_after"] = os.getloadavg()[0]
    return row


def timed_run(model, compiled, inputs: list, repeat: int) -> dict:
    """Run once and check against PyTorch (the model's reference) on `inputs`; only a matching output is
    timed (median of repeats; fewer, at least 3, where one run is slow: TIME_BUDGET_S)."""
    import tvm
    from tvm import relax

    from tlm_core.compile.run import _flatten, compare_outputs
    from tlm_core.target import device_for

    dev = device_for(compiled.target)
    vm = relax.VirtualMachine(compiled.executable, dev)
    args = [tvm.runtime.tensor(a, dev) for a in inputs]
    start = time.perf_counter()
    outs = _flatten(vm["main"](*args))
    first = time.perf_counter() - start
    refs = model.reference(inputs)
    max_abs, max_rel, ok = compare_outputs(outs, refs)
    row = {"max_abs_error": max_abs, "max_rel_error": max_rel, "ok": bool(ok and len(outs) >= len(refs))}
    row["first_run_s"] = first
    if row["ok"]:
        n = max(3, min(repeat, int(TIME_BUDGET_S / max(first, 1e-6))))
        timer = vm.time_evaluator("main", dev, number=1, repeat=n, min_repeat_ms=5)
        lat = [float(t) for t in timer(*args).results]
        row.update(latency_ms=ms(statistics.median(lat)), latencies_ms=[ms(t) for t in lat], repeat=n)
    return row


def side_by_side(model, executables: dict, rounds: int) -> dict[str, dict]:
    """Executables of one model (label -> tvm.compile result): each checked against PyTorch on the model's random
    inputs, then timed in alternating rounds (3 runs each; both see the same moments of a shared machine).
    label -> {"max_rel_err", "ok", "ms" (median)}."""
    import tvm
    from tvm import relax

    from tlm_core.compile.run import _flatten, compare_outputs

    dev = tvm.cpu()
    inputs = model.random_inputs()
    refs = model.reference(inputs)
    args = [tvm.runtime.tensor(x, dev) for x in inputs]
    vms = {label: relax.VirtualMachine(exe, dev) for label, exe in executables.items()}
    out: dict[str, dict] = {}
    for label, vm in vms.items():
        _, rel, ok = compare_outputs(_flatten(vm["main"](*args)), refs)
        out[label] = {"max_rel_err": rel, "ok": bool(ok)}
    times: dict[str, list[float]] = {label: [] for label in vms}
    for _ in range(rounds):
        for label, vm in vms.items():
            times[label].append(vm.time_evaluator("main", dev, number=1, repeat=3)(*args).median)
    for label in vms:
        out[label]["ms"] = ms(statistics.median(times[label]))
    return out


def tvm_rows(name: str, methods: list[str], repeat: int, work: Path, rows_file: Path) -> None:
    """One model's TVM methods (in this process, after its PyTorch row): each row appended as it finishes."""
    import tempfile

    from tlm_core.compile import compile_model, measure_schedules, schedules_for
    from tlm_core.partition import partition
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    saved = np.load(work / f"inputs-{name}.npz")
    inputs = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tlm-models-") as folder:
        model = load_paper_model(name, Path(folder))
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    target = host_target()
    part = partition(model, target)
    partition_s = time.perf_counter() - t
    common = {"model": name, "tasks": len(part.tasks), "calls": sum(k.weight for k in part.tasks),
              "load_s": load_s, "partition_s": partition_s}  # fmt: skip
    spaces: dict = {}
    spaces_s = 0.0
    generator = measurer = None
    try:
        for method in methods:
            print(f"  {name} {method} ...", file=sys.stderr, flush=True)
            row = {**common, "method": method, "load_before": os.getloadavg()[0]}
            base = "tlm" if method == "tlm10" else method
            if base in ("heuristic", "tlm") and not spaces:
                builder = SpaceBuilder.for_target(target)
                t = time.perf_counter()
                builder.build(part.tasks[0])  # TVM's one-off start-up, charged to no method
                row["tvm_startup_s"] = time.perf_counter() - t
                t = time.perf_counter()
                spaces.update({k.id: builder.build(k) for k in part.tasks})
                spaces_s = time.perf_counter() - t
            if base == "tlm" and generator is None:
                from tlm_core.generator import Generator
                from tlm_core.model import default_checkpoint

                generator = Generator.from_checkpoint(default_checkpoint())
            if (method in ("tlm10", "heuristic")) and measurer is None:
                from tlm_core.measure import Measurer

                measurer = Measurer(target, timeout_s=120.0)
            candidates = 10 if method == "tlm10" else 1
            t = time.perf_counter()
            schedules = schedules_for(base, part, target, lambda k: spaces[k.id], generator=generator,
                                      candidates=candidates, measurer=measurer)  # fmt: skip
            row["schedules_s"] = time.perf_counter() - t
            row["spaces_s"] = spaces_s if base in ("heuristic", "tlm") else 0.0
            compiled = compile_model(part, schedules, target)
            row["build_s"], row["scheduled"] = compiled.compile_secs, compiled.scheduled
            row["compile_s"] = row["spaces_s"] + row["schedules_s"] + row["build_s"]
            row.update(timed_run(model, compiled, inputs, repeat))
            if method == "heuristic":  # each task's kernel alone (the diagnosis: where TVM loses)
                kernels = measure_schedules(part, schedules, measurer)
                row["task_kernels"] = [{"name": k.name, "weight": k.weight, "ms": ms(kernels[k.id].latency),
                                        "ok": kernels[k.id].ok} for k in part.tasks]  # fmt: skip
            row["load_after"] = os.getloadavg()[0]
            with rows_file.open("a") as f:
                f.write(json.dumps(row, default=str) + "\n")
            status = f"{row['latency_ms']:.2f} ms" if row.get("latency_ms") else "output MISMATCH"
            print(f"  {name} {method}: {status}, compile {row['compile_s']:.0f} s", file=sys.stderr, flush=True)
    finally:
        if measurer is not None:
            measurer.close()


def done_rows(rows_file: Path) -> dict[tuple[str, str], dict]:
    if not rows_file.exists():
        return {}
    rows = [json.loads(line) for line in rows_file.read_text().splitlines() if line.strip()]
    return {(r["model"], r["method"]): r for r in rows}


def paper_run(args) -> int:
    """Every (model, method) row not yet in WORK/rows.jsonl: PyTorch in one subprocess, then the model's TVM
    methods in another (memory freed between models; a crash loses one model's unfinished rows)."""
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows_file = work / "rows.jsonl"
    names = args.models or PAPER
    methods = [m for m in PAPER_METHODS if not args.methods or m in args.methods]
    # two passes: every model's fast methods first, then TVM default (minutes a run on the transformers)
    passes = [[m for m in methods if m != "default"], [m for m in methods if m == "default"]]
    for name, pass_methods in [(n, p) for p in passes if p for n in names]:
        done = done_rows(rows_file)
        if (name, "pytorch") not in done:
            print(f"{name} pytorch ...", file=sys.stderr, flush=True)
            out = subprocess.run([sys.executable, __file__, "--pytorch-row", name, "--repeat", str(args.repeat),
                                  "--work", str(work)], capture_output=True, text=True)  # fmt: skip
            if out.returncode != 0:
                print(f"  {name} pytorch FAILED: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                continue
            with rows_file.open("a") as f:
                f.write(out.stdout.strip().splitlines()[-1] + "\n")
        todo = [m for m in pass_methods if (name, m) not in done]
        if todo:
            cmd = [sys.executable, __file__, "--tvm-rows", name, "--methods", *todo, "--repeat", str(args.repeat),
                   "--work", str(work)]  # fmt: skip
            if subprocess.run(cmd).returncode != 0:
                print(f"  {name}: the TVM worker failed; rerun to continue", file=sys.stderr)
    return paper_report(work, names, PAPER_METHODS, args)


def paper_report(work: Path, names: list[str], methods: list[str], args) -> int:
    from benchmarks.coverage import lscpu_model
    from benchmarks.report import geomean, results_dir
    from tlm_core.target import cpu_count, host_cpu

    done = done_rows(work / "rows.jsonl")
    loads = [r[k] for r in done.values() for k in ("load_before", "load_after") if r.get(k) is not None]
    table = []
    for name in names:
        pt = done.get((name, "pytorch"))
        if pt is None:
            continue
        keys = ("eager_ms", "torch_compile_ms", "torch_compile_ok", "torch_compile_compile_s")
        row = {"model": name, **{k: pt[k] for k in keys}}
        for m in methods:
            r = done.get((name, m))
            if r is None:
                continue
            row["tasks"] = r["tasks"]
            row[f"{m}_ms"], row[f"{m}_ok"] = r.get("latency_ms"), r["ok"]
            row[f"{m}_compile_s"], row[f"{m}_max_rel_error"] = r["compile_s"], r["max_rel_error"]
            if r.get("latency_ms"):  # only a checked output's time counts
                row[f"{m}_vs_eager"] = pt["eager_ms"] / r["latency_ms"]
                row[f"{m}_vs_torch_compile"] = pt["torch_compile_ms"] / r["latency_ms"]
                if pt.get("eager_latencies_ms"):  # the fastest runs: the least disturbed by other work
                    fastest = min(r["latencies_ms"])
                    row[f"{m}_vs_eager_min"] = min(pt["eager_latencies_ms"]) / fastest
                    row[f"{m}_vs_torch_compile_min"] = min(pt["torch_compile_latencies_ms"]) / fastest
        mine = [r[k] for (n, _), r in done.items() if n == name for k in ("load_before", "load_after") if k in r]
        row["load"] = max(mine)
        best = [m for m in methods if row.get(f"{m}_ms")]
        if best:
            b = min(best, key=lambda m: row[f"{m}_ms"])
            row["best"], row["best_vs_eager"] = b, row[f"{b}_vs_eager"]
            row["best_vs_torch_compile"] = row[f"{b}_vs_torch_compile"]
        table.append(row)
    geo = {}
    for m in [*methods, "best"]:
        for vs in ("eager", "torch_compile", "eager_min", "torch_compile_min"):
            vals = [r[f"{m}_vs_{vs}"] for r in table if r.get(f"{m}_vs_{vs}")]
            geo[f"{m}_vs_{vs}"] = {"geomean": geomean(vals), "models": len(vals)}
    tc = [r["eager_ms"] / r["torch_compile_ms"] for r in table]
    geo["torch_compile_vs_eager"] = {"geomean": geomean(tc), "models": len(tc)}
    complete = all((n, m) in done for n in names for m in ["pytorch", *methods])
    command = ".venv/bin/python benchmarks/models.py --paper" + (f" --work {args.work}" if args.work != WORK else "")
    doc = {"benchmark": "models-paper", "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": lscpu_model(), "llvm_cpu": host_cpu(), "cores": cpu_count(),
           "load_average": [min(loads, default=float("nan")), max(loads, default=float("nan"))],
           "command": command, "checkpoint": "assets/tlm-small", "complete": complete, "methods": methods,
           "geomeans": geo, "table": table, "rows": list(done.values())}  # fmt: skip
    name = args.results or f"models-paper-{host_cpu()}"
    out = results_dir()
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    md = out / f"{name}.md"
    md.write_text(paper_markdown(doc))
    print(md.read_text())
    return 0 if complete and all(r.get("ok", True) for r in done.values()) else 1


def paper_markdown(doc: dict) -> str:
    methods, table, geo = doc["methods"], doc["table"], doc["geomeans"]
    lo, hi = doc["load_average"]
    f = lambda v, fmt=".3g": "-" if v is None else format(v, fmt)  # noqa: E731
    lines = ["# Models at paper size: end to end per method, batch 1", "",
             f"{doc['when']}, {doc['machine']} (LLVM cpu {doc['llvm_cpu']}), {doc['cores']} cores, load average"
             f" {lo:.1f}-{hi:.1f} over the rows. TLM checkpoint {doc['checkpoint']}. Command: `{doc['command']}`"
             + ("" if doc["complete"] else " (incomplete: the same command continues it)."), ""]  # fmt: skip
    # a row's load is read after the previous row's own work, which keeps up to `cores` threads busy
    if hi > doc["cores"]:
        lines += [f"The machine was busy at times (load average up to {hi:.1f} on {doc['cores']} cores): compare the"
                  " methods as ratios within a model's rows.", ""]  # fmt: skip
    head = ["model", "tasks", "load", "eager ms", "torch.compile ms"] + [LABELS[m] + " ms" for m in methods]
    lines += ["Latency (median), and in brackets the speedup vs eager / vs torch.compile (> 1: TVM faster):", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table:
        cells = [TITLES.get(r["model"], r["model"]), str(r.get("tasks", "-")), f(r["load"], ".1f"), f(r["eager_ms"]),
                 f(r["torch_compile_ms"]) + ("" if r["torch_compile_ok"] else " (mismatch)")]  # fmt: skip
        for m in methods:
            if f"{m}_ok" not in r:
                cells.append("-")
            elif not r[f"{m}_ok"]:
                cells.append("output mismatch")
            else:
                cells.append(f"{f(r[m + '_ms'])} ({r[m + '_vs_eager']:.2f}× / {r[m + '_vs_torch_compile']:.2f}×)")
        lines.append("| " + " | ".join(cells) + " |")
    g = lambda k: geo[k]["geomean"]  # noqa: E731
    cells = ["**geomean**", "", "", "", f"({f(g('torch_compile_vs_eager'), '.2f')}× eager)"]
    for m in methods:
        ge, gt = g(f"{m}_vs_eager"), g(f"{m}_vs_torch_compile")
        cells.append("-" if ge is None else f"({ge:.2f}× / {gt:.2f}×, {geo[m + '_vs_eager']['models']} models)")
    lines += ["| " + " | ".join(cells) + " |", ""]
    ge, gt = g("best_vs_eager"), g("best_vs_torch_compile")
    if ge is not None:
        lines += [f"Best TVM method per model: geomean {ge:.2f}× eager, {gt:.2f}× torch.compile (target: ≥ 1.2× and"
                  " ≥ 1.0×).", ""]  # fmt: skip
    mins = [f"{LABELS[m]} {g(m + '_vs_eager_min'):.2f}× / {g(m + '_vs_torch_compile_min'):.2f}×" for m in methods
            if g(m + "_vs_eager_min") is not None]  # fmt: skip
    if mins:
        lines += ["Fastest run of each (min over the repeats: the figure least disturbed by other work on the machine),"
                  " geomean vs eager / vs torch.compile: " + "; ".join(mins) + ".", ""]  # fmt: skip
    head = ["model", "torch.compile compile s"] + [LABELS[m] + " compile s / max rel err" for m in methods]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in table:
        cells = [TITLES.get(r["model"], r["model"]), f(r["torch_compile_compile_s"])]
        cells += [f"{f(r.get(m + '_compile_s'))} / {f(r.get(m + '_max_rel_error'), '.1e')}" if f"{m}_ok" in r
                  else "-" for m in methods]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *[f"- {n}" for n in PAPER_NOTES]]
    return "\n".join(lines) + "\n"


PAPER_NOTES = [
    "Batch 1; images 224x224, text 128 tokens (the corpus BERT's last quarter padded in attention_mask). LLaMA-7B:"
    " its two decoder layers with embedding and LM head (the whole 2-layer model end to end).",
    "eager and torch.compile (Inductor, default mode) run in a process of their own where TVM never ran;"
    " every TVM method runs on the same inputs and its output is checked against PyTorch eager (max relative"
    " error <= 1e-2) before it is timed: a mismatch gets no time.",
    "TVM latency: Relax VM, median of up to --repeat runs (at least 3; fewer where one run is slow). load: the"
    " highest 1-minute load average seen over the model's rows (2 cores; other engineers' jobs share them).",
    "heuristic: the Roller-style heuristic's top-1 per task; TLM top-1: the TLM's greedy program per task;"
    " TLM best-of-10: per task the TLM's 10 candidates measured, the fastest kept; TVM default: no tuning.",
    "compile s: schedule spaces (TVM's one-off start-up excluded) + schedules (generation, and for best-of-10"
    " the measurements) + tvm.compile; torch.compile's: its first call.",
]


def main(argv: list[str] | None = None) -> int:
    import sample_models

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="two tiny models, no search (CI smoke test)")
    p.add_argument("--results", help="results name (another machine's run beside the committed one)")
    p.add_argument("--trials", type=int, default=None, help="search trials per task (0: no search)")
    p.add_argument("--models", nargs="*", help="sample names (default: every tiny sample)")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--methods", nargs="*", help="torch_compile, default, heuristic, tlm, search (default: all)")
    p.add_argument("--paper", action="store_true", help="the paper-size models (resumable: see --work)")
    p.add_argument("--report-only", action="store_true", help="--paper: write the results from --work, run nothing")
    p.add_argument("--work", default=WORK, help="--paper's folder of finished rows (a rerun skips them)")
    p.add_argument("--eager", metavar="MODEL", help=argparse.SUPPRESS)  # eager_ms's fresh process
    p.add_argument("--pytorch-row", metavar="MODEL", help=argparse.SUPPRESS)  # --paper's PyTorch process
    p.add_argument("--tvm-rows", metavar="MODEL", help=argparse.SUPPRESS)  # --paper's TVM process
    args = p.parse_args(argv)
    if args.eager:
        print_eager_ms(args.eager, args.repeat)
        return 0
    if args.pytorch_row:
        print(json.dumps(pytorch_row(args.pytorch_row, args.repeat, Path(args.work)), default=str))
        return 0
    if args.tvm_rows:
        tvm_rows(args.tvm_rows, args.methods, args.repeat, Path(args.work), Path(args.work) / "rows.jsonl")
        return 0
    if args.paper and args.report_only:
        return paper_report(Path(args.work), args.models or PAPER, PAPER_METHODS, args)
    if args.paper:
        return paper_run(args)
    trials = args.trials if args.trials is not None else (0 if args.quick else 20)
    names = args.models or (QUICK if args.quick else [n for n, s in sample_models.SAMPLES.items() if s.tiny])

    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    use_tlm = not args.methods or "tlm" in args.methods
    generator = Generator.from_checkpoint(default_checkpoint()) if use_tlm else None
    rows = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows.append(bench(name, trials, builder, target, args.repeat, args.methods, generator))
    methods = ["torch_compile", "default", "heuristic", "tlm"] + (["search"] if trials else [])
    methods = [m for m in methods if not args.methods or m in args.methods]
    cols = ["model", "tasks", "pytorch_ms"] + [f"{m}_ms" for m in methods]
    cols += [f"{m}_vs_pytorch" for m in methods] + [f"{m}_compile_s" for m in methods] + ["ok"]
    notes = [
        "*_ms: end-to-end latency, median of the repeats (Relax VM; PyTorch eager on the same inputs, timed in a"
        " fresh process: TVM's thread pool slows PyTorch in the process that ran it).",
        "torch_compile: PyTorch's torch.compile (Inductor, default mode), checked against eager; its compile_s is"
        " the first call (Inductor generating and building its C++ kernels).",
        "*_vs_pytorch: PyTorch latency / method latency (> 1 is faster than PyTorch).",
        "*_compile_s: schedule spaces and generation (or search, with its measurements) plus tvm.compile.",
        "tlm: the shipped TLM's greedy schedule for every task (top-1, no measurement).",
        "ok: every method's output matched PyTorch eager.",
    ]
    if trials:
        notes.append(f"search: Ansor-style evolutionary search, MetaSchedule implementation, {trials} trials per task.")
    name = args.results or ("models-quick" if args.quick else "models")
    md = write(name, {"trials_per_task": trials, "rows": rows}, cols, rows, "Models: end to end per method", notes)
    print(md.read_text())
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
