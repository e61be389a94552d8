"""Training: pre-training and fine-tuning run, resume, log, and learn a tiny repeated corpus."""

import json
import random

import numpy as np
import pytest

from tlm_core.cli import main
from tlm_core.dataset import Catalog
from tlm_core.dataset.catalog import CATALOG_FILE
from tlm_core.dataset.collect import RANDOM_DIR
from tlm_core.dataset.traces import SketchMatcher
from tlm_core.generator import Generator
from tlm_core.language import VERSION, LanguageError, encode, hardware_tokens
from tlm_core.measure.result import MeasureResult
from tlm_core.model import load_checkpoint, preset, train_state
from tlm_core.program import random_program
from tlm_core.records import RecordStore
from tlm_core.train import (
    LOG_FILE,
    TrainSettings,
    finetune,
    lm_example,
    measured_examples,
    pretrain,
    random_sentences,
    train,
)

FAST = dict(batch_size=4, lr=3e-3, warmup=2, log_every=1, save_every=5, threads=1)


def write_corpus(path, spaces, per_task=6):
    rng = random.Random(0)
    with path.open("w") as f:
        for space in spaces:
            for s in random_sentences(space, per_task, rng):
                f.write(json.dumps({"task_id": space.task.id, "text": s.text, "language": VERSION}) + "\n")
    return path


def log_rows(folder):
    return [json.loads(line) for line in (folder / LOG_FILE).read_text().splitlines()]


def test_pretrain_resumes_and_logs(tmp_path, workload_spaces):
    corpus = write_corpus(tmp_path / "corpus.jsonl", workload_spaces.values())
    out = tmp_path / "ckpt"
    info = pretrain([corpus], out, TrainSettings(steps=6, **FAST), preset("tiny"), quiet=True)
    assert info["step"] == 6 and train_state(out)["phase"] == "pretrain"
    info = pretrain([corpus], out, TrainSettings(steps=9, **FAST), preset("tiny"), quiet=True)
    assert info["step"] == 9  # resumed from step 6, not restarted
    # the hardware it learnt from, for the Generator's warning on other hardware
    space = workload_spaces["matmul_relu_64"]
    assert train_state(out)["hardware"] == [" ".join(hardware_tokens(space.target))]
    trained = Generator.from_checkpoint(out)
    assert trained.unseen_hardware(space) is None
    trained.hardware = ["<hw> kind llvm cpu znver1 cores 2^6 ;"]
    note = trained.unseen_hardware(space)
    assert note and "cpu: znver1 trained" in note and "cores: 64 trained" in note and "tlm dataset collect" in note
    assert [r["step"] for r in log_rows(out)] == list(range(1, 10))
    assert (out / "optimizer.pt").exists()
    # the checkpoint generates valid programs
    from tlm_core.program import apply_decisions

    g = Generator(load_checkpoint(out)).greedy(space)
    apply_decisions(space, g.sketch_index, g.decisions)


def test_a_corpus_of_another_language_version_is_refused(tmp_path):
    path = tmp_path / "v1.jsonl"
    path.write_text(json.dumps({"task_id": "t", "text": "<bos> <eos>"}) + "\n")  # no "language": version 1
    with pytest.raises(LanguageError, match="tlm-lang-1"):
        pretrain([path], tmp_path / "ckpt", TrainSettings(steps=1, **FAST), preset("tiny"), quiet=True)


def test_time_budget_stops_with_a_checkpoint(tmp_path, workload_spaces):
    corpus = write_corpus(tmp_path / "corpus.jsonl", [workload_spaces["softmax_64"]])
    settings = TrainSettings(steps=10_000, max_seconds=0.0, **FAST)
    info = pretrain([corpus], tmp_path / "ckpt", settings, preset("tiny"), quiet=True)
    assert info["step"] == 1 and (tmp_path / "ckpt" / "model.safetensors").exists()


def test_loss_goes_down_on_a_tiny_repeated_corpus(tmp_path, workload_spaces):
    space = workload_spaces["matmul_128"]
    examples = [lm_example(s.text) for s in random_sentences(space, 2, random.Random(0))]
    train(examples, tmp_path / "ckpt", TrainSettings(steps=60, **FAST), "pretrain", preset("tiny"), quiet=True)
    losses = [r["loss"] for r in log_rows(tmp_path / "ckpt")]
    assert losses[-1] < 0.3 * losses[0], losses


