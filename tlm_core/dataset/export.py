"""Records -> training rows, statistics, and the compressed copy of a collection kept in the repository.

A row is one distinct program of a task (all its records merged: the re-measurements of the top programs
add run times, the latency is the median over all of them):
    {"task": id, "name": ..., "models": [variants], "source": "random" | "search" | "heuristic", "sketch": index,
     "decisions": [...], "latency": seconds or None (failed), "runs": run times, "records": records}
Decisions are in tlm_core.space's encoding (tiles as lists); the task's workload (its IRModule) is in the
catalog and in each source's workload.json, so training rebuilds the space and the sentence from these.
"""

from __future__ import annotations

import gzip
import json
import math
import shutil
import statistics
from collections.abc import Iterable
from pathlib import Path

from tlm_core.records.store import FAILED_RUN_SECS, RECORD_FILE, WORKLOAD_FILE

from .catalog import CATALOG_FILE, Catalog
from .collect import HEURISTIC_DIR, RANDOM_DIR, SEARCH_DIR
from .files import read_records, read_workloads
from .traces import SketchMatcher, decisions_to_json, program_key

SOURCES = (RANDOM_DIR, SEARCH_DIR, HEURISTIC_DIR)
DATASET_FILE = "dataset.jsonl.gz"
TARGET_FILE = "target.json"  # the target a folder of rows without records was measured on


def _merged(directory: Path) -> dict[str, dict[str, tuple[list, list[float], int]]]:
    """task id -> program key -> (trace, successful run times, number of records)."""
    out: dict[str, dict[str, tuple[list, list[float], int]]] = {}
    for r in read_records(directory):
        known = out.setdefault(r.task_id, {})
        trace, runs, n = known.get(program_key(r.trace), (r.trace, [], 0))
        known[program_key(r.trace)] = (trace, runs + [s for s in r.run_secs if s != FAILED_RUN_SECS], n + 1)
    return out


def export_rows(directory: str | Path, builder=None, sources: Iterable[str] = SOURCES) -> list[dict]:
    """Every distinct program of a collection (live or packed) as a row; builds each task's space (TVM)."""
    from tlm_core.partition.task import task_from_primfunc

    from .files import workload_mod

    directory = Path(directory)
    target = directory_target(directory)  # the spaces of the hardware it was measured on
    catalog = Catalog(directory / CATALOG_FILE)
    rows: list[dict] = []
    matchers: dict[str, SketchMatcher] = {}
    for source in sources:
        workloads = dict(read_workloads(directory / source))
        for task_id, programs in _merged(directory / source).items():
            if task_id not in matchers:
                builder = builder or target_builder(target)
                task = task_from_primfunc(workload_mod(workloads[task_id])["main"])
                matchers[task_id] = SketchMatcher(builder.build(task))
            info = catalog.tasks.get(task_id)
            for trace, runs, n in programs.values():
                found = matchers[task_id].match(trace)
                if found is None:  # e.g. an untuned record (empty trace): no decision vector to learn
                    continue
                rows.append(
                    {
                        "task": task_id,
                        "name": info.name if info else None,
                        "models": sorted(info.models) if info else [],
                        "source": source,
                        "sketch": found[0],
                        "decisions": decisions_to_json(found[1]),
                        "latency": statistics.median(runs) if runs else None,
                        "runs": runs,
                        "records": n,
                    }
                )
    return rows


def directory_target(directory: str | Path) -> dict | None:
    """The target (TVM's JSON form) the programs of a data directory were measured on: its target.json (the
    measured rounds' folders), else its first record's, in a source folder (a collection) or at the top (a
    round of `tlm train round`). None when it holds neither."""
    directory = Path(directory)
    if (directory / TARGET_FILE).exists():
        return json.loads((directory / TARGET_FILE).read_text())
    for folder in (directory, *(directory / s for s in SOURCES)):
        for path, opener in ((folder / RECORD_FILE, open), (folder / (RECORD_FILE + ".gz"), gzip.open)):
            if path.exists():
                with opener(path, "rt") as f:
                    line = f.readline()
                if line.endswith("\n"):
                    return json.loads(line)[1][2]
    return None


def target_builder(target: dict | None):
    """The SpaceBuilder of a target in TVM's JSON form (a record's), this host's when None."""
    from tvm.target import Target

    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    return SpaceBuilder.for_target(Target(target) if target else host_target())


