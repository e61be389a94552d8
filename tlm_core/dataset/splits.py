"""The model splits, declared once: which models the TLM learns from, which choose among rules and checkpoints, and
which test it. Every default that names a split (the CLI, the corpora, the benchmarks) reads it from here.
"""

from __future__ import annotations

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

# Test: not built yet (issue 34). Models, and tasks, that no training data, heuristic rule or checkpoint choice has
# touched; evaluated once per shipped checkpoint, never used for choosing. Empty until it is declared here.
TEST_MODELS: tuple[str, ...] = ()
