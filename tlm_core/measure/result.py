"""The outcome of measuring one program: latency, throughput, numeric check, or why it failed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class MeasureResult:
    ok: bool  # built, ran and matched the reference
    error: str | None = None  # why not, e.g. "worker crashed (signal 11) while running"
    latency: float | None = None  # median over the repeats, seconds
    latencies: list[float] = field(default_factory=list)  # every repeat's mean latency, seconds
    gflops: float | None = None  # task.flops / latency / 1e9
    build_secs: float = 0.0  # deserialise + tvm.compile, seconds
    measure_secs: float = 0.0  # wall time of the check run and the timing (cost of measuring, not latency)
    max_abs_error: float | None = None  # vs the reference output (None when it never ran)
    max_rel_error: float | None = None  # see tlm_core.measure.check for the definition

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def failure(cls, error: str, build_secs: float = 0.0) -> MeasureResult:
        return cls(ok=False, error=error, build_secs=build_secs)
