"""The local compilation target: LLVM for this host's CPU, or CUDA when a GPU is present."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import tvm
from tvm.target import Target, codegen

# (L1 data, L2, L3) in KiB of CPUs this project has measured on, for targets of a CPU other than this host's:
# a prompt or a heuristic plan for data measured on that CPU must see its caches, not the host's (read from
# the CPU's sysfs when it was the host: /sys/devices/system/cpu/cpu0/cache).
KNOWN_CACHES_KIB = {
    "znver5": (48, 1024, 32768),  # the Zen 5 machine of data/cpu-znver5
    "emeraldrapids": (48, 2048, 307200),  # the Xeon of data/cpu-emeraldrapids, as its sysfs reports them
    "znver4": (32, 1024, 32768),  # the Zen 4 host of teacher corpus v15 (2026-12-03)
    # AVX2 only: the 256-bit CPU of teacher corpus v18, never measured on; an AWS c4's Xeon E5-2666 v3 as Intel
    # documents it (32 KiB L1d, 256 KiB L2 per core, 25 MiB L3)
    "haswell": (32, 256, 25600),
    # AVX2 only: the 2-core AMD EPYC Zen 3 host of 2026-12-06 (test split and tlm adapt runs), as lscpu reported
    "znver3": (32, 512, 32768),
}
CACHES_PREFIX = "caches-"  # a target's "model" attribute "caches-48-2048-266240": its L1d, L2, L3 in KiB


def cpu_count() -> int:
    """Cores this process may use (respects affinity masks, unlike os.cpu_count)."""
    return len(os.sched_getaffinity(0))


@functools.cache
def host_cpu() -> str:
    """LLVM's name for this CPU (e.g. znver4), as `-mcpu` expects it."""
    name = codegen.llvm_get_system_cpu()
    return name if codegen.llvm_is_valid_cpu(name, codegen.llvm_get_system_triple()) else "generic"


@functools.cache
def host_caches_kib() -> tuple[int, int, int]:
    """(L1 data, L2, L3) in KiB from Linux sysfs; 0 where unknown (other systems, containers hiding it)."""
    sizes = {"1": 0, "2": 0, "3": 0}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction" or not size.endswith("K"):
            continue
        sizes[level] = int(size[:-1])
    return sizes["1"], sizes["2"], sizes["3"]


def caches_kib(target: Target) -> tuple[int, int, int]:
    """(L1 data, L2, L3) in KiB of the machine a target describes (a GPU target: its host's): the caches it
    carries (host_target writes them into LLVM's free-form "model" attribute, so records measured here keep
    them), else KNOWN_CACHES_KIB's for its CPU (the committed data's records predate that attribute), else this
    host's when it is this host's CPU; 0 where unknown. Two machines with one CPU name can differ (a Xeon
    with 300 MiB of L3 and one with 260 MiB are both "emeraldrapids")."""
    if target.kind.name != "llvm" and target.host is not None:
        target = target.host
    attrs = dict(target.attrs)
    model, mcpu = str(attrs.get("model", "")), str(attrs.get("mcpu", "generic"))
    if model.startswith(CACHES_PREFIX):
        sizes = model.removeprefix(CACHES_PREFIX).split("-")
        if len(sizes) != 3 or not all(x.isdigit() for x in sizes):
            raise ValueError(f"target attribute model={model!r} is not {CACHES_PREFIX}L1d-L2-L3 (KiB): "
                             "a record's target was edited or corrupted")  # fmt: skip
        return int(sizes[0]), int(sizes[1]), int(sizes[2])
    if mcpu in KNOWN_CACHES_KIB:
        return KNOWN_CACHES_KIB[mcpu]
    return host_caches_kib() if mcpu == host_cpu() else (0, 0, 0)


def vector_bits(target: Target) -> int:
    """SIMD register width in bits of a target's CPU (a GPU target: its host's), from the instruction sets LLVM
    lists for its -mcpu: 512 with AVX-512F, 256 with AVX, 128 with SSE2; 0 when unknown. Not LLVM's
    llvm_get_vector_width, which in TVM 0.27 answers 512 for every x86 CPU (haswell, znver3, even generic)."""
    if target.kind.name != "llvm" and target.host is not None:
        target = target.host
    try:
        features = {str(k) for k in codegen.llvm_get_cpu_features(target)}
    except Exception:  # no LLVM, or not a CPU target
        return 0
    for feature, bits in (("avx512f", 512), ("avx", 256), ("sse2", 128), ("neon", 128)):
        if feature in features:
            return bits
    return 0


