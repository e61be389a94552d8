"""Decisions -> program: legal vectors apply and compute the right thing; illegal ones are refused, not repaired."""

import dataclasses

import numpy as np
import pytest
import tvm

from tests import workloads
from tlm_core.partition.task import task_from_primfunc
from tlm_core.program import InvalidDecisions, apply_decisions, random_program
from tlm_core.space import COMPUTE_LOCATION, decision_to_json, random_decisions, replay, trace_decisions


@pytest.fixture(scope="module")
def spaces(space_builder):
    names = ["matmul_128", "matmul_relu_64", "softmax_64", "conv2d_relu_8", "add_64"]
    return {n: space_builder.build(task_from_primfunc(getattr(workloads, n), n)) for n in names}


def with_decision(sketch, index, value):
    decisions = list(sketch.sampled_decisions)
    decisions[index] = value
    return decisions


def test_sampled_vector_gives_the_sketch_program(spaces):
    space = spaces["matmul_relu_64"]
    for sketch in space.sketches:
        program = apply_decisions(space, sketch.index, sketch.sampled_decisions)
        assert program.decisions == sketch.sampled_decisions
        assert trace_decisions(program.trace) == sketch.sampled_decisions
        assert "EnterPostproc" in [inst.kind.name for inst in program.trace.insts]
        assert "def main" in program.script()
        assert program.mod["main"] is not None


def test_decisions_from_json_are_accepted(spaces):
    space = spaces["matmul_relu_64"]
    sketch = space.sketches[0]
    as_json = [decision_to_json(d) for d in sketch.sampled_decisions]  # tiles as lists
    assert apply_decisions(space, 0, as_json).decisions == sketch.sampled_decisions


def test_illegal_tile_is_refused_not_repaired(spaces):
    space = spaces["matmul_128"]
    sketch = space.sketches[0]
    assert (sketch.points[0].loop, sketch.points[0].extent) == ("i", 128)
    with pytest.raises(InvalidDecisions) as err:
        apply_decisions(space, 0, with_decision(sketch, 0, [3, 3, 3, 3]))
    assert err.value.index == 0
    assert str(err.value) == "decision 0 (tile of loop i, extent 128): factors [3, 3, 3, 3] multiply to 81, not 128"
    # ...which TVM on its own would silently have turned into [1, 1, 1, 128]
    repaired = replay(sketch, lambda p: (3, 3, 3, 3) if p.index == 0 else p.sampled).trace_decisions()[0]
    assert repaired == (1, 1, 1, 128)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([1, 1, 1, 128], "innermost factor 128 of [1, 1, 1, 128] exceeds max_innermost_factor 64"),
        ([2, 64], "expected 4 factors, got 2: [2, 64]"),
        ([0, 1, 1, 128], "factors [0, 1, 1, 128] must all be positive"),
        (7, "expected a list of 4 factors, got 7"),
    ],
)
def test_other_illegal_tiles(spaces, value, reason):
    space = spaces["matmul_128"]
    with pytest.raises(InvalidDecisions) as err:
        apply_decisions(space, 0, with_decision(space.sketches[0], 1, value))
    assert err.value.index == 1
    assert err.value.reason == f"decision 1 (tile of loop j, extent 128): {reason}"


def test_out_of_range_categorical(spaces):
    space = spaces["matmul_128"]
    sketch = space.sketches[0]
    point = sketch.points[3]
    assert point.kind == "categorical"
    for bad in (4, -1):
        with pytest.raises(InvalidDecisions) as err:
            apply_decisions(space, 0, with_decision(sketch, 3, bad))
        assert err.value.index == 3
        assert f"index {bad} is out of range for 4 candidates [0, 16, 64, 512]" in err.value.reason


def test_illegal_compute_location(spaces):
    """A location TVM would silently snap to a legal one is refused with the legal ones listed."""
    space = spaces["conv2d_relu_8"]
    sketch = space.sketches[0]
    point = next(p for p in sketch.points if p.kind == COMPUTE_LOCATION)
    bad = next(c for c in range(-2, len(point.consumer_loops)) if c not in point.choices)
    with pytest.raises(InvalidDecisions) as err:
        apply_decisions(space, 0, with_decision(sketch, point.index, bad))
    assert err.value.index == point.index
    assert f"location {bad} is not legal for block pad; legal: -2 (inline), -1 (root)" in err.value.reason


