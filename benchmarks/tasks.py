"""The held-out tasks the benchmarks measure: each model's heaviest tasks with decisions, from a cached catalogue."""

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
