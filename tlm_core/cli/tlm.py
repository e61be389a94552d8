"""TLM commands: `tlm generate` (schedules the model writes), `tlm train corpus|teacher|pretrain|finetune|learnt`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tlm_core.cli import with_example
from tlm_core.cli.common import (
    add_hardware_options,
    build_spaces,
    emit,
    fmt_secs,
    load_partition,
    table,
    target_from_args,
    task_row,
)


def load_generator(args: argparse.Namespace, target=None):
    """The Generator of --checkpoint, else the one `tlm adapt` wrote for the target's hardware, else the shipped
    checkpoint, else (only with --random-init) an untrained one."""
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint_for, new_model, preset

    if args.random_init:
        return Generator(new_model(preset(args.preset), seed=args.seed)), f"untrained {args.preset} (random init)"
    path = Path(args.checkpoint) if args.checkpoint else default_checkpoint_for(target)
    if not (path / "config.json").exists():
        raise FileNotFoundError(
            f"no TLM checkpoint at {path}: pass --checkpoint DIR (from `tlm train pretrain`), or --random-init "
            "to generate with an untrained model"
        )
    return Generator.from_checkpoint(path), str(path)


def task_notes(generator, items: list, args: argparse.Namespace, shown: int = 5) -> dict[str, str]:
    """Task id -> why it lies outside what the TLM learnt (Generator.unseen_task), for spaces or tasks; the
    first few printed as "note:" lines on stderr (unless --quiet), the rest counted."""
    notes = {}
    for item in items:
        note = generator.unseen_task(item)
        if note:
            task = getattr(item, "task", item)
            notes[task.id] = note.replace("MODEL", str(args.model))
    if not args.quiet:
        for note in list(notes.values())[:shown]:
            print(f"note: {note}", file=sys.stderr)
        if len(notes) > shown:
            print(f"note: {len(notes) - shown} more tasks lie outside what the TLM learnt (--json lists them)",
                  file=sys.stderr)  # fmt: skip
    return notes


def cmd_generate(args: argparse.Namespace) -> None:
    from tlm_core.program import InvalidDecisions, apply_decisions
    from tlm_core.progress import bar, step

    _, part, target = load_partition(args)
    from tlm_core.model import checkpoint_label

    generator, source = load_generator(args, target)
    label = source if args.random_init else checkpoint_label(source, target)
    tasks = [part.task(args.task)] if args.task else part.tasks
    spaces = build_spaces(args, tasks, target)
    note = generator.unseen_hardware(spaces[tasks[0].id]) if tasks else None
    if note and not args.quiet:
        print(f"note: {note}", file=sys.stderr)
    unseen = task_notes(generator, [spaces[t.id] for t in tasks], args)
    docs = []
    for task in bar(tasks, "generating", quiet=args.quiet):
        space = spaces[task.id]
        start = time.perf_counter()
        cands = generator.generate(space, args.candidates, args.temperature, args.top_k, args.seed)
        seconds = time.perf_counter() - start
        rows, programs = [], []
        for g in cands:
            try:
                programs.append(apply_decisions(space, g.sketch_index, g.decisions))
                valid, error = True, None
            except InvalidDecisions as err:  # never expected: decoding is constrained
                programs.append(None)
                valid, error = False, str(err)
            rows.append({**g.to_dict(steps=args.steps), "valid": valid, "error": error})
        docs.append({**task_row(task, space), "seconds": seconds, "candidates": rows, "programs": programs})
    if args.measure:
        from tlm_core.measure import Measurer

        with step("measuring the candidates", args.quiet), Measurer(target) as m:
            for doc in docs:
                mods = [p.mod for p in doc["programs"] if p is not None]
                results = m.measure(part.task(doc["id"]), mods) if mods else []
                ok = [r.latency for r in results if r.ok]
                doc["best_latency_s"] = min(ok) if ok else None
                doc["latencies_s"] = [r.latency for r in results]
    for doc in docs:
        del doc["programs"]
    valid = sum(c["valid"] for d in docs for c in d["candidates"])
    total = sum(len(d["candidates"]) for d in docs)
    out = {"model": args.model, "checkpoint": source, "checkpoint_label": label, "target": str(target), "tasks": docs,
           "valid": valid, "candidates": total, "hardware_note": note, "task_notes": unseen}  # fmt: skip
    rows = []
    for d in docs:
        best = d["candidates"][0]
        rows.append({
            "id": d["id"], "name": d["name"][:40], "cands": len(d["candidates"]), "sketch": best["sketch"],
            "decisions": str(best["decisions"])[:60], "valid": all(c["valid"] for c in d["candidates"]),
            "gen": fmt_secs(d["seconds"]), "latency": fmt_secs(d.get("best_latency_s")),
        })  # fmt: skip
    cols = ["id", "name", "cands", "sketch", "decisions", "valid", "gen"] + (["latency"] if args.measure else [])
    text = f"checkpoint: {label}\n" + table(rows, cols) + f"\nvalid: {valid}/{total} candidates"
    if args.task and not args.json:
        text += "\n" + "\n".join(c["sentence"] for c in docs[0]["candidates"][:1])
    emit(args, out, text)


def cmd_corpus(args: argparse.Namespace) -> None:
    from tlm_core.train import write_corpus

    n = write_corpus(args.models, args.out, args.per_task, args.seed, args.quiet)
    emit(args, {"out": args.out, "sentences": n, "models": args.models}, f"{n} sentences appended to {args.out}")


def _stderr_log(args: argparse.Namespace):
    """Progress lines on stderr, unless --quiet."""

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    return log


def cmd_teacher(args: argparse.Namespace) -> None:
    from tlm_core.train import write_teacher_corpus

    log = _stderr_log(args)
    ids = frozenset(line.split()[0] for f in args.exclude_tasks or [] for line in Path(f).read_text().splitlines()
                    if line.strip() and not line.startswith("#"))  # fmt: skip
    counts = write_teacher_corpus(args.out, args.models, args.exclude, log, ids, cpu=args.cpu)
    emit(args, {"out": args.out, **counts}, f"{counts['written']} teacher sentences appended to {args.out}: {counts}")


def _settings(args: argparse.Namespace):
    from tlm_core.train import TrainSettings

    return TrainSettings(steps=args.steps, batch_size=args.batch_size, lr=args.lr, warmup=args.warmup,
                         save_every=args.save_every, max_seconds=args.max_minutes * 60 if args.max_minutes else None,
                         seed=args.seed, threads=args.threads)  # fmt: skip


def _other_rank(args: argparse.Namespace) -> bool:
    """A torchrun process other than rank 0: it trains quietly, rank 0 reports (and writes the files)."""
    other = int(os.environ.get("RANK", "0")) > 0
    args.quiet = args.quiet or other
    return other


def cmd_pretrain(args: argparse.Namespace) -> None:
    from tlm_core.model import preset
    from tlm_core.train import pretrain

    other = _other_rank(args)
    info = pretrain(args.corpus, args.out, _settings(args), preset(args.preset), quiet=args.quiet)
    if not other:
        emit(args, info, f"pre-trained to step {info['step']}, loss {info['loss']:.4f}: {args.out}")


def cmd_finetune(args: argparse.Namespace) -> None:
    import json

    from tlm_core.model.learnt import example_prompts, learnt_from_prompts, load_learnt, merge_learnt, save_learnt
    from tlm_core.train import finetune, measured_examples, teacher_examples
    from tlm_core.train.data import hide_cpu_names

    log = _stderr_log(args)
    other = _other_rank(args)
    examples, summary = measured_examples(args.data, args.top, log=log)
    if not examples:
        raise ValueError(f"no successfully measured programs with decisions in {', '.join(args.data)}")
    log(
        f"{summary['examples']} examples from {summary['tasks']} tasks ({summary['programs']} distinct programs)"
        f" on {', '.join(summary['targets'])}"
    )
    examples *= args.measured_repeat
    summary["measured_repeat"] = args.measured_repeat
    if args.teacher:
        taught = teacher_examples(args.teacher, args.anonymous, args.small_repeat)
        summary |= {"teacher": args.teacher, "teacher_examples": len(taught), "anonymous": args.anonymous,
                    "small_repeat": args.small_repeat}  # fmt: skip
        examples += taught
        log(f"{len(taught)} teacher examples from {', '.join(args.teacher)}")
    if args.hide_cpu:
        examples = hide_cpu_names(examples, args.hide_cpu, args.seed)
        summary["hide_cpu"] = args.hide_cpu
    info = finetune(examples, args.out, _settings(args), init_from=args.init, quiet=args.quiet)
    if other:
        return
    (Path(args.out) / "finetune_data.json").write_text(json.dumps(summary, indent=1) + "\n")
    learnt = learnt_from_prompts(example_prompts(examples), [*args.data, *(args.teacher or [])])
    save_learnt(args.out, merge_learnt(load_learnt(args.init) if args.init else None, learnt))
    text = f"fine-tuned on {len(examples)} programs to step {info['step']}, loss {info['loss']:.4f}: {args.out}"
    emit(args, {**info, "data": summary}, text)


def cmd_learnt(args: argparse.Namespace) -> None:
    from tlm_core.model.learnt import LEARNT, corpus_prompts, learnt_from_prompts, save_learnt

    learnt = learnt_from_prompts(corpus_prompts(args.teacher, args.anonymous), args.teacher)
    path = save_learnt(args.checkpoint, learnt)
    kinds = sum(len(v) for v in learnt["kinds"].values())
    emit(args, {"out": str(path), "prompts": learnt["prompts"], "kinds": kinds},
         f"{LEARNT}: {kinds} kinds x layouts from {learnt['prompts']} prompts -> {path}")  # fmt: skip


def cmd_rounds(args: argparse.Namespace) -> None:
    import random

    from tlm_core.dataset.splits import testing_task_ids
    from tlm_core.model import default_checkpoint
    from tlm_core.target import host_target
    from tlm_core.train import teacher_examples
    from tlm_core.train.adapt import AdaptSettings
    from tlm_core.train.measured import catalog_tasks
    from tlm_core.train.rounds import choose_tasks, pack_rounds, run_rounds, variant_tasks

    log = _stderr_log(args)
    pool = catalog_tasks(args.data)
    if args.models:
        pool.update(variant_tasks(args.models, Path(args.work) / "catalog.jsonl", log))
    chosen = choose_tasks(pool, args.tasks, args.max_gflop, set(testing_task_ids()))
    if not chosen:
        raise ValueError(f"no task of at most {args.max_gflop:g} GFLOP in the catalogues of {' '.join(args.data)}")
    tasks = []
    for ct in chosen:
        task = ct.task()
        task.weight = max(ct.models.values())
        tasks.append(task)
    replay = teacher_examples(args.replay) if args.replay else []
    random.Random(args.seed).shuffle(replay)
    settings = AdaptSettings(minutes=args.minutes, measure_share=args.measure_share, tasks=len(tasks),
                             steps=args.steps, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                             threads=args.threads)  # fmt: skip
    figures = run_rounds(tasks, host_target(), args.work, args.checkpoint or default_checkpoint(), args.rounds,
                         settings, replay, args.replay_count, log)  # fmt: skip
    pack_rounds(args.work, args.out, tasks, host_target())
    rows = [{"round": f["round"], "top-1 beats heuristic": f"{f['top1_beats_heuristic']}/{f['compared']}",
             "top-1 vs heuristic": f"{f['top1_vs_heuristic']}x", "best vs heuristic": f"{f['best_vs_heuristic']}x",
             "measured": f["measured"], "steps": f["train_steps"]} for f in figures]  # fmt: skip
    text = table(rows, list(rows[0])) + f"\n(round N: the checkpoint of round N-1) -> {args.out}"
    emit(args, {"rounds": figures, "out": args.out}, text)


DEFAULT_ADAPT_MODELS = ("bert-tiny", "resnet50-tiny")  # `tlm adapt` without a model: a transformer and a CNN


def cmd_adapt(args: argparse.Namespace) -> None:
    from tlm_core.frontend import load_model, parse_input_shapes
    from tlm_core.model import adapted_checkpoint, adapted_root, hardware_key
    from tlm_core.partition import partition
    from tlm_core.progress import step
    from tlm_core.train.adapt import AdaptSettings, adapt

    log = _stderr_log(args)
    if not args.minutes > 0:
        raise ValueError(f"--minutes must be positive, not {args.minutes:g}")
    target = target_from_args(args)
    names = args.model or list(DEFAULT_ADAPT_MODELS)
    tasks, seen = [], set()
    for name in names:
        with step(f"loading {name}", args.quiet):
            model = load_model(name, allow_code=True, input_shapes=parse_input_shapes(args.input_shape))
            part = partition(model, target)
        tasks += [t for t in part.tasks if t.id not in seen]
        seen |= {t.id for t in part.tasks}
    key = hardware_key(target)
    out = Path(args.out) if args.out else adapted_checkpoint(target)
    slug = "-".join(Path(n).stem for n in names)[:80]
    work = Path(args.work) if args.work else adapted_root() / key / f"work-{slug}"
    settings = AdaptSettings(minutes=args.minutes, tasks=args.tasks, steps=args.steps, lr=args.lr, seed=args.seed,
                             samples=args.samples, heuristic_k=args.heuristic_k, threads=args.threads)  # fmt: skip
    summary = adapt(tasks, target, work, out, args.checkpoint, settings, names, log=log)
    rows = [{"task": t["name"][:40], "tlm greedy": fmt_secs(t["tlm_greedy_s"]),
             "heuristic top-1": fmt_secs(t["heuristic_top1_s"]), "best": fmt_secs(t["best_s"]),
             "found by": t["best_source"] or "-"} for t in summary["tasks"]]  # fmt: skip
    text = (table(rows, ["task", "tlm greedy", "heuristic top-1", "best", "found by"])
            + f"\n{summary['measured']} programs measured in {summary['measure_minutes']} min, fine-tuned "
            f"{summary['train_steps']} steps in {summary['train_minutes']} min\nadapted checkpoint for "
            f"{summary['hardware']}: {out}\nwork folder (resumable): {work}")  # fmt: skip
    if not args.out:
        text += "\n`tlm generate`, `tlm compile --method tlm` and the GUI now use it on this hardware"
    emit(args, {**summary, "work": str(work)}, text)


def _training_options(sp: argparse.ArgumentParser, steps: int) -> None:
    sp.add_argument("--out", required=True, help="checkpoint folder (resumed when it already holds this phase)")
    sp.add_argument("--steps", type=int, default=steps)
    sp.add_argument("--batch-size", type=int, default=16, help="sentences per step and process")
    sp.add_argument("--lr", type=float, default=1e-3)
    sp.add_argument("--warmup", type=int, default=100)
    sp.add_argument("--save-every", type=int, default=100)
    sp.add_argument("--max-minutes", type=float, help="stop with a checkpoint after this much wall time")
    sp.add_argument("--threads", type=int, default=1, help="torch threads (1 is best on a shared 2-core CPU)")
    sp.add_argument("--seed", type=int, default=0)


def register(sub: argparse._SubParsersAction, add) -> None:
    from tlm_core.dataset.splits import CORPUS_MODELS, TRAIN_MODELS, VALIDATION_MODELS
    from tlm_core.model import PRESETS

    sp = add(sub, "generate", cmd_generate, "schedules written by the TLM for every task (or one) of a model",
             example="tlm generate bert-tiny --candidates 4 --measure")  # fmt: skip
    sp.add_argument("--task", help="task id, id prefix or fused function name (default: every task)")
    sp.add_argument("--candidates", type=int, default=1, metavar="K", help="distinct candidates per task")
    sp.add_argument("--temperature", type=float, default=0.0, help="0: greedy (K=1) or beam search; >0: sampling")
    sp.add_argument("--top-k", type=int, help="sample among the k most likely legal tokens")
    sp.add_argument("--checkpoint", help="checkpoint folder (default: `tlm adapt`'s for this hardware, else the "
                    "shipped assets/tlm-small)")  # fmt: skip
    add_hardware_options(sp)
    sp.add_argument("--random-init", action="store_true", help="use an untrained model (no checkpoint)")
    sp.add_argument("--preset", default="small", choices=list(PRESETS), help="model size for --random-init")
    sp.add_argument("--measure", action="store_true", help="measure the candidates; report the best latency")
    sp.add_argument("--steps", action="store_true", help="include every decoding step in --json output")
    sp.add_argument("--seed", type=int, default=0)

    sp = add(sub, "adapt", cmd_adapt, "fine-tune the TLM to this machine on programs measured here, in a time budget",
             model=False, example="tlm adapt bert-tiny --minutes 10   # or --cpu haswell --cores 1")  # fmt: skip
    sp.add_argument("model", nargs="*", help="sample names or model files whose tasks to adapt on (default: "
                    f"{' and '.join(DEFAULT_ADAPT_MODELS)})")  # fmt: skip
    sp.add_argument("--target", default="llvm", choices=["llvm"])
    sp.add_argument("--input-shape", action="append", default=[], metavar="NAME=DIMS",
                    help="the shape of an input with dynamic dimensions, e.g. input_ids=1x128")  # fmt: skip
    add_hardware_options(sp)
    sp.add_argument("--minutes", type=float, default=10.0, help="time budget: measuring, then fine-tuning")
    sp.add_argument("--checkpoint", help="checkpoint to start from (default: the shipped assets/tlm-small)")
    sp.add_argument("--out", help="checkpoint folder to write (default: the local one this hardware picks up, "
                    "under $TLM_ADAPTED_DIR or ~/.cache/tlm-studio/adapted)")  # fmt: skip
    sp.add_argument("--work", help="work folder of measurements (resumed when it exists)")
    sp.add_argument("--tasks", type=int, default=16, help="the heaviest tasks (calls x FLOPs) to adapt on")
    sp.add_argument("--samples", type=int, default=4, help="TLM samples per task and pass")
    sp.add_argument("--heuristic-k", type=int, default=6, help="heuristic Top-k candidates per task")
    sp.add_argument("--steps", type=int, default=60, help="fine-tuning steps (at most)")
    sp.add_argument("--lr", type=float, default=3e-4, help="fine-tuning learning rate")
    sp.add_argument("--threads", type=int, help="torch threads while fine-tuning")
    sp.add_argument("--seed", type=int, default=0)

    train = sub.add_parser(
        "train",
        help="pre-train or fine-tune the TLM",
        description="pre-train or fine-tune the TLM. One process trains on the CPU (CUDA when available); for "
        "data-parallel training (one process per GPU, NCCL; or CPU processes, gloo) start pretrain or finetune "
        "under torchrun, e.g. `torchrun --standalone --nproc_per_node 2 .venv/bin/tlm train pretrain "
        "corpus.jsonl --out ckpt/`: each process takes --batch-size sentences per step, rank 0 writes the "
        "checkpoint and the log.",
        **with_example("tlm train pretrain corpus.jsonl --out ckpt/ --steps 1500"),
    )
    tsub = train.add_subparsers(dest="train_command", required=True)
    sp = add(tsub, "corpus", cmd_corpus, "sample a pre-training corpus of random legal sentences", model=False,
             example="tlm train corpus --out corpus.jsonl --models bert-tiny gpt2-tiny --per-task 8")  # fmt: skip
    sp.add_argument("--out", required=True, help="JSON-lines file to append to")
    sp.add_argument("--models", nargs="+", default=list(CORPUS_MODELS))
    sp.add_argument("--per-task", type=int, default=48)
    sp.add_argument("--seed", type=int, default=0)
    sp = add(tsub, "teacher", cmd_teacher, "write the heuristic's Top-1 sentence of many tasks (no measuring)",
             model=False, example="tlm train teacher --out teacher.jsonl --models zoo --cpu znver5")  # fmt: skip
    sp.add_argument("--out", required=True, help="JSON-lines file to append to (resumable)")
    sp.add_argument("--cpu", help="write for this LLVM CPU, not this host's (e.g. znver5, where the data was measured)")
    sp.add_argument("--models", nargs="+", default=[*TRAIN_MODELS, "zoo"],
                    help="variants or families (tlm_core.dataset.variants_for; zoo: the operator zoo)")  # fmt: skip
    sp.add_argument("--exclude", nargs="+", default=list(VALIDATION_MODELS),
                    help="models whose tasks are never written (the validation split)")  # fmt: skip
    sp.add_argument("--exclude-tasks", nargs="+", metavar="FILE",
                    help="files of task ids (first word of each line) never written, e.g. from "
                    "`python benchmarks/operators.py --task-ids`")  # fmt: skip
    sp = add(tsub, "pretrain", cmd_pretrain, "causal-LM pre-training on corpus files (resumable)", model=False,
             example="tlm train pretrain corpus.jsonl --out ckpt/ --steps 1500 --max-minutes 60")  # fmt: skip
    sp.add_argument("corpus", nargs="+", help="JSON-lines corpus files from `tlm train corpus`")
    sp.add_argument("--preset", default="small", choices=list(PRESETS))
    _training_options(sp, steps=1500)
    sp = add(tsub, "finetune", cmd_finetune, "fine-tune on the best measured programs (loss on decisions)",
             model=False, example="tlm train finetune data/cpu-znver5 --init ckpt/ --out ft/ "
             "--teacher teacher.jsonl")  # fmt: skip
    sp.add_argument("data", nargs="+", help="measured data directories: a collection (packed or live, e.g. "
                    "data/cpu-znver5) and round directories (data/cpu-znver5-rounds/round1)")  # fmt: skip
    sp.add_argument("--init", help="checkpoint to start from (e.g. the pre-trained one)")
    sp.add_argument("--top", type=int, default=4, help="best distinct programs per task")
    sp.add_argument("--teacher", nargs="+", help="teacher corpus files (`tlm train teacher`) to learn from too")
    sp.add_argument("--anonymous", nargs="?", const="all", choices=["all", "each"],
                    help="also every teacher sentence with unknown names: all = one copy with operator and block "
                    "names hidden (op?, blk?); each = three copies (the operator list as one op?, the block names, "
                    "both)")  # fmt: skip
    sp.add_argument("--measured-repeat", type=int, default=1, metavar="K",
                    help="the measured examples K times (weight against a large teacher corpus)")  # fmt: skip
    sp.add_argument("--small-repeat", type=int, default=1, metavar="K",
                    help="teacher sentences of tasks of at most 2^20 FLOPs (run on one core) K times")  # fmt: skip
    sp.add_argument("--hide-cpu", type=float, default=0.0, metavar="SHARE",
                    help="this share of all examples with the CPU's name hidden (cpu?): the model learns machines "
                    "from their numbers too, and reads a CPU it never learnt that way")  # fmt: skip
    _training_options(sp, steps=300)
    sp = add(tsub, "learnt", cmd_learnt, "write a checkpoint's learnt.json: the task kinds its training saw",
             model=False, example="tlm train learnt assets/tlm-small --teacher "
             "assets/corpus/teacher-v14-znver5.jsonl.gz --anonymous each")  # fmt: skip
    sp.add_argument("checkpoint", help="the checkpoint folder to write learnt.json into")
    sp.add_argument("--teacher", nargs="+", required=True, help="the corpus files it was fine-tuned on")
    sp.add_argument("--anonymous", nargs="?", const="all", choices=["all", "each"],
                    help="as fine-tuning was given: the name-hidden copies count as learnt too")  # fmt: skip
    sp = add(tsub, "rounds", cmd_rounds, "generate -> measure -> fine-tune rounds on training tasks (resumable)",
             model=False, example="tlm train rounds data/cpu-znver5 --replay assets/corpus/teacher-v16-"
             "emeraldrapids.jsonl.gz --work out/rounds --out data/cpu-rocketlake-rounds")  # fmt: skip
    sp.add_argument("data", nargs="+", help="data directories whose catalogues hold the training tasks")
    sp.add_argument("--models", nargs="+", metavar="VARIANT",
                    help="also the tasks of these training variants (e.g. zoo-grouped-0), catalogued in --work; "
                    "only tasks a committed training corpus holds")  # fmt: skip
    sp.add_argument("--checkpoint", help="the first round's checkpoint (default: the shipped one)")
    sp.add_argument("--rounds", type=int, default=3)
    sp.add_argument("--minutes", type=float, default=18.0, help="per round: measuring, then fine-tuning")
    sp.add_argument("--measure-share", type=float, default=0.6, help="of each round's minutes for measuring")
    sp.add_argument("--tasks", type=int, default=30, help="training tasks, spread over operator kinds")
    sp.add_argument("--max-gflop", type=float, default=0.3, help="only tasks of at most this many GFLOP per call")
    sp.add_argument("--replay", nargs="+", metavar="FILE", help="teacher corpus files replayed in each fine-tuning")
    sp.add_argument("--replay-count", type=int, default=300, help="teacher sentences per round")
    sp.add_argument("--steps", type=int, default=80, help="fine-tuning steps per round")
    sp.add_argument("--batch-size", type=int, default=16)
    sp.add_argument("--lr", type=float, default=2e-4)
    sp.add_argument("--threads", type=int, help="torch threads while fine-tuning")
    sp.add_argument("--work", required=True, help="live folder (resumed when it exists)")
    sp.add_argument("--out", required=True, help="compressed copy to commit, e.g. data/cpu-rocketlake-rounds")
    sp.add_argument("--seed", type=int, default=0)
