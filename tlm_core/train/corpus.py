"""Pre-training corpus: sentences with random legal decisions, sampled from the spaces of training models.

One JSON line per sentence: {"model", "task_id", "task", "sketch", "prompt_len", "text", "language"}. No measurement is
needed: pre-training teaches the language (what a legal, well-formed decision looks like in its context).
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path

from ..language import VERSION, LanguageError, Sentence, make_prompt, sentence_of_points
from ..space import Space, random_replay


def random_sentences(space: Space, n: int, rng: random.Random) -> Iterator[Sentence]:
    """n sentences of uniformly random legal decisions (sketch uniform too), one replay each.

    A task without any decision point has a single sentence per sketch: it is yielded once per sketch."""
    prompt = make_prompt(space)
    seen: set[tuple] = set()
    for _ in range(n):
        index = rng.randrange(len(space.sketches))
        replayed = random_replay(space.sketches[index], rng)  # the same draws as rng.randrange per point
        key = (index, tuple(replayed.decisions))
        if not replayed.points and key in seen:
            continue
        seen.add(key)
        yield sentence_of_points(prompt, index, replayed.points, replayed.decisions)


def write_corpus(
    models: list[str], path: str | Path, per_task: int, seed: int = 0, quiet: bool = False, target: str = "llvm"
) -> int:
    """Sample `per_task` sentences for every task of every model into a JSON-lines file (appending).

    Returns the number of sentences written. Tasks whose space the language cannot write are skipped."""
    from ..frontend import load_model
    from ..partition import partition
    from ..progress import bar
    from ..space import SpaceBuilder
    from ..target import host_target

    tgt = host_target(target)
    builder = SpaceBuilder.for_target(tgt)
    rng = random.Random(seed)
    written = 0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        for name in models:
            tasks = partition(load_model(name), tgt).tasks
            for task in bar(tasks, f"corpus {name}", quiet=quiet):
                space = builder.build(task)
                try:
                    for s in random_sentences(space, per_task, rng):
                        row = {"model": name, "task_id": task.id, "task": task.name, "sketch": s.sketch_index,
                               "prompt_len": s.prompt_len, "text": s.text, "language": VERSION}  # fmt: skip
                        out.write(json.dumps(row) + "\n")
                        written += 1
                except LanguageError:
                    continue
                out.flush()
    return written


def read_corpus(paths: list[str | Path]) -> list[dict]:
    """Every row of JSON-lines corpus files (plain, or gzip-compressed when the name ends in .gz).

    Refuses sentences of another language version (rows without one are version 1's)."""
    rows: list[dict] = []
    for p in paths:
        opener = gzip.open if str(p).endswith(".gz") else open
        with opener(p, "rt") as f:
            rows += [json.loads(line) for line in f if line.strip()]
        other = {r.get("language", "tlm-lang-1") for r in rows} - {VERSION}
        if other:
            raise LanguageError(f"{p} holds sentences of {', '.join(sorted(other))}; this code writes {VERSION}: "
                                "write the corpus again (tlm train corpus / tlm train teacher)")  # fmt: skip
    return rows
