"""`tlm adapt`: fine-tune the TLM to this machine on programs measured here, within a time budget.

For the user's tasks, most of the budget goes to measuring candidates in passes over the tasks (heaviest
first): pass 0 the TLM's greedy program and the heuristic's Top-1, pass 1 TLM samples and the heuristic's
Top-k, later passes mutations of the best so far (one decision changed, the rest kept or re-decoded by the
model) and fresh samples. The fastest few per task are then measured again (a single 3-repeat latency on a
shared machine is often a lucky one). The rest of the budget fine-tunes the starting checkpoint (all weights,
a few dozen steps at a low learning rate) on each task's best measured programs, with this machine's
hardware prompt, and writes a checkpoint whose train_state.json lists this hardware, into
tlm_core.model.adapted_checkpoint(target) by default, where `tlm generate`, `tlm compile --method tlm` and
the GUI pick it up for this hardware.

The work folder holds everything needed to resume: rows.jsonl (one row per measurement, tlm_core.dataset's
row format, appended after each batch), done.txt (finished (task, pass) stages), state.json (seconds spent,
phase) and ckpt/ (the fine-tuning run, resumable by tlm_core.train.loop). A killed adapt picks up where it
stopped and never measures a program twice.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from .measured import merged_programs

ROWS_FILE = "rows.jsonl"
DONE_FILE = "done.txt"
STATE_FILE = "state.json"
SUMMARY_FILE = "adapt.json"
CKPT_DIR = "ckpt"


@dataclass
class AdaptSettings:
    minutes: float = 10.0  # wall-time budget: measuring, then fine-tuning
    measure_share: float = 0.8  # of the budget for measuring (the rest, at least min_train_s, fine-tunes)
    tasks: int = 16  # the heaviest tasks (calls x FLOPs) of the model(s)
    samples: int = 4  # TLM samples per task and pass (temperature 1)
    heuristic_k: int = 6  # the heuristic's Top-k candidates measured in pass 1
    mutations: int = 4  # mutations of the best per task and later pass
    again: int = 3  # the fastest programs per task measured once more before choosing
    top: int = 2  # best distinct programs per task that become examples (the best twice)
    steps: int = 60  # fine-tuning steps (at most; the remaining budget may stop it earlier)
    batch_size: int = 8
    lr: float = 3e-4
    min_train_s: float = 20.0
    seed: int = 0
    threads: int | None = None  # torch threads while fine-tuning (None: torch's default)


def _json(decisions: list) -> list:
    return [list(d) if isinstance(d, tuple) else d for d in decisions]


def program_key(sketch: int, decisions: list) -> str:
    return json.dumps([sketch, _json(decisions)])


class _Work:
    """The work folder: rows, finished stages, seconds spent."""

    def __init__(self, folder: Path, target_json: dict, base: str) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.state_path = folder / STATE_FILE
        self.state = json.loads(self.state_path.read_text()) if self.state_path.exists() else {}
        if self.state and self.state.get("target") != target_json:
            raise ValueError(f"work folder {folder} holds measurements for another target "
                             f"({self.state.get('target')}): use another --work folder")  # fmt: skip
        self.state.setdefault("target", target_json)
        self.state.setdefault("base", base)
        self.state.setdefault("measure_seconds", 0.0)
        self.state.setdefault("phase", "measure")
        self.rows = [json.loads(x) for x in (folder / ROWS_FILE).read_text().splitlines() if x] \
            if (folder / ROWS_FILE).exists() else []  # fmt: skip
        done_path = folder / DONE_FILE
        self.done = set(done_path.read_text().splitlines()) if done_path.exists() else set()
        self.save()

    def save(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=1) + "\n")
        tmp.replace(self.state_path)

    def measured(self, task_id: str) -> set[str]:
        return {program_key(r["sketch"], r["decisions"]) for r in self.rows if r["task"] == task_id}

    def append(self, rows: list[dict], stage: str, seconds: float) -> None:
        with (self.folder / ROWS_FILE).open("a") as f:
            f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
        with (self.folder / DONE_FILE).open("a") as f:
            f.write(stage + "\n")
        self.rows += rows
        self.done.add(stage)
        self.state["measure_seconds"] += seconds
        self.save()


def _row(task, models: list[str], source: str, sketch: int, decisions: list, result) -> dict:
    return {"task": task.id, "name": task.name, "models": models, "source": source, "sketch": sketch,
            "decisions": _json(decisions), "latency": result.latency if result.ok else None,
            "runs": result.latencies if result.ok else [], "records": 1,
            "error": None if result.ok else (result.error or "failed")[:200]}  # fmt: skip


def _candidates(pass_no: int, space, generator, best: dict | None, s: AdaptSettings, rng: random.Random):
    """(source, sketch, decisions) to try in this pass."""
    from ..baselines.heuristic import heuristic_candidates

    out: list[tuple[str, int, list]] = []
    if pass_no == 0:
        g = generator.greedy(space)
        out.append(("tlm-greedy", g.sketch_index, g.decisions))
        for c in heuristic_candidates(space, k=1, variants=False)[:1]:
            out.append(("heuristic-top1", c.sketch_index, c.decisions))
        return out
    for g in generator.sample(space, s.samples, temperature=1.0, seed=s.seed + pass_no):
        out.append(("tlm-sample", g.sketch_index, g.decisions))
    if pass_no == 1:
        for c in heuristic_candidates(space, k=s.heuristic_k)[1:]:
            out.append(("heuristic-topk", c.sketch_index, c.decisions))
    elif best is not None:
        out += _mutations(space, generator, best, s.mutations, rng)
    return out


def _mutations(space, generator, best: dict, n: int, rng: random.Random) -> list[tuple[str, int, list]]:
    """Up to n programs that differ from `best` in one decision: the others kept when still legal, else the
    later ones re-decoded by the model."""
    from ..space import TILE

    sketch = best["sketch"]
    points = space.sketches[sketch].points
    decisions = [tuple(d) if p.kind == TILE else d for p, d in zip(points, best["decisions"], strict=True)]
    out: list[tuple[str, int, list]] = []
    for _ in range(4 * n):
        if len(out) >= n or not points:
            break
        i = rng.randrange(len(points))
        others = [c for c in points[i].choices if c != decisions[i]]
        if not others:
            continue
        value = rng.choice(others)
        forced = dict(enumerate(decisions))
        forced[i] = value
        try:
            g = generator.force(space, forced, sketch)
        except ValueError:  # a later decision is illegal after this change: keep earlier ones only
            try:
                g = generator.force(space, {**{j: decisions[j] for j in range(i)}, i: value}, sketch)
            except ValueError:
                continue
        out.append(("mutation", g.sketch_index, g.decisions))
    return out


def _measure_batch(measurer, task, space, cands, models, known: set[str]) -> list[dict]:
    """Rows of the candidates not in `known`. A candidate equal to an earlier one of the batch (the TLM's
    greedy program is often the heuristic's Top-1) gets a row without runs: the same latency under its own
    source, never counted twice as a measurement."""
    from ..program import InvalidDecisions, apply_decisions

    programs, sources, same = [], [], []
    batch: dict[str, int] = {}
    for source, sketch, decisions in cands:
        key = program_key(sketch, decisions)
        if key in batch:
            same.append((source, batch[key]))
            continue
        if key in known:
            continue
        try:
            programs.append(apply_decisions(space, sketch, list(decisions)))
        except InvalidDecisions:
            continue
        known.add(key)
        batch[key] = len(sources)
        sources.append(source)
    results = measurer.measure(task, [p.mod for p in programs]) if programs else []
    rows = [_row(task, models, src, p.sketch_index, p.decisions, r)
            for src, p, r in zip(sources, programs, results, strict=True)]  # fmt: skip
    return rows + [{**rows[i], "source": src, "runs": [], "records": 0} for src, i in same]


def measure_phase(tasks, spaces: dict, work: _Work, generator, measurer, s: AdaptSettings, models: list[str],
                  budget_s: float, log: Callable[[str], None], prior: list[dict] = (),
                  passes: int = 100) -> None:  # fmt: skip
    """Passes over the tasks until the measuring budget is spent (or nothing new is left to try).

    prior: rows measured before (earlier rounds): mutations start from the best of them and this run's, and
    they are not measured again, except pass 0's TLM greedy and heuristic Top-1, measured side by side anew."""
    rng = random.Random(s.seed)
    pass_no = 0
    while work.state["measure_seconds"] < budget_s and pass_no < passes:
        fresh = 0
        for task in tasks:
            stage = f"{task.id} {pass_no}"
            if stage in work.done:
                fresh += 1  # done before a resume: counts as progress
                continue
            if work.state["measure_seconds"] >= budget_s:
                break
            start = time.perf_counter()
            space = spaces[task.id]
            mine = [r for r in (*prior, *work.rows) if r["task"] == task.id]
            best = merged_programs(mine).get(task.id, [None])[0]
            cands = _candidates(pass_no, space, generator, best, s, rng)
            known = work.measured(task.id)
            if pass_no:
                known |= {program_key(r["sketch"], r["decisions"]) for r in mine}
            rows = _measure_batch(measurer, task, space, cands, models, known)
            work.append(rows, stage, time.perf_counter() - start)
            fresh += len(rows)
            rows = [r for r in rows if r["records"]]  # measured (not a batch's duplicate)
            ok = [r["latency"] for r in rows if r["latency"] is not None]
            best_all = merged_programs([*mine, *rows]).get(task.id, [{}])[0]
            log(f"pass {pass_no} {task.name[:40]}: {len(rows)} measured ({len(rows) - len(ok)} failed), "
                f"best so far {_us(best_all.get('latency'))} ({best_all.get('source', '-')}), "
                f"{work.state['measure_seconds']:.0f}/{budget_s:.0f} s")  # fmt: skip
        if not fresh:
            break
        pass_no += 1
    for task in tasks:  # the fastest few again, so that the examples are not lucky single measurements
        stage = f"{task.id} again"
        if stage in work.done:
            continue
        start = time.perf_counter()
        best = merged_programs(r for r in (*prior, *work.rows) if r["task"] == task.id).get(task.id, [])[: s.again]
        space = spaces[task.id]
        from ..program import apply_decisions

        programs = [apply_decisions(space, b["sketch"], _decisions(space, b)) for b in best]
        results = measurer.measure(task, [p.mod for p in programs]) if programs else []
        rows = [_row(task, models, "again", p.sketch_index, p.decisions, r)
                for p, r in zip(programs, results, strict=True)]  # fmt: skip
        work.append(rows, stage, time.perf_counter() - start)


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f} us"


