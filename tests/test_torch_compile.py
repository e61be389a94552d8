"""PyTorch's torch.compile as a reference row: checked against eager, timed like eager."""

import pytest

from tlm_core.compile import torch_compile_run
from tlm_core.frontend import load_model


def test_torch_compile_matches_eager_and_is_timed():
    report = torch_compile_run(load_model("bert-tiny"), repeat=2)
    assert report.ok and report.max_abs_error < 1e-3
    assert len(report.latencies) == 2 and report.latency > 0 and report.compile_s > 0


def test_torch_compile_needs_a_pytorch_module(tiny_onnx):
    with pytest.raises(ValueError, match="no PyTorch module"):
        torch_compile_run(load_model(tiny_onnx[0]))