def kib_text(kib: int) -> str:
    """A cache size for people: 48 -> "48 KiB", 266240 -> "260 MiB"."""
    return f"{kib // 1024} MiB" if kib and kib % 1024 == 0 else f"{kib} KiB"


def _host_llvm() -> dict:
    """This host's CPU as an LLVM target dict, its caches included when sysfs has them."""
    out = {"kind": "llvm", "mcpu": host_cpu(), "num-cores": cpu_count()}
    if any(host_caches_kib()):
        out["model"] = CACHES_PREFIX + "-".join(str(x) for x in host_caches_kib())
    return out


def cuda_available() -> bool:
    return bool(tvm.cuda(0).exist)


def host_target(
    kind: str = "llvm", cpu: str | None = None, cores: int | None = None, runs_here: bool = False
) -> Target:
    """The target to compile and measure on.

    kind: "llvm" (this CPU), "cuda" (the local GPU, fails clearly when there is none) or "auto".
    cpu: an LLVM CPU to write programs for instead of this host's (e.g. a teacher corpus for the machine the
    data was measured on; such programs are not run here); that machine's caches: KNOWN_CACHES_KIB's, else
    (the host's CPU, not a known one) this host's.
    cores: num-cores (default: the cores this process may use); fewer than the host's describe a smaller
    machine (measure it with TVM_NUM_THREADS=cores, e.g. under `taskset`).
    runs_here: `cpu` is one this host can execute (an older instruction set of it, e.g. haswell on an AVX-512
    Xeon): its programs run and are measured here, so its caches are this host's (tlm adapt --cpu).
    MetaSchedule needs `num-cores`; TVM 0.27 rejects target strings, so targets are dicts.
    """
    if cores is not None and cores < 1:
        raise ValueError(f"cores must be at least 1, not {cores}")
    if cpu is not None and (cpu != host_cpu() or cpu in KNOWN_CACHES_KIB):
        if kind != "llvm":
            raise ValueError(f"--cpu {cpu} needs target kind llvm, not {kind}")
        if runs_here:
            if not codegen.llvm_is_valid_cpu(cpu, codegen.llvm_get_system_triple()):
                raise ValueError(f"LLVM does not know the CPU {cpu!r} (e.g. haswell, skylake-avx512, znver3)")
            return Target({**_host_llvm(), "mcpu": cpu, "num-cores": cores or cpu_count()})
        if cpu not in KNOWN_CACHES_KIB:
            known = ", ".join(sorted(KNOWN_CACHES_KIB))
            raise ValueError(f"CPU {cpu!r} is not this host's ({host_cpu()}) and its caches are unknown "
                             f"(known: {known}; tlm_core.target.KNOWN_CACHES_KIB)")  # fmt: skip
        return Target({"kind": "llvm", "mcpu": cpu, "num-cores": cores or cpu_count()})
    if kind == "auto":
        kind = "cuda" if cuda_available() else "llvm"
    if kind == "llvm":
        return Target({**_host_llvm(), **({"num-cores": cores} if cores else {})})
    if kind == "cuda":
        if not cuda_available():
            raise RuntimeError("target 'cuda' was asked for, but no CUDA GPU is visible to TVM")
        dev = tvm.cuda(0)
        arch = "sm_" + dev.compute_version.replace(".", "")
        host = _host_llvm()
        return Target(
            {
                "kind": "cuda",
                "arch": arch,
                "max_threads_per_block": dev.max_threads_per_block,
                "max_shared_memory_per_block": dev.max_shared_memory_per_block,
                "thread_warp_size": dev.warp_size,
                "host": host,
            }
        )
    raise ValueError(f"unknown target kind {kind!r}: use llvm, cuda or auto")


def target_to_dict(target: Target) -> dict:
    """A JSON-friendly description of a target (for records, prompts and reports)."""
    return json.loads(str(target))


def device_for(target: Target) -> tvm.runtime.Device:
    return tvm.cuda(0) if target.kind.name == "cuda" else tvm.cpu(0)
