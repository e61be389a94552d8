"""The sentences of a new teacher corpus whose decisions differ from an older one's for the same task, or whose
task the older ones lack: the examples that teach a checkpoint the heuristic's newer rules.

    python data/training/changed_sentences.py out/v17/teacher-v17-znver4.jsonl out/v17/changed-znver4.jsonl \
        assets/corpus/teacher-v15-znver4.jsonl.gz assets/corpus/teacher-v16-znver4.jsonl.gz
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from tlm_core.language.sentence import PROMPT_END
from tlm_core.train.corpus import read_corpus


def decisions(row: dict) -> str:
    return row["text"].split(PROMPT_END, 1)[1]


def main(new: Path, out: Path, old_files: list[Path]) -> None:
    old = {r["task_id"]: decisions(r) for r in read_corpus(old_files)}  # a later file's sentence wins
    kept, kinds = [], Counter()
    for row in read_corpus([new]):
        if old.get(row["task_id"]) != decisions(row):
            kept.append(row)
            kinds[row["variant"].rsplit("-", 1)[0] if row["variant"].startswith("zoo") else row["variant"]] += 1
    out.write_text("".join(json.dumps(r) + "\n" for r in kept))
    added = sum(r["task_id"] not in old for r in kept)
    print(f"{len(kept) - added} changed, {added} new tasks, {len(kept)} written to {out}: {dict(kinds.most_common())}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]])
