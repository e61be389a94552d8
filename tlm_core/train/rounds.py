"""A generate -> measure round (the paper's loop): the current model writes k candidates for training tasks,
they are measured here, and the measured programs become rows for the next fine-tuning.

The live round is a folder `work`: a RecordStore (MetaSchedule JSONDatabase files) of every measurement,
rows.jsonl (tlm_core.dataset's row format, one row per measurement) and done.txt (finished task ids), all
appended task by task, so a killed round resumes with the next task. `pack_round` writes the compressed
copy for the repository (workload.json.gz, tuning_record.json.gz, dataset.jsonl.gz), which
`measured_examples` reads like a collection (with the collection's catalogue for the task workloads).

Per task: greedy + distinct samples (temperature 1); programs already in the data are not measured again;
the fastest new one, when it beats the task's best known latency, is measured again with 15 repeats
(like the collection's top programs, so that a lucky single measurement does not become a target).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

from ..dataset.export import DATASET_FILE, write_rows
from ..records.store import RECORD_FILE, WORKLOAD_FILE
from .measured import catalog_tasks, directory_rows, merged_programs

ROWS_FILE = "rows.jsonl"
DONE_FILE = "done.txt"


def run_round(
    checkpoint: str | Path,
    data: list[str | Path],
    work: str | Path,
    name: str,
    tasks: int = 48,
    candidates: int = 8,
    seed: int = 0,
    max_latency: float = 0.01,
    log: Callable[[str], None] = print,
) -> dict:
    """Measure the model's candidates for the `tasks` heaviest training tasks (calls x FLOPs) whose best known
    latency is at most `max_latency` seconds (a slow task costs minutes per candidate); resumable."""
    from ..generator import Generator
    from ..measure import Measurer
    from ..program import apply_decisions
    from ..records import RecordStore
    from ..space import SpaceBuilder
    from ..target import host_target

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    catalog = catalog_tasks(data)
    known = merged_programs(r for d in data for r in directory_rows(d))
    cheap = [t for t in known if known[t][0]["latency"] <= max_latency]
    chosen = sorted(cheap, key=lambda t: -max(catalog[t].models.values()) * catalog[t].flops)[:tasks]
    done_path = work / DONE_FILE
    done = set(done_path.read_text().split()) if done_path.exists() else set()
    target = host_target()
    builder = SpaceBuilder.for_target(target)
    generator = Generator.from_checkpoint(checkpoint)
    store = RecordStore(work)
    with Measurer(target, repeat=5, min_repeat_ms=10, timeout_s=60.0) as measurer:
        for i, task_id in enumerate(chosen):
            if task_id in done:
                continue
            ct = catalog[task_id]
            task = ct.task()
            space = builder.build(task)
            greedy = generator.greedy(space)
            gens = {greedy.key: greedy}
            for g in generator.sample(space, candidates, temperature=1.0, seed=seed):
                if len(gens) < candidates:
                    gens.setdefault(g.key, g)
            seen = {json.dumps([p["sketch"], p["decisions"]]) for p in known[task_id]}
            new = [g for g in gens.values() if json.dumps([g.sketch_index, _json(g.decisions)]) not in seen]
            programs = [apply_decisions(space, g.sketch_index, g.decisions) for g in new]
            results = measurer.measure(task, [p.mod for p in programs])
            rows = []
            for program, result in zip(programs, results, strict=True):
                store.append(task, program.trace, result, target)
                rows.append(_row(ct, name, program, result))
            best_known = known[task_id][0]["latency"]
            ok = sorted((r for r in rows if r["latency"] is not None), key=lambda r: r["latency"])
            if ok and ok[0]["latency"] < best_known:
                program = programs[rows.index(ok[0])]
                measurer.timing["repeat"] = 15
                (again,) = measurer.measure(task, [program.mod])
                measurer.timing["repeat"] = 5
                if again.ok:
                    store.append(task, program.trace, again, target)
                    rows.append(_row(ct, name, program, again))
            with (work / ROWS_FILE).open("a") as f:
                f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
            with done_path.open("a") as f:
                f.write(task_id + "\n")
            greedy_row = next((r for r, g in zip(rows, new, strict=False) if g.key == greedy.key), None)
            best = f"{ok[0]['latency'] * 1e6:.1f} us" if ok else "-"
            greedy_lat = greedy_row and greedy_row["latency"]
            greedy_text = "known" if greedy_row is None else f"{greedy_lat * 1e6:.1f} us" if greedy_lat else "failed"
            log(f"[{i + 1}/{len(chosen)}] {ct.name[:40]}: {len(new)} new of {len(gens)}, best new {best}, "
                f"best known {best_known * 1e6:.1f} us, greedy {greedy_text}")  # fmt: skip
    return round_summary(work, data)


def _json(decisions: list) -> list:
    return [list(d) if isinstance(d, tuple) else d for d in decisions]


def _row(ct, name: str, program, result) -> dict:
    return {"task": ct.id, "name": ct.name, "models": sorted(ct.models), "source": name,
            "sketch": program.sketch_index, "decisions": _json(program.decisions),
            "latency": result.latency if result.ok else None, "runs": result.latencies if result.ok else [],
            "records": 1}  # fmt: skip


def read_round_rows(work: str | Path) -> list[dict]:
    path = Path(work) / ROWS_FILE
    return [json.loads(line) for line in path.read_text().splitlines() if line] if path.exists() else []


def round_summary(work: str | Path, data: list[str | Path]) -> dict:
    """How the round's programs compare with the data before it, per task."""
    rows = read_round_rows(work)
    before = merged_programs(r for d in data for r in directory_rows(d))
    after = merged_programs(rows)
    tasks = sorted(Path(work, DONE_FILE).read_text().split()) if Path(work, DONE_FILE).exists() else []
    better = [t for t in after if t in before and after[t][0]["latency"] < before[t][0]["latency"]]
    return {"tasks": len(tasks), "measured": len(rows), "failed": sum(r["latency"] is None for r in rows),
            "tasks_with_a_new_best": len(better)}  # fmt: skip


def pack_round(work: str | Path, dest: str | Path) -> Path:
    """The compressed copy of a round for the repository (reproducibly: no timestamps)."""
    work, dest = Path(work), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in (WORKLOAD_FILE, RECORD_FILE):
        data = (work / name).read_bytes()
        (dest / (name + ".gz")).write_bytes(gzip.compress(data[: data.rfind(b"\n") + 1], mtime=0))
    write_rows(read_round_rows(work), dest / DATASET_FILE)
    return dest
