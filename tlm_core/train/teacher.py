"""Teacher sentences: the Roller-style heuristic's Top-1 program for many tasks, written without measuring.

Measured fine-tuning targets exist for ~215 training tasks only, too few shapes for the model to learn the
rules that make a fast program (a whole number of vectors innermost, enough parallel work, reuse in cache).
The heuristic writes those rules down, and its Top-1 matches 64-trial search on the operators benchmark, so
its programs for hundreds of further tasks (the training variants and the operator zoo, tlm_core.dataset.zoo)
are a distillation corpus: one sentence per task, loss on the decisions. Tasks of the held-out models are
loaded too, only to be excluded by id, so evaluation stays on tasks the model never saw.

One JSON line per task: {"variant", "task_id", "task", "sketch", "prompt_len", "text", "teacher", "language"}.
Appending and resumable: a task already in the file is skipped; loaded variants are kept in a catalogue
next to it (<out>.catalog.jsonl).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..language import VERSION, decision_mask, encode, encode_ids
from .corpus import read_corpus
from .data import Example, decision_example


def catalog_path(out: str | Path) -> Path:
    out = Path(out)
    return out.with_name(out.name.removesuffix(".gz").removesuffix(".jsonl") + ".catalog.jsonl")


def write_teacher_corpus(
    out: str | Path,
    models: list[str],
    exclude_models: list[str],
    log: Callable[[str], None] = print,
    exclude_ids: frozenset[str] = frozenset(),
    target: str = "llvm",
    cpu: str | None = None,
) -> dict:
    """Append the heuristic's Top-1 sentence of every task of `models` (variant names or families, see
    tlm_core.dataset.variants_for) that is not a task of `exclude_models` nor in `exclude_ids` (e.g. the
    operators benchmark's tasks) nor of the test split's models (tlm_core.dataset.splits.testing_task_ids).
    cpu: write for that LLVM CPU instead of this host's. Returns counts."""
    from ..baselines.heuristic import heuristic_program
    from ..dataset import Catalog, variants_for
    from ..dataset.splits import testing_task_ids
    from ..space import SpaceBuilder
    from ..target import host_target

    tgt = host_target(target, cpu)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    catalog = Catalog(catalog_path(out))
    wanted, held_out = variants_for(models), variants_for(exclude_models)
    catalog.ensure(held_out + wanted, tgt, log)
    excluded = {t.id for t in catalog.for_variants([v.name for v in held_out])} | set(exclude_ids) | testing_task_ids()
    done = {row["task_id"] for row in read_corpus([out])} if out.exists() else set()
    builder = SpaceBuilder.for_target(tgt)
    counts = {"written": 0, "known": len(done), "excluded": 0, "no_decisions": 0, "failed": 0}
    tasks = catalog.for_variants([v.name for v in wanted])
    with out.open("a") as f:
        for i, t in enumerate(tasks):
            if t.id in excluded:
                counts["excluded"] += 1
                continue
            if t.id in done:
                continue
            try:
                space = builder.build(t.task())
                if not any(s.points for s in space.sketches):
                    counts["no_decisions"] += 1
                    continue
                cand = heuristic_program(space)
                s = encode(space, cand.sketch_index, cand.decisions)
            except Exception as err:  # LanguageError, InvalidDecisions, or TVM failing on one task: skip it
                log(f"task {t.name} ({t.id}): no teacher sentence ({type(err).__name__}: {str(err)[:300]})")
                counts["failed"] += 1
                continue
            row = {"variant": next(iter(t.models)), "task_id": t.id, "task": t.name, "sketch": s.sketch_index,
                   "prompt_len": s.prompt_len, "text": s.text, "teacher": "heuristic",
                   "language": VERSION}  # fmt: skip
            f.write(json.dumps(row) + "\n")
            f.flush()
            done.add(t.id)
            counts["written"] += 1
            if (i + 1) % 50 == 0:
                log(f"{i + 1}/{len(tasks)} tasks, {counts['written']} sentences written")
    return counts


# --anonymous: which names each extra copy of a teacher sentence hides ("op:" each operator name, "ops" the whole
# operator list as one "op?", as a TVMScript function's unknown name is written; "blk:" each block name)
HIDDEN_NAMES = {"all": [("op:", "blk:")], "each": [("ops",), ("blk:",), ("ops", "blk:")]}


def teacher_examples(
    paths: list[str | Path], anonymous: str | None = None, small_repeat: int = 1, small_work: int = 20
) -> list[Example]:
    """Fine-tuning examples of teacher corpus files (loss on the decision tokens, as for measured ones).

    anonymous: also each sentence with names unknown ("op?", "blk?"), as a hand-written or TOPI-built
    operator's are: "all" adds one copy with every operator and block name hidden, "each" three (the operator
    list as one unknown name, as a TVMScript operator's; the block names; both).
    small_repeat: the sentences of tasks of at most 2^small_work FLOPs (prompt token "work w<k>") that many
    times: there one wrong factor adds a parallel launch (~5 us) to a kernel of ~1 us, and they are few."""
    examples = []
    for row in read_corpus(paths):
        tokens, prompt_len = row["text"].split(), row["prompt_len"]
        variants = [tokens]
        for hide in HIDDEN_NAMES[anonymous] if anonymous else []:
            variants.append(anonymized(tokens, prompt_len, hide))
        work = work_of(tokens[:prompt_len])
        for t in variants * (small_repeat if work is not None and work <= small_work else 1):
            examples.append(decision_example(encode_ids(t), decision_mask(t, prompt_len - len(tokens) + len(t))))
    return examples


def work_of(prompt: list[str]) -> int | None:
    """k of a prompt's "work w<k>" (about 2^k FLOPs); None in a prompt without it."""
    i = prompt.index("work") if "work" in prompt else -1
    return int(prompt[i + 1][1:]) if 0 <= i < len(prompt) - 1 else None


def anonymized(tokens: list[str], prompt_len: int, hide: tuple[str, ...] = ("op:", "blk:")) -> list[str]:
    """The sentence with the prompt's operator and/or block names replaced by the unknown-name tokens."""
    prompt = tokens[:prompt_len]
    if "ops" in hide:  # "<op> op:a op:b arg ..." -> "<op> op? arg ..."
        start = prompt.index("<op>") + 1
        end = start
        while end < len(prompt) and (prompt[end].startswith("op:") or prompt[end] == "op?"):
            end += 1
        prompt = [*prompt[:start], "op?", *prompt[end:]]
    unknown = {"op:": "op?", "blk:": "blk?"}
    prompt = [next((unknown[h] for h in hide if h in unknown and t.startswith(h)), t) for t in prompt]
    return prompt + tokens[prompt_len:]
