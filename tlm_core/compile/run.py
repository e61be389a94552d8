"""Run a compiled model with the Relax VM: check it against PyTorch and time it (median of repeats)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import tvm
from tvm import relax

from tlm_core.compile.build import Compiled
from tlm_core.frontend import LoadedModel
from tlm_core.measure.check import errors, tolerance
from tlm_core.target import device_for


@dataclass
class RunReport:
    latency: float  # median over `repeat` timed runs, seconds
    latencies: list[float]
    max_abs_error: float | None  # vs PyTorch on the same inputs (None without a reference)
    max_rel_error: float | None
    ok: bool  # matched the reference within the measurement tolerance (True when there is none)
    pytorch_latency: float | None = None  # PyTorch eager on the same inputs, same repeats (median)
    pytorch_latencies: list[float] | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _flatten(out: object) -> list[np.ndarray]:
    if isinstance(out, (list, tuple)) or type(out).__name__ == "Array":
        return [a for o in out for a in _flatten(o)]
    return [out.numpy()] if hasattr(out, "numpy") else []


def compare_outputs(outs: list[np.ndarray], refs: list[np.ndarray]) -> tuple[float, float, bool]:
    """Max abs and rel error of a whole model's outputs against the reference's, and whether they match
    (whole models: 10x a kernel's margin); inf errors on a shape mismatch."""
    max_abs, max_rel, ok = 0.0, 0.0, True
    for out, ref in zip(outs, refs, strict=False):
        if out.shape != ref.shape:
            return float("inf"), float("inf"), False
        a, r = errors(out, ref)
        max_abs, max_rel = max(max_abs, a), max(max_rel, r)
        ok = ok and r <= max(tolerance(str(ref.dtype)), 1e-3) * 10
    return max_abs, max_rel, ok


def run_model(
    model: LoadedModel, compiled: Compiled, repeat: int = 10, seed: int = 0, with_pytorch: bool = True
) -> RunReport:
    """Run once for the check, then `repeat` timed runs (each at least a few ms of work)."""
    if not compiled.relax:
        raise ValueError("this module has no Relax main (a TVMScript operator): measure its task instead")
    inputs = model.random_inputs(seed)
    # PyTorch first: its two OpenMP threads degrade badly while TVM's thread pool still holds the cores.
    torch_times = pytorch_latencies(model, inputs, repeat) if with_pytorch and model.reference else None
    dev = device_for(compiled.target)
    vm = relax.VirtualMachine(compiled.executable, dev)
    args = [tvm.runtime.tensor(a, dev) for a in inputs]
    outs = _flatten(vm["main"](*args))
    max_abs = max_rel = None
    ok = True
    if model.reference is not None:
        refs = model.reference(inputs)
        max_abs, max_rel, ok = compare_outputs(outs, refs)
        ok = ok and len(outs) >= len(refs)
    timer = vm.time_evaluator("main", dev, number=1, repeat=repeat, min_repeat_ms=5)
    latencies = [float(t) for t in timer(*args).results]
    torch_latency = statistics.median(torch_times) if torch_times else None
    return RunReport(statistics.median(latencies), latencies, max_abs, max_rel, ok, torch_latency, torch_times)


def pytorch_latencies(
    model: LoadedModel,
    inputs: list[np.ndarray],
    repeat: int = 10,
    min_repeat_ms: float = 5.0,
    run: Callable[[list[np.ndarray]], object] | None = None,
) -> list[float]:
    """PyTorch eager (the reference, or `run`) on the same inputs, timed as TVM's time_evaluator times the
    compiled model: after two warm-up runs, `repeat` means over enough runs to last at least min_repeat_ms each."""
    run = run or model.reference
    assert run is not None
    run(inputs)  # the first run pays PyTorch's one-off set-up
    start = time.perf_counter()
    run(inputs)
    number = max(1, int(min_repeat_ms / 1e3 / max(time.perf_counter() - start, 1e-6)))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            run(inputs)
        times.append((time.perf_counter() - start) / number)
    return times


@dataclass
class TorchCompileReport:
    latency: float  # median over `repeat` timed runs, seconds
    latencies: list[float]
    compile_s: float  # torch.compile's first call (Inductor generates and builds its C++ kernels)
    max_abs_error: float  # vs PyTorch eager on the same inputs
    ok: bool


def torch_compile_run(model: LoadedModel, repeat: int = 10, seed: int = 0) -> TorchCompileReport:
    """torch.compile (Inductor, default mode) of the model's PyTorch module: checked against eager, timed like
    eager. ValueError for a model without a PyTorch module (ONNX, TVMScript)."""
    import torch

    from tlm_core.frontend.torch_program import numpy_call

    if model.torch_module is None or model.reference is None:
        raise ValueError(f"{model.name} has no PyTorch module to torch.compile (source: {model.source})")
    run = numpy_call(torch.compile(model.torch_module))

    inputs = model.random_inputs(seed)
    start = time.perf_counter()
    outs = run(inputs)
    compile_s = time.perf_counter() - start
    refs = model.reference(inputs)
    max_abs, _, ok = compare_outputs(outs, refs)
    ok = ok and len(outs) == len(refs)
    latencies = pytorch_latencies(model, inputs, repeat, run=run)
    return TorchCompileReport(statistics.median(latencies), latencies, compile_s, max_abs, ok)
