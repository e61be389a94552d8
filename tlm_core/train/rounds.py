"""Measured generate -> measure -> fine-tune rounds (the paper's loop) on training tasks of this machine.

Each round is one `tlm adapt` run (tlm_core.train.adapt) on the same training tasks: the previous round's
checkpoint writes its greedy program, measured side by side with the heuristic's Top-1 (the round's figure:
on how many tasks the TLM's top-1 is the faster), then samples, the heuristic's Top-k and mutations of the
best program any round found. The round's fine-tuning starts from the previous round's checkpoint and learns
each task's measured-best programs over all rounds so far (the best more often where it beats the
heuristic), with teacher sentences replayed so that what it knew of other tasks stays. The teacher
initialises; measured speed decides.

work/round<N>/ is that round's adapt work folder, its checkpoint in work/round<N>/checkpoint; a killed run
resumes in the round it stopped in. pack_rounds writes what to commit: per round its measurements
(dataset.jsonl.gz, tlm_core.dataset's rows) and figures (round.json).
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from collections.abc import Callable
from pathlib import Path

from ..dataset.catalog import CatalogTask
from ..dataset.export import DATASET_FILE, write_rows
from .adapt import ROWS_FILE, STATE_FILE, SUMMARY_FILE, AdaptSettings, adapt

ROUNDS_FILE = "rounds.json"
ROUND_FILE = "round.json"


def task_kind(task: CatalogTask) -> str:
    """The fused name without its numbers, and for an operator zoo task its zoo kind ("zoo-grouped"): a grouped
    convolution + BN + ReLU is named like ResNet-50's dense one."""
    zoo = sorted(m.rsplit("-", 1)[0] for m in task.models if m.startswith("zoo-"))
    return re.sub(r"(\D)\d+(?=_|$)", r"\1", task.name) + (f" {zoo[0]}" if zoo else "")


def choose_tasks(catalog: dict[str, CatalogTask], n: int, max_gflop: float, exclude: set[str] = frozenset()) -> list:
    """n training tasks of 1 MFLOP to max_gflop GFLOP per call (below, data movement: little to learn), spread
    over operator kinds (task_kind): the heaviest (calls x FLOPs) of each in turn."""
    kinds: dict[str, list[CatalogTask]] = {}
    for t in catalog.values():
        if t.id not in exclude and 1e6 <= t.flops <= max_gflop * 1e9:
            kinds.setdefault(task_kind(t), []).append(t)
    for group in kinds.values():
        group.sort(key=lambda t: -max(t.models.values()) * t.flops)
    order = sorted(kinds.values(), key=lambda g: -max(g[0].models.values()) * g[0].flops)
    chosen: list[CatalogTask] = []
    while len(chosen) < n and any(order):
        for group in order:
            if group and len(chosen) < n:
                chosen.append(group.pop(0))
    return chosen


def variant_tasks(models: list[str], catalog: str | Path, log: Callable[[str], None] = print) -> dict:
    """The tasks of training variants (tlm_core.dataset.variants_for: zoo parts, shape variants), catalogued in
    `catalog` (built once, resumed), that a committed training corpus holds: corpora are written without the
    validation and test tasks, so a task that is in one is a training task."""
    from ..dataset import Catalog, variants_for
    from ..dataset.splits import training_task_ids
    from ..target import host_target

    variants = variants_for(models)
    Path(catalog).parent.mkdir(parents=True, exist_ok=True)
    cat = Catalog(catalog)
    cat.ensure(variants, host_target(), log)
    seen = training_task_ids()
    return {t.id: t for t in cat.for_variants([v.name for v in variants]) if t.id in seen}


