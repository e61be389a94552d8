"""The Roller-style heuristic: always a valid program of the same space (how much faster than TVM's default it
runs is benchmarks/speed_claims.py's finding, not a test's)."""

import pytest

import sample_models
import tests.workloads as W
from tlm_core.baselines.default import default_module
from tlm_core.baselines.hardware import Hardware
from tlm_core.baselines.heuristic import (
    DEFAULT_KNOBS,
    Knobs,
    _rfactor_on_inner_loop,
    _rfactors_on_inner_loop,
    construct,
    heuristic_candidates,
    heuristic_program,
    heuristic_top_k,
    readers,
)
from tlm_core.frontend import load_model
from tlm_core.partition import partition, task_from_primfunc, te_prim_func
from tlm_core.target import host_target

WORKLOADS = W.NAMES
TINY = [name for name, spec in sample_models.SAMPLES.items() if spec.tiny]


def _task(name):
    return task_from_primfunc(getattr(W, name), name)


def test_hardware_has_sane_numbers():
    hw = Hardware.from_target(host_target())
    assert hw.cores >= 1 and hw.lanes() in (4, 8, 16) and hw.l1_bytes < hw.l2_bytes
    # another CPU's target is planned for that CPU's caches, not this host's
    from tvm.target import Target

    from tlm_core.target import caches_kib

    zen = Target({"kind": "llvm", "mcpu": "znver5", "num-cores": 2})
    assert (Hardware.from_target(zen).l1_bytes, Hardware.from_target(zen).l2_bytes) == (48 * 1024, 1024 * 1024)
    assert caches_kib(zen)[:2] == (48, 1024)


def test_vector_lanes_follow_the_cpus_instruction_sets():
    """TVM 0.27's llvm_get_vector_width says 512 for every x86 CPU; an AVX2 CPU has 8 fp32 lanes, not 16, and
    its prompt must say so (the TLM tells machines apart by it)."""
    from tvm.target import Target

    from tlm_core.language import hardware_tokens
    from tlm_core.target import vector_bits

    def cpu(name):
        return Target({"kind": "llvm", "mcpu": name, "num-cores": 2})

    assert [vector_bits(cpu(c)) for c in ("generic", "haswell", "znver3", "znver4", "emeraldrapids")] == [
        128, 256, 256, 512, 512]  # fmt: skip
    assert Hardware.from_target(cpu("haswell")).lanes() == 8 and Hardware.from_target(cpu("znver4")).lanes() == 16
    assert "vec 2^8 ;" in " ".join(hardware_tokens(cpu("znver3")))


@pytest.mark.parametrize("name", WORKLOADS)
def test_top1_is_a_valid_program_that_matches_the_reference(name, space_builder, measurer):
    task = _task(name)
    cand = heuristic_program(space_builder.build(task))
    (result,) = measurer.measure(task, [cand.program.mod])
    assert result.ok, result.error


def test_top1_and_the_untuned_default_both_run_side_by_side_on_matmul_128(space_builder, measurer):
    task = _task("matmul_128")
    cand = heuristic_program(space_builder.build(task))
    # Medians of three batches in rotated order, each program checked against the reference every time: a program
    # that failed has no median. Which is faster: benchmarks/speed_claims.py (measured ~40x).
    mods = {"default": default_module(task, host_target()), "heuristic": cand.program.mod}
    latency = measurer.side_by_side(task, mods, rounds=3)
    assert set(latency) == {"default", "heuristic"} and all(v is not None and v > 0 for v in latency.values())


def test_top1_is_deterministic(space_builder):
    space = space_builder.build(_task("matmul_relu_64"))
    first, second = heuristic_program(space), heuristic_program(space)
    assert (first.sketch_index, first.decisions) == (second.sketch_index, second.decisions)


