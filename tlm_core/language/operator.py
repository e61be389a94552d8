"""The operator part of the prompt: the fused ops, the buffers (dtype, shape) and every block's iterators.

    <op> op:conv2d op:add op:relu  arg float32 r4 ; 3^1 ; 2^5 ; 2^5 ; ...
    block b0 blk:pad_temp S ; S 3^1 ; S 2^1 17^1 ; S 2^1 17^1 ;  block b1 blk:conv2d_nchw S ; ... R 3^1 ; ...

Blocks are numbered b0, b1, ... in program order (the root block left out); decision contexts refer to them.
"""

from __future__ import annotations

import re

from tvm import tirx
from tvm.s_tir import SBlock, SBlockRealize

from ..partition.task import Task
from .numbers import number_tokens

MAX_BLOCKS = 64  # blocks beyond this share the token "b?"
OPS = [
    "conv1d", "conv2d", "conv3d", "conv2d_transpose", "matmul", "dense", "batch_matmul", "linear", "softmax",
    "log_softmax", "layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm", "max_pool2d",
    "avg_pool2d", "adaptive_avg_pool2d", "mean", "sum", "max", "min", "prod", "variance", "std", "argmax",
    "argmin", "cumsum", "take", "index_tensor", "reshape", "transpose", "broadcast_to", "strided_slice",
    "concatenate", "split", "add", "subtract", "multiply", "divide", "power", "where", "cast", "bitwise_and",
    "gelu", "relu", "silu", "sigmoid", "tanh", "erf", "exp", "sqrt", "rsqrt", "tir_clip", "tir_negative",
    "tir_tanh", "tir_rsqrt", "tir_sigmoid", "tir_exp", "tir_erf", "clip", "negative", "maximum", "minimum",
    "hardswish", "hardsigmoid", "squeeze", "expand_dims", "permute_dims", "full", "zeros", "ones", "astype",
]  # fmt: skip
BLOCK_STEMS = [
    "reshape", "add", "multiply", "compute", "matmul", "divide", "pad_temp", "subtract", "broadcast_to",
    "transpose", "conv2d_nchw", "conv2d_nhwc", "group_conv2d_nchw", "depthwise_conv2d_nchw", "take",
    "softmax_maxelem", "softmax_exp", "softmax_expsum", "softmax_norm", "layer_norm", "advanced_index",
    "bitwise_and", "where", "power", "strided_slice_with_axes", "strided_slice", "concat", "sum", "mean",
    "var_sum", "red", "split", "relu", "pool_max", "pool_sum", "pool_avg", "adaptive_pool_sum",
    "adaptive_pool_avg", "rsqrt", "tanh", "sigmoid", "clip", "cast", "negative", "exp", "erf", "dense",
    "batch_matmul", "maximum", "minimum", "sqrt", "full", "squeeze", "expand_dims", "tensor", "matmul_NT",
]  # fmt: skip
DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]
ITER_KINDS = {0: "S", 2: "R"}  # tirx.IterVar.DataPar, CommReduce; anything else is "O" (opaque, ordered...)
OP_WORDS = ["<op>", "op?", "arg", "dtype?", "block", "blk?", "b?", "S", "R", "O", "init", "sym"]


def operator_vocab() -> list[str]:
    ranks = [f"r{i}" for i in range(9)]
    blocks = [f"b{i}" for i in range(MAX_BLOCKS)]
    return [*OP_WORDS, *(f"op:{o}" for o in OPS), *(f"blk:{s}" for s in BLOCK_STEMS), *DTYPES, *ranks, *blocks]


def blocks_of(func: tirx.PrimFunc) -> list[SBlock]:
    """The blocks of a PrimFunc in program order, without the root block."""
    out: list[SBlock] = []

    def walk(stmt) -> None:
        if isinstance(stmt, SBlockRealize):
            out.append(stmt.block)
            walk(stmt.block.body)
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                walk(s)
        elif getattr(stmt, "body", None) is not None:
            walk(stmt.body)

    walk(func.body)
    return [b for b in out if b.name_hint != "root"]


def block_token(index: int | None) -> str:
    return f"b{index}" if index is not None and 0 <= index < MAX_BLOCKS else "b?"


def block_stem(name: str) -> str:
    """ "T_softmax_maxelem" -> "softmax_maxelem", "T_reshape1" -> "reshape", "lv17_var_sum" -> "var_sum"."""
    stem = re.sub(r"^(T_|lv\d+_)", "", name)
    stem = re.sub(r"(_?\d+)+$", "", stem)
    return stem


def operator_tokens(task: Task) -> list[str]:
    out = ["<op>", *(f"op:{o}" if o in OPS else "op?" for o in task.ops)]
    for param in task.func.params:
        dtype = str(param.dtype)
        out += ["arg", dtype if dtype in DTYPES else "dtype?", f"r{min(len(param.shape), 8)}"]
        out += _dims(param.shape)
    for i, block in enumerate(blocks_of(task.func)):
        stem = block_stem(block.name_hint)
        out += ["block", block_token(i), f"blk:{stem}" if stem in BLOCK_STEMS else "blk?"]
        for iv in block.iter_vars:
            out.append(ITER_KINDS.get(int(iv.iter_type), "O"))
            out += _dims([iv.dom.extent])
        if block.init is not None:
            out.append("init")
    return out


def _dims(dims) -> list[str]:
    out: list[str] = []
    for d in dims:
        out += list(number_tokens(int(d))) if isinstance(d, tirx.IntImm) or isinstance(d, int) else ["sym"]
    return out
