"""Space Builder: enumeration of legal choices, replay, sizes, and every kind of task."""

import itertools
import json
import math
import sys

import pytest

from tests import workloads
from tlm_core.partition.task import task_from_primfunc
from tlm_core.space import (
    COMPUTE_LOCATION,
    TILE,
    SpaceBuilder,
    perfect_tilings,
    random_decisions,
    replay,
    trace_decisions,
)

WORKLOADS = workloads.NAMES


def task(name: str):
    return task_from_primfunc(getattr(workloads, name), name)


@pytest.fixture(scope="module")
def spaces(space_builder):
    return {name: space_builder.build(task(name)) for name in WORKLOADS}


# --- perfect tilings -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extent", "n", "max_innermost", "count"),
    [
        (128, 4, 64, 119),  # 2^7 into 4: C(10,3) = 120, minus (1,1,1,128)
        (128, 4, -1, 120),  # -1: no limit
        (128, 2, 64, 7),  # innermost in 1..64 (a power of two): 7
        (64, 2, 64, 7),
        (1, 4, 16, 1),  # (1,1,1,1)
        (7, 2, 64, 2),  # a prime: (1,7), (7,1)
        (7, 3, -1, 3),
        (7, 2, 4, 1),  # only (7,1)
        (12, 3, -1, 18),  # 2^2 * 3: C(4,2) * C(3,2)
        (12, 2, 3, 3),  # innermost 1, 2 or 3
        (64, 1, -1, 1),
        (6, 2, 0, 0),  # a limit below 1 admits nothing (TVM would redraw forever)
    ],
)
def test_perfect_tilings_hand_counted(extent, n, max_innermost, count):
    tilings = perfect_tilings(extent, n, max_innermost)
    assert len(tilings) == count
    assert len(set(tilings)) == count
    for t in tilings:
        assert len(t) == n and math.prod(t) == extent
        assert max_innermost == -1 or t[-1] <= max_innermost


def test_perfect_tilings_match_brute_force():
    for extent, n, limit in itertools.product(range(1, 25), (1, 2, 3), (-1, 1, 4, 16)):
        brute = [
            t
            for t in itertools.product(range(1, extent + 1), repeat=n)
            if math.prod(t) == extent and (limit == -1 or t[-1] <= limit)
        ]
        assert perfect_tilings(extent, n, limit) == brute, (extent, n, limit)


# --- spaces of every kind of task ------------------------------------------------------------------------


@pytest.mark.parametrize("name", WORKLOADS)
def test_space_is_complete_and_consistent(spaces, name):
    space = spaces[name]
    assert space.sketches, "the space must have at least one sketch"
    for sketch in space.sketches:
        assert [p.index for p in sketch.points] == list(range(len(sketch.points)))
        assert [p.inst_index for p in sketch.points] == sorted(p.inst_index for p in sketch.points)
        for p in sketch.points:
            assert p.choices and p.sampled in p.choices
            assert len(set(p.choices)) == len(p.choices)
            assert p.check(p.sampled) is None
            assert p.describe(p.sampled)
        assert sketch.log10_size == pytest.approx(sum(math.log10(len(p.choices)) for p in sketch.points))
    total = sum(10**s.log10_size for s in space.sketches)
    assert space.log10_size == pytest.approx(math.log10(total))
    json.dumps(space.to_dict(with_choices=True))  # JSON-friendly


def test_injective_task_has_one_empty_sketch(spaces):
    space = spaces["add_64"]
    assert [len(s.points) for s in space.sketches] == [0]
    assert space.log10_size == 0.0


def test_decision_kinds_per_task(spaces):
    def kinds(name):
        return {p.kind for s in spaces[name].sketches for p in s.points}

    assert kinds("matmul_128") == {"tile", "categorical"}
    assert kinds("softmax_64") == {"tile", "categorical", "compute_location"}
    assert kinds("conv2d_relu_8") == {"tile", "categorical", "compute_location"}
    # the padding block of a conv can be inlined, kept at the root or computed at several conv loops
    pad = [p for s in spaces["conv2d_relu_8"].sketches for p in s.points if p.block == "pad"]
    assert pad and all({-2, -1} <= set(p.choices) and len(p.choices) > 2 for p in pad)


