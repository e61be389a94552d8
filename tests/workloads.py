"""Tiny single-operator workloads shared by the tests (TVMScript, so no model import is needed)."""

from tvm.script import tirx as T


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
