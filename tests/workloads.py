"""Tiny single-operator workloads shared by the tests (TVMScript, so no model import is needed).

The later ones are written like the fused tasks of real models (`tirx.noalias`, intermediates allocated in
the root block with `T.sblock_alloc_buffer`). In TVM 0.27 a plain `T.alloc_buffer` in an s_tir function
becomes an AllocBuffer statement instead, and TVM then refuses most compute-at locations (a conv's padding
block could only stay at the root).
"""

from tvm.script import tirx as T

# the workloads most component tests run over
NAMES = [
    "matmul_128",
    "matmul_relu_64",
    "softmax_64",
    "conv2d_relu_8",
    "depthwise_conv2d_8",
    "batch_matmul_16",
    "layer_norm_64",
    "add_64",
]


@T.prim_func(s_tir=True)
def matmul_128(
    A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")
):
    for i, j, k in T.grid(128, 128, 128):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func(s_tir=True)
def matmul_relu_64(
    A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), D: T.Buffer((64, 64), "float32")
):
    C = T.alloc_buffer((64, 64), "float32")
    for i, j, k in T.grid(64, 64, 64):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(64, 64):
        with T.sblock("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@T.prim_func(s_tir=True)
def softmax_64(A: T.Buffer((4, 64), "float32"), S: T.Buffer((4, 64), "float32")):
    M = T.alloc_buffer((4,), "float32")
    E = T.alloc_buffer((4, 64), "float32")
    Z = T.alloc_buffer((4,), "float32")
    for i, k in T.grid(4, 64):
        with T.sblock("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, j in T.grid(4, 64):
        with T.sblock("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, k in T.grid(4, 64):
        with T.sblock("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Z[vi] = T.float32(0)
            Z[vi] = Z[vi] + E[vi, vk]
    for i, j in T.grid(4, 64):
        with T.sblock("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            S[vi, vj] = E[vi, vj] / Z[vi]


@T.prim_func(s_tir=True)
def conv2d_relu_8(
    X: T.Buffer((1, 4, 8, 8), "float32"), W: T.Buffer((8, 4, 3, 3), "float32"), Y: T.Buffer((1, 8, 8, 8), "float32")
):
    T.func_attr({"tirx.noalias": True})
    P = T.sblock_alloc_buffer((1, 4, 10, 10), "float32")
    C = T.sblock_alloc_buffer((1, 8, 8, 8), "float32")
    for n, c, h, w in T.grid(1, 4, 10, 10):
        with T.sblock("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(
                1 <= vh and vh < 9 and 1 <= vw and vw < 9, X[vn, vc, vh - 1, vw - 1], T.float32(0)
            )
    for n, k, h, w, c, r, s in T.grid(1, 8, 8, 8, 4, 3, 3):
        with T.sblock("conv"):
            vn, vk, vh, vw, vc, vr, vs = T.axis.remap("SSSSRRR", [n, k, h, w, c, r, s])
            with T.init():
                C[vn, vk, vh, vw] = T.float32(0)
            C[vn, vk, vh, vw] = C[vn, vk, vh, vw] + P[vn, vc, vh + vr, vw + vs] * W[vk, vc, vr, vs]
    for n, k, h, w in T.grid(1, 8, 8, 8):
        with T.sblock("relu"):
            vn, vk, vh, vw = T.axis.remap("SSSS", [n, k, h, w])
            Y[vn, vk, vh, vw] = T.max(C[vn, vk, vh, vw], T.float32(0))


@T.prim_func(s_tir=True)
def depthwise_conv2d_8(
    X: T.Buffer((1, 8, 8, 8), "float32"), W: T.Buffer((8, 1, 3, 3), "float32"), Y: T.Buffer((1, 8, 8, 8), "float32")
):
    T.func_attr({"tirx.noalias": True})
    P = T.sblock_alloc_buffer((1, 8, 10, 10), "float32")
    for n, c, h, w in T.grid(1, 8, 10, 10):
        with T.sblock("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = T.if_then_else(
                1 <= vh and vh < 9 and 1 <= vw and vw < 9, X[vn, vc, vh - 1, vw - 1], T.float32(0)
            )
    for n, c, h, w, r, s in T.grid(1, 8, 8, 8, 3, 3):
        with T.sblock("depthwise"):
            vn, vc, vh, vw, vr, vs = T.axis.remap("SSSSRR", [n, c, h, w, r, s])
            with T.init():
                Y[vn, vc, vh, vw] = T.float32(0)
            Y[vn, vc, vh, vw] = Y[vn, vc, vh, vw] + P[vn, vc, vh + vr, vw + vs] * W[vc, 0, vr, vs]


@T.prim_func(s_tir=True)
def batch_matmul_16(
    A: T.Buffer((2, 16, 32), "float32"), B: T.Buffer((2, 32, 16), "float32"), C: T.Buffer((2, 16, 16), "float32")
):
    T.func_attr({"tirx.noalias": True})
    for b, i, j, k in T.grid(2, 16, 16, 32):
        with T.sblock("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]


@T.prim_func(s_tir=True)
def layer_norm_64(
    X: T.Buffer((4, 64), "float32"),
    G: T.Buffer((64,), "float32"),
    Bt: T.Buffer((64,), "float32"),
    Y: T.Buffer((4, 64), "float32"),
):
    T.func_attr({"tirx.noalias": True})
    S = T.sblock_alloc_buffer((4,), "float32")
    Q = T.sblock_alloc_buffer((4,), "float32")
    for i, k in T.grid(4, 64):
        with T.sblock("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + X[vi, vk]
    for i, k in T.grid(4, 64):
        with T.sblock("sqsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Q[vi] = T.float32(0)
            Q[vi] = Q[vi] + X[vi, vk] * X[vi, vk]
    for i, j in T.grid(4, 64):
        with T.sblock("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = (X[vi, vj] - S[vi] / T.float32(64)) * T.rsqrt(
                Q[vi] / T.float32(64) - S[vi] / T.float32(64) * (S[vi] / T.float32(64)) + T.float32(1e-5)
            ) * G[vj] + Bt[vj]


@T.prim_func(s_tir=True)
def add_64(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32"), C: T.Buffer((4, 64), "float32")):
    T.func_attr({"tirx.noalias": True})
    for i, j in T.grid(4, 64):
        with T.sblock("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@T.prim_func(s_tir=True)
def advanced_index_1x32(
    mask: T.Buffer((1, 32), "bool"),
    rows: T.Buffer((1, 1), "int64"),
    cols: T.Buffer((1, 32), "int64"),
    out: T.Buffer((1, 32), "bool"),
):
    R = T.sblock_alloc_buffer((1, 32), "int64")
    for i, j in T.grid(1, 32):
        with T.sblock("broadcast"):
            vi, vj = T.axis.remap("SS", [i, j])
            R[vi, vj] = rows[vi, 0]
    for i, j in T.grid(1, 32):
        with T.sblock("gather"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = mask[R[vi, vj], cols[vi, vj]]
