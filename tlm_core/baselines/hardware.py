"""What the rule-based constructor needs to know about the machine: cores, vector lanes, cache sizes."""

from __future__ import annotations

from dataclasses import dataclass

from tvm.target import Target

from ..target import caches_kib, vector_bits

DEFAULT_L1 = 32 * 1024  # bytes, per core (data)
DEFAULT_L2 = 1024 * 1024  # bytes, per core
CACHE_LINE = 64  # bytes


@dataclass(frozen=True)
class Hardware:
    cores: int
    vector_bits: int  # SIMD register width, e.g. 512 with AVX-512
    l1_bytes: int
    l2_bytes: int
    cache_line_bytes: int = CACHE_LINE
    fma_units: int = 2  # vector FMA pipes per core (Zen 4/5, Skylake-X); only scales the model's estimates
    ghz: float = 3.0

    def lanes(self, dtype_bytes: int = 4) -> int:
        """Elements of one vector register (16 fp32 lanes with AVX-512)."""
        return max(1, self.vector_bits // (8 * dtype_bytes))

    def line_elems(self, dtype_bytes: int = 4) -> int:
        return max(1, self.cache_line_bytes // dtype_bytes)

    @property
    def peak_flops(self) -> float:
        """fp32 FLOP/s of all cores at full vector FMA throughput (2 FLOP per FMA lane)."""
        return self.cores * self.fma_units * self.lanes() * 2 * self.ghz * 1e9

    @classmethod
    def from_target(cls, target: Target) -> Hardware:
        cores = int(target.attrs.get("num-cores", 1)) if "num-cores" in target.attrs else 1
        if target.kind.name != "llvm":  # GPU targets: the host's numbers still make the rules run
            target = target.host or target
        bits = vector_bits(target)
        l1, l2, _ = caches_kib(target)  # the target's CPU, which need not be this host's
        return cls(
            cores=max(1, cores),
            vector_bits=bits or 256,  # unknown: assume AVX2
            l1_bytes=l1 * 1024 or DEFAULT_L1,
            l2_bytes=l2 * 1024 or DEFAULT_L2,
        )