def test_top_k_measures_distinct_ranked_candidates(space_builder, measurer):
    space = space_builder.build(_task("matmul_relu_64"))
    cands = heuristic_candidates(space, k=10)
    assert 1 < len(cands) <= 10
    assert len({(c.sketch_index, tuple(c.decisions)) for c in cands}) == len(cands)
    assert [c.estimate for c in cands] == sorted(c.estimate for c in cands)
    tiles = [tuple(d for d in c.decisions if isinstance(d, tuple)) for c in cands]
    assert len(set(tiles)) >= 3  # distinct tile plans first, not ten sketch/unroll variants of one
    measured, seconds = heuristic_top_k(space, measurer, k=4)
    assert len(measured) == 4 and all(m.result.ok for m in measured) and seconds > 0
    # the 3 fastest measured again; the fastest of that second measurement first, the rest by the first
    screened = [m for m in measured if m.again is not None]
    assert len(screened) == 3 and measured[0].again is not None
    assert measured[0].latest.latency == min(m.again.latency for m in screened)
    rest = [m.result.latency for m in measured[1:]]
    assert rest == sorted(rest) and max(m.result.latency for m in screened) <= min(
        m.result.latency for m in measured if m.again is None
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", TINY)
def test_top1_applies_to_every_task_of_the_tiny_samples(name, space_builder, measurer):
    part = partition(load_model(name), host_target())
    failures = []
    for task in part.tasks:
        cand = heuristic_program(space_builder.build(task))  # raises InvalidDecisions if it ever fails
        (result,) = measurer.measure(task, [cand.program.mod])
        if not result.ok:
            failures.append(f"{task.name} {cand.decisions}: {result.error}")
    assert not failures, "\n".join(failures)


@pytest.fixture(scope="module")
def rules_builder():
    """The rules below are about plans, which follow the caches: build for the CPU they were measured on (the
    Xeon's caches, tlm_core.target.KNOWN_CACHES_KIB) so that they hold on any host; nothing here is run."""
    from tlm_core.space import SpaceBuilder

    return SpaceBuilder.for_target(host_target(cpu="emeraldrapids"))


def _te_task(name, build):
    from tvm import te

    tensors = build(te)
    return task_from_primfunc(te_prim_func(tensors), name)


def test_conv_rules_keep_padding_out_of_the_reduction_and_vectors_whole(rules_builder):
    from tvm import topi

    def conv(te):
        x, w = te.placeholder((1, 8, 28, 28), name="X"), te.placeholder((8, 8, 3, 3), name="W")
        return [x, w, topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 1, 1))]

    space = rules_builder.build(_te_task("conv", conv))
    cand = heuristic_program(space)
    points = space.sketches[cand.sketch_index].points
    chosen = dict(zip([p.index for p in points], cand.decisions, strict=True))
    where = [p.consumer_loops[chosen[p.index]] for p in points if p.kind == "compute_location" and chosen[p.index] >= 0]
    # at the cache tile (a spatial loop), not inside rc/ry/rx where it would be copied again per tap
    assert where and all(name.split("_")[0] in ("nn", "ff", "yy", "xx") for name in where)
    xx = next(p for p in points if p.kind == "tile" and p.loop == "xx")
    lanes = Hardware.from_target(space.target).lanes()
    assert chosen[xx.index][-1] <= lanes  # 28 divides 28, but a 28-lane loop runs far slower than 14 lanes


def test_a_parallel_level_that_cuts_the_rows_takes_whole_rows(rules_builder):
    """MobileNetV2's 1x1 convolution 24->144 at 56x56: with the image rows in the cache tile under a parallel
    loop over chunks of 14 columns it ran 1.22-1.31x slower than with the rows in the parallel loop."""
    from tvm import topi

    def conv(te):
        x, w = te.placeholder((1, 24, 56, 56), name="X"), te.placeholder((144, 24, 1, 1), name="W")
        return [x, w, topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 0, 1))]

    space = rules_builder.build(_te_task("conv1x1", conv))
    cand = heuristic_program(space)
    tiles = {p.loop: d for p, d in zip(space.sketches[cand.sketch_index].points, cand.decisions, strict=True)
             if p.kind == "tile"}  # fmt: skip
    assert tiles["xx"][0] > 1  # the columns are cut into chunks at the parallel level ...
    assert tiles["yy"][0] == 56  # ... so the rows are there too, none in the cache tile


