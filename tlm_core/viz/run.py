"""Figures, tables and explanations of whole-model runs (a `tlm compile --json` document per run)."""

from __future__ import annotations

import plotly.graph_objects as go

PYTORCH = "PyTorch eager"


def latency_figure(runs: list[dict]) -> go.Figure:
    """Every timed repeat of each run (box + points, milliseconds), with PyTorch eager on the same inputs
    once per model. runs: `tlm compile --json` documents, oldest first."""
    fig = go.Figure()
    seen_pytorch = set()
    for i, doc in enumerate(runs):
        series = [(f"#{i + 1} {doc['label']}", doc["latencies_s"], "#1f77b4" if doc["ok"] else "#d62728")]
        if doc.get("pytorch_latencies_s") and doc["model"] not in seen_pytorch:
            seen_pytorch.add(doc["model"])
            series.insert(0, (f"{PYTORCH} ({doc['model']})", doc["pytorch_latencies_s"], "#ff7f0e"))
        for name, latencies, color in series:
            fig.add_trace(
                go.Box(
                    x=[name] * len(latencies),
                    y=[t * 1e3 for t in latencies],
                    name=name,
                    boxpoints="all",
                    jitter=0.4,
                    pointpos=0,
                    marker_color=color,
                    hovertemplate="%{y:.3f} ms<extra>%{x}</extra>",
                )
            )
    fig.update_layout(
        showlegend=False,
        yaxis_title="end-to-end latency per run (ms, log scale)",
        yaxis_type="log",  # one slow repeat on a busy machine must not flatten the others
        margin=dict(l=10, r=10, t=30, b=10),
        height=380,
        title="Latency of every timed repeat (lower is better)",
    )
    return fig


def history_rows(runs: list[dict]) -> list[dict]:
    """One row per run of the session, to compare methods."""
    rows = []
    for i, doc in enumerate(runs):
        rows.append(
            {
                "run": i + 1,
                "model": doc["model"],
                "method": doc["label"],
                "latency (ms)": doc["latency_s"] * 1e3,
                "PyTorch (ms)": doc["pytorch_latency_s"] * 1e3 if doc["pytorch_latency_s"] else None,
                "vs PyTorch": doc["speedup_vs_pytorch"],
                "compile (s)": doc["compile_s"],
                "max abs error": doc["max_abs_error"],
                "check": "passed" if doc["ok"] else "FAILED",
            }
        )
    return rows


def task_rows(doc: dict) -> list[dict]:
    """One row per task of a run: how its schedule was made and its kernel measured alone."""
    rows = []
    for t in doc["tasks"]:
        kernel = t.get("kernel_latency_s")
        rows.append(
            {
                "task": t["id"],
                "subgraph": t["name"],
                "calls": t["weight"],
                "method": t["method"],
                "kernel latency (µs)": kernel * 1e6 if kernel is not None else None,
                "kernel check": _kernel_check(t),
                "compile (s)": t["compile_s"],
                "trials": t["trials"],
            }
        )
    return rows


def _kernel_check(t: dict) -> str | None:
    if t.get("dropped"):
        return f"left out, runs untuned: {t['dropped']}"
    if "kernel_ok" not in t:
        return None
    return "passed" if t["kernel_ok"] else f"failed: {t['kernel_error']}"


def run_text(doc: dict) -> str:
    """What compiling the whole model means, and why its output is checked, told about this run."""
    n, scheduled = len(doc["tasks"]), doc["scheduled_tasks"]
    heaviest = max(doc["tasks"], key=lambda t: (t.get("kernel_latency_s") or 0) * t["weight"])
    text = (
        f"**End-to-end compilation** turns the whole of {doc['model']} into one executable: each of its {n} "
        f"distinct fused subgraphs (tasks) gets a schedule from *{doc['label']}*"
        + (f" ({scheduled} of {n} got one; the rest keep TVM's naive loops)" if scheduled < n else "")
        + ", TVM rewrites every fused function of the model with its schedule, "
        "and `tvm.compile` builds one Relax program that the virtual machine runs call after call, weights "
        "included. A kernel that is fast alone is only half the story: the end-to-end time adds every call of "
        "every task, plus the glue between them. "
    )
    share = (heaviest.get("kernel_latency_s") or 0) * heaviest["weight"] / doc["latency_s"]
    if 0 < share <= 1:  # kernels timed alone (warm caches) can add up to more than the whole run: then say nothing
        text += (
            f"Here `{heaviest['name']}` weighs most: {heaviest['weight']} call(s) of "
            f"{heaviest['kernel_latency_s'] * 1e6:,.1f} µs, about {share:.0%} of the end-to-end time. "
        )
    err = doc["max_abs_error"]
    text += (
        "\n\n**Why the output check matters**: a schedule only reorders, splits and parallelises loops, so the "
        "compiled model must compute what PyTorch computes, up to floating-point rounding. A wrong schedule "
        "(a bad compute location, a race in a parallel loop) can be very fast and silently wrong, so a latency "
        "only counts once the output matches. "
    )
    if err is not None:
        verdict = "within" if doc["ok"] else "OUTSIDE"
        text += (
            f"This run's largest difference from PyTorch on the same random inputs is {err:.2e} "
            f"(relative {doc['max_rel_error']:.2e}), {verdict} the tolerance for float32 rounding."
        )
    return text