def test_finetune_on_the_best_records(tmp_path, workload_spaces, space_builder):
    """A live collection of 5 measured programs and a failed one: each record maps back to the decisions that
    produced it (SketchMatcher), the fastest become sentences, and fine-tuning learns the best one."""
    space = workload_spaces["matmul_relu_64"]
    data = tmp_path / "data"
    store = RecordStore(data / RANDOM_DIR)
    rng = np.random.default_rng(0)
    programs = [random_program(space, rng) for _ in range(6)]
    for i, p in enumerate(programs[:5]):
        store.append(space.task, p.trace, MeasureResult(ok=True, latencies=[1e-3 * (i + 1)] * 3))
    store.append(space.task, programs[5].trace, MeasureResult.failure("crashed"))  # never an example
    Catalog(data / CATALOG_FILE).add("workloads", [space.task])
    matcher = SketchMatcher(space)
    for p, r in zip(programs, store.records(space.task.id), strict=True):
        assert matcher.match(r.trace) == (p.sketch_index, p.decisions)

    examples, summary = measured_examples([data], top=2, builder=space_builder, log=lambda m: None)
    assert summary["tasks"] == 1 and summary["programs"] == 5  # the failed program is left out
    best = [encode(space, p.sketch_index, p.decisions) for p in programs[:2]]  # the two fastest, best first
    assert [e.ids for e in examples] == [s.ids for s in best]
    assert [e.loss_mask for e in examples] == [s.decision_mask for s in best]
    ex = examples[0]
    first = ex.loss_mask.index(True)
    assert not any(ex.loss_mask[:first]) and sum(ex.loss_mask) < len(ex.ids) / 2  # decisions only
    examples = examples[:1]  # the best one

    base = tmp_path / "pre"
    corpus = write_corpus(tmp_path / "corpus.jsonl", [space])
    pretrain([corpus], base, TrainSettings(steps=3, **FAST), preset("tiny"), quiet=True)
    out = tmp_path / "ft"
    info = finetune(examples * 4, out, TrainSettings(steps=40, **FAST), init_from=base, quiet=True)
    assert info["phase"] == "finetune" and info["step"] == 40
    losses = [r["loss"] for r in log_rows(out)]
    assert losses[-1] < losses[0]
    g = Generator(load_checkpoint(out)).greedy(space)  # it learnt the one best program
    assert (g.sketch_index, g.decisions) == (programs[0].sketch_index, programs[0].decisions)


def test_cli_generate_with_an_untrained_model(capsys, space_builder, tmp_path):
    from pathlib import Path

    operator = str(Path(__file__).parent / "data" / "matmul_relu.py")
    assert main(["generate", operator, "--random-init", "--preset", "tiny", "--candidates", "3", "--json",
                 "--quiet"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] == doc["candidates"] == 3 * len(doc["tasks"])
    cand = doc["tasks"][0]["candidates"][0]
    assert cand["valid"] and cand["sentence"].startswith("<bos>")
    assert doc["hardware_note"] is None  # an untrained model says nothing of its hardware
    # no checkpoint: a clear one-line error
    assert main(["generate", operator, "--checkpoint", str(tmp_path / "none"), "--quiet"]) == 2
    assert "no TLM checkpoint" in capsys.readouterr().err


def test_cli_train(capsys, tmp_path, workload_spaces):
    corpus = write_corpus(tmp_path / "corpus.jsonl", [workload_spaces["softmax_64"]])
    out = tmp_path / "ckpt"
    argv = ["train", "pretrain", str(corpus), "--out", str(out), "--preset", "tiny", "--steps", "3", "--json",
            "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["step"] == 3
    assert load_checkpoint(out) is not None


def test_cli_generate_uses_the_shipped_checkpoint(capsys, space_builder):
    from pathlib import Path

    from tlm_core.model import default_checkpoint

    if not (default_checkpoint() / "config.json").exists():
        import pytest

        pytest.skip("no shipped checkpoint in this checkout")
    operator = str(Path(__file__).parent / "data" / "matmul_relu.py")
    assert main(["generate", operator, "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["checkpoint"] == str(default_checkpoint())
    from tlm_core.target import host_target

    here = " ".join(hardware_tokens(host_target()))  # a warning exactly when this machine is not its hardware
    assert (doc["hardware_note"] is None) == (here in train_state(default_checkpoint())["hardware"])
    assert doc["valid"] == doc["candidates"] == len(doc["tasks"])