def test_row_sum_takes_the_rfactor_with_vector_partial_sums(rules_builder):
    """Measured on 128x768: 14 us, against 30 us (rfactor of the outer loop) and 47 us (none)."""

    def row_sum(te):
        x, k = te.placeholder((128, 768), name="X"), te.reduce_axis((0, 768), "k")
        return [x, te.compute((128,), lambda i: te.sum(x[i, k], axis=k))]

    space = rules_builder.build(_te_task("row_sum", row_sum))
    assert any(not _rfactor_on_inner_loop(s) for s in space.sketches)  # the space has the other kinds too
    assert _rfactor_on_inner_loop(space.sketches[heuristic_program(space).sketch_index])


def test_layer_norm_gets_vector_partial_sums_for_the_mean_and_the_variance(rules_builder):
    """Both long reductions rfactored into vector partial sums: LayerNorm 256x768 25 us, against 125 us with only
    the mean's sum (the variance then adds one float at a time), Zen 4 (benchmarks/heuristic_rule.py)."""

    def layer_norm(te):
        x, n = te.placeholder((256, 768), name="X"), 768.0
        k1, k2 = te.reduce_axis((0, 768), "k1"), te.reduce_axis((0, 768), "k2")
        total = te.compute((256,), lambda i: te.sum(x[i, k1], axis=k1), name="total")
        mean = te.compute((256,), lambda i: total[i] / n, name="mean")
        var = te.compute((256,), lambda i: te.sum((x[i, k2] - mean[i]) * (x[i, k2] - mean[i]), axis=k2), name="var")
        return [x, te.compute((256, 768), lambda i, j: (x[i, j] - mean[i]) / te.sqrt(var[i] / n + 1e-5))]

    space = rules_builder.build(_te_task("layer_norm", layer_norm))

    def rfactored(knobs: Knobs) -> int:
        return _rfactors_on_inner_loop(space.sketches[heuristic_program(space, knobs=knobs).sketch_index])

    assert rfactored(Knobs()) == 2 and rfactored(Knobs(every_reduction=False)) == 1


def test_a_padded_input_is_not_copied_again_for_every_block_of_output_channels(rules_builder):
    """ResNet-50's 3x3 convolution of 256 channels at 14x14: its padded input at the cache tile's row loop was
    copied for each of 16 blocks of output channels, three rows for each row (2.26 ms); at the root 1.16 ms."""
    from tvm import topi

    def conv(te):
        x, w = te.placeholder((1, 256, 14, 14), name="X"), te.placeholder((256, 256, 3, 3), name="W")
        return [x, w, topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 1, 1))]

    space = rules_builder.build(_te_task("conv3x3_256x14", conv))

    def pad_location(knobs: Knobs) -> str:
        cand = heuristic_program(space, knobs=knobs)
        points = space.sketches[cand.sketch_index].points
        ((d, p),) = [(d, p) for p, d in zip(points, cand.decisions, strict=True) if p.block == "pad_temp"]
        return {-1: "root", -2: "inline"}.get(d) or p.consumer_loops[d]

    assert pad_location(Knobs()) == "root" and pad_location(Knobs(recompute=1e9)).endswith("_1")


def test_a_reducing_producer_is_not_computed_again_for_every_element(rules_builder):
    """A row mean placed at the consumer's innermost loop made LLaMA's RMSNorm 776 ms instead of 0.24 ms."""

    def rms_norm(te):
        x, k = te.placeholder((32, 512), name="X"), te.reduce_axis((0, 512), "k")
        ms = te.compute((32,), lambda i: te.sum(x[i, k] * x[i, k], axis=k), name="ms")
        return [x, te.compute((32, 512), lambda i, j: x[i, j] * te.rsqrt(ms[i] / 512.0), name="out")]

    space = rules_builder.build(_te_task("rms_norm", rms_norm))
    for index in range(len(space.sketches)):
        built = construct(space, index)
        for p, d in zip(space.sketches[index].points, built.decisions, strict=True):
            if p.kind == "compute_location" and p.block == "ms" and d >= 0:
                assert d != len(p.consumer_loops) - 1 and p.consumer_loops[d] != "j"


