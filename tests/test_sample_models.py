"""The sample models: registry, seeded builds, numerics against PyTorch, and LLaMA-7B's layer repeats."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import sample_models
from sample_models import SAMPLES
from sample_models import llama_layers as ll
from tlm_core.frontend.model import LoadedModel, ModelLoadError

TINY = [name for name, spec in SAMPLES.items() if spec.tiny]
# The paper-size models take minutes and several GB: run them by hand with TLM_PAPER_MODELS=1.
paper_size = pytest.mark.skipif(not os.environ.get("TLM_PAPER_MODELS"), reason="set TLM_PAPER_MODELS=1")


def run_relax(model: LoadedModel, inputs: list[np.ndarray]) -> np.ndarray:
    import tvm
    from tvm import relax

    from tlm_core.target import host_target

    vm = relax.VirtualMachine(tvm.compile(model.mod, target=host_target()), tvm.cpu())
    out = vm["main"](*[tvm.runtime.tensor(x) for x in inputs])
    return out.numpy() if hasattr(out, "numpy") else out[0].numpy()


def assert_matches_pytorch(model: LoadedModel) -> None:
    inputs = model.random_inputs()
    assert model.reference is not None
    ref = model.reference(inputs)[0]
    out = run_relax(model, inputs)
    assert out.shape == ref.shape
    assert np.abs(out - ref).max() <= 1e-4 * np.abs(ref).max()


def test_names_unique_and_every_paper_sample_has_a_tiny_variant() -> None:
    names = [s.name for s in sample_models._SPECS]
    assert len(names) == len(set(names)) == len(SAMPLES) == 18
    paper = {s.family for s in SAMPLES.values() if not s.tiny and not s.pretrained and not s.test}
    tiny = {s.family for s in SAMPLES.values() if s.tiny}
    assert paper == tiny and len(paper) == 6
    assert SAMPLES[sample_models.DEFAULT].tiny


def test_import_is_cheap() -> None:
    code = "import sys, sample_models; assert not {'torch', 'tvm', 'transformers'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(os.path.dirname(__file__)))


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelLoadError, match="resnet50-tiny.*llama-tiny"):
        sample_models.load("resnet51")


def test_same_name_same_weights() -> None:
    (a, xa), (b, xb) = SAMPLES["resnet50-tiny"].build(), SAMPLES["resnet50-tiny"].build()
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert ka == kb and bool((va == vb).all()), ka
    assert bool((xa[0] == xb[0]).all())


@pytest.mark.parametrize("name", ["resnet50-tiny", "mobilenetv2-tiny", "efficientnet-b0-tiny"])
def test_batchnorm_statistics_are_calibrated(name: str) -> None:
    import torch

    model, _ = SAMPLES[name].build()
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bns and not model.training
    for bn in bns:  # fresh statistics (mean 0, var 1) would make BN folding an identity
        assert bn.running_mean.abs().max() > 1e-3 and (bn.running_var - 1).abs().max() > 1e-3


@pytest.mark.parametrize("name", TINY)
def test_tiny_sample_matches_pytorch(name: str) -> None:
    model = sample_models.load(name)
    assert model.name == name and model.source == "sample" and model.notes and not model.call_repeats
    for spec in model.inputs:
        if spec.dtype == "int64":  # token ids stay inside the vocabulary, the attention mask is all ones
            assert (spec.low, spec.high) in [(0, 1000), (1, 2)]
    assert_matches_pytorch(model)


def test_default_opens_with_its_operators() -> None:
    # how long a second import takes in a process: benchmarks/speed_claims.py
    model = sample_models.load(sample_models.DEFAULT)
    text = model.mod.script()
    for op in ("R.nn.conv2d", "R.nn.batch_norm", "R.nn.relu", "R.add", "R.nn.max_pool2d", "R.mean", "R.matmul"):
        assert op in text, op  # the global average pool is imported as a mean


@pytest.mark.slow
def test_llama_tiny_layers_repeat_exactly() -> None:
    """2 built layers with repeats stand for 4 real ones: the same calls, per position and per function."""
    s1, s2, s4 = (list(ll.tiny_call_names(n)) for n in (1, 2, 4))
    with pytest.raises(ValueError):  # a single layer is not enough: the causal mask fuses into it
        ll.layer_spans(s1, s2, 1)
    first, second = ll.decoder_layer_spans(2)
    assert first.stop == second.start and s2[first.start : first.stop] == s2[second.start : second.stop]
    layer = s2[second.start : second.stop]
    assert s2[: first.start] + layer * 4 + s2[second.stop :] == s4
    assert layer[0] == "power" and layer[-1].endswith("add4")  # input RMSNorm ... residual add

    repeats = ll.decoder_layer_repeats(total=4, built=2)
    weighted: Counter[str] = Counter()
    for i, name in enumerate(s2):
        weighted[name] += repeats.get(i, 1)
    assert weighted == Counter(s4)


@pytest.mark.slow
def test_partition_weights_follow_the_repeats() -> None:
    from tlm_core.partition import partition
    from tlm_core.target import host_target

    model = sample_models.load("llama-tiny")
    model.call_repeats = ll.decoder_layer_repeats(total=4, built=2)
    four = sample_models.load_spec(SAMPLES["llama-tiny"], layers=4)
    target = host_target()
    weights = lambda p: Counter({t.id: t.weight for t in p.tasks})  # noqa: E731
    assert weights(partition(model, target)) == weights(partition(four, target))


@paper_size
@pytest.mark.parametrize("name", ["resnet50", "mobilenetv2", "efficientnet-b0", "bert", "gpt2"])
def test_paper_sample_matches_pytorch(name: str) -> None:
    assert_matches_pytorch(sample_models.load(name))


@paper_size
def test_llama_7b_has_the_tiny_call_sequence() -> None:
    model = sample_models.load("llama-7b")
    assert model.reference is None and any("cannot be run end to end" in n for n in model.notes)
    assert model.call_repeats == ll.decoder_layer_repeats() and set(model.call_repeats.values()) == {16}
    assert tuple(ll.call_names(model.mod)) == ll.tiny_call_names(ll.BUILT_LAYERS)
