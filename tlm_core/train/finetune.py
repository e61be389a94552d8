"""Supervised fine-tuning on the best measured programs: (prompt, best decisions) pairs from a RecordStore.

For every task with successful records, the `top` fastest distinct programs become sentences; the loss is on
their decision tokens only. A record's trace is matched to its sketch by instruction kinds, and its decisions
are read by instruction index (the same indices as DecisionPoint.inst_index) and checked for legality.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..language import LanguageError, Sentence, make_prompt, sentence_of_points
from ..model import TLMConfig
from ..records import Record, RecordStore
from ..space import Decision, DecisionPoint, Space, replay
from .data import Example, decision_example
from .loop import TrainSettings, train


def record_decisions(space: Space, record: Record) -> tuple[int, list[Decision]] | None:
    """The (sketch index, decision vector) a record's trace describes, or None when no sketch matches."""
    insts = _before_postproc(list(_plain(record.trace[0])))
    by_inst = {int(i): v for i, v in record.decisions}
    for sketch in space.sketches:
        own = _before_postproc(list(_plain(sketch.trace.as_json(remove_postproc=True)[0])))
        if insts != own or any(p.inst_index not in by_inst for p in sketch.points):
            continue
        decisions = [by_inst[p.inst_index] for p in sketch.points]

        def checked(point: DecisionPoint, decisions=decisions) -> Decision:
            if point.check(decisions[point.index]) is not None:
                raise ValueError(point.check(decisions[point.index]))
            return point.normalize(decisions[point.index])

        try:
            return sketch.index, replay(sketch, checked).decisions
        except Exception:  # illegal here: try the next sketch
            continue
    return None


def _before_postproc(insts: list[tuple]) -> list[tuple]:
    """The schedule's own instructions, [kind, inputs, attrs, outputs] each (a record's trace goes on with
    its postprocessors). Sketches of a task can differ only in an input (e.g. the loop of a compute-at)."""
    kinds = [i[0] for i in insts]
    return insts[: kinds.index("EnterPostproc")] if "EnterPostproc" in kinds else insts


def _plain(value: Any) -> Any:
    """A trace's JSON, from TVM objects or parsed JSON, in one comparable form (numbers as floats)."""
    if isinstance(value, str):
        return value
    if hasattr(value, "__len__") and not hasattr(value, "value"):
        return tuple(_plain(v) for v in value)
    try:
        return round(float(getattr(value, "value", value)), 6)
    except (TypeError, ValueError):
        return None


def best_sentences(space: Space, records: list[Record], top: int = 1) -> list[Sentence]:
    """Sentences of the `top` fastest distinct legal programs among a task's records."""
    prompt = make_prompt(space)
    out: list[Sentence] = []
    seen: set[tuple] = set()
    for record in sorted((r for r in records if r.ok), key=lambda r: r.latency):
        found = record_decisions(space, record)
        if found is None or (found[0], tuple(found[1])) in seen:
            continue
        seen.add((found[0], tuple(found[1])))
        sketch_index, decisions = found
        replayed = replay(space.sketches[sketch_index], lambda p, d=decisions: d[p.index])
        try:
            out.append(sentence_of_points(prompt, sketch_index, replayed.points, replayed.decisions))
        except LanguageError:
            continue
        if len(out) == top:
            break
    return out


def finetune_examples(spaces: dict[str, Space], store: RecordStore, top: int = 1) -> list[Example]:
    """Examples for every task (by id) that has records in the store."""
    examples = []
    for task_id, space in spaces.items():
        for s in best_sentences(space, store.records(task_id), top):
            examples.append(decision_example(s.ids, s.decision_mask))
    return examples


def finetune(
    examples: list[Example],
    out_dir: str | Path,
    settings: TrainSettings,
    init_from: str | Path | None = None,
    config: TLMConfig | None = None,
    quiet: bool = False,
) -> dict:
    """Fine-tune (or resume) from `init_from` (a pre-trained checkpoint) into `out_dir`."""
    return train(examples, out_dir, settings, "finetune", config, init_from=init_from, quiet=quiet)
