"""What kind of subgraph a fused function is, named after its heaviest operator (for colours and filters)."""

from __future__ import annotations

KINDS = ["conv", "matmul", "softmax", "norm", "pool", "reduce", "gather", "layout", "elementwise"]

_BY_OP = {
    "conv": ("conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv1d_transpose"),
    "matmul": ("matmul", "dense", "batch_matmul", "linear"),
    "softmax": ("softmax", "log_softmax"),
    "norm": ("layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm"),
    "pool": ("max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "max_pool1d", "avg_pool1d"),
    "reduce": ("mean", "sum", "max", "min", "prod", "variance", "std", "argmax", "argmin", "cumsum"),
    "gather": ("take", "index_tensor", "gather_elements", "gather_nd", "strided_slice_take"),
}


def subgraph_kind(ops: list[str], pattern: int) -> str:
    """The first kind in KINDS's order that one of the ops belongs to; else by TVM's op pattern."""
    for kind, names in _BY_OP.items():
        if any(op in names for op in ops):
            return kind
    if pattern in (3, 4):
        return "reduce"
    if pattern == 2:
        return "layout"
    return "elementwise"