def round_rows(folder: str | Path) -> list[dict]:
    path = Path(folder) / ROWS_FILE
    return [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []


def round_figures(summary: dict) -> dict:
    """A round's figures from its adapt summary: the starting checkpoint's top-1 against the heuristic's
    Top-1, measured in one batch per task, and the best any round has found."""
    pairs = [(t["tlm_greedy_s"], t["heuristic_top1_s"]) for t in summary["tasks"]
             if t["tlm_greedy_s"] and t["heuristic_top1_s"]]  # fmt: skip
    best = [(t["best_s"], t["heuristic_top1_s"]) for t in summary["tasks"] if t["best_s"] and t["heuristic_top1_s"]]
    return {
        "tasks": len(summary["tasks"]),
        "compared": len(pairs),
        "top1_beats_heuristic": sum(g < h for g, h in pairs),
        "top1_share": round(sum(g < h for g, h in pairs) / len(pairs), 3) if pairs else None,
        "top1_vs_heuristic": _geomean([h / g for g, h in pairs]),
        "best_vs_heuristic": _geomean([h / b for b, h in best]),
        "measured": summary["measured"],
        "failed": summary["failed"],
        "examples": summary["examples"],
        "replayed": summary.get("replayed", 0),
        "measure_minutes": summary["measure_minutes"],
        "train_steps": summary["train_steps"],
        "train_minutes": summary["train_minutes"],
    }


def _geomean(xs: list[float]) -> float | None:
    return round(math.exp(sum(math.log(x) for x in xs) / len(xs)), 4) if xs else None


def run_rounds(
    tasks: list,
    target,
    work: str | Path,
    checkpoint: str | Path,
    rounds: int,
    settings: AdaptSettings,
    replay: list = (),
    replay_count: int = 0,
    log: Callable[[str], None] = print,
    measurer=None,
    builder=None,
) -> list[dict]:
    """`rounds` rounds from `checkpoint` (resumable); returns each round's figures (also in work/rounds.json).

    replay: teacher examples, of which replay_count (seeded per round) join each round's fine-tuning."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    figures, prior, base = [], [], Path(checkpoint)
    for r in range(1, rounds + 1):
        folder = work / f"round{r}"
        summary_path = folder / SUMMARY_FILE
        finished = summary_path.exists() and json.loads((folder / STATE_FILE).read_text())["phase"] == "done"
        if finished:
            summary = json.loads(summary_path.read_text())
        else:
            log(f"round {r} of {rounds}: from {base}")
            sample = random.Random(settings.seed + r).sample(list(replay), min(replay_count, len(replay)))
            summary = adapt(tasks, target, folder, folder / "checkpoint", base, settings, ["rounds"],
                            measurer=measurer, builder=builder, log=log, prior=prior, replay=sample)  # fmt: skip
        figures.append({"round": r, "from": str(base), **round_figures(summary)})
        (folder / ROUND_FILE).write_text(json.dumps(figures[-1], indent=1) + "\n")
        (work / ROUNDS_FILE).write_text(json.dumps(figures, indent=1) + "\n")
        prior += round_rows(folder)
        base = folder / "checkpoint"
    final = check(tasks, target, work / "check", base, settings, prior, log, measurer, builder)
    figures.append({"round": rounds + 1, "from": str(base), **final})
    (work / ROUNDS_FILE).write_text(json.dumps(figures, indent=1) + "\n")
    return figures


def check(tasks, target, folder: Path, checkpoint: Path, settings: AdaptSettings, prior: list[dict],
          log: Callable[[str], None], measurer=None, builder=None) -> dict:  # fmt: skip
    """The last checkpoint's top-1 against the heuristic's Top-1, one batch per task (a round's first pass,
    nothing learnt); resumable in `folder`."""
    from ..generator import Generator
    from ..measure import Measurer
    from ..space import SpaceBuilder
    from ..target import target_to_dict
    from .adapt import _task_figures, _Work, best_programs, measure_phase, task_spaces

    w = _Work(folder, target_to_dict(target), str(checkpoint))
    chosen, spaces = task_spaces(tasks, builder or SpaceBuilder.for_target(target), settings.tasks)
    s = AdaptSettings(**{**settings.__dict__, "again": 0})
    own = measurer is None
    measurer = measurer or Measurer(target, repeat=3, min_repeat_ms=5, timeout_s=30.0)
    try:
        measure_phase(chosen, spaces, w, Generator.from_checkpoint(checkpoint), measurer, s, ["rounds"],
                      float("inf"), log, prior, passes=1)  # fmt: skip
    finally:
        if own:
            measurer.close()
    best = best_programs([*prior, *w.rows])
    tasks_ = [{"id": t.id, "name": t.name, **_task_figures(best.get(t.id, []), w.rows, t.id)} for t in chosen]
    measured = [r for r in w.rows if r["records"]]
    figures = round_figures({"tasks": tasks_, "measured": len(measured), "examples": 0, "measure_minutes":
                             round(w.state["measure_seconds"] / 60, 2), "train_steps": 0, "train_minutes": 0,
                             "failed": sum(r["latency"] is None for r in measured)})  # fmt: skip
    (folder / ROUND_FILE).write_text(json.dumps({"checkpoint": str(checkpoint), **figures}, indent=1) + "\n")
    return figures


def pack_rounds(work: str | Path, dest: str | Path, tasks: list = (), target=None) -> Path:
    """The copy to commit: per round its rows (dataset.jsonl.gz) and figures, and rounds.json; with the rounds'
    tasks and target, each round folder is a data directory `tlm train finetune` reads (its catalogue of
    the tasks, target.json)."""
    from ..dataset import Catalog
    from ..dataset.catalog import CATALOG_FILE
    from ..dataset.export import TARGET_FILE
    from ..target import target_to_dict

    work, dest = Path(work), Path(dest)
    rounds = sorted((p for p in work.glob("round*") if p.is_dir()), key=lambda p: int(p.name[5:]))
    for folder in [*rounds, work / "check"]:
        if (folder / ROUND_FILE).exists():
            (dest / folder.name).mkdir(parents=True, exist_ok=True)
            write_rows(round_rows(folder), dest / folder.name / DATASET_FILE)
            (dest / folder.name / ROUND_FILE).write_text((folder / ROUND_FILE).read_text())
            if tasks:
                catalog = dest / folder.name / CATALOG_FILE
                catalog.unlink(missing_ok=True)
                Catalog(catalog).add("rounds", list(tasks))
                (dest / folder.name / (CATALOG_FILE + ".gz")).write_bytes(gzip.compress(catalog.read_bytes(), mtime=0))
                catalog.unlink()
            if target is not None:
                (dest / folder.name / TARGET_FILE).write_text(json.dumps(target_to_dict(target)) + "\n")
    (dest / ROUNDS_FILE).write_text((work / ROUNDS_FILE).read_text())
    return dest
