"""The model splits (tlm_core.dataset.splits): the test split is declared once, and no training source holds it."""

from __future__ import annotations

from dataclasses import dataclass, field

from tlm_core.dataset import splits
from tlm_core.dataset.splits import (
    TEST_MAX_GFLOP,
    TEST_MODELS,
    TEST_PER_MODEL,
    TEST_SPLIT_DIR,
    TRAIN_MODELS,
    VALIDATION_MODELS,
    choose_test_tasks,
    repo_root,
    training_task_ids,
)


def declared() -> list[tuple[str, str]]:
    lines = (repo_root() / TEST_SPLIT_DIR / "tasks.txt").read_text().splitlines()
    return [tuple(line.split()[:2]) for line in lines if line.strip() and not line.startswith("#")]


def test_the_test_split_is_large_clean_and_catalogued() -> None:
    tasks = declared()
    ids = [t for t, _ in tasks]
    assert len(ids) == len(set(ids)) >= 40
    assert len({m for _, m in tasks}) >= 4 and {m for _, m in tasks} <= set(TEST_MODELS)
    assert not set(TEST_MODELS) & (set(TRAIN_MODELS) | set(VALIDATION_MODELS))
    assert set(ids) <= splits.testing_task_ids()  # every declared task can be rebuilt from the committed catalogue
    assert not set(ids) & training_task_ids()  # no corpus or collection holds a test task


def test_training_sources_are_read() -> None:
    assert len(training_task_ids()) > 1000  # the corpora and catalogues, not an empty glob


@dataclass
class FakeTask:
    id: str
    flops: float
    models: dict[str, int] = field(default_factory=dict)


class FakeCatalog:
    def __init__(self, tasks: list[FakeTask]) -> None:
        self.tasks = tasks

    def for_variants(self, names: list[str]) -> list[FakeTask]:
        return [t for t in self.tasks if any(n in t.models for n in names)]


def test_tasks_are_the_heaviest_unseen_ones_with_decisions() -> None:
    a, b = TEST_MODELS[:2]
    big = TEST_MAX_GFLOP * 2e9
    cat = FakeCatalog(
        [FakeTask("seen", 9e9 / 10, {a: 10}), FakeTask("huge", big, {a: 1}), FakeTask("none", 5e8, {a: 1}),
         FakeTask("shared", 1e8, {a: 1, b: 100}), *(FakeTask(f"a{i}", 1e6 * (i + 1), {a: 1}) for i in range(12)),
         FakeTask("b0", 1e6, {b: 1})]
    )  # fmt: skip
    chosen = choose_test_tasks(cat, frozenset({"seen"}), lambda t: t.id != "none")
    got = [(m, t.id) for m, t in chosen]
    assert got[0] == (a, "shared") and ("huge" not in {i for _, i in got}) and "seen" not in {i for _, i in got}
    assert len([1 for m, _ in got if m == a]) == TEST_PER_MODEL
    assert [i for m, i in got if m == b] == ["b0"]  # "shared" went to the first model that took it
