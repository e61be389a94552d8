"""Fine-tuning examples from measured data directories: a packed or live collection (data/cpu-znver5) and
the generate -> measure rounds (data/cpu-znver5-rounds/round<N>), all in tlm_core.dataset's row format.

Per task, the `top` best distinct programs become sentences. The same program measured in several places
(a round re-measuring one the collection had) is one program: its run times are merged, the latency is the
median of all of them. Re-measured programs (more than one record, or a searcher's program, measured again
before it was stored) rank before single measurements: on this noisy shared machine a single 5-repeat
latency is often a lucky one.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

from ..dataset import Catalog, CatalogTask, export_rows, read_rows
from ..dataset.catalog import CATALOG_FILE
from ..dataset.export import DATASET_FILE, directory_target, target_builder
from ..language import LanguageError, encode
from ..space import TILE, Decision, Space
from .data import Example, decision_example


def directory_rows(directory: str | Path, builder=None) -> list[dict]:
    """The rows of a data directory: its dataset.jsonl.gz, else exported from its records (builds spaces)."""
    directory = Path(directory)
    packed = directory / DATASET_FILE
    return read_rows(packed) if packed.exists() else export_rows(directory, builder)


def merged_programs(rows: Iterable[dict]) -> dict[str, list[dict]]:
    """task id -> its distinct successfully measured programs, run times merged, best first."""
    by_task: dict[str, dict[str, dict]] = {}
    for r in rows:
        if not r["runs"] or not r["decisions"]:  # failed, or a task without decisions: nothing to learn
            continue
        key = json.dumps([r["sketch"], r["decisions"]])
        known = by_task.setdefault(r["task"], {}).get(key)
        if known is None:
            by_task[r["task"]][key] = {**r, "runs": list(r["runs"])}
        else:
            known["runs"] += r["runs"]
            known["records"] += r["records"]
    out = {}
    for task_id, programs in by_task.items():
        for p in programs.values():
            p["latency"] = statistics.median(p["runs"])
        out[task_id] = sorted(programs.values(), key=lambda p: (not remeasured(p), p["latency"]))
    return out


def remeasured(program: dict) -> bool:
    """Measured more than once: re-measured records, or a searcher's program (collect measures its best
    again before storing them)."""
    return program["records"] > 1 or program.get("source") == "search"


def decisions_of(space: Space, row: dict) -> list[Decision]:
    """A row's decisions in tlm_core.space's encoding (tiles as tuples)."""
    points = space.sketches[row["sketch"]].points
    return [tuple(d) if p.kind == TILE else int(d) for p, d in zip(points, row["decisions"], strict=True)]


def catalog_tasks(directories: Iterable[str | Path]) -> dict[str, CatalogTask]:
    """Every task of the catalogues found in the directories (a round directory has none of its own)."""
    tasks: dict[str, CatalogTask] = {}
    for d in directories:
        if (Path(d) / CATALOG_FILE).exists() or (Path(d) / (CATALOG_FILE + ".gz")).exists():
            for task_id, t in Catalog(Path(d) / CATALOG_FILE).tasks.items():
                tasks.setdefault(task_id, t)
    return tasks


def measured_examples(
    directories: list[str | Path], top: int = 4, builder=None, log=print
) -> tuple[list[Example], dict]:
    """Fine-tuning examples of the `top` best programs per task over the directories, and a summary.

    Programs measured on different hardware are different data: directories are grouped by the target their
    records name, a task's programs are ranked within a group, and each group's sentences carry its own
    hardware prompt. builder (tests): one SpaceBuilder for every directory instead of one per target."""
    groups: dict[str, tuple[dict | None, list[str | Path]]] = {}  # target JSON -> (target, directories)
    for d in directories:
        target = directory_target(d)
        groups.setdefault(json.dumps(target, sort_keys=True), (target, []))[1].append(d)
    examples: list[Example] = []
    summary: dict = {"directories": [str(d) for d in directories], "top": top, "targets": {}}
    for target, group in groups.values():
        done, counts = _examples_of(group, top, builder or target_builder(target), log)
        examples += done
        summary["targets"][_target_name(target)] = counts
    for key in ("rows", "tasks", "programs"):
        summary[key] = sum(c[key] for c in summary["targets"].values())
    summary["examples"] = len(examples)
    return examples, summary


def _target_name(target: dict | None) -> str:
    return f"{target['kind']} {target.get('mcpu', '')}".strip() if target else "unknown"


def _examples_of(directories: list[str | Path], top: int, builder, log) -> tuple[list[Example], dict]:
    """The examples of directories measured on one target, and their counts."""
    tasks = catalog_tasks(directories)
    rows = [r for d in directories for r in directory_rows(d, builder)]
    programs = merged_programs(rows)
    examples: list[Example] = []
    used = 0
    for i, (task_id, best) in enumerate(sorted(programs.items())):
        if task_id not in tasks:
            log(f"task {task_id}: not in any catalogue, skipped")
            continue
        space = builder.build(tasks[task_id].task())
        for row in best[:top]:
            try:
                s = encode(space, row["sketch"], decisions_of(space, row))
            except (LanguageError, ValueError, IndexError) as err:  # a space that changed since measuring
                log(f"task {task_id}: program skipped ({err})")
                continue
            examples.append(decision_example(s.ids, s.decision_mask))
        used += 1
        if (i + 1) % 25 == 0:
            log(f"built {i + 1}/{len(programs)} task spaces")
    counts = {"rows": len(rows), "tasks": used, "programs": sum(len(p) for p in programs.values()),
              "examples": len(examples)}  # fmt: skip
    return examples, counts
