"""The measurement worker: a long-lived process that imports TVM once, then builds and runs many programs.

Started by tlm_core.measure.pool with one end of a socket pair; it speaks in pickled tuples:
    parent -> worker: ("job", dict) | ("go",) | ("quit",)
    worker -> parent: ("ready", pid, import_secs) | ("built", build_secs) | ("result", dict)
A job is built, then (when the job says `gate`) the worker waits for "go" before running, so several
workers can build in parallel while only one runs at a time. A kernel that crashes or hangs takes this
process with it; the parent reports that and starts another. Never imports tvm.s_tir.tensor_intrin.
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection

import numpy as np

from tlm_core.errors import last_line

CACHED_TASKS = 4  # tasks whose arguments and references stay in memory (least recently used go first)


def watch_parent(parent_pid: int) -> None:
    """Exit when the parent dies, even while a kernel or TVM hangs (TVM releases the GIL during calls); run it in
    a daemon thread of each helper process (this worker, compile.database_check's child)."""
    while os.getppid() == parent_pid:
        time.sleep(1.0)
    os._exit(1)


class _LRU(OrderedDict):
    def put(self, key, value) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > CACHED_TASKS:
            self.popitem(last=False)


class Worker:
    def __init__(self, conn: Connection) -> None:
        import tvm  # imported here so the parent's "ready" wait covers it

        from tlm_core.compile.fast_math import install

        install()  # kernels measured here are built as the model's are (tlm_core.compile.build)
        self.tvm = tvm
        self.conn = conn
        self.arguments = _LRU()  # (task_id, seed, device) -> (host arrays, device tensors)
        self.references = _LRU()  # (task_id, seed) -> output arrays

    def handle(self, job: dict) -> dict:
        from tlm_core.measure.check import check_outputs
        from tlm_core.target import device_for

        tvm = self.tvm
        start = time.perf_counter()
        target = tvm.target.Target(job["target"])
        try:
            executable = tvm.compile(tvm.ir.load_json(job["mod"]), target=target)
            module = executable.mod
        except Exception as err:  # an invalid program is a result, not a worker failure
            return {"ok": False, "error": f"build failed: {last_line(err)}", "build_secs": _since(start)}
        build_secs = _since(start)
        self.conn.send(("built", build_secs))
        if job["gate"] and self.conn.recv()[0] != "go":
            raise RuntimeError("expected 'go'")

        run_start = time.perf_counter()
        dev = device_for(target)
        hosts, tensors = self._arguments(job, dev)
        for tensor, host in zip(tensors, hosts, strict=True):
            tensor.copyfrom(host)  # every run starts from the same contents, outputs included
        first_start = time.perf_counter()
        module["main"](*tensors)
        dev.sync()
        first_s = _since(first_start)
        outs = [tensors[i].numpy() for i in job["outputs"]]
        if job["kind"] == "reference":
            self._save_reference(job, outs)
            return {"ok": True, "build_secs": build_secs}

        max_abs, max_rel, error = check_outputs(outs, self._reference(job))
        result = {"build_secs": build_secs, "max_abs_error": max_abs, "max_rel_error": max_rel}
        if error:
            return {**result, "ok": False, "error": error, "measure_secs": _since(run_start)}
        flush = "cache_flush_cpu_non_first_arg" if job["flush_cache"] and dev.dlpack_device_type() == 1 else ""
        timer = module.time_evaluator(
            "main", dev, number=job["number"], repeat=job["repeat"], min_repeat_ms=job["min_repeat_ms"], f_preproc=flush
        )
        latencies = [float(t) for t in timer(*tensors).results]
        if disturbed(first_s, latencies):  # once: a second stall is the machine's state, not a blip
            latencies = [float(t) for t in timer(*tensors).results]
        return {**result, "ok": True, "latencies": latencies, "measure_secs": _since(run_start)}

    def _arguments(self, job: dict, dev) -> tuple[list[np.ndarray], list]:
        from tlm_core.measure.inputs import random_arguments

        key = (job["task_id"], job["seed"], str(dev))
        if key not in self.arguments:
            hosts = random_arguments([tuple(p) for p in job["params"]], job["seed"], job["index_bounds"])
            self.arguments.put(key, (hosts, [self.tvm.runtime.tensor(h, dev) for h in hosts]))
        return self.arguments[key]

    def _reference(self, job: dict) -> list[np.ndarray]:
        key = (job["task_id"], job["seed"])
        if key not in self.references:
            from tlm_core.measure.reference import load_outputs

            self.references.put(key, load_outputs(job["ref_path"]))
        return self.references[key]

    def _save_reference(self, job: dict, outs: list[np.ndarray]) -> None:
        from tlm_core.measure.reference import save_outputs

        save_outputs(job["ref_path"], outs)
        self.references.put((job["task_id"], job["seed"]), outs)


def disturbed(first_s: float, latencies: list[float]) -> bool:
    """Whether a timing was stalled by something else on the machine: its median is far above the first,
    cold call's time, which warm runs never exceed (CI once timed a 15 us kernel at 15 ms: a stall in the
    calibrating call keeps `number` at 1, and every repeat is then a single call)."""
    ordered = sorted(latencies)
    return bool(ordered) and ordered[len(ordered) // 2] > 4 * first_s + 1e-4


def _since(start: float) -> float:
    return time.perf_counter() - start


def main(fd: int, parent_pid: int) -> None:
    faulthandler.enable()  # a segfault leaves a Python stack in the worker's log
    threading.Thread(target=watch_parent, args=(parent_pid,), daemon=True).start()
    conn = Connection(fd)
    start = time.perf_counter()
    worker = Worker(conn)
    conn.send(("ready", os.getpid(), _since(start)))
    while True:
        try:
            message = conn.recv()
        except EOFError:  # the parent closed our socket
            return
        if message[0] == "quit":
            return
        try:
            result = worker.handle(message[1])
        except Exception as err:
            result = {"ok": False, "error": f"{type(err).__name__}: {last_line(err)}"}
        conn.send(("result", result))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
