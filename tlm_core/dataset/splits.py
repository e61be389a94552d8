"""The model splits, declared once: which models the TLM learns from, which choose among rules and checkpoints, and
which test it. Every default that names a split (the CLI, the corpora, the benchmarks) reads it from here.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

# Training: the paper's three training models at paper size. Their tasks and shape variants
# (tlm_core.dataset.variants.TRAIN_VARIANTS) are collected, measured and learnt from.
TRAIN_MODELS: tuple[str, ...] = ("resnet50", "bert", "gpt2")

# The pre-training corpus (`tlm train corpus`, tlm_core.train.corpus) samples the training models at paper size
# and as their tiny samples: resnet50, bert, gpt2, resnet50-tiny, bert-tiny, gpt2-tiny.
CORPUS_MODELS: tuple[str, ...] = (*TRAIN_MODELS, *(f"{m}-tiny" for m in TRAIN_MODELS))

# Validation: the paper's three held-out models. They are used for choosing (heuristic rules, corpus additions and
# checkpoints were chosen by their results), so they are not a clean test. Never collected by default, and their
# tasks are never written into a teacher corpus (`tlm train teacher --exclude`).
VALIDATION_MODELS: tuple[str, ...] = ("mobilenetv2", "efficientnet-b0", "llama-7b")

# Test: models that no training data, heuristic rule or checkpoint choice has touched: transformers architectures
# users bring, at their real size (registered samples built from sample_models/user_models.py's configs). Their
# tasks that appear in any training source (training_task_ids) are dropped; of the rest, TEST_PER_MODEL per
# model (choose_test_tasks). Evaluated once per shipped checkpoint (benchmarks/evaluation.py --split test), never used
# for choosing; never collected by default, and excluded from teacher corpora like the validation models.
TEST_MODELS: tuple[str, ...] = ("vit-base", "convnext-t", "regnet-y-400mf", "t5-small-encoder", "tinyllama-2l")
TEST_PER_MODEL = 9  # tasks per test model: the heaviest by calls x FLOPs ...
TEST_MAX_GFLOP = 4.0  # ... of at most this much work per call (a 16.8-GFLOP LM head is minutes per search trial)

# The test split as committed: the test models' catalogue (catalog.jsonl.gz: every task and its workload, so no
# model is loaded again) and tasks.txt (the chosen tasks: "task_id model name", written once by choose_test_tasks).
TEST_SPLIT_DIR = "data/test-split"

# Where the committed training sources lie, relative to the repository root (training_task_ids reads them).
TRAINING_SOURCES = ("assets/corpus/*.jsonl.gz", "data/*/catalog.jsonl.gz")  # rounds measure catalogued tasks


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def training_task_ids(root: Path | None = None) -> frozenset[str]:
    """Every task id in the committed training sources: the teacher and pre-training corpora (their sentences'
    task_id, the operator zoo's included) and the measured collections' catalogues."""
    root = root or repo_root()
    ids: set[str] = set()
    for pattern in TRAINING_SOURCES:
        for path in sorted(root.glob(pattern)):
            if path.parent == root / TEST_SPLIT_DIR:  # a catalogue, but the test split's
                continue
            with gzip.open(path, "rt") as f:
                for line in f:
                    row = json.loads(line)
                    if "task_id" in row:
                        ids.add(row["task_id"])
                    ids.update(t["id"] for t in row.get("tasks", ()))
    return frozenset(ids)


def choose_test_tasks(
    catalog, seen: frozenset[str], has_decisions: Callable[[object], bool]
) -> list[tuple[str, object]]:
    """(model, CatalogTask) of the test split from a catalogue holding TEST_MODELS: per model, the TEST_PER_MODEL
    heaviest tasks (calls x FLOPs) of at most TEST_MAX_GFLOP that are in no training source (`seen`), whose space
    has decisions, and that an earlier test model did not already take."""
    chosen: list[tuple[str, object]] = []
    taken: set[str] = set(seen)
    for name in TEST_MODELS:
        ranked = sorted((t for t in catalog.for_variants([name]) if t.flops <= TEST_MAX_GFLOP * 1e9),
                        key=lambda t: (-t.models[name] * t.flops, t.id))  # fmt: skip
        picked = [t for t in ranked if t.id not in taken and has_decisions(t)][:TEST_PER_MODEL]
        taken.update(t.id for t in picked)
        chosen += [(name, t) for t in picked]
    return chosen


def testing_task_ids(root: Path | None = None) -> frozenset[str]:
    """Every task of the test models in the committed test catalogue (none before it is built): no corpus or
    collection may write them, chosen or not."""
    path = (root or repo_root()) / TEST_SPLIT_DIR / "catalog.jsonl.gz"
    if not path.exists():
        return frozenset()
    with gzip.open(path, "rt") as f:
        return frozenset(t["id"] for line in f for t in json.loads(line)["tasks"])
