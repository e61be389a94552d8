"""The operator part of the prompt: the fused ops, the buffers (dtype, shape) and every block's iterators.

    <op> op:conv2d op:add op:relu  arg float32 r4 ; 3^1 ; 2^5 ; 2^5 ; ...
    block b0 blk:pad_temp S ; S 3^1 ; S 2^1 17^1 ; S 2^1 17^1 ;  block b1 blk:conv2d_nchw S ; ... R 3^1 ; ...
    work w27

Blocks are numbered b0, b1, ... in program order (the root block left out); decision contexts refer to them,
and to a block's iterators by position (dim0, dim1, ...). "work w<k>": the task does about 2^k FLOPs, written
as one token since whether a parallel launch or a cache tile pays off depends on the total work, which the
model could otherwise only infer by multiplying extents.
"""

from __future__ import annotations

import math
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
MAX_WORK = 47  # w0..w47: log2 of the task's FLOPs, rounded (2^47 is ~100x LLaMA-7B's largest task)
MAX_DIMS = 16  # dim0..dim15: a block iterator's position (convolutions have 7)


def operator_vocab() -> list[str]:
    ranks = [f"r{i}" for i in range(9)]
    blocks = [f"b{i}" for i in range(MAX_BLOCKS)]
    return [*OP_WORDS, *(f"op:{o}" for o in OPS), *(f"blk:{s}" for s in BLOCK_STEMS), *DTYPES, *ranks, *blocks]


def operator_vocab_3() -> list[str]:
    """Tokens added in version 3, appended after all others so that version 2's ids stay valid."""
    return ["work", *(f"w{k}" for k in range(MAX_WORK + 1)), *(f"dim{i}" for i in range(MAX_DIMS)), "dim?"]


def work_tokens(flops: float) -> list[str]:
    return ["work", f"w{min(MAX_WORK, round(math.log2(flops))) if flops >= 1 else 0}"]


def dim_token(index: int | None) -> str:
    return f"dim{index}" if index is not None and 0 <= index < MAX_DIMS else "dim?"


def realizes_of(func: tirx.PrimFunc) -> list[SBlockRealize]:
    """The block realizes of a PrimFunc in program order, without the root block's."""
    out: list[SBlockRealize] = []

    def walk(stmt) -> None:
        if isinstance(stmt, SBlockRealize):
            out.append(stmt)
            walk(stmt.block.body)
        elif isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                walk(s)
        elif getattr(stmt, "body", None) is not None:
            walk(stmt.body)

    walk(func.body)
    return [r for r in out if r.block.name_hint != "root"]


def blocks_of(func: tirx.PrimFunc) -> list[SBlock]:
    """The blocks of a PrimFunc in program order, without the root block."""
    return [r.block for r in realizes_of(func)]


def block_iterators(func: tirx.PrimFunc) -> dict[str, tuple[str, ...]]:
    """Block name -> the name of the loop bound to each of its iterators ("" where the binding is not one
    loop): the loop names tile decision points carry."""
    return {r.block.name_hint: tuple(v.name if isinstance(v, tirx.Var) else "" for v in r.iter_values)
            for r in realizes_of(func)}  # fmt: skip


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
    return [*out, *work_tokens(task.flops)]


def _dims(dims) -> list[str]:
    out: list[str] = []
    for d in dims:
        out += list(number_tokens(int(d))) if isinstance(d, tirx.IntImm) or isinstance(d, int) else ["sym"]
    return out
