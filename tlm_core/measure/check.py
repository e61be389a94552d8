"""Numeric check of a candidate's outputs against the reference (the untuned task on the same inputs).

A schedule reorders floating-point reductions, so outputs differ from the reference by rounding. Errors:
- max_abs_error = max |out - ref|
- max_rel_error = max |out - ref| / (|ref| + SCALE_FLOOR * max|ref|): relative error, where elements far
  below the output's scale (there float32 cancellation makes an elementwise relative error meaningless)
  are measured against SCALE_FLOOR of that scale instead.
A float output passes when max_rel_error <= RTOL[dtype]; integer and bool outputs must match exactly.
A naive-vs-tiled float32 matmul with K = 4096 stays below ~1e-4, so RTOL leaves an order of magnitude of
margin, while a wrong schedule (missing accumulation, wrong element) errs by far more.
"""

from __future__ import annotations

import numpy as np

RTOL = {"float64": 1e-6, "float32": 1e-3, "float16": 1e-2, "bfloat16": 1e-2}
SCALE_FLOOR = 1e-2


def tolerance(dtype: str) -> float:
    return RTOL.get(str(dtype), 0.0)  # integers and bools: exact


def errors(out: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    """(max_abs_error, max_rel_error) of out vs ref; inf where one is NaN/inf and the other is not."""
    a, r = out.astype(np.float64), ref.astype(np.float64)
    diff = np.where((a == r) | (np.isnan(a) & np.isnan(r)), 0.0, np.abs(a - r))
    diff = np.nan_to_num(diff, nan=np.inf)
    finite = np.abs(r[np.isfinite(r)])
    scale = max(float(finite.max()) if finite.size else 0.0, np.finfo(np.float32).tiny)
    rel = diff / (np.where(np.isfinite(r), np.abs(r), 0.0) + SCALE_FLOOR * scale)
    return (float(diff.max()) if diff.size else 0.0), (float(rel.max()) if rel.size else 0.0)


def check_outputs(outs: list[np.ndarray], refs: list[np.ndarray]) -> tuple[float, float, str | None]:
    """(max_abs_error, max_rel_error, error message or None) over all outputs."""
    max_abs = max_rel = 0.0
    error = None
    for out, ref in zip(outs, refs, strict=True):
        if out.shape != ref.shape:
            return np.inf, np.inf, f"wrong result: output shape {out.shape} != reference {ref.shape}"
        abs_err, rel_err = errors(out, ref)
        max_abs, max_rel = max(max_abs, abs_err), max(max_rel, rel_err)
        tol = tolerance(str(ref.dtype))
        if rel_err > tol and error is None:
            error = f"wrong result: max rel error {rel_err:.3g} > {tol:g}"
    return max_abs, max_rel, error
