"""fast_math: exp and erf in CPU kernels are vectorizable polynomials, accurate to float32's needs."""

import numpy as np
import pytest
import scipy.special
import tvm
from tvm import te

from tlm_core.compile.fast_math import exact, install
from tlm_core.target import host_target

N = 4096
FUNCS = {"exp": (te.exp, np.exp), "sigmoid": (te.sigmoid, scipy.special.expit), "tanh": (te.tanh, np.tanh),
         "erf": (te.erf, scipy.special.erf)}  # fmt: skip


def build(f):
    a = te.placeholder((N,), name="A")
    b = te.compute((N,), lambda i: f(a[i]), name="B")
    sch = tvm.s_tir.Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_sblock("B"))
    sch.vectorize(sch.split(i, [None, 16])[1])
    return tvm.compile(sch.mod, target=host_target()).mod


@pytest.mark.parametrize("name", list(FUNCS))
def test_fast_functions_match_float64_and_call_no_libm(name):
    install()
    te_f, np_f = FUNCS[name]
    x = np.concatenate([np.linspace(-100, 100, N // 2), np.random.default_rng(0).normal(0, 4, N // 2)])
    x = x.astype("float32")
    out = tvm.runtime.tensor(np.zeros(N, "float32"))
    fast = build(te_f)
    fast["main"](tvm.runtime.tensor(x), out)
    ref = np_f(x.astype("float64"))
    ok = np.abs(ref) < 1e37  # exp beyond float32's range
    np.testing.assert_allclose(out.numpy()[ok], ref[ok], rtol=1e-6, atol=1e-6)
    slow = "@erff(" if name == "erf" else "@llvm.exp."  # a scalar libm call per lane, after LLVM's backend
    assert slow not in fast.inspect_source("ll")
    with exact():  # TVM's own lowering, for comparison
        assert slow in build(te_f).inspect_source("ll")


def test_exact_math_in_the_environment_keeps_tvms_lowering():
    import subprocess
    import sys

    code = "from tlm_core.compile import fast_math as f; f.install(); print(f._state['installed'])"
    env = {**__import__("os").environ, "TLM_EXACT_MATH": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
