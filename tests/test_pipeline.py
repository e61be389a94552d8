"""End to end on every tiny sample: every task has a space, and a random legal program of every task
builds, runs and matches the untuned reference."""

import numpy as np
import pytest

import sample_models
from tlm_core.frontend import load_model
from tlm_core.partition import partition
from tlm_core.program import random_program
from tlm_core.target import host_target

TINY = [name for name, spec in sample_models.SAMPLES.items() if spec.tiny]


@pytest.mark.slow
@pytest.mark.parametrize("name", TINY)
def test_random_programs_of_every_task_pass_the_numeric_check(name, space_builder, measurer):
    part = partition(load_model(name), host_target())
    rng = np.random.default_rng(0)
    failures = []
    for task in part.tasks:
        space = space_builder.build(task)
        assert space.sketches, f"{task.name}: empty design space"
        program = random_program(space, rng)
        (result,) = measurer.measure(task, [program.mod])
        if not result.ok:
            failures.append(f"{task.name} {program.decisions}: {result.error}")
    assert not failures, "\n".join(failures)