def test_rfactor_partial_sums_stay_at_the_root_where_their_lanes_are_vectorized(rules_builder):
    """Under the final sum's row loop the partial sums' lane loop is not innermost and runs scalar: LLaMA's
    RMSNorm 128x4096 took 0.26 ms there, 0.11 ms with the partial sums at the root."""

    def rms_norm(te):
        x, k = te.placeholder((32, 1024), name="X"), te.reduce_axis((0, 1024), "k")
        ms = te.compute((32,), lambda i: te.sum(x[i, k] * x[i, k], axis=k), name="ms")
        return [x, te.compute((32, 1024), lambda i, j: x[i, j] * te.rsqrt(ms[i] / 1024.0), name="out")]

    space = rules_builder.build(_te_task("rms_norm", rms_norm))
    located = 0
    for index in range(len(space.sketches)):
        built = construct(space, index)
        for p, d in zip(space.sketches[index].points, built.decisions, strict=True):
            if p.kind == "compute_location" and p.block.endswith("_rf"):
                located += 1
                assert d == -1, (index, p.consumer_loops, d)
    assert located


def test_a_producer_several_blocks_read_is_computed_once(rules_builder):
    """Softmax's exp is read by the row sum and by the division: inlined it ran twice (32x128x128: 3.5 ms,
    2.0 ms at the root)."""
    from tvm import topi

    def softmax(te):
        x = te.placeholder((4, 16, 64), name="X")
        return [x, topi.nn.softmax(x)]

    task = _te_task("softmax", softmax)
    assert readers(task.mod, "T_softmax_exp") == 2 and readers(task.mod, "T_softmax_norm") == 0
    space = rules_builder.build(task)
    located = 0
    for index in range(len(space.sketches)):
        built = construct(space, index)
        for p, d in zip(space.sketches[index].points, built.decisions, strict=True):
            if p.kind == "compute_location" and p.block == "T_softmax_exp":
                located += 1
                assert d != -2 and -1 in p.choices  # never inlined; at the root
    assert located


def _matmul_tiles(rules_builder, m: int, k: int, n: int, knobs: Knobs = DEFAULT_KNOBS) -> dict:
    """The heuristic's Top-1 tile factors of A[m, k] @ B[k, n], by loop name."""
    from tvm import topi

    def build(te):
        a, b = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
        return [a, b, topi.nn.matmul(a, b)]

    space = rules_builder.build(_te_task(f"matmul{m}x{k}x{n}", build))
    cand = heuristic_program(space, knobs=knobs)
    points = space.sketches[cand.sketch_index].points
    return {p.loop: d for p, d in zip(points, cand.decisions, strict=True) if p.kind == "tile"}


def test_a_matmul_whose_rows_share_an_l1_set_is_blocked_along_the_reduction(rules_builder):
    """B's rows 4 KiB apart all fall in one L1 set: measured on the Xeon, GEMM 1024^3 53 -> 24 ms and
    LLaMA-7B's projections 4-6x faster with a block of 8 of B's rows reused by 16 register tiles."""
    lanes = Hardware.from_target(rules_builder.target).lanes()
    aliased, plain = _matmul_tiles(rules_builder, 64, 1024, 1024), _matmul_tiles(rules_builder, 64, 1024, 1000)
    k = next(loop for loop, d in aliased.items() if len(d) == 2)
    i, j = (loop for loop, d in aliased.items() if len(d) == 4)
    assert aliased[k][1] == 8 and aliased[i][2] > 1 and aliased[j][-1] == 4 * lanes
    assert plain[k][1] == 1 and all(d[2] == 1 for d in plain.values() if len(d) == 4)  # the usual plan


def test_a_reduction_too_long_for_l2_is_blocked_and_each_core_streams_its_weight_columns_once():
    """LLaMA-7B's 128x4096 @ 4096x11008: one 8-row register tile read 655 KB over the whole reduction, so the
    cache tile never grew and every core re-read B 16 times (68 GFLOP/s); blocked along the reduction, with all
    128 rows on each core, 166 GFLOP/s on Zen 4 (benchmarks/heuristic_rule.py, big_gemm)."""
    from tlm_core.space import SpaceBuilder

    zen4 = SpaceBuilder.for_target(host_target(cpu="znver4"))  # 1 MiB of L2 (the Xeon's 2 MiB holds that tile)
    tiles = _matmul_tiles(zen4, 128, 4096, 11008)
    k = next(loop for loop, d in tiles.items() if len(d) == 2)
    i, j = (loop for loop, d in tiles.items() if len(d) == 4)
    assert tiles[k][1] == 8 and tiles[i][0] == 1 and tiles[j][0] > 1
    usual = _matmul_tiles(zen4, 128, 4096, 11008, Knobs(long_reduction=False, rows_per_core=False))
    assert usual[k][1] == 1 and usual[i][0] > 1


