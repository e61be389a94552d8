"""The TLM model: presets, and checkpoints that transformers loads on its own."""

import json

import pytest
import torch

from tlm_core.language import LanguageError, vocab_tokens
from tlm_core.model import PRESETS, load_checkpoint, new_model, num_parameters, preset, save_checkpoint


def test_presets():
    small = new_model(preset("small"))
    assert 3e6 <= num_parameters(small) <= 8e6
    assert num_parameters(small) * 4 <= 30e6  # fp32 safetensors fit the repository's 30 MB budget
    assert num_parameters(new_model(preset("tiny"))) < 5e5
    paper = PRESETS["gpt2"].gpt2_config()
    assert (paper.n_layer, paper.n_embd, paper.n_head) == (12, 768, 12)  # the paper's GPT-2 small
    assert paper.vocab_size == len(vocab_tokens())
    with pytest.raises(ValueError, match="unknown model preset"):
        preset("huge")


def test_checkpoint_loads_with_transformers_alone(tmp_path):
    from transformers import AutoTokenizer, GPT2LMHeadModel

    model = new_model(preset("tiny"), seed=3)
    save_checkpoint(model, tmp_path, extra={"step": 7})
    assert (tmp_path / "model.safetensors").exists()
    assert json.loads((tmp_path / "train_state.json").read_text()) == {"step": 7}
    again = GPT2LMHeadModel.from_pretrained(tmp_path).eval()
    tok = AutoTokenizer.from_pretrained(tmp_path)
    ids = torch.tensor([tok("<bos> <hw> kind llvm <dec> s0")["input_ids"]])
    with torch.no_grad():
        assert torch.allclose(model(ids).logits, again(ids).logits)
        assert torch.allclose(model(ids).logits, load_checkpoint(tmp_path)(ids).logits)


def test_same_seed_same_weights():
    a, b = new_model(preset("tiny"), seed=1), new_model(preset("tiny"), seed=1)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))


def test_checkpoint_of_another_language_is_refused(tmp_path):
    save_checkpoint(new_model(preset("tiny")), tmp_path)
    meta = json.loads((tmp_path / "tlm_language.json").read_text())
    (tmp_path / "tlm_language.json").write_text(json.dumps({**meta, "vocab_hash": "0" * 16}))
    with pytest.raises(LanguageError, match="retrain"):
        load_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing")


def test_an_earlier_version_of_the_same_vocabulary_is_only_a_training_start(tmp_path):
    save_checkpoint(new_model(preset("tiny")), tmp_path)
    meta = json.loads((tmp_path / "tlm_language.json").read_text())
    (tmp_path / "tlm_language.json").write_text(json.dumps({**meta, "version": "tlm-lang-1"}))
    with pytest.raises(LanguageError, match="tlm-lang-1"):  # same tokens, written in another order
        load_checkpoint(tmp_path)
    assert load_checkpoint(tmp_path, any_version=True) is not None  # what `--init` does


def test_a_checkpoint_of_a_shorter_vocabulary_grows_its_embeddings_to_train_on(tmp_path):
    from tlm_core.language.vocab import vocab_hash

    old = len(vocab_tokens()) - 10  # as if the last 10 tokens were added by a later version
    model = new_model(preset("tiny"))
    model.resize_token_embeddings(old)
    save_checkpoint(model, tmp_path)
    meta = json.loads((tmp_path / "tlm_language.json").read_text())
    meta = {**meta, "version": "tlm-lang-0", "vocab_size": old, "vocab_hash": vocab_hash(old)}
    (tmp_path / "tlm_language.json").write_text(json.dumps(meta))
    with pytest.raises(LanguageError, match="tlm-lang-0"):
        load_checkpoint(tmp_path)
    grown = load_checkpoint(tmp_path, any_version=True)
    assert grown.get_input_embeddings().weight.shape[0] == len(vocab_tokens())
    assert torch.equal(grown.get_input_embeddings().weight[:old], model.get_input_embeddings().weight)