def test_matmul_space_size_hand_counted(spaces):
    # per sketch: tiles of i and j (4 factors of 128, innermost <= 64: 119 each), k (2 factors: 7), unroll (4)
    space = spaces["matmul_128"]
    per_sketch = 119 * 119 * 7 * 4
    for sketch in space.sketches:
        assert [len(p.choices) for p in sketch.points] == [119, 119, 7, 4]
        assert sketch.log10_size == pytest.approx(math.log10(per_sketch))
    assert space.log10_size == pytest.approx(math.log10(len(space.sketches) * per_sketch))
    tile = space.sketches[0].points[0]
    assert (tile.kind, tile.loop, tile.block, tile.extent, tile.n, tile.max_innermost_factor) == (
        TILE,
        "i",
        "C",
        128,
        4,
        64,
    )
    unroll = space.sketches[0].points[3]
    assert unroll.candidates == (0, 16, 64, 512) and unroll.used_by == "meta_schedule.unroll_explicit"
    assert unroll.block == "root"


# --- replay ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["matmul_relu_64", "softmax_64", "conv2d_relu_8", "layer_norm_64"])
def test_replaying_the_sampled_vector_reproduces_the_sketch(spaces, name):
    for sketch in spaces[name].sketches:
        replayed = replay(sketch, lambda p: p.sampled)
        assert replayed.decisions == sketch.sampled_decisions
        assert replayed.trace_decisions() == sketch.sampled_decisions
        # probing compute locations must not leave instructions in the replayed trace
        assert str(replayed.schedule.trace) == str(sketch.trace)
        assert trace_decisions(sketch.trace) == sketch.sampled_decisions


@pytest.mark.parametrize("name", ["softmax_64", "conv2d_relu_8", "depthwise_conv2d_8", "layer_norm_64"])
def test_compute_locations_equal_exhaustive_probing(spaces, name, monkeypatch):
    """The fast probe (each probe lands on the next legal location) finds exactly the candidates that TVM
    keeps unchanged when each of -2, -1, 0..len(first consumer's loops)-1 is tried on a copy."""
    replay_module = sys.modules["tlm_core.space.replay"]
    fast = replay_module._legal_compute_locations
    seen = []

    def checked(sch, block_rv):
        legal, consumer, loops = fast(sch, block_rv)
        exhaustive = []
        for candidate in range(-2, len(loops)):
            probe = sch.copy()
            probe.sample_compute_location(block_rv, decision=candidate)
            if int(probe.trace.get_decision(probe.trace.insts[-1])) == candidate:
                exhaustive.append(candidate)
        assert legal == exhaustive
        seen.append(legal)
        return legal, consumer, loops

    monkeypatch.setattr(replay_module, "_legal_compute_locations", checked)
    for sketch in spaces[name].sketches:
        for seed in range(3):
            random_decisions(sketch, seed)
    assert seen and any(len(legal) > 1 for legal in seen)


def test_legality_depends_on_earlier_decisions(spaces):
    """A conv's padding block cannot be computed at a loop of extent 1: the tile of k decides whether
    the outer k loop (k_0) is a legal location."""
    sketch = spaces["conv2d_relu_8"].sketches[0]
    tile_k = next(p for p in sketch.points if p.kind == TILE and p.loop == "k")

    def pad_choices(k_factors):
        replayed = replay(sketch, lambda p: k_factors if p.index == tile_k.index else p.sampled)
        return next(p for p in replayed.points if p.kind == COMPUTE_LOCATION and p.block == "pad")

    outer_1, outer_2 = pad_choices((1, 2, 4, 1)), pad_choices((2, 1, 4, 1))
    k0 = outer_1.consumer_loops.index("k_0")
    assert k0 not in outer_1.choices and k0 in outer_2.choices
    assert outer_2.describe(k0) == "at loop k_0 of conv"


def test_tvm_samples_are_always_among_the_choices(space_builder):
    # building asserts that TVM's sampled decision is a legal choice at every point; try other seeds
    for seed in range(1, 6):
        builder = SpaceBuilder(space_builder.target, seed=seed)
        for name in ("softmax_64", "conv2d_relu_8", "layer_norm_64"):
            assert builder.build(task(name)).sketches


def test_builder_is_cached_and_deterministic(space_builder):
    # one builder per target and process (how fast a later build is: benchmarks/speed_claims.py)
    assert SpaceBuilder.for_target(space_builder.target) is space_builder
    a = space_builder.build(task("matmul_relu_64"))
    b = space_builder.build(task("matmul_relu_64"))
    assert [s.sampled_decisions for s in a.sketches] == [s.sampled_decisions for s in b.sketches]


def test_choose_exceptions_propagate_unchanged(spaces):
    class Stop(Exception):
        pass

    def stop(point):
        raise Stop(point.index)

    with pytest.raises(Stop):
        replay(spaces["matmul_relu_64"].sketches[0], stop)
