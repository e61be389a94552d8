"""`collect`: the whole collection for a list of models, into out_dir/<target name>/.

out_dir/<target>/catalog.jsonl        every task of every variant (tlm_core.dataset.catalog)
out_dir/<target>/random/              RecordStore of sampled programs (and their re-measurements)
out_dir/<target>/search/, heuristic/  RecordStores of each Source's programs, when sources are given
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tvm.target import Target

from tlm_core.target import host_target

from .catalog import CATALOG_FILE, Catalog
from .collect import CollectStats, MeasurerLike, Source, collect_tasks
from .variants import variants_for


def target_dir_name(target: Target) -> str:
    """e.g. "cpu-znver5" for LLVM on a Zen 5, "cuda-sm_90" for a GPU."""
    if target.kind.name == "llvm":
        return f"cpu-{target.attrs.get('mcpu', 'generic')}"
    return f"{target.kind.name}-{target.attrs.get('arch', 'unknown')}"


def check_same_hardware(directory: Path, target: Target) -> None:
    """A collection is one machine's: its sentences get one hardware prompt (its first record's target), so
    programs measured on a machine whose prompt differs (other caches, cores) must not join it."""
    from tlm_core.language import hardware_differences, hardware_of, hardware_tokens

    from .export import directory_target

    if (old := directory_target(directory)) is None:
        return
    there, here = (hardware_of(hardware_tokens(t)) for t in (Target(old), target))
    if diffs := hardware_differences(there, here, ("there", "here")):
        raise ValueError(f"{directory} holds programs measured on other hardware ({'; '.join(diffs)}): "
                         "one collection is one machine's, so collect into another --out (training reads "
                         "several collections, each with its own hardware prompt)")  # fmt: skip


def collect(
    models: list[str] | None,
    out_dir: str | Path,
    per_task: int = 128,
    measurer: MeasurerLike | None = None,
    target: Target | None = None,
    sources: tuple[Source, ...] = (),
    log: Callable[[str], None] | None = None,
    repeat: int = 5,
    **options: Any,
) -> tuple[Path, CollectStats]:
    """Collect per_task measured programs for every task of the models' variants (default: the training
    variants of resnet50, bert and gpt2). Returns the target's directory and what this run added.

    measurer: default a local Measurer (`repeat` repeats of >= 10 ms); an RPCMeasurer measures remotely.
    options: see collect_tasks (seed, batch, top_k, remeasure_repeat, max_programs, quiet).
    """
    from tlm_core.measure import Measurer

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    target = target or (measurer.target if measurer is not None else host_target())
    directory = Path(out_dir) / target_dir_name(target)
    check_same_hardware(directory, target)
    directory.mkdir(parents=True, exist_ok=True)
    variants = variants_for(models)
    catalog = Catalog(directory / CATALOG_FILE)
    catalog.ensure(variants, target, log)
    tasks = [t.task() for t in catalog.for_variants([v.name for v in variants])]
    log(f"{len(tasks)} tasks from {len(variants)} model variants -> {directory}")
    own = measurer is None
    measurer = measurer or Measurer(target, repeat=repeat, min_repeat_ms=10, timeout_s=60.0)
    try:
        stats = collect_tasks(tasks, directory, per_task, measurer, sources=sources, log=log, **options)
    finally:
        if own:
            measurer.close()  # type: ignore[union-attr]
    return directory, stats
