"""Fine-tuning from measured data directories (a collection, and the CPU each was measured on)."""

from __future__ import annotations

import pytest
from workloads import matmul_relu_64, softmax_64

from tlm_core.dataset import Catalog, collect_tasks, export_rows, pack
from tlm_core.model import new_model, preset, save_checkpoint
from tlm_core.partition import task_from_primfunc
from tlm_core.train import TrainSettings, finetune, measured_examples, merged_programs


def row(task: str, decisions: list, runs: list[float], records: int = 1) -> dict:
    return {"task": task, "sketch": 0, "decisions": decisions, "runs": runs, "records": records,
            "latency": sorted(runs)[len(runs) // 2] if runs else None}  # fmt: skip


def test_merged_programs_prefer_remeasured_and_merge_runs():
    rows = [
        row("t", [1], [1.0]),  # a lucky single measurement
        row("t", [2], [3.0, 3.0], records=2),  # re-measured
        row("t", [3], [2.0]),
        row("t", [3], [4.0, 4.0, 4.0]),  # the same program, measured again elsewhere: merged
        row("t", [4], []),  # failed: left out
        row("u", [], [1.0]),  # no decisions: nothing to learn
        {**row("t", [5], [3.5]), "source": "search"},  # a searcher's program: re-measured before it was stored
    ]
    (best,) = merged_programs(rows).values()
    assert [p["decisions"] for p in best] == [[2], [5], [3], [1]]
    assert best[2]["records"] == 2 and best[2]["latency"] == 4.0


@pytest.fixture(scope="module")
def collection(tmp_path_factory, measurer, space_builder):
    """A packed collection of two small tasks (5 programs each, the top 2 re-measured), with its catalogue."""
    live = tmp_path_factory.mktemp("live")
    tasks = [task_from_primfunc(matmul_relu_64, "matmul_relu"), task_from_primfunc(softmax_64, "softmax")]
    collect_tasks(tasks, live, 5, measurer, builder=space_builder, top_k=2, remeasure_repeat=3)
    Catalog(live / "catalog.jsonl").add("workloads", tasks)
    return pack(live, tmp_path_factory.mktemp("packed"), export_rows(live, builder=space_builder))


def test_finetune_from_a_collection(tmp_path, collection, space_builder):
    examples, summary = measured_examples([collection], top=2, builder=space_builder, log=lambda m: None)
    assert summary["tasks"] == 2 and len(examples) == 4
    assert all(any(e.loss_mask) for e in examples)
    base = tmp_path / "base"
    save_checkpoint(new_model(preset("tiny"), seed=0), base)
    settings = TrainSettings(steps=3, batch_size=2, warmup=1, log_every=1, save_every=3, threads=1)
    assert finetune(examples, tmp_path / "ft", settings, init_from=base, quiet=True)["step"] == 3


def test_programs_of_other_hardware_keep_their_own_prompt(tmp_path, collection):
    """The same tasks measured on two CPUs: two groups of examples, each with its CPU's hardware prompt."""
    import gzip
    import json
    import shutil

    from tlm_core.dataset.export import directory_target
    from tlm_core.language import decode_ids, hardware_of
    from tlm_core.target import KNOWN_CACHES_KIB, host_cpu

    other_cpu = next(c for c in KNOWN_CACHES_KIB if c != host_cpu())
    other = shutil.copytree(collection, tmp_path / "other")
    records = other / "random" / "tuning_record.json.gz"
    lines = gzip.decompress(records.read_bytes()).decode().splitlines()
    moved = []
    for line in lines:
        index, (trace, runs, target, args) = json.loads(line)
        moved.append(json.dumps([index, [trace, runs, {**target, "mcpu": other_cpu}, args]]))
    records.write_bytes(gzip.compress(("\n".join(moved) + "\n").encode()))
    assert directory_target(other)["mcpu"] == other_cpu != directory_target(collection)["mcpu"]

    examples, summary = measured_examples([collection, other], top=2, log=lambda m: None)
    assert len(summary["targets"]) == 2 and all(c["examples"] == 4 for c in summary["targets"].values())
    prompts = {hardware_of(decode_ids(e.ids)) for e in examples}
    assert len(prompts) == 2 and any(f"cpu {other_cpu} " in p for p in prompts)
