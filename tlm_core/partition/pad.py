"""Pad a constant weight's output columns to a multiple of the vector width before fusion.

Schedules split loops into perfect tiles only, so an extent like GPT-2's vocabulary (50257 = 29 x 1733) leaves no
vector tile: its LM head ran scalar at 4 GFLOP/s. Zero columns appended to the weight once (folded with the other
constants) and a slice of the product give the same output with every column loop a multiple of 16.
"""

from __future__ import annotations

import tvm
from tvm import relax, topi

MULTIPLE = 16  # fp32 lanes of AVX-512 (two AVX2 vectors): the padded extent suits both
OPAQUE = 8  # AnnotateTIROpPattern's kOpaque: FuseOps leaves the call alone
MIN_COLUMNS = 128  # below this the padding is a large share of the work and vectors matter little


def padded_columns(n: int) -> int:
    """The extent to pad n output columns to, or n where it already has 8 lanes' worth of factors."""
    if n < MIN_COLUMNS or n % (MULTIPLE // 2) == 0:
        return n
    return -(-n // MULTIPLE) * MULTIPLE


@relax.expr_functor.mutator
class _PadWeightColumns(relax.PyExprMutator):
    def visit_call_(self, call: relax.Call) -> relax.Expr:
        call = super().visit_call_(call)
        if call.op != tvm.ir.Op.get("relax.matmul") or not self._is_constant(call.args[1]):
            return call
        shape = getattr(call.args[1].ty, "shape", None)
        out = call.ty
        if shape is None or len(shape) < 2 or not isinstance(shape[-1], tvm.ir.prim.expr.IntImm):
            return call
        n = int(shape[-1])
        padded = padded_columns(n)
        if padded == n or not isinstance(out, relax.TensorType) or out.ndim < 1:  # ndim -1: unknown rank
            return call
        rank = len(shape)
        weight = relax.op.nn.pad(call.args[1], [0, 0] * (rank - 1) + [0, padded - n])
        product = self.builder_.emit(relax.op.matmul(call.args[0], weight, out_dtype=call.attrs.out_dtype))
        # Its own subgraph (opaque): fused into the matmul it would make a task kind the TLM never learnt.
        return self.builder_.call_te(
            topi.strided_slice, product, [0], [n], [1], axes=[out.ndim - 1], primfunc_attrs={"op_pattern": OPAQUE}
        )

    def _is_constant(self, expr: relax.Expr) -> bool:
        """A constant, or a layout op (transpose, reshape) of one: folded into a constant later."""
        while isinstance(expr, relax.Var):
            bound = self.lookup_binding(expr)
            if bound is None:
                return False
            expr = bound
        if isinstance(expr, tvm.ir.Constant):
            return True
        layout = ("relax.permute_dims", "relax.reshape", "relax.astype")
        is_layout = isinstance(expr, relax.Call) and getattr(expr.op, "name", "") in layout
        return is_layout and self._is_constant(expr.args[0])


@tvm.transform.module_pass(opt_level=0, name="PadWeightColumns")
def pad_weight_columns(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
    """Every relax.matmul by a constant whose column count has no vector-width factor, padded and sliced."""
    mutator = _PadWeightColumns(mod)
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function):
            mutator.builder_.update_func(gv, mutator.visit_expr(func))
    return mutator.builder_.get()
