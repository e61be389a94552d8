"""Shared pytest fixtures. Add yours below; keep expensive set-up session-scoped."""

import os
import tempfile

import pytest

# `tlm adapt`'s local checkpoints: a temporary folder, never the user's ~/.cache (an adapted checkpoint for
# this machine would change which checkpoint the tests' `tlm generate` and the GUI use)
os.environ["TLM_ADAPTED_DIR"] = tempfile.mkdtemp(prefix="tlm-adapted-")


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


@pytest.fixture(scope="session")
def tiny_onnx(tmp_path_factory):
    """A valid ONNX model of one fused subgraph, matmul (16x16 weight) + relu, as (path, bytes)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 16)).astype("float32"), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    graph = helper.make_graph(nodes, "tiny", [x], [y], initializer=[weight])
    path = tmp_path_factory.mktemp("onnx") / "tiny_mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path, path.read_bytes()


@pytest.fixture(scope="session")
def tiny_sample_spaces(space_builder):
    """name -> the spaces of every task of that tiny sample model (slow tests: ~1-3 min for all six)."""
    import sample_models
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition

    out = {}
    for name, spec in sample_models.SAMPLES.items():
        if spec.tiny:
            tasks = partition(load_model(name), space_builder.target).tasks
            out[name] = [space_builder.build(t) for t in tasks]
    return out


@pytest.fixture(scope="session")
def workload_spaces(space_builder):
    """name -> space of the small TVMScript workloads in tests/workloads.py (fast tests of the TLM)."""
    from tests import workloads
    from tlm_core.partition.task import task_from_primfunc

    names = ["matmul_128", "matmul_relu_64", "softmax_64", "conv2d_relu_8", "add_64"]
    return {n: space_builder.build(task_from_primfunc(getattr(workloads, n), n)) for n in names}


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """`streamlit run app/studio.py` on a free port for every browser test (tests/browser.py)."""
    from tests.browser import serve

    yield from serve(tmp_path_factory)


@pytest.fixture(scope="module")
def page(server):
    """One Chromium page (one Streamlit session) per browser test module; its tests run in order on it."""
    from tests.browser import open_page

    yield from open_page(server)


def pytest_collection_modifyitems(config, items):
    """Browser tests (test_browser*.py) first: the rest of the suite leaves workers and load behind that made the
    real-mouse graph click miss (seen only after the whole suite, never when the browser tests ran alone)."""
    items.sort(key=lambda item: 0 if item.path.name.startswith("test_browser") else 1)


def pytest_terminal_summary(terminalreporter):
    """Browser tests skipped (no Chromium, no playwright): one line that says why and how to enable them, not only an
    `s` per module."""
    reports = terminalreporter.stats.get("skipped", [])
    skipped = [r for r in reports if r.nodeid.split("/")[-1].startswith("test_browser")]
    if skipped:
        longrepr = skipped[0].longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        files = len({r.nodeid.split("::")[0] for r in skipped})
        terminalreporter.write_line(f"browser tests skipped ({files} files): {reason}", yellow=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves a full-page screenshot, out/screenshots/failed-<test>.png, to see why."""
    report = yield
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if report.failed and call.when == "call" and page is not None:
        from tests.browser import SHOTS

        SHOTS.mkdir(parents=True, exist_ok=True)
        try:
            page.screenshot(path=str(SHOTS / f"failed-{item.name}.png"), full_page=True)
        except Exception as err:  # the page may be gone; the failure itself is what matters
            report.sections.append(("screenshot", f"no screenshot: {err}"))
    return report