def test_wrong_number_of_decisions_and_sketch(spaces):
    space = spaces["matmul_128"]
    with pytest.raises(InvalidDecisions) as err:
        apply_decisions(space, 0, space.sketches[0].sampled_decisions[:2])
    assert err.value.index == 2 and "takes 4 decisions, got 2" in err.value.reason
    with pytest.raises(InvalidDecisions):
        apply_decisions(space, len(space.sketches), [])


def test_postprocessor_rejection_is_reported(spaces):
    class RejectAll:
        def apply(self, sch):
            return False

    space = dataclasses.replace(spaces["matmul_relu_64"], postprocs=[RejectAll()])
    with pytest.raises(InvalidDecisions) as err:
        apply_decisions(space, 0, space.sketches[0].sampled_decisions)
    assert err.value.index is None
    assert err.value.reason == "postprocessor RejectAll rejected the program"


@pytest.mark.parametrize("name", ["matmul_relu_64", "softmax_64"])
def test_random_legal_vectors_always_apply(spaces, name):
    space = spaces[name]
    for sketch in space.sketches:
        vectors = {str(random_decisions(sketch, seed)) for seed in range(8)}
        for seed in range(8):
            decisions = random_decisions(sketch, seed)
            assert apply_decisions(space, sketch.index, decisions).decisions == decisions
        if sketch.log10_size > 2:
            assert len(vectors) > 1  # seeds give different programs


def test_numpy_generator_and_empty_space(spaces):
    space = spaces["matmul_relu_64"]
    decisions = random_decisions(space.sketches[1], np.random.default_rng(0))
    assert apply_decisions(space, 1, decisions).decisions == decisions
    assert apply_decisions(spaces["add_64"], 0, []).decisions == []


def _run(mod: tvm.IRModule, target, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> np.ndarray:
    args = [tvm.runtime.tensor(a) for a in inputs] + [tvm.runtime.tensor(np.zeros(out_shape, "float32"))]
    tvm.compile(mod, target)["main"](*args)
    return args[-1].numpy()


@pytest.mark.parametrize("name", ["matmul_relu_64", "softmax_64", "conv2d_relu_8"])
def test_random_program_builds_and_matches_the_unscheduled_one(spaces, space_builder, name):
    space = spaces[name]
    rng = np.random.default_rng(0)
    *ins, out = space.task.params
    inputs = [rng.standard_normal(shape).astype(dtype) for _, shape, dtype in ins]
    expected = _run(space.task.mod, space_builder.target, inputs, out[1])
    if name == "matmul_relu_64":
        np.testing.assert_allclose(expected, np.maximum(inputs[0] @ inputs[1], 0), rtol=1e-4, atol=1e-4)
    for sketch in space.sketches:
        program = random_program(space, rng=sketch.index, sketch_index=sketch.index)
        got = _run(program.mod, space_builder.target, inputs, out[1])
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_cuda_space_without_a_gpu(space_builder):
    """CUDA spaces are built and applied without a GPU (only building and running a kernel needs one)."""
    from tvm.target import Target

    from tlm_core.space import SpaceBuilder

    cuda = Target(
        {
            "kind": "cuda",
            "arch": "sm_80",
            "max_threads_per_block": 1024,
            "max_shared_memory_per_block": 49152,
            "thread_warp_size": 32,
            "host": space_builder.target.host or {"kind": "llvm"},
        }
    )
    space = SpaceBuilder.for_target(cuda).build(task_from_primfunc(workloads.matmul_128, "matmul_128"))
    assert "VerifyGPUCode" in [type(p).__name__ for p in space.postprocs]
    sketch = space.sketches[0]
    assert [p.kind for p in sketch.points][:3] == ["tile", "tile", "tile"]
    assert {p.used_by for p in sketch.points if p.kind == "categorical"} >= {"meta_schedule.unroll_explicit"}
    program = apply_decisions(space, 0, sketch.sampled_decisions)
    assert "threadIdx.x" in program.script()
    assert random_program(space, rng=0).decisions  # retries past VerifyGPUCode's rejections