def write_rows(rows: list[dict], path: str | Path) -> Path:
    """JSON lines, gzip-compressed when the name ends in .gz (reproducibly: no timestamp)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    return path


def read_rows(path: str | Path) -> list[dict]:
    data = Path(path).read_bytes()
    text = gzip.decompress(data).decode() if str(path).endswith(".gz") else data.decode()
    return [json.loads(line) for line in text.splitlines() if line]


def pack(directory: str | Path, dest: str | Path, rows: list[dict] | None = None) -> Path:
    """A compressed copy of a collection: catalog and records as .gz, plus the exported rows when given.

    The packed directory reads like the live one (stats, export_rows, tlm_core.dataset.files), and
    `unpack` restores a live one from it to resume collecting."""
    directory, dest = Path(directory), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    names = [CATALOG_FILE] + [f"{s}/{f}" for s in SOURCES for f in (WORKLOAD_FILE, RECORD_FILE)]
    for name in names:
        src = directory / name
        if src.exists():
            out = dest / (name + ".gz")
            out.parent.mkdir(parents=True, exist_ok=True)
            data = src.read_bytes()
            out.write_bytes(gzip.compress(data[: data.rfind(b"\n") + 1], mtime=0))  # complete lines only
    if rows is not None:
        write_rows(rows, dest / DATASET_FILE)
    return dest


def unpack(packed: str | Path, directory: str | Path) -> Path:
    """The live collection directory back from a packed one (to resume collecting on a fresh clone)."""
    packed, directory = Path(packed), Path(directory)
    for gz in packed.rglob("*.gz"):
        if gz.name == DATASET_FILE:
            continue
        out = directory / gz.relative_to(packed).with_suffix("")
        if out.exists():
            raise FileExistsError(f"{out} exists: unpack into an empty directory")
        out.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(gz, "rb") as f, open(out, "wb") as g:
            shutil.copyfileobj(f, g)
    return directory


def stats(directory: str | Path) -> dict:
    """Counts of a collection (live or packed), without TVM."""
    directory = Path(directory)
    catalog = Catalog(directory / CATALOG_FILE)
    doc: dict = {"directory": str(directory), "variants": catalog.variants, "catalog_tasks": len(catalog.tasks)}
    per_variant: dict[str, int] = {v: 0 for v in catalog.variants}
    by_source = {source: _merged(directory / source) for source in SOURCES}  # each file read once
    for source, merged in by_source.items():
        programs = [p for task in merged.values() for p in task.values()]
        doc[source] = {
            "tasks": len(merged),
            "programs": len(programs),
            "records": sum(n for _, _, n in programs),
            "ok": sum(1 for _, runs, _ in programs if runs),
            "failed": sum(1 for _, runs, _ in programs if not runs),
            "remeasured": sum(1 for _, _, n in programs if n > 1),
        }
        if source == RANDOM_DIR:
            for task_id, progs in merged.items():
                for v in catalog.tasks[task_id].models if task_id in catalog.tasks else []:
                    per_variant[v] += len(progs)
            doc[source]["programs_per_task"] = sorted(len(p) for p in merged.values())
    doc["programs_per_variant"] = per_variant
    for source in (SEARCH_DIR, HEURISTIC_DIR):
        doc[f"{source}_vs_random"] = source_vs_random(by_source[RANDOM_DIR], by_source[source])
    return doc


def source_vs_random(random: dict, found_by: dict) -> dict:
    """Are a source's targets (search, heuristic) better than the best random programs? Per task it covers: the
    best random latency (of the re-measured programs when there are any: a single timing is often a lucky one)
    over the source's best latency; their geometric mean (> 1: the source found faster programs) and the tasks
    it won."""

    def best(programs: dict, remeasured_only: bool) -> float | None:
        times = [statistics.median(runs) for _, runs, n in programs.values() if runs and (n > 1 or not remeasured_only)]
        return min(times) if times else None

    ratios = []
    for task_id, found in found_by.items():
        programs = random.get(task_id, {})
        ours = best(programs, any(n > 1 for _, _, n in programs.values()))
        theirs = best(found, False)
        if ours and theirs:
            ratios.append(ours / theirs)
    geomean = math.exp(statistics.fmean(math.log(r) for r in ratios)) if ratios else None
    return {"tasks": len(ratios), "faster": sum(r > 1 for r in ratios), "random_over_source": geomean}
