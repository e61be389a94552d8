"""Data-parallel training: 2 CPU processes (gloo) under torchrun take the steps of one process with twice the batch."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

from tlm_core.language.vocab import BOS, EOS, SPECIALS, VERSION, vocab_tokens
from tlm_core.model import new_model, preset, train_state
from tlm_core.train import LOG_FILE, TrainSettings, pretrain

STEPS, BATCH = 3, 2  # per process: a global batch of 4
LAUNCHER = "import sys\nfrom tlm_core.cli import main\nsys.exit(main())\n"  # what .venv/bin/tlm runs


def write_corpus(path: Path, n: int = 8) -> Path:
    """Sentences of random tokens and different lengths (so the processes' slices hold different token counts)."""
    rng = random.Random(0)
    words = [t for t in vocab_tokens() if t not in SPECIALS]
    with path.open("w") as f:
        for i in range(n):
            text = " ".join([BOS, *rng.choices(words, k=4 + 3 * i), EOS])
            f.write(json.dumps({"task_id": "t", "text": text, "language": VERSION}) + "\n")
    return path


def torchrun(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    """`torchrun --standalone --nproc_per_node 2 tlm ARGV` on the CPU: 2 processes, gloo."""
    launcher = tmp_path / "tlm_launcher.py"
    launcher.write_text(LAUNCHER)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1]), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(launcher)]
    return subprocess.run([*cmd, *argv], env=env, capture_output=True, text=True, timeout=180)


def test_two_processes_equal_one_with_the_global_batch(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    out = tmp_path / "ddp"
    proc = torchrun(tmp_path, "train", "pretrain", str(corpus), "--out", str(out), "--preset", "tiny",
                    "--steps", str(STEPS), "--batch-size", str(BATCH), "--lr", "3e-3", "--warmup", "1",
                    "--save-every", "100", "--threads", "1", "--json", "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["step"] == STEPS  # one JSON document: only rank 0 reports
    assert train_state(out)["step"] == STEPS
    (ddp_log,) = [json.loads(line) for line in (out / LOG_FILE).read_text().splitlines()]  # rank 0 alone logs

    # one process, twice the batch size: the same batches, the same steps
    ref = tmp_path / "ref"
    settings = TrainSettings(steps=STEPS, batch_size=2 * BATCH, lr=3e-3, warmup=1, save_every=100, threads=1)
    pretrain([corpus], ref, settings, preset("tiny"), quiet=True)
    (ref_log,) = [json.loads(line) for line in (ref / LOG_FILE).read_text().splitlines()]
    assert ddp_log["tokens"] == ref_log["tokens"]
    assert abs(ddp_log["loss"] - ref_log["loss"]) < 1e-4

    ddp, single = load_file(out / "model.safetensors"), load_file(ref / "model.safetensors")
    init = new_model(preset("tiny"), seed=0).state_dict()
    assert ddp.keys() == single.keys()
    moved = 0
    for name, w in ddp.items():
        assert torch.isfinite(w).all()
        # atol: Adam scales each element's update by its own gradient's size, so an element whose gradient is
        # ~0 can move by ~1e-5 on the all-reduce's rounding alone; wrong batches move weights by ~lr = 3e-3
        torch.testing.assert_close(w, single[name], rtol=1e-4, atol=1e-4, msg=name)
        moved += not torch.equal(w, init[name])
    assert moved > len(ddp) // 2  # it trained: the equality above is not between two untouched models


def test_the_time_budget_stops_every_process(tmp_path):
    """Rank 0 decides when the budget is spent: both processes stop after the same step (no deadlock)."""
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    out = tmp_path / "ddp"
    proc = torchrun(tmp_path, "train", "pretrain", str(corpus), "--out", str(out), "--preset", "tiny",
                    "--steps", "1000", "--batch-size", str(BATCH), "--max-minutes", "1e-5", "--threads", "1",
                    "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert train_state(out)["step"] == 1 and (out / "optimizer.pt").exists()
