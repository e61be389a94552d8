"""The training loop shared by pre-training and fine-tuning: AdamW, warm-up + cosine, checkpoints, a log.

A run writes into one folder: the checkpoint (weights, config, tokenizer), `optimizer.pt`, `train_state.json`
(step, phase, settings) and `log.jsonl` (one line per logged step: step, loss, lr, tokens, seconds). Running
again on the same folder resumes from its last saved step; a time budget stops cleanly with a checkpoint.

One process trains on the CPU (on CUDA when available). Under torchrun it is data-parallel, one process per
GPU or CPU worker (see tlm_core.train.distributed), with the global batch world size x batch_size:
    torchrun --standalone --nproc_per_node 2 .venv/bin/tlm train pretrain corpus.jsonl --out ckpt/ ...
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..language import hardware_of, vocab_tokens
from ..model import TLMConfig, load_checkpoint, new_model, save_checkpoint, train_state
from .data import IGNORE, Example, batches
from .distributed import Ranks, ranks

LOG_FILE = "log.jsonl"
OPTIMIZER_FILE = "optimizer.pt"


@dataclass
class TrainSettings:
    steps: int = 1000  # total optimizer steps of the run (a resumed run continues up to this)
    batch_size: int = 16  # sentences per step (per process: torchrun's N processes take N x as many)
    lr: float = 1e-3  # peak learning rate
    warmup: int = 100  # steps of linear warm-up
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    log_every: int = 10
    save_every: int = 200  # steps between checkpoints
    max_seconds: float | None = None  # stop (with a checkpoint) after this much wall time
    seed: int = 0
    threads: int | None = None  # torch intra-op threads (None: torch's default)


def lr_at(step: int, s: TrainSettings) -> float:
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    progress = min(1.0, (step - s.warmup) / max(1, s.steps - s.warmup))
    return s.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))  # cosine down to 10%


def trained_hardware(examples: list[Example], init_state: dict) -> list[str]:
    """The hardware prompts a checkpoint has learnt from: its examples' and those of the one it started from
    (the Generator warns on a target outside them)."""
    tokens = vocab_tokens()
    seen = set(init_state.get("hardware", []))
    for e in examples:
        seen.add(hardware_of([tokens[i] for i in e.ids]))
    return sorted(seen - {""})


def train(
    examples: list[Example],
    out_dir: str | Path,
    settings: TrainSettings,
    phase: str,
    config: TLMConfig | None = None,
    init_from: str | Path | None = None,
    quiet: bool = False,
) -> dict:
    """Train on `examples` into `out_dir`; returns the final train state.

    Starting point, in order: `out_dir` itself when it holds a checkpoint of this phase (resume), else
    `init_from` (e.g. fine-tuning from a pre-trained checkpoint), else a fresh model of `config`.
    Under torchrun every process calls this; only rank 0 writes the folder, all return the same state."""
    if not examples:
        raise ValueError("no training examples")
    with ranks() as r:
        return _train(examples, Path(out_dir), settings, phase, config, init_from, quiet, r)


def _train(
    examples: list[Example],
    out: Path,
    settings: TrainSettings,
    phase: str,
    config: TLMConfig | None,
    init_from: str | Path | None,
    quiet: bool,
    r: Ranks,
) -> dict:
    state = train_state(out) if (out / "config.json").exists() else {}
    if state.get("phase") == phase:
        model, step = load_checkpoint(out), int(state.get("step", 0))
    elif init_from is not None:
        model, step = load_checkpoint(init_from, any_version=True), 0  # e.g. weights of an earlier language
    else:
        model, step = new_model(config or TLMConfig(), settings.seed), 0
    if settings.threads:
        torch.set_num_threads(settings.threads)
    model.to(r.device).train()
    net = r.wrap(model)  # DDP starts every rank from rank 0's weights
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    if step and (out / OPTIMIZER_FILE).exists():
        opt.load_state_dict(torch.load(out / OPTIMIZER_FILE, map_location=r.device, weights_only=True))
    rng = random.Random(settings.seed + step)  # a resumed run draws fresh batches, reproducibly
    max_len = model.config.n_positions
    # every rank draws the same global batch and trains on its slice (Ranks.shard): each rank sees different
    # sentences, and N processes take the steps of one process with N x the batch size
    stream = batches(examples, settings.batch_size * r.world_size, rng, max_len)
    start, tokens, last_loss = time.perf_counter(), 0, float("nan")
    elapsed_before = float(state.get("seconds", 0.0)) if state.get("phase") == phase else 0.0
    hardware = trained_hardware(examples, train_state(init_from) if init_from is not None else {})

    def save() -> dict:
        info = {"phase": phase, "step": step, "loss": last_loss, "examples": len(examples),
                "seconds": elapsed_before + time.perf_counter() - start, "settings": asdict(settings),
                "hardware": hardware}  # fmt: skip
        if r.main:  # the ranks' weights are identical: one writer
            model.eval()
            save_checkpoint(model, out, extra=info)
            torch.save(opt.state_dict(), out / OPTIMIZER_FILE)
            model.train()
        return info

    info, saved = state, False
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOG_FILE if r.main else os.devnull, "a") as log:
        while step < settings.steps:
            batch = next(stream)
            ids, mask, labels = r.shard(batch)
            for group in opt.param_groups:
                group["lr"] = lr_at(step, settings)
            # DDP averages the ranks' gradients, and the ranks' slices hold different numbers of loss tokens:
            # each rank's loss is its token sum over 1/N of the global batch's loss tokens, so the average is
            # the gradient of the global batch's mean loss, as in one process (which takes the plain mean)
            share = {"num_items_in_batch": int((batch[2][:, 1:] != IGNORE).sum()) / r.world_size} if r.parallel else {}
            loss = net(input_ids=ids, attention_mask=mask, labels=labels, **share).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
            opt.step()
            step += 1
            tokens += int(batch[1].sum())  # the global batch's
            last_loss = r.mean(loss)
            elapsed = time.perf_counter() - start
            if step % settings.log_every == 0 or step == settings.steps:
                row = {"phase": phase, "step": step, "loss": round(last_loss, 5), "lr": lr_at(step - 1, settings),
                       "tokens": tokens, "seconds": round(elapsed_before + elapsed, 2)}  # fmt: skip
                log.write(json.dumps(row) + "\n")
                log.flush()
                if not quiet and r.main:
                    print(f"{phase} step {step}/{settings.steps} loss {last_loss:.4f}", flush=True)
            saved = step % settings.save_every == 0
            if saved:
                info = save()
            # rank 0's clock decides for all: a rank that stopped alone would leave the others waiting
            if settings.max_seconds is not None and r.rank0_says(elapsed >= settings.max_seconds):
                break
    if not saved:
        info = save()
    r.barrier()  # every rank returns once the checkpoint is written
    model.eval()
    return info