def _decisions(space, row: dict) -> list:
    from .measured import decisions_of

    return decisions_of(space, row)


def best_programs(rows: list[dict]) -> dict[str, list[dict]]:
    """task id -> its measured programs, re-measured ones first, fastest first (tlm_core.train.measured)."""
    return merged_programs(rows)


def task_spaces(tasks, builder, n: int) -> tuple[list, dict]:
    """The n heaviest tasks (calls x FLOPs) with decisions, and their spaces by task id."""
    spaces = {}
    for t in sorted(tasks, key=lambda t: -t.weight * t.flops):
        space = builder.build(t)
        if space.num_points or len(space.sketches) > 1:  # a task without decisions has nothing to learn
            spaces[t.id] = space
        if len(spaces) >= n:
            break
    return [t for t in sorted(tasks, key=lambda t: -t.weight * t.flops) if t.id in spaces], spaces


def adapt(
    tasks,
    target,
    work: str | Path,
    out: str | Path,
    checkpoint: str | Path | None = None,
    settings: AdaptSettings | None = None,
    models: list[str] | None = None,
    measurer=None,
    builder=None,
    log: Callable[[str], None] = print,
    prior: list[dict] = (),
    replay: list = (),
) -> dict:
    """Measure candidates for `tasks` on `target` (this machine), fine-tune `checkpoint` (default: the shipped
    one) on the best, write the adapted checkpoint into `out`. Resumable through `work`. Returns a summary.

    prior: rows measured on this target before (tlm_core.train.rounds: the earlier rounds), learnt from too.
    replay: examples mixed into the fine-tuning (teacher sentences: what the checkpoint knew of other tasks).
    measurer, builder (tests): a Measurer and SpaceBuilder for `target` to use instead of new ones."""
    from ..generator import Generator
    from ..language import encode
    from ..model import default_checkpoint, load_checkpoint, save_checkpoint, train_state
    from ..model.adapted import hardware_key, hardware_prompt
    from ..model.learnt import example_prompts, learnt_from_prompts, load_learnt, merge_learnt, save_learnt
    from ..space import SpaceBuilder
    from ..target import target_to_dict
    from .data import decision_example
    from .finetune import finetune
    from .loop import TrainSettings

    s = settings or AdaptSettings()
    models = list(models or [])
    base = Path(checkpoint) if checkpoint else default_checkpoint()
    if not (base / "config.json").exists():
        raise FileNotFoundError(f"no TLM checkpoint at {base} to adapt (config.json missing)")
    if s.minutes <= 0:
        raise ValueError(f"--minutes must be positive, not {s.minutes}")
    work_dir, out = Path(work), Path(out)
    w = _Work(work_dir, target_to_dict(target), str(base))
    started = time.perf_counter()
    budget = s.minutes * 60
    chosen, spaces = task_spaces(tasks, builder or SpaceBuilder.for_target(target), s.tasks)
    if not chosen:
        raise ValueError("none of the model's tasks has schedule decisions: there is nothing to adapt")
    log(f"adapting {base} to {hardware_prompt(target)} on {len(chosen)} tasks, {s.minutes:g} min")
    setup_s = time.perf_counter() - started
    if w.state["phase"] == "measure":
        generator = Generator.from_checkpoint(base)
        # the whole budget, over resumed runs too: seconds measured before a kill count
        measure_budget = max(0.0, budget * s.measure_share - setup_s)
        own = measurer is None
        if own:
            from ..measure import Measurer

            measurer = Measurer(target, repeat=3, min_repeat_ms=5, timeout_s=30.0)
        try:
            measure_phase(chosen, spaces, w, generator, measurer, s, models, measure_budget, log, prior)
        finally:
            if own:
                measurer.close()
        w.state["phase"] = "finetune"
        w.save()
    best = best_programs([*prior, *w.rows])
    examples = []
    for t in chosen:
        heuristic = _task_figures([], w.rows, t.id)["heuristic_top1_s"]
        for rank, row in enumerate(best.get(t.id, [])[: s.top]):
            sentence = encode(spaces[t.id], row["sketch"], _decisions(spaces[t.id], row))
            ex = decision_example(sentence.ids, sentence.decision_mask)
            # weighted by measured speed: the best twice, three times when it beats the heuristic's Top-1
            copies = 1 if rank else 3 if heuristic and row["latency"] < 0.97 * heuristic else 2
            examples += [ex] * copies
    if not examples:
        raise ValueError("no program measured successfully on this machine: nothing to fine-tune on")
    measured_examples = len(examples)
    examples += list(replay)
    train_s = max(s.min_train_s, budget - setup_s - w.state["measure_seconds"])
    ts = TrainSettings(steps=s.steps, batch_size=s.batch_size, lr=s.lr, warmup=max(1, s.steps // 10),
                       log_every=10, save_every=max(10, s.steps // 3), max_seconds=train_s, seed=s.seed,
                       threads=s.threads)  # fmt: skip
    log(f"fine-tuning on {measured_examples} measured examples of {len(best)} tasks and {len(replay)} replayed: "
        f"up to {s.steps} steps, {train_s:.0f} s")  # fmt: skip
    info = finetune(examples, work_dir / CKPT_DIR, ts, init_from=base, quiet=True)
    summary = {
        "hardware": hardware_prompt(target),
        "hardware_key": hardware_key(target),
        "target": target_to_dict(target),
        "base": str(base),
        "models": models,
        "tasks": [{"id": t.id, "name": t.name, **_task_figures(best.get(t.id, []), w.rows, t.id)} for t in chosen],
        "measured": sum(r["records"] > 0 for r in w.rows),
        "failed": sum(r["latency"] is None and r["records"] > 0 for r in w.rows),
        "examples": measured_examples,
        "replayed": len(replay),
        "measure_minutes": round(w.state["measure_seconds"] / 60, 2),
        "train_steps": info["step"],
        "train_minutes": round(info["seconds"] / 60, 2),
        "settings": asdict(s),
    }
    model = load_checkpoint(work_dir / CKPT_DIR)
    state = {**train_state(work_dir / CKPT_DIR), "adapted": {k: v for k, v in summary.items() if k != "tasks"}}
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    save_checkpoint(model, tmp, extra=state)
    learnt = learnt_from_prompts(example_prompts(examples), [f"measured on {hardware_key(target)}"])
    save_learnt(tmp, merge_learnt(load_learnt(base), learnt))
    (tmp / SUMMARY_FILE).write_text(json.dumps(summary, indent=1) + "\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
    (work_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=1) + "\n")
    w.state["phase"] = "done"
    w.save()
    summary["out"] = str(out)
    return summary


def _task_figures(best: list[dict], rows: list[dict], task_id: str) -> dict:
    """The best measured latency, and the first measurements of the TLM's greedy and the heuristic's Top-1."""
    first = {r["source"]: r["latency"] for r in reversed(rows) if r["task"] == task_id}
    return {"best_s": best[0]["latency"] if best else None, "best_source": best[0].get("source") if best else None,
            "tlm_greedy_s": first.get("tlm-greedy"), "heuristic_top1_s": first.get("heuristic-top1")}  # fmt: skip
