"""Measurement through TVM's RPC tracker and servers: many machines measuring for one collection.

Start a tracker and servers with TVM's own tools (apache-tvm 0.27; the tracker needs `tornado`):
    python -m tvm.exec.rpc_tracker --host 0.0.0.0 --port 9190
    python -m tvm.exec.rpc_server --tracker HOST:9190 --key KEY        # on each measuring machine
then `tlm dataset collect --rpc HOST:9190:KEY`. Each program is built here (tvm.compile for the target,
exported as a shared library), uploaded to a server the tracker hands out, checked there against the
reference outputs computed here (the untuned task on the same seeded inputs), and timed with the remote
time_evaluator. Several programs are measured at once, one per server session.

Probed in apache-tvm 0.27 (2026-11-29): tvm.rpc (connect_tracker, request, upload, load_module,
time_evaluator), tvm.exec.rpc_tracker / rpc_server and ms.runner.RPCRunner all work on loopback; the
tracker module imports `tornado`, which apache-tvm does not install. A tracker started with
`python -m tvm.exec.rpc_tracker` prints a harmless AttributeError from Tracker.__del__ when it is stopped.
RPCRunner times an exported library through the same tracker, but runs no numeric check, so this class
makes the same calls itself and checks each program's outputs before its time counts.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import tvm
from tvm.target import Target

from tlm_core.compile import fast_math
from tlm_core.errors import last_line
from tlm_core.measure.check import check_outputs
from tlm_core.measure.inputs import index_bounds, output_indices, random_arguments
from tlm_core.measure.measurer import default_cache_dir
from tlm_core.measure.reference import load_outputs, reference_file, save_outputs
from tlm_core.measure.result import MeasureResult
from tlm_core.partition.task import Task
from tlm_core.target import host_target

fast_math.install()  # built as local measurements and models are


def parse_rpc(spec: str) -> tuple[str, int, str]:
    """ "HOST:PORT:KEY" -> (host, port, key)."""
    parts = spec.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[0] or not parts[2]:
        raise ValueError(f"--rpc wants HOST:PORT:KEY (e.g. 127.0.0.1:9190:cpu), got {spec!r}")
    return parts[0], int(parts[1]), parts[2]


class RPCMeasurer:
    """Measure programs on RPC servers registered with a tracker under `key`; same API as Measurer."""

    def __init__(
        self,
        host: str,
        port: int,
        key: str,
        target: Target | None = None,
        parallel: int = 2,
        timeout_s: float = 60.0,
        number: int = 1,
        repeat: int = 5,
        min_repeat_ms: int = 5,
        input_seed: int = 0,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.host, self.port, self.key = host, port, key
        self.target = target or host_target()
        self.parallel = parallel
        self.timeout_s = timeout_s
        self.timing = {"number": number, "repeat": repeat, "min_repeat_ms": min_repeat_ms}
        self.input_seed = input_seed
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._build_lock = threading.Lock()  # builds run one at a time here; remote runs overlap
        self._tracker().summary()  # fail now, clearly, when the tracker is not there

    def _tracker(self):
        from tvm import rpc

        try:
            return rpc.connect_tracker(self.host, self.port)
        except Exception as err:
            raise RuntimeError(f"no RPC tracker at {self.host}:{self.port}: {err}") from err

    def servers(self) -> int:
        """Servers registered with the tracker under our key (free or busy)."""
        info = self._tracker().summary().get("server_info", [])
        return sum(1 for item in info if item.get("key", "").split(":")[-1] == self.key)

    # -- public, as Measurer ---------------------------------------------------------------------------

    def measure(
        self, task: Task, mods: list, progress: Callable[[int, MeasureResult], None] | None = None
    ) -> list[MeasureResult]:
        results: list[MeasureResult | None] = [None] * len(mods)
        try:
            reference = self._reference(task)
        except Exception as err:
            reference = None
            error = f"reference failed: {err}"
        lock = threading.Lock()

        def one(i: int) -> None:
            if reference is None:
                result = MeasureResult.failure(error)
            else:
                result = self._measure_one(task, mods[i], reference)
            with lock:
                results[i] = result
                if progress is not None:
                    progress(i, result)

        with ThreadPoolExecutor(max_workers=max(1, self.parallel)) as pool:
            list(pool.map(one, range(len(mods))))
        return results  # type: ignore[return-value]

    def close(self) -> None:
        pass

    def __enter__(self) -> RPCMeasurer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one program -----------------------------------------------------------------------------------

    def _measure_one(self, task: Task, mod: tvm.IRModule, reference: list[np.ndarray]) -> MeasureResult:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="tlm-rpc-") as tmp:
            lib = os.path.join(tmp, f"{task.id}.so")
            try:
                with self._build_lock:
                    tvm.compile(mod, target=self.target).mod.export_library(lib)
            except Exception as err:
                return MeasureResult.failure(f"build failed: {last_line(err)}", time.perf_counter() - start)
            build_secs = time.perf_counter() - start
            run_start = time.perf_counter()
            try:
                session = self._tracker().request(self.key, priority=1, session_timeout=int(self.timeout_s))
                session.upload(lib)
                remote = session.load_module(os.path.basename(lib))
                dev = session.cpu(0) if self.target.kind.name == "llvm" else session.cuda(0)
                hosts = random_arguments(task.params, self.input_seed, index_bounds(task.func))
                tensors = [tvm.runtime.tensor(h, dev) for h in hosts]
                remote["main"](*tensors)
                dev.sync()
                outs = [tensors[i].numpy() for i in output_indices(task.func)]
                max_abs, max_rel, error = check_outputs(outs, reference)
                if error:
                    return MeasureResult(
                        ok=False, error=error, build_secs=build_secs, max_abs_error=max_abs, max_rel_error=max_rel
                    )
                timer = remote.time_evaluator("main", dev, **self.timing)
                latencies = [float(t) for t in timer(*tensors).results]
            except Exception as err:
                return MeasureResult.failure(f"remote run failed: {last_line(err)}", build_secs)
        latency = float(np.median(latencies))
        return MeasureResult(
            ok=True,
            latency=latency,
            latencies=latencies,
            gflops=task.flops / latency / 1e9 if latency and task.flops else None,
            build_secs=build_secs,
            measure_secs=time.perf_counter() - run_start,
            max_abs_error=max_abs,
            max_rel_error=max_rel,
        )

    # -- reference, computed here ----------------------------------------------------------------------

    def reference_path(self, task: Task) -> Path:
        """Same file as Measurer.reference_path: the two share their cache."""
        return reference_file(self.cache_dir, task.id, self.input_seed)

    def _reference(self, task: Task) -> list[np.ndarray]:
        path = self.reference_path(task)
        if not path.exists():
            host = self.target if self.target.kind.name == "llvm" else host_target("llvm")
            dev = tvm.cpu(0)
            with self._build_lock:
                module = tvm.compile(task.mod, target=host).mod
            hosts = random_arguments(task.params, self.input_seed, index_bounds(task.func))
            tensors = [tvm.runtime.tensor(h, dev) for h in hosts]
            module["main"](*tensors)
            save_outputs(path, [tensors[i].numpy() for i in output_indices(task.func)])
        return load_outputs(path)
