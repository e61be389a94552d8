"""tlm_core.frontend.checkpoint_folder: transformers checkpoint folders open with their task's inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from test_frontend import run_relax
from transformers import BertConfig, BertForSequenceClassification, ViTConfig, ViTModel

from tlm_core.frontend import ModelLoadError, load_model


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    text = BertConfig(
        vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=64, num_labels=3,
    )  # fmt: skip
    BertForSequenceClassification(text).save_pretrained(root / "bert-classifier")
    vision = ViTConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8
    )
    ViTModel(vision).save_pretrained(root / "vit")
    return {p.name: p for p in root.iterdir()}


def test_text_classifier_folder_opens_with_ids_and_mask(folders):
    model = load_model(folders["bert-classifier"], input_shapes={"input_ids": (1, 12)})
    shapes = [(s.name, s.shape, s.high) for s in model.inputs]
    assert shapes == [("input_ids", (1, 12), 64), ("attention_mask", (1, 12), 2)]
    assert "BertForSequenceClassification" in model.notes[0]
    ids = np.random.default_rng(0).integers(0, 64, (1, 12))
    mask = np.array([[1] * 9 + [0] * 3])
    expected = BertForSequenceClassification.from_pretrained(folders["bert-classifier"]).eval()(
        input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)
    ).logits.detach().numpy()
    assert expected.shape == (1, 3)
    np.testing.assert_allclose(run_relax(model, [ids, mask]), expected, rtol=1e-4, atol=1e-5)


def test_text_folder_defaults_to_the_positions_it_has(folders):
    model = load_model(folders["bert-classifier"])
    assert model.inputs[0].shape == (1, 64)  # 128 tokens by default, capped by max_position_embeddings
    assert any("--input-shape input_ids=1xN" in n for n in model.notes)
    with pytest.raises(ModelLoadError, match="100 tokens is over the model's 64 positions"):
        load_model(folders["bert-classifier"], input_shapes={"input_ids": (1, 100)})


def test_vision_folder_opens_with_pixel_values(folders):
    model = load_model(folders["vit"])
    assert [(s.name, s.shape) for s in model.inputs] == [("pixel_values", (1, 3, 32, 32))]
    x = model.random_inputs()
    np.testing.assert_allclose(run_relax(model, x), model.reference(x)[0], rtol=1e-4, atol=1e-5)


def test_folders_that_would_run_code_or_unpickle_are_refused(folders, tmp_path):
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text((folders["vit"] / "config.json").read_text())
    (pickled / "pytorch_model.bin").write_bytes(b"not read")
    with pytest.raises(ModelLoadError, match=r"no \.safetensors weights .*pytorch_model\.bin, which are never"):
        load_model(pickled)
    remote = tmp_path / "remote"
    remote.mkdir()
    config = json.loads((folders["vit"] / "config.json").read_text())
    (remote / "config.json").write_text(json.dumps(config | {"auto_map": {"AutoModel": "modeling_evil.Evil"}}))
    with pytest.raises(ModelLoadError, match=r"custom code \(auto_map\): refused"):
        load_model(remote)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="a folder without config.json"):
        load_model(tmp_path / "empty")
