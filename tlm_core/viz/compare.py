"""Figures, tables and short explanations of a comparison: method bars, search convergence, the roofline."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from tlm_core.compare import Ceilings, MethodResult, RooflinePoint

COLORS = {
    "default": "#7f7f7f",
    "heuristic": "#ff7f0e",
    "heuristic-top-k": "#d62728",
    "tlm": "#1f77b4",
    "tlm-best-of-k": "#17becf",
    "search": "#2ca02c",
    "database": "#9467bd",
}


def results_table(results: list[MethodResult]) -> list[dict]:
    """One row per method, as the page's table shows it (with the side-by-side column once measured)."""
    rows, together = [], any(r.side_by_side for r in results)
    for r in results:
        if r.ok:
            check = "passed" if r.max_rel_error is None else f"passed (max rel error {r.max_rel_error:.1e})"
        else:
            check = f"failed: {r.error}"
        rows.append({
            "method": r.label,
            "latency (µs)": r.latency * 1e6 if r.ok else None,
            **({"side by side (µs)": r.side_by_side * 1e6 if r.side_by_side else None} if together else {}),
            "GFLOP/s": r.gflops if r.ok else None,
            "compile (s)": r.compile_s,
            "trials": r.trials,
            "sketch": r.sketch_index,
            "numeric check": check,
        })  # fmt: skip
    return rows


def method_bars(results: list[MethodResult]) -> go.Figure:
    """Latency, GFLOP/s and compile time per method, side by side (failed methods are left out)."""
    ok = [r for r in results if r.ok]
    fig = make_subplots(rows=1, cols=3, subplot_titles=("latency (µs, lower is better)", "GFLOP/s", "compile (s)"))
    names = [r.label for r in ok]
    colors = [COLORS.get(r.method, "#333") for r in ok]
    for col, values in enumerate(
        ([r.latency * 1e6 for r in ok], [r.gflops or 0 for r in ok], [r.compile_s for r in ok]), start=1
    ):
        fig.add_trace(
            go.Bar(x=values, y=names, orientation="h", marker_color=colors, showlegend=False,
                   hovertemplate="%{y}: %{x:.4g}<extra></extra>"),
            row=1, col=col,
        )  # fmt: skip
        if col > 1:
            fig.update_yaxes(showticklabels=False, row=1, col=col)
    fig.update_xaxes(type="log", row=1, col=3)  # compile times span milliseconds to minutes
    fig.update_layout(height=120 + 40 * len(ok), margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def convergence_figure(search: MethodResult, marks: list[MethodResult]) -> go.Figure:
    """The search's best latency so far vs trials and vs wall time; each mark (TLM top-1, best-of-k, ...) as a
    dashed line at its latency, and on the time axis as a point at its compile time."""
    curve = [c for c in search.extra.get("convergence", []) if c["best_latency"] is not None]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("best latency vs trials", "best latency vs wall time (s)"))
    color = COLORS["search"]
    for col, key in ((1, "trial"), (2, "wall_s")):
        fig.add_trace(
            go.Scatter(x=[c[key] + (1 if key == "trial" else 0) for c in curve],
                       y=[c["best_latency"] * 1e6 for c in curve], mode="lines+markers", line_shape="hv",
                       name="search" if col == 1 else None, showlegend=col == 1, line={"color": color}),
            row=1, col=col,
        )  # fmt: skip
    for r in marks:
        if not r.ok:
            continue
        c = COLORS.get(r.method, "#333")
        for col in (1, 2):
            fig.add_hline(y=r.latency * 1e6, line={"dash": "dash", "color": c}, row=1, col=col)
        fig.add_trace(
            go.Scatter(x=[max(r.compile_s, 1e-3)], y=[r.latency * 1e6], mode="markers", name=r.label,
                       marker={"color": c, "size": 11, "symbol": "star"},
                       hovertemplate=f"{r.label}: %{{y:.1f}} µs after %{{x:.2f}} s<extra></extra>"),
            row=1, col=2,
        )  # fmt: skip
    fig.update_yaxes(title_text="latency (µs)", row=1, col=1)
    fig.update_xaxes(title_text="trials (programs measured)", row=1, col=1)
    fig.update_xaxes(title_text="seconds (log)", type="log", row=1, col=2)
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h"})
    return fig


