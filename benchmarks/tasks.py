"""The tasks the benchmarks measure: the validation models' heaviest tasks with decisions (from a cached catalogue),
and the clean test split (tlm_core.dataset.splits), read from its committed files."""

from __future__ import annotations

from pathlib import Path


def held_out_tasks(
    work: Path, models: list[str], per_model: int, max_gflop: float, builder, target
) -> list[tuple[str, object, object]]:
    """(model, task, space) of the `per_model` heaviest tasks with decisions (calls x FLOPs) of each model,
    among those of at most `max_gflop` GFLOP per call (a random program of a bigger one can take seconds
    per run, and search minutes, on this machine)."""
    from tlm_core.dataset import Catalog, variants_for

    catalog = Catalog(work / "catalog.jsonl")
    catalog.ensure(variants_for(models), target, log=lambda m: print(m, flush=True))
    chosen = []
    for name in models:
        small = [t for t in catalog.for_variants([name]) if t.flops <= max_gflop * 1e9]
        ranked = sorted(small, key=lambda t: -t.models[name] * t.flops)
        picked = 0
        for ct in ranked:
            task = ct.task()
            task.weight = ct.models[name]
            space = builder.build(task)
            if any(s.points for s in space.sketches):
                chosen.append((name, task, space))
                picked += 1
            if picked == per_model:
                break
    return chosen


def test_split_tasks(builder, target, root: Path | None = None) -> list[tuple[str, object, object]]:
    """(model, task, space) of the test split. Declared by <TEST_SPLIT_DIR>/tasks.txt; when that file is missing,
    the test models are loaded into the catalogue (minutes) and the tasks chosen by splits.choose_test_tasks, once."""
    from tlm_core.dataset import Catalog, variants_for
    from tlm_core.dataset.splits import TEST_MODELS, TEST_SPLIT_DIR, choose_test_tasks, repo_root, training_task_ids

    folder = (root or repo_root()) / TEST_SPLIT_DIR
    catalog = Catalog(folder / "catalog.jsonl")
    declared = folder / "tasks.txt"
    if not declared.exists():
        catalog.ensure(variants_for(list(TEST_MODELS)), target, log=lambda m: print(m, flush=True))

        def has_decisions(ct) -> bool:
            return any(s.points for s in builder.build(ct.task()).sketches)

        chosen = choose_test_tasks(catalog, training_task_ids(root), has_decisions)
        lines = [f"{ct.id} {model} {ct.name}" for model, ct in chosen]
        head = "# the test split (tlm_core.dataset.splits): task_id model fused-name\n"
        declared.write_text(head + "\n".join(lines) + "\n")
    out = []
    for line in declared.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            task_id, model, _ = line.split(maxsplit=2)
            ct = catalog.tasks[task_id]
            task = ct.task()
            task.weight = ct.models[model]
            out.append((model, task, builder.build(task)))
    return out
