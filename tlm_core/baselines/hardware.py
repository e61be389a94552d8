"""What the rule-based constructor needs to know about the machine: cores, vector lanes, cache sizes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tvm.target import Target

CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
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
        try:
            from tvm.target import codegen

            bits = int(codegen.llvm_get_vector_width(target))
        except Exception:  # no LLVM information: assume AVX2
            bits = 256
        l1, l2, line = _read_caches()
        return cls(
            cores=max(1, cores), vector_bits=bits if bits > 0 else 256, l1_bytes=l1, l2_bytes=l2, cache_line_bytes=line
        )


def _read_caches() -> tuple[int, int, int]:
    """(L1 data, L2, line size) in bytes from sysfs; defaults where it is missing (containers, non-Linux)."""
    l1, l2, line = DEFAULT_L1, DEFAULT_L2, CACHE_LINE
    try:
        for index in sorted(CACHE_DIR.glob("index*")):
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text().strip())
            if level == 1 and kind in ("Data", "Unified"):
                l1 = size
                line = int((index / "coherency_line_size").read_text())
            elif level == 2:
                l2 = size
    except (OSError, ValueError):
        pass
    return l1, l2, line


def _parse_size(text: str) -> int:
    units = {"K": 1024, "M": 1024 * 1024, "G": 1024**3}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