def test_a_blocked_plan_unrolls_as_its_own_knob_says(rules_builder):
    """The blocked plan's unroll depth is its own knob: 64 measured 1.02x 16's on 119 Xeon tasks, but with each
    core's rows whole 16 is 1.7-2.2x faster on LLaMA's and GPT-2's large matmuls (Zen 4), so both are 16 now."""
    from tvm import topi

    def unroll(n: int, knobs: Knobs = DEFAULT_KNOBS) -> int:
        def build(te):
            a, b = te.placeholder((64, 1024), name="A"), te.placeholder((1024, n), name="B")
            return [a, b, topi.nn.matmul(a, b)]

        space = rules_builder.build(_te_task(f"matmul64x1024x{n}", build))
        cand = heuristic_program(space, knobs=knobs)
        points = space.sketches[cand.sketch_index].points
        return next(p.candidates[d] for p, d in zip(points, cand.decisions, strict=True)
                    if p.kind == "categorical" and "unroll" in (p.used_by or ""))  # fmt: skip

    deeper = Knobs(blocked_unroll=64)
    assert unroll(1024) == 16 and unroll(1024, deeper) == 64 and unroll(1000, deeper) == 16  # 1000: not blocked


def test_a_convolution_input_read_through_a_window_is_not_blocked(rules_builder):
    """A 5x5 convolution's padded 32x32 input has channels 4 KiB apart, as GEMM 1024's B has rows, but
    blocking it loses the cache tile (measured 5-10x slower on the zoo's 5x5 convolutions): the usual plan,
    unless the knob asks for it."""
    from tvm import topi

    def conv(te):
        x, w = te.placeholder((1, 32, 28, 28), name="X"), te.placeholder((64, 32, 5, 5), name="W")
        return [x, w, topi.nn.conv2d_nchw(x, w, 1, 2, 1)]

    space = rules_builder.build(_te_task("conv5x5_32x28", conv))

    def channel_step(knobs: Knobs) -> int:  # the input channels per reduction step (8 when blocked)
        cand = heuristic_program(space, knobs=knobs)
        points = space.sketches[cand.sketch_index].points
        (rc,) = [d for p, d in zip(points, cand.decisions, strict=True) if p.kind == "tile" and p.extent == 32
                 and len(d) == 2]  # fmt: skip
        return rc[1]

    assert channel_step(Knobs()) == 1 and channel_step(Knobs(block_windows=True)) == 8


def test_a_padded_input_under_whole_rows_is_copied_per_tile_not_inlined(rules_builder):
    """Whole rows put a 5x5 convolution's 28 image rows in the parallel level, leaving the cache-tile level no
    loop for the padded input: it goes to the parallel level's deepest loop (measured 6-10x faster than inlined
    on the zoo's 5x5 convolutions), unless the knob asks for the old inlining."""
    from tvm import topi

    def conv(te):
        x, w = te.placeholder((1, 24, 28, 28), name="X"), te.placeholder((32, 24, 5, 5), name="W")
        return [x, w, topi.nn.conv2d_nchw(x, w, 1, 2, 1)]

    space = rules_builder.build(_te_task("conv5x5_24x28", conv))

    def pad_location(knobs: Knobs) -> str:
        cand = heuristic_program(space, knobs=knobs)
        points = space.sketches[cand.sketch_index].points
        ((d, p),) = [(d, p) for p, d in zip(points, cand.decisions, strict=True) if p.block == "pad_temp"]
        return "inline" if d == -2 else p.consumer_loops[d]

    assert pad_location(Knobs()).endswith("_0") and pad_location(Knobs(window_at_parallel=False)) == "inline"


def test_a_matvec_with_an_aliased_operand_keeps_the_usual_vector(rules_builder):
    """Without a row axis there is no column of register tiles to block: the plan is the usual one."""

    def innermost(k):
        return [d[-1] for d in _matmul_tiles(rules_builder, 1, k, 1024).values() if len(d) == 4]

    assert innermost(1024) == innermost(16)  # rows 4 KiB apart along a reduction of 1024, not of 16
