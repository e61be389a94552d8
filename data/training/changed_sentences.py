"""The sentences of a new teacher corpus whose decisions differ from an older one's for the same task, or whose
task the older ones lack: the examples that teach a checkpoint the heuristic's newer rules.

    python data/training/changed_sentences.py out/v17/teacher-v17-znver4.jsonl out/v17/changed-znver4.jsonl \
        assets/corpus/teacher-v15-znver4.jsonl.gz assets/corpus/teacher-v16-znver4.jsonl.gz
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path


def decisions(row: dict) -> str:
    return row["text"].split("<dec>", 1)[1]


def main(new: Path, out: Path, old_files: list[Path]) -> None:
    old = {}
    for path in old_files:  # a later file's sentence replaces an earlier one's
        with (gzip.open(path, "rt") if path.suffix == ".gz" else path.open()) as f:
            old.update((r["task_id"], decisions(r)) for r in map(json.loads, f))
    kept, kinds, added = [], Counter(), 0
    for line in new.open():
        row = json.loads(line)
        if old.get(row["task_id"]) == decisions(row):
            continue
        kept.append(line)
        added += row["task_id"] not in old
        kinds[row["variant"].rsplit("-", 1)[0] if row["variant"].startswith("zoo") else row["variant"]] += 1
    out.write_text("".join(kept))
    print(f"{len(kept) - added} changed, {added} new tasks, {len(kept)} written to {out}: {dict(kinds.most_common())}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]])
