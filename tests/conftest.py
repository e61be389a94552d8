"""Shared pytest fixtures. Add yours below; keep expensive set-up session-scoped."""

import pytest


@pytest.fixture(scope="session")
def measurer(tmp_path_factory):
    """One Measurer for the whole session: its worker's ~3 s start-up (importing TVM) is paid once.

    Short timings (3 repeats of >= 1 ms) keep tests fast; references are cached in a temporary directory.
    """
    from tlm_core.measure import Measurer

    with Measurer(
        target="llvm", repeat=3, min_repeat_ms=1, timeout_s=30.0, cache_dir=tmp_path_factory.mktemp("tlm-cache")
    ) as m:
        yield m


@pytest.fixture(scope="session")
def space_builder():
    """The process-wide SpaceBuilder for this CPU: TVM's ~20 s start-up (tensor intrinsics) is paid once."""
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    return SpaceBuilder.for_target(host_target())
