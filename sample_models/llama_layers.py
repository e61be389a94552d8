"""LLaMA-7B without its 27 GB of weights: 2 real decoder layers, each call of them counted 16 times.

Why 2 layers and not 1: the fused graph of an N-layer LLaMA is prefix + N x layer + suffix only for N >= 2.
With a single layer, the causal-mask computation has one consumer and FuseOps merges it into that layer's
attention-score function, a task the real model does not have. From 2 layers on, the mask is computed once in
the prefix and every layer is the same call sequence, so 2 layers with repeats 16 give exactly the 32-layer
model's tasks and weights.

Which calls are the layers': fuse tiny LLaMAs of the same architecture with 2 and 3 layers (S2, S3: fused
function names of their calls, in execution order; L = len(S3) - len(S2) calls per layer) and find the first p
with S2[:p] + S2[p-L:p] + S2[p:] == S3; the layers are S2[p-2L:p-L] and S2[p-L:p]. The paper-size 2-layer model
has the same call sequence as the tiny one (checked by a slow test), so the same indices apply to it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tvm

LLAMA_7B_LAYERS = 32  # decoder layers of the real model
BUILT_LAYERS = 2  # decoder layers actually built for the llama-7b sample


def call_names(mod: tvm.IRModule) -> list[str]:
    """Fused-function names of the calls of `mod`, in execution order, as tlm_core.partition fuses it."""
    from tlm_core.partition.fuse import fuse
    from tlm_core.partition.graph import call_sites
    from tlm_core.target import host_target

    calls, _ = call_sites(fuse(mod, host_target()).mod["main"])
    return [c.func for c in calls]


def layer_spans(s_n: Sequence[str], s_next: Sequence[str], n: int) -> list[range]:
    """Call indices of each of the n layers in s_n, given the calls of the same model with n + 1 layers."""
    s_n, s_next = list(s_n), list(s_next)
    size = len(s_next) - len(s_n)
    # The first match puts the layer as early as possible, so a layer starts with its input norm rather than
    # ending with the next norm (later matches are rotations with the same call counts per function).
    for p in range(n * size, len(s_n) + 1):
        if size > 0 and s_n[:p] + s_n[p - size : p] + s_n[p:] == s_next:
            spans = [range(p - k * size, p - (k - 1) * size) for k in range(n, 0, -1)]
            if all(s_n[r.start : r.stop] == s_n[p - size : p] for r in spans):
                return spans
    raise ValueError(f"the calls of {n} layers are not {n} repeats of one layer followed by the rest")


@functools.cache
def tiny_call_names(layers: int) -> tuple[str, ...]:
    """Call sequence of llama-tiny's architecture with `layers` decoder layers."""
    import sample_models

    return tuple(call_names(sample_models.load_spec(sample_models.SAMPLES["llama-tiny"], layers=layers).mod))


@functools.cache
def decoder_layer_spans(built: int = BUILT_LAYERS) -> tuple[range, ...]:
    return tuple(layer_spans(tiny_call_names(built), tiny_call_names(built + 1), built))


def decoder_layer_repeats(total: int = LLAMA_7B_LAYERS, built: int = BUILT_LAYERS) -> dict[int, int]:
    """call_repeats for a model with `built` decoder layers standing in for `total` identical ones."""
    if built < 2 or total % built:
        raise ValueError(f"need at least 2 built layers that divide the total ({built} of {total})")
    return {i: total // built for span in decoder_layer_spans(built) for i in span}
