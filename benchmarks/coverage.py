"""Users' own models: every architecture of the coverage corpus in every export format, end to end.

For each (architecture, format) of sample_models/user_models.py, in its own subprocess (a crash or a hang
ends that case, not the run): export, PyTorch eager latency (before TVM runs anything in that process), load
(tlm_core.frontend.load_model; dynamic exports with input_shapes at batch 1), partition (tasks), compile the
whole model with a method (TVM default by default), run it on the export's inputs, check it against the
loaded model's reference (PyTorch for .pt2, onnxruntime for ONNX) and time it (median of repeats). A stage that
fails writes its error's first line and the case stops there; the run goes on.

    .venv/bin/python benchmarks/coverage.py                    # full size: bert-base, resnet-50, ... (long)
    .venv/bin/python benchmarks/coverage.py --size small       # the tests' tiny configs (~10-20 min)
    .venv/bin/python benchmarks/coverage.py --method heuristic --archs bert resnet --formats pt2 onnx

Writes benchmarks/results/coverage.json and .md (coverage-small, coverage-heuristic, ... for other sizes and
methods; NAME.json and .md with --results NAME).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import ms, results_dir  # noqa: E402

STAGES = ("export", "eager", "load", "partition", "compile", "run")
METHODS = ("default", "heuristic", "tlm")
TIMEOUT_S = {"small": 600, "full": 3600}  # per case


# ---------------------------------------------------------------------------------------------------------
# Shared with tests/test_coverage.py: how a case is loaded, run and checked.


def load_export(path: Path, fmt: str, inputs: dict):
    """load_model on an export; a dynamic export is opened at the shapes of the inputs it is checked with."""
    from sample_models.user_models import DYNAMIC_FORMATS
    from tlm_core.frontend import load_model

    if fmt in DYNAMIC_FORMATS:
        return load_model(path, input_shapes={n: tuple(a.shape) for n, a in inputs.items()})
    return load_model(path)


def run_compiled(model, compiled, inputs: dict, repeat: int = 0) -> dict:
    """Run the compiled model on `inputs` (name -> array, in the export's order), check it against the model's
    reference (Relax VM vs PyTorch/onnxruntime) and, with repeat > 0, time it (median of repeats).

    {"max_abs_error", "max_rel_error", "ok", "latencies_s", "latency_s"}; ok is tlm_core's whole-model check
    (compare_outputs: max relative error <= 1e-2 for float32, shapes equal, as many outputs as the reference)."""
    import tvm
    from tvm import relax

    from tlm_core.compile.run import _flatten, compare_outputs
    from tlm_core.target import device_for

    names = [s.name for s in model.inputs]
    if len(names) != len(inputs):
        raise ValueError(f"the loaded model takes {len(names)} inputs {names}, the export {len(inputs)} {list(inputs)}")
    arrays = list(inputs.values())
    for spec, a in zip(model.inputs, arrays, strict=True):
        if tuple(spec.shape) != a.shape or spec.dtype != str(a.dtype):
            raise ValueError(
                f"input {spec.name} is {spec.dtype}{list(spec.shape)}, the export's {a.dtype}{list(a.shape)}"
            )
    dev = device_for(compiled.target)
    vm = relax.VirtualMachine(compiled.executable, dev)
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    outs = _flatten(vm["main"](*args))
    if model.reference is None:
        raise ValueError("the loaded model has no reference to check against")
    refs = model.reference(arrays)
    max_abs, max_rel, ok = compare_outputs(outs, refs)
    result = {"max_abs_error": max_abs, "max_rel_error": max_rel, "ok": bool(ok and len(outs) >= len(refs))}
    if repeat > 0:
        timer = vm.time_evaluator("main", dev, number=1, repeat=repeat, min_repeat_ms=5)
        result["latencies_s"] = [float(t) for t in timer(*args).results]
        result["latency_s"] = statistics.median(result["latencies_s"])
    return result


# ---------------------------------------------------------------------------------------------------------
# One case (in a subprocess): writes its row to `out` after every stage, so a crash leaves what was done.


def run_case(arch: str, fmt: str, size: str, method: str, repeat: int, out: Path) -> None:
    from tlm_core.errors import summary

    row: dict = {"arch": arch, "format": fmt, "size": size, "method": method, "stage": None, "ok": False}

    def save() -> None:
        out.write_text(json.dumps(row, default=str))

    def stage(name: str) -> float:
        row["stage"] = name  # the stage in progress (where a crash or a timeout happened)
        save()
        return time.perf_counter()

    try:
        with tempfile.TemporaryDirectory(prefix="tlm-coverage-") as folder:
            _case_stages(arch, fmt, size, method, repeat, Path(folder), row, stage, save)
        row["stage"] = None
    except Exception as err:
        row["error"] = summary(err)
    save()


def _case_stages(arch, fmt, size, method, repeat, folder, row, stage, save) -> None:
    from sample_models import user_models as U
    from tlm_core.compile import compile_model, pytorch_latencies, schedules_for
    from tlm_core.frontend.torch_program import numpy_call
    from tlm_core.partition import partition
    from tlm_core.target import host_target

    t = stage("export")
    path, inputs = U.export(arch, size, fmt, folder)
    row["export_s"], row["file_mb"] = time.perf_counter() - t, path.stat().st_size / 2**20
    row["input_shapes"] = {n: list(a.shape) for n, a in inputs.items()}

    t = stage("eager")  # before TVM's thread pool exists in this process: it slows PyTorch's threads
    module, _ = U.build(arch, size)
    eager = pytorch_latencies(None, list(inputs.values()), repeat, run=numpy_call(module))
    row["eager_ms"] = ms(statistics.median(eager))
    del module

    t = stage("load")
    model = load_export(path, fmt, inputs)
    row["load_s"] = time.perf_counter() - t

    t = stage("partition")
    target = host_target()
    part = partition(model, target)
    row["partition_s"], row["tasks"] = time.perf_counter() - t, len(part.tasks)
    row["calls"] = sum(t.weight for t in part.tasks)

    t = stage("compile")
    space_of, generator = None, None
    if method in ("heuristic", "tlm"):
        from tlm_core.space import SpaceBuilder

        builder = SpaceBuilder.for_target(target)
        builder.build(part.tasks[0])  # TVM's one-off start-up (~20 s per process), charged to no stage
        row["tvm_startup_s"] = time.perf_counter() - t
        t = time.perf_counter()
        spaces = {task.id: builder.build(task) for task in part.tasks}
        row["spaces_s"] = time.perf_counter() - t
        space_of = lambda task: spaces[task.id]  # noqa: E731
    if method == "tlm":
        from tlm_core.generator import Generator
        from tlm_core.model import default_checkpoint

        generator = Generator.from_checkpoint(default_checkpoint())
    t = time.perf_counter()
    schedules = schedules_for(method, part, target, space_of, generator=generator)
    row["schedules_s"] = time.perf_counter() - t
    compiled = compile_model(part, schedules, target)
    row["build_s"], row["scheduled"] = compiled.compile_secs, compiled.scheduled
    row["compile_s"] = row.get("spaces_s", 0.0) + row["schedules_s"] + row["build_s"]
    save()

    stage("run")
    result = run_compiled(model, compiled, inputs, repeat)
    row.update(max_abs_error=result["max_abs_error"], max_rel_error=result["max_rel_error"], ok=result["ok"])
    row["latency_ms"] = ms(result["latency_s"])
    row["speedup_vs_eager"] = row["eager_ms"] / row["latency_ms"]
    if not result["ok"]:
        row["error"] = f"output mismatch: max abs error {row['max_abs_error']:.3g}, max rel {row['max_rel_error']:.3g}"


# ---------------------------------------------------------------------------------------------------------
# The run: every case in a subprocess with a timeout.


def case_in_subprocess(arch: str, fmt: str, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="tlm-coverage-row-") as tmp:
        out = Path(tmp) / "row.json"
        cmd = [sys.executable, __file__, "--case", arch, fmt, "--size", args.size, "--method", args.method,
               "--repeat", str(args.repeat), "--out", str(out)]  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)  # fmt: skip
        try:
            _, stderr = proc.communicate(timeout=args.timeout)
            why = None if proc.returncode == 0 else _exit_reason(proc.returncode, stderr)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the case's process group: its workers too
            proc.communicate()
            why = f"timed out after {args.timeout:.0f} s"
        row = json.loads(out.read_text()) if out.exists() else {"arch": arch, "format": fmt, "stage": "start"}
    row["case_s"] = time.perf_counter() - start
    if why is not None:  # killed or crashed: the stage it was in failed
        row["ok"] = False
        row["error"] = f"{why} (in {row.get('stage')})"
    if row.get("error"):
        row["failed_stage"] = row.get("stage") or "run"
    return row


def _exit_reason(code: int, stderr: str) -> str:
    from tlm_core.errors import last_line

    what = f"killed by signal {-code}" if code < 0 else f"exited with {code}"
    tail = last_line(stderr) if stderr.strip() else ""
    return f"crashed ({what}{': ' + tail if tail else ''})"


def lscpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown CPU"
    names = [line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")]
    return names[0] if names else "unknown CPU"


def cell(row: dict, notes: list[str]) -> str:
    """One matrix cell: ok with the speedup, a mismatch, or the failed stage with a footnote number."""
    if row.get("ok"):
        return f"ok, {row['speedup_vs_eager']:.2f}×" if row.get("speedup_vs_eager") else "ok"
    notes.append(f"{row['arch']} {row['format']}: {row.get('failed_stage')}: {row.get('error')}")
    return f"{row.get('failed_stage')} fails [{len(notes)}]"


def markdown(doc: dict) -> str:
    from sample_models.user_models import ARCHS

    rows, formats = doc["rows"], doc["formats"]
    by = {(r["arch"], r["format"]): r for r in rows}
    passed = sum(bool(r.get("ok")) for r in rows)
    load = doc.get("load_average") or [float("nan")] * 2
    lines = [f"# Coverage: users' models ({doc['size']} size, method {doc['method']})", "",
             f"{doc['when']}, {doc['machine']}, {doc['cores']} cores (load average {load[0]:.1f} at the start,"
             f" {load[1]:.1f} at the end). Command: `{doc['command']}`", "",
             f"{passed} of {len(rows)} cases load, partition, compile and match their reference.", ""]  # fmt: skip
    if max(load) >= 1.0:
        lines += [f"The machine was busy (load average {max(load):.1f} on {doc['cores']} cores): the latencies are"
                  " distorted, PyTorch eager's most (on a load of ~5, the small ResNet's eager run took 1.5 to 400 ms"
                  " from one batch of repeats to the next); compare them on an idle machine.", ""]  # fmt: skip
    notes: list[str] = []
    lines += ["| architecture | " + " | ".join(formats) + " |", "|---|" + "---|" * len(formats)]
    for arch in doc["archs"]:
        cells = [cell(by[(arch, f)], notes) if (arch, f) in by else "-" for f in formats]
        lines.append(
            f"| {arch} ({ARCHS[arch].title if doc['size'] == 'full' else 'small'}) | " + " | ".join(cells) + " |"
        )
    lines += [""] + [f"{i}. {n}" for i, n in enumerate(notes, 1)]
    cols = ["arch", "format", "tasks", "export_s", "load_s", "partition_s", "compile_s", "max_abs_error", "ok",
            "latency_ms", "eager_ms", "speedup_vs_eager", "case_s"]  # fmt: skip
    lines += ["", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_cell(r.get(c)) for c in cols) + " |" for r in rows]
    lines += ["", *[f"- {n}" for n in NOTES]]
    return "\n".join(lines) + "\n"


NOTES = [
    "ok, N×: loaded, partitioned, compiled and matched the reference (PyTorch eager for .pt2, onnxruntime for"
    " ONNX) within tlm_core's whole-model tolerance (max relative error <= 1e-2 for float32); N = PyTorch"
    " eager latency / compiled latency (> 1: faster than PyTorch).",
    "latency_ms: the compiled model (Relax VM, median of the repeats); eager_ms: the same nn.Module in PyTorch"
    " eager on the same inputs, timed first in the same case's process (before TVM's thread pool starts).",
    "compile_s: schedule spaces (heuristic, tlm; TVM's one-off start-up excluded) + schedules + tvm.compile.",
    "Inputs: batch 1, sequence 128 (small: 16) with the last quarter padded (attention_mask 0), images 224x224"
    " (small: 32x32). Dynamic exports are opened with those shapes (load_model(..., input_shapes=...)).",
    "Each case runs in its own subprocess with a timeout; a failing stage gives its error's first line.",
]


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def main(argv: list[str] | None = None) -> int:
    from sample_models.user_models import ARCHS, FORMATS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=("small", "full"), default="full")
    p.add_argument("--method", choices=METHODS, default="default", help="how every task is scheduled")
    p.add_argument("--archs", nargs="*", choices=list(ARCHS), help="default: all")
    p.add_argument("--formats", nargs="*", choices=list(FORMATS), help="default: all")
    p.add_argument("--repeat", type=int, default=10, help="timed runs (median) of TVM and of PyTorch eager")
    p.add_argument("--timeout", type=float, help="seconds per case (default: 600 small, 3600 full)")
    p.add_argument("--results", help="results name (default: coverage[-small][-METHOD])")
    p.add_argument("--case", nargs=2, metavar=("ARCH", "FORMAT"), help=argparse.SUPPRESS)  # one case's subprocess
    p.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.case:
        run_case(*args.case, args.size, args.method, args.repeat, args.out)
        return 0
    args.timeout = args.timeout or TIMEOUT_S[args.size]
    archs, formats = args.archs or list(ARCHS), args.formats or list(FORMATS)
    load_before = os.getloadavg()[0]  # other work on the machine distorts the latencies (PyTorch's most)
    rows = []
    for arch in archs:
        for fmt in formats:
            print(f"{arch} {fmt} ...", file=sys.stderr, flush=True)
            rows.append(case_in_subprocess(arch, fmt, args))
            r = rows[-1]
            status = "ok" if r.get("ok") else f"FAIL in {r.get('failed_stage')}: {r.get('error')}"
            print(f"  {status} ({r['case_s']:.0f} s)", file=sys.stderr, flush=True)
    from tlm_core.target import cpu_count

    name = args.results or "-".join(["coverage"] + ["small"] * (args.size == "small")
                                    + [args.method] * (args.method != "default"))  # fmt: skip
    command = shlex.join([".venv/bin/python", "benchmarks/coverage.py", *(sys.argv[1:] if argv is None else argv)])
    doc = {"benchmark": name, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": lscpu_model(),
           "cores": cpu_count(), "load_average": [load_before, os.getloadavg()[0]], "command": command,
           "size": args.size, "method": args.method, "repeat": args.repeat, "timeout_s": args.timeout,
           "archs": archs, "formats": formats, "notes": NOTES, "rows": rows}  # fmt: skip
    out = results_dir()
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    md = out / f"{name}.md"
    md.write_text(markdown(doc))
    print(md.read_text())
    return 0 if all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