def roofline_figure(ceilings: Ceilings, points: list[RooflinePoint], nominal_gflops: float | None = None) -> go.Figure:
    """Log-log roofline: the memory roof (bandwidth x intensity) up to the compute roof, each schedule a point.
    nominal_gflops: the vector units' paper peak (cores x FMA pipes x lanes x 2 x clock), drawn dashed."""
    lo = min([0.01] + [p.intensity / 10 for p in points])
    hi = max([1000.0] + [p.intensity * 10 for p in points])
    xs = [lo, ceilings.ridge, hi]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(x=xs, y=[ceilings.roof(x) for x in xs], mode="lines", name="roof (measured)",
                   line={"color": "black"}, hovertemplate="%{x:.3g} FLOP/B: at most %{y:.1f} GFLOP/s<extra></extra>")
    )  # fmt: skip
    if nominal_gflops:
        fig.add_trace(
            go.Scatter(x=[lo, hi], y=[nominal_gflops] * 2, mode="lines", name="nominal vector-FMA peak (not measured)",
                       line={"color": "#999", "dash": "dot"}, hovertemplate="%{y:.0f} GFLOP/s on paper<extra></extra>")
        )  # fmt: skip
    for p in points:
        fig.add_trace(
            go.Scatter(x=[p.intensity], y=[p.gflops], mode="markers", name=p.label,
                       marker={"size": 12, "color": COLORS.get(p.method, "#333")},
                       hovertemplate=f"{p.label}<br>%{{y:.2f}} GFLOP/s, {p.fraction:.0%} of the roof<extra></extra>")
        )  # fmt: skip
    fig.update_xaxes(type="log", title_text="arithmetic intensity (FLOP per byte of inputs + outputs)")
    fig.update_yaxes(type="log", title_text="GFLOP/s")
    fig.update_layout(
        height=460,
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        title={"text": f"measured: {ceilings.peak_gflops:.1f} GFLOP/s (numpy GEMM), {ceilings.bandwidth_gbs:.1f} GB/s "
                       f"(copy); the roofs meet at {ceilings.ridge:.1f} FLOP/B", "font": {"size": 13}},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom"},
    )  # fmt: skip
    return fig


def roofline_text(ceilings: Ceilings, points: list[RooflinePoint], nominal_gflops: float | None = None) -> str:
    """What the roofline on screen says about this subgraph."""
    text = (
        f"A **roofline** bounds how fast a kernel can run on this machine. Measured here: the CPU does at most "
        f"**{ceilings.peak_gflops:.1f} GFLOP/s** (numpy's fp32 GEMM) and memory streams **{ceilings.bandwidth_gbs:.1f} "
        f"GB/s** (a large copy). A kernel that does *I* FLOPs per byte it must move cannot beat "
        f"min({ceilings.peak_gflops:.1f}, {ceilings.bandwidth_gbs:.1f} × I) GFLOP/s; the two roofs meet at "
        f"I = {ceilings.ridge:.1f} FLOP/B. "
    )
    if not points:
        return text + "Measure a method to see where its kernel lands."
    p = points[0]
    if p.intensity < ceilings.ridge:
        bound = "memory-bound: moving data, not arithmetic, limits it"
    else:
        bound = "compute-bound: only better use of the vector units (tiling, vectorising, parallel loops) helps"
    best = max(points, key=lambda q: q.gflops)
    text += (
        f"This subgraph does {p.intensity:.2f} FLOP per byte, so it is **{bound}**. The fastest schedule measured, "
        f"{best.label}, reaches {best.gflops:.2f} GFLOP/s: {best.fraction:.0%} of its roof. "
    )
    text += (
        f"(Fastest of several repeats on this shared machine; the medians were {ceilings.median_peak_gflops:.1f} "
        f"GFLOP/s and {ceilings.median_bandwidth_gbs:.1f} GB/s.) "
    )
    if nominal_gflops:
        text += (
            f"The dotted line is the vector units' peak on paper, {nominal_gflops:.0f} GFLOP/s (cores × FMA pipes × "
            "lanes × 2 × an assumed clock): not measured, and far above what a shared machine's BLAS reaches. "
        )
    if any(q.fraction > 1 for q in points):
        text += ("A point above the roof is not an error: a small kernel's data stays in cache, which is faster "
                 "than the DRAM the copy measures, and TVM's kernels use every core's vector units more fully "
                 "than a busy BLAS run may have.")  # fmt: skip
    return text


def search_text(search: MethodResult, tlm: MethodResult | None) -> str:
    """Why search costs time, with this run's numbers."""
    text = (
        f"**Search** learns what is fast by trying it: each of its {search.trials} trials is a program built, run "
        f"and checked on this CPU, and an XGBoost cost model picks the next batch. That took "
        f"{search.compile_s:.1f} s for {search.latency * 1e6:.1f} µs. "
    )
    if tlm is not None and tlm.ok:
        text += (
            f"The TLM wrote its schedule in {tlm.compile_s:.2f} s without measuring anything "
            f"({tlm.latency * 1e6:.1f} µs): the curve shows how many trials search needed to match it, if it did."
        )
    return text
