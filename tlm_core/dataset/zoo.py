"""An operator zoo: single operators of the usual kinds at many seeded-random shapes, for teacher sentences.

The training models (ResNet-50, BERT, GPT-2) hold ~300 unique tasks and no depthwise convolution, 5x5 kernel,
SiLU or RMSNorm; a model learning schedules from them alone sees few shapes. The zoo adds hundreds of tasks
whose spaces are built and scheduled by the heuristic without measuring anything (tlm_core.train.corpus). It
is generated from this file alone (seeded), so it is reproducible; a zoo variant is 8 operators side by side
in one module ("zoo-<kind>-<part>"), each fused by Relax into its own task. Workloads of held-out models are
dropped from any corpus by their task id (`--exclude`), so evaluation stays on unseen tasks.

The "topi" and "gemm" variants are built with TE/TOPI instead of PyTorch (no Relax model; `topi_tasks`): the layouts a
TVMScript operator or the operators benchmark has and Relax's import never produces, such as TOPI's dense,
which reads its weight as W[n, k] (Relax's linear reads the transposed constant, B[k, n]).
"""

from __future__ import annotations

import random
from typing import Any

KINDS = {
    "conv": 90, "linear": 24, "bmm": 16, "softmax": 6, "norm": 6, "pool": 8, "eltwise": 4, "plain": 40, "folded": 40,
    "small": 20, "widths": 40, "topi": 32, "rows": 48, "gemm": 16, "odd": 24, "grouped": 16,
}  # fmt: skip
TE_KINDS = ("topi", "gemm", "odd")  # built with TE/TOPI directly (topi_tasks), not exported from PyTorch
PER_PART = 8
_CH = [16, 24, 32, 48, 64, 96, 128, 144, 160, 192, 256, 320, 384, 512, 576, 768, 1024]
_HW = [7, 14, 28, 56, 112]
_DIM = [64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
_ROWS = [1, 4, 16, 32, 49, 64, 128, 196, 256, 512]
_ACTS = ["none", "relu", "relu6", "silu", "gelu"]
# "small": operators of a few microseconds (the tiny samples'), where a parallel loop costs more than it saves
_SMALL_CH, _SMALL_HW, _SMALL_DIM = [3, 4, 8, 12, 16, 24, 32], [4, 7, 8, 14, 16, 28], [16, 32, 48, 64, 128]
# "widths": the channel counts of mobile CNNs, multiples of 8 with factors 3, 5 and 7 (_CH has few), so that an
# extent like 672 = 2^5 3 7 is not new to the model; mostly pointwise and depthwise, as in their blocks
_WIDE_CH = [40, 56, 72, 80, 112, 120, 168, 200, 240, 280, 336, 480, 560, 672, 720, 960, 1152, 1280]
# "rows": row reductions as wide as a large language model's hidden size (norms, softmax, sums), which the other
# kinds draw at most 768 (norms) or 512 (softmax) wide
_WIDE_DIM = [1024, 1280, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 8192]
# BatchNorm folded into the convolution (deployed CNNs, ONNX exports), or a bare conv + activation (TOPI-built)
_KERNELS = [1, 1, 3, 3, 5, 7]
_FOLDED = ["bias", "bias+relu", "bias+relu", "bias+relu6", "bias+silu", "bare+relu"]
# "grouped": convolutions whose groups hold several channels (ResNeXt, RegNet: 8-64 a group), some dilated;
# the other kinds draw only dense (one group) and depthwise (one channel a group) convolutions
_GROUP_WIDTH = [4, 8, 16, 24, 32, 48, 64]
# "topi": mostly dense layers (the layout no other kind has), then TOPI's other single operators
_TOPI = ["dense"] * 8 + ["depthwise"] * 3 + ["conv"] * 3 + ["matmul"] * 2 + ["bmm"] * 2 + ["pool", "softmax", "sum"]
_EPILOGUES = ["none", "bias", "bias+relu", "bias+tanh"]
# "gemm": large TOPI matmuls and dense layers, every side 512-4096 (the other kinds draw at most 512 rows), so
# that a BLAS-sized GEMM is not new to the model; 1024^3, the peak benchmark's shape, is never drawn
_GEMM = [512, 768, 1024, 1536, 2048, 3072, 4096]
# "odd": TOPI operators whose rows (tokens, a sequence) are a prime or a prime times 2 or 3, which no other kind
# draws: such a loop tiles only as 1 x p (or 2 x p), and fine-tuning 21, which never saw one, wrote untiled
# programs 20-30x slower than the heuristic's for them. 197 (ViT's tokens, a test-split extent) is left out.
_PRIMES = [17, 23, 31, 37, 41, 53, 61, 67, 79, 89, 97, 101, 113, 127, 131, 139, 151, 157, 163, 173, 181, 191, 193,
           199, 211, 223, 229, 241, 251, 257, 263, 271, 283, 293, 307, 331, 353, 383, 389, 401, 421, 449, 461, 487,
           499, 509, 521, 577, 601, 641, 709, 769, 857, 1021]  # fmt: skip
_ODD = _PRIMES + [2 * p for p in _PRIMES[4:20]] + [3 * p for p in _PRIMES[4:16]]


def zoo_names() -> list[str]:
    return [f"zoo-{kind}-{part}" for kind, parts in KINDS.items() for part in range(parts)]


def zoo_ops(kind: str, part: int) -> list[tuple]:
    """The operator specs of one zoo variant: (kind, *shape, act) tuples, seeded by the variant's name."""
    rng = random.Random(f"{kind}-{part}")
    return [_draw(kind, rng) for _ in range(PER_PART)]


def _draw(kind: str, rng: random.Random) -> tuple:
    act = rng.choice(_ACTS)
    if kind == "topi":
        return _topi(rng)
    if kind == "gemm":
        return _gemm(rng)
    if kind == "odd":
        return _odd(rng)
    if kind == "conv":
        return _conv(rng, act)
    if kind == "folded":
        return _conv(rng, rng.choice(_FOLDED))
    if kind == "grouped":
        return _grouped(rng, act)
    if kind == "small":
        if rng.random() < 0.25:
            return ("linear", rng.choice([1, 2, 4, 8, 16, 32]), rng.choice(_SMALL_DIM), rng.choice(_SMALL_DIM), act)
        return _conv(rng, act, _SMALL_CH, _SMALL_HW)
    if kind == "widths":
        return _conv(rng, act, _WIDE_CH, _HW[:4], kernels=[1, 1, 1, 3, 5])
    if kind == "rows":
        which = rng.choice(["norm", "norm", "norm", "reduce", "softmax"])
        if which == "norm":
            return ("norm", rng.choice(_ROWS), rng.choice(_WIDE_DIM), rng.choice(["layer", "rms", "rms"]))
        if which == "reduce":
            return ("reduce", rng.choice(_ROWS), rng.choice(_WIDE_DIM), rng.choice(["sum", "max", "mean"]))
        seq = rng.choice([768, 1024, 1536, 2048])
        return ("softmax", rng.choice([h for h in [1, 2, 4, 8] if h * seq * seq <= 2**23]), seq, "none")
    if kind == "plain":  # no epilogue: what a single operator (benchmarks/operators.py, TVMScript) looks like
        which = rng.choice(["conv", "conv", "matmul", "reduce"])
        if which == "conv":
            return _conv(rng, "plain")
        if which == "matmul":
            return ("matmul", rng.choice(_ROWS), rng.choice(_DIM), rng.choice(_DIM), "none")
        return ("reduce", rng.choice(_ROWS[2:]), rng.choice(_DIM), rng.choice(["sum", "max", "mean"]))
    if kind == "linear":
        return ("linear", rng.choice(_ROWS), rng.choice(_DIM), rng.choice(_DIM), act)
    if kind == "bmm":
        heads, seq, dim = rng.choice([1, 4, 8, 12, 16, 32]), rng.choice([16, 32, 64, 128, 196, 256, 512]), rng.choice(
            [32, 64, 80, 128])  # fmt: skip
        return ("bmm", heads, seq, dim, rng.random() < 0.5, "none")  # scores (q @ k^T) or context (p @ v)
    if kind == "softmax":
        return ("softmax", rng.choice([1, 4, 8, 12, 32]), rng.choice([16, 32, 64, 128, 256, 512]), "none")
    if kind == "norm":
        return ("norm", rng.choice(_ROWS[2:]), rng.choice(_DIM[:8]), rng.choice(["layer", "rms"]))
    if kind == "pool":
        return ("pool", rng.choice(_CH[:13]), rng.choice(_HW), rng.choice(["max3", "avg2", "mean"]))
    assert kind == "eltwise"
    return ("eltwise", rng.choice(_CH[:13]), rng.choice(_HW), rng.choice(["add_relu", "silu", "gelu", "mul_add"]))


def _conv(
    rng: random.Random, act: str, channels: list[int] = _CH, sizes: list[int] = _HW, kernels: list[int] = _KERNELS
) -> tuple:
    while True:
        cin, hw, k, stride = (
            rng.choice(channels),
            rng.choice(sizes),
            rng.choice(kernels),
            rng.choice([1, 1, 2]),
        )
        depthwise = k > 1 and rng.random() < 0.4
        cout = cin if depthwise else rng.choice(channels)
        macs = cout * (hw // stride) ** 2 * k * k * (1 if depthwise else cin)
        if macs <= 4e8 and cin * hw * hw <= 8e5:
            return ("conv", cin, cout, hw, k, stride, depthwise, act)  # act "plain": no BN, no activation; see _FOLDED


def _grouped(rng: random.Random, act: str) -> tuple:
    while True:
        width, k, stride, dilation = (rng.choice(_GROUP_WIDTH), rng.choice([3, 3, 3, 1, 5]), rng.choice([1, 1, 2]),
                                      rng.choice([1, 1, 1, 2]))  # fmt: skip
        groups = rng.choice([2, 3, 4, 6, 8, 12, 16, 32])
        cin, hw = width * groups, rng.choice(_HW[:4])
        cout = cin if rng.random() < 0.75 else cin * rng.choice([2, 4]) // 2
        macs = cout * (hw // stride) ** 2 * k * k * width
        if macs <= 4e8 and cin * hw * hw <= 8e5 and (k > 1 or dilation == 1):
            return ("gconv", cin, cout, hw, k, stride, groups, dilation, act)


def _topi(rng: random.Random) -> tuple:
    which = rng.choice(_TOPI)
    if which in ("dense", "matmul"):
        return ("topi", which, rng.choice(_ROWS), rng.choice(_DIM), rng.choice(_DIM), rng.choice(_EPILOGUES))
    if which in ("conv", "depthwise"):
        _, cin, cout, hw, k, stride, _, _ = _conv(rng, "plain", kernels=[1, 3, 3, 5] if which == "conv" else [3, 5])
        return ("topi", which, cin, cin if which == "depthwise" else cout, hw, k, stride, rng.choice(["none", "relu"]))
    if which == "bmm":  # TOPI's batch_matmul reads both operands along the reduction: x[b, i, k] y[b, j, k]
        return ("topi", which, rng.choice([1, 4, 8, 12, 16]), rng.choice([32, 64, 128, 256]), rng.choice([32, 64, 128]))
    if which == "pool":
        return ("topi", which, rng.choice(_CH[:13]), rng.choice(_HW), rng.choice(["max", "avg"]))
    if which == "softmax":
        return ("topi", which, rng.choice([1, 4, 8, 12]), rng.choice([32, 64, 128, 256, 512]))
    return ("topi", which, rng.choice(_ROWS[2:]), rng.choice(_DIM))


def _gemm(rng: random.Random) -> tuple:
    while True:
        m, k, n = rng.choice(_GEMM), rng.choice(_GEMM), rng.choice(_GEMM)
        if (m, k, n) != (1024, 1024, 1024) and m * k * n <= 2**33:
            which = rng.choice(["matmul", "matmul", "dense"])
            return ("topi", which, m, k, n, rng.choice(["none", "none", "bias", "bias+relu"]))


def topi_tasks(name: str) -> list:
    """The tasks (tlm_core.partition.Task) of a TE/TOPI-built zoo variant ("zoo-topi-<part>", "zoo-gemm-<part>")."""
    from tlm_core.partition.task import task_from_primfunc, te_prim_func

    _, kind, part = name.split("-")
    if kind not in TE_KINDS or not 0 <= int(part) < KINDS[kind]:
        raise ValueError(f"no TE/TOPI zoo variant {name!r}")
    tasks = []
    for spec in zoo_ops(kind, int(part)):
        args, out, ops = _topi_compute(spec)
        tasks.append(task_from_primfunc(te_prim_func([*args, out]), f"topi_{'_'.join(ops)}", ops))
    return tasks


def _odd(rng: random.Random) -> tuple:
    rows = rng.choice(_ODD)
    which = rng.choice(["dense", "matmul", "matmul", "bmm", "bmm_ctx", "softmax", "sum"])
    if which in ("dense", "matmul"):
        n = rng.choice(_ODD) if rng.random() < 0.2 else rng.choice(_DIM)
        return ("topi", which, rows, rng.choice(_DIM), n, rng.choice(_EPILOGUES))
    heads = rng.choice([1, 4, 8, 12, 16])
    while heads * rows * rows > 2**22:
        heads //= 2
    if which in ("bmm", "bmm_ctx"):  # scores (seq x seq) or context (reduces over seq)
        return ("topi", which, max(heads, 1), rows, rng.choice([32, 64, 80, 128]))
    if which == "softmax":
        return ("topi", which, max(heads, 1), rows)
    return ("topi", which, rows, rng.choice(_DIM + _WIDE_DIM[:4]))


def _topi_compute(spec: tuple) -> tuple[list, Any, list[str]]:
    """(input placeholders, output tensor, op names) of a "topi" spec."""
    from tvm import te, topi

    which, shape = spec[1], spec[2:]
    if which in ("dense", "matmul"):
        rows, k, n, epilogue = shape
        a = te.placeholder((rows, k), name="A")
        if which == "dense":
            b = te.placeholder((n, k), name="W")
            out = topi.nn.dense(a, b)
        else:
            b = te.placeholder((k, n), name="B")
            out = topi.nn.matmul(a, b)
        args, ops = [a, b], [which]
        if epilogue != "none":
            bias = te.placeholder((n,), name="bias")
            out, args, ops = topi.add(out, bias), [*args, bias], [*ops, "add"]
        if epilogue == "bias+relu":
            out, ops = topi.nn.relu(out), [*ops, "relu"]
        elif epilogue == "bias+tanh":
            out, ops = topi.tanh(out), [*ops, "tanh"]
        return args, out, ops
    if which in ("conv", "depthwise"):
        cin, cout, hw, k, stride, act = shape
        x = te.placeholder((1, cin, hw, hw), name="X")
        w = te.placeholder((cout, 1 if which == "depthwise" else cin, k, k), name="W")
        conv = topi.nn.depthwise_conv2d_nchw if which == "depthwise" else topi.nn.conv2d_nchw
        out = conv(x, w, stride, k // 2, 1)
        return ([x, w], topi.nn.relu(out), ["conv2d", "relu"]) if act == "relu" else ([x, w], out, ["conv2d"])
    if which == "bmm":
        heads, seq, dim = shape
        x, y = te.placeholder((heads, seq, dim), name="X"), te.placeholder((heads, seq, dim), name="Y")
        return [x, y], topi.nn.batch_matmul(x, y), ["batch_matmul"]
    if which == "bmm_ctx":  # attention probabilities (seq x seq) times values: the reduction runs over seq
        heads, seq, dim = shape
        x, y = te.placeholder((heads, seq, seq), name="X"), te.placeholder((heads, dim, seq), name="Y")
        return [x, y], topi.nn.batch_matmul(x, y), ["batch_matmul"]
    if which == "pool":
        c, hw, how = shape
        x = te.placeholder((1, c, hw, hw), name="X")
        size, pad = ((3, 3), (1, 1, 1, 1)) if how == "max" else ((2, 2), (0, 0, 0, 0))
        return [x], topi.nn.pool2d(x, size, (2, 2), (1, 1), pad, how), [f"{how}_pool2d"]
    if which == "softmax":
        heads, seq = shape
        x = te.placeholder((heads, seq, seq), name="X")
        return [x], topi.nn.softmax(x), ["softmax"]
    rows, n = shape
    x = te.placeholder((rows, n), name="X")
    return [x], topi.sum(x, axis=1), ["sum"]


def build(name: str) -> tuple[Any, tuple[Any, ...]]:
    """(torch module in eval mode, example inputs) of the zoo variant `name` ("zoo-<kind>-<part>")."""
    import torch

    _, kind, part = name.split("-")
    if kind not in KINDS or kind in TE_KINDS or not 0 <= int(part) < KINDS[kind]:
        raise ValueError(f"no PyTorch zoo variant {name!r}")
    torch.manual_seed(int(part))
    ops = [_Op(spec) for spec in zoo_ops(kind, int(part))]
    gen = torch.Generator().manual_seed(1)
    inputs = tuple(torch.randn(op.input_shape, generator=gen) for op in ops)
    return _Zoo(ops).eval(), inputs


def _act(name: str):
    import torch.nn as nn

    return {"none": nn.Identity(), "relu": nn.ReLU(), "relu6": nn.ReLU6(), "silu": nn.SiLU(), "gelu": nn.GELU()}[name]


def _Op(spec: tuple):  # noqa: N802 - builds a torch module class on first use (importing this module stays cheap)
    import torch
    import torch.nn as nn

    class Op(nn.Module):
        def __init__(self, spec: tuple) -> None:
            super().__init__()
            self.spec, kind = spec, spec[0]
            if kind == "conv":
                _, cin, cout, hw, k, stride, depthwise, act = spec
                self.input_shape = (1, cin, hw, hw)
                bias = act.startswith("bias")
                conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=cin if depthwise else 1, bias=bias)
                if act == "plain":
                    self.body = conv
                elif act in _FOLDED:
                    self.body = nn.Sequential(conv, _act(act.partition("+")[2] or "none"))
                else:
                    self.body = nn.Sequential(conv, nn.BatchNorm2d(cout), _act(act))
                    self.body[1].running_mean.uniform_(-0.5, 0.5)
                    self.body[1].running_var.uniform_(0.5, 2.0)
            elif kind == "gconv":
                _, cin, cout, hw, k, stride, groups, dilation, act = spec
                self.input_shape = (1, cin, hw, hw)
                conv = nn.Conv2d(cin, cout, k, stride, dilation * (k // 2), dilation, groups, bias=False)
                self.body = nn.Sequential(conv, nn.BatchNorm2d(cout), _act(act))
                self.body[1].running_mean.uniform_(-0.5, 0.5)
                self.body[1].running_var.uniform_(0.5, 2.0)
            elif kind == "linear":
                _, rows, k, n, act = spec
                self.input_shape = (rows, k)
                self.body = nn.Sequential(nn.Linear(k, n), _act(act))
            elif kind == "matmul":
                _, rows, k, n, _ = spec
                self.input_shape = (rows, k)
                self.other = nn.Parameter(torch.randn(k, n) * 0.05)
            elif kind == "reduce":
                _, rows, n, _ = spec
                self.input_shape = (rows, n)
            elif kind == "bmm":
                _, heads, seq, dim, scores, _ = spec
                self.input_shape = (heads, seq, dim if scores else seq)
                self.other = nn.Parameter(torch.randn(heads, seq, dim) * 0.1)
            elif kind == "softmax":
                _, heads, seq, _ = spec
                self.input_shape = (heads, seq, seq)
            elif kind == "norm":
                _, rows, n, which = spec
                self.input_shape = (rows, n)
                self.weight = nn.Parameter(torch.rand(n) + 0.5)
                self.norm = nn.LayerNorm(n) if which == "layer" else None
            else:
                _, c, hw, _ = spec
                self.input_shape = (1, c, hw, hw)
                self.bias = nn.Parameter(torch.randn(1, c, 1, 1))

        def forward(self, x):
            kind, last = self.spec[0], self.spec[-1]
            if kind in ("conv", "gconv", "linear"):
                return self.body(x)
            if kind == "matmul":
                return x @ self.other
            if kind == "reduce":
                return x.sum(-1) if last == "sum" else (x.mean(-1) if last == "mean" else torch.max(x, -1).values)
            if kind == "bmm":
                return x @ self.other.transpose(1, 2) if self.spec[4] else x @ self.other
            if kind == "softmax":
                return torch.softmax(x * 0.125, dim=-1)
            if kind == "norm":
                if self.norm is not None:
                    return self.norm(x)
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
            if kind == "pool":
                if last == "max3":
                    return torch.nn.functional.max_pool2d(x, 3, 2, 1)
                if last == "avg2":
                    return torch.nn.functional.avg_pool2d(x, 2)
                return x.mean((2, 3), keepdim=True)
            if last == "add_relu":
                return torch.relu(x + self.bias)
            if last == "silu":
                return x * torch.sigmoid(x)
            if last == "gelu":
                return torch.nn.functional.gelu(x)
            return x * self.bias + 1.0

    return Op(spec)


def _Zoo(ops: list):  # noqa: N802 - see _Op
    import torch.nn as nn

    class Zoo(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ops = nn.ModuleList(ops)

        def forward(self, *xs):
            return tuple(op(x) for op, x in zip(self.ops, xs, strict=True))

    return Zoo()
