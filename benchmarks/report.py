"""Writing a benchmark's results: one JSON document and one markdown table in benchmarks/results/."""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def results_dir() -> Path:
    """benchmarks/results, or $TLM_BENCH_RESULTS (tests write there, not into the repository)."""
    return Path(os.environ.get("TLM_BENCH_RESULTS", RESULTS))


def machine() -> dict:
    from tlm_core.target import cpu_count, host_cpu

    return {"cpu": host_cpu(), "cores": cpu_count(), "python": platform.python_version()}


def write(name: str, doc: dict, columns: list[str], rows: list[dict], title: str, notes: list[str]) -> Path:
    """benchmarks/results/<name>.json and .md; returns the markdown path."""
    out = results_dir()
    out.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": name, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(), **doc}
    (out / f"{name}.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    lines = [f"# {title}", "", f"{doc['when']}, {doc['machine']['cpu']}, {doc['machine']['cores']} cores.", ""]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]
    lines += [""] + [f"- {n}" for n in notes]
    md = out / f"{name}.md"
    md.write_text("\n".join(lines) + "\n")
    return md


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def us(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e6


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def geomean(values: list[float]) -> float | None:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else None
