"""Measured generate -> measure -> fine-tune rounds: figures per round, resumable, each round from the last."""

import gzip
import json

from tlm_core.dataset.catalog import CatalogTask
from tlm_core.model import new_model, preset, save_checkpoint, train_state
from tlm_core.train import measured_examples
from tlm_core.train.adapt import AdaptSettings
from tlm_core.train.rounds import ROUNDS_FILE, choose_tasks, pack_rounds, round_rows, run_rounds, task_kind

TINY = dict(minutes=0.05, steps=2, batch_size=2, samples=1, heuristic_k=2, mutations=1, again=1, min_train_s=5)


def test_choose_tasks_spreads_over_kinds_under_the_flop_cap():
    def ct(name, gflop, calls=1):
        return CatalogTask(name, name, [], gflop * 1e9, "", {"m": calls})

    tasks = [ct("fused_matmul1", 0.2, 4), ct("fused_matmul2", 0.1), ct("fused_matmul3", 5), ct("fused_conv2d1", 0.05),
             ct("softmax", 0.01), ct("reshape", 1e-4), ct("fused_conv2d2", 0.1)]  # fmt: skip
    catalog = {t.id: t for t in tasks}
    chosen = [t.id for t in choose_tasks(catalog, 4, max_gflop=1)]
    assert chosen == ["fused_matmul1", "fused_conv2d2", "softmax", "fused_matmul2"]
    assert {"fused_matmul3", "reshape"}.isdisjoint(t.id for t in choose_tasks(catalog, 9, max_gflop=1))
    assert [t.id for t in choose_tasks(catalog, 9, 1, exclude={"softmax"})].count("softmax") == 0


def test_a_zoo_task_is_its_zoo_kind():
    def ct(name, model):
        return CatalogTask(name + model, name, [], 1e8, "", {model: 1})

    grouped, dense = ct("fused_conv2d3_add_relu", "zoo-grouped-2"), ct("fused_conv2d1_add_relu", "resnet50-b1-224")
    assert task_kind(grouped) == "fused_conv2d_add_relu zoo-grouped"
    assert task_kind(dense) == "fused_conv2d_add_relu"
    chosen = choose_tasks({t.id: t for t in (grouped, dense, ct("fused_conv2d9_add_relu", "resnet50-b1-96"))}, 2, 1)
    assert grouped in chosen  # a kind of its own, not the third ResNet-like convolution


def test_rounds_learn_from_the_last_round_and_resume(tmp_path, measurer, workload_spaces, space_builder):
    space = workload_spaces["matmul_relu_64"]
    base = save_checkpoint(new_model(preset("tiny"), seed=0), tmp_path / "base", extra={"hardware": []})
    work, logged = tmp_path / "rounds", []
    settings = AdaptSettings(**TINY)
    figures = run_rounds([space.task], space.target, work, base, 2, settings, log=logged.append,
                         measurer=measurer, builder=space_builder)  # fmt: skip
    # two rounds and the last checkpoint's check; each figure compares top-1 and the heuristic in one batch
    assert [f["round"] for f in figures] == [1, 2, 3]
    assert all(f["compared"] == 1 and f["top1_beats_heuristic"] in (0, 1) for f in figures)
    assert figures[1]["from"] == str(work / "round1" / "checkpoint")
    assert train_state(work / "round2" / "checkpoint")["step"] == 2
    # round 2 measured the greedy and heuristic programs again, and no other program round 1 had
    first, second = round_rows(work / "round1"), round_rows(work / "round2")
    assert {r["source"] for r in second[:2]} == {"tlm-greedy", "heuristic-top1"}
    learnt = ("tlm-greedy", "heuristic-top1", "again")
    keys = [{json.dumps([r["sketch"], r["decisions"]]) for r in rows if r["source"] not in learnt}
            for rows in (first, second)]  # fmt: skip
    assert not keys[0] & keys[1]
    # finished: run again, nothing is measured or trained
    n = sum(len(round_rows(work / f)) for f in ("round1", "round2", "check"))
    assert run_rounds([space.task], space.target, work, base, 2, settings, log=logged.append,
                      measurer=measurer, builder=space_builder) == figures  # fmt: skip
    assert sum(len(round_rows(work / f)) for f in ("round1", "round2", "check")) == n
    # the copy to commit, a data directory fine-tuning reads (this target's prompt, the best programs)
    out = pack_rounds(work, tmp_path / "data", [space.task], space.target)
    assert json.loads((out / ROUNDS_FILE).read_text()) == figures
    with gzip.open(out / "round2" / "dataset.jsonl.gz", "rt") as f:
        assert len(f.read().splitlines()) == len(second)
    examples, summary = measured_examples([out / "round1", out / "round2"], top=2, builder=space_builder,
                                          log=lambda m: None)  # fmt: skip
    assert summary["tasks"] == 1 and len(examples) == 2
    assert list(summary["targets"]) == [f"llvm {space.target.attrs['mcpu']}"]


def test_variant_tasks_are_only_tasks_a_training_corpus_holds(tmp_path, monkeypatch):
    from tlm_core.dataset import splits
    from tlm_core.train.rounds import variant_tasks

    row = {"name": "pool", "ops": ["max_pool2d"], "flops": 1e6, "weight": 1, "workload": "{}"}
    catalog = tmp_path / "work" / "catalog.jsonl"
    catalog.parent.mkdir()
    catalog.write_text(
        json.dumps({"variant": "zoo-pool-0", "tasks": [{**row, "id": "seen"}, {**row, "id": "new"}]}) + "\n"
    )
    monkeypatch.setattr(splits, "training_task_ids", lambda: frozenset({"seen"}))
    assert list(variant_tasks(["zoo-pool-0"], catalog, log=lambda _: None)) == ["seen"]  # catalogued: not rebuilt
