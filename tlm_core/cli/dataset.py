"""Dataset commands: tlm dataset collect | stats | export | pack."""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tlm_core.cli import with_example
from tlm_core.cli.common import emit, table

DEFAULT_OUT = "data/collect"  # the live collection (not committed); `tlm dataset pack` makes the repo copy


@contextmanager
def stop_on_sigterm(grace_s: float = 30.0) -> Iterator[None]:
    """`kill PID` stops a background collection like Ctrl-C: the workers are closed, nothing is lost.
    (A job started with `&` from a script ignores SIGINT, so SIGTERM is the way to stop one.)
    A KeyboardInterrupt raised while TVM calls back into Python can come out as a TVMError that a "skip this
    task" handler swallows, and the run goes on: so the process also ends itself grace_s after the signal
    (records are appended line by line: a hard exit loses at most the programs being measured)."""

    def stop(signum, frame):
        timer = threading.Timer(grace_s, os._exit, [128 + signum])
        timer.daemon = True
        timer.start()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_collect(args: argparse.Namespace) -> None:
    from tlm_core.dataset import collect
    from tlm_core.target import host_target

    target = host_target(args.target)
    measurer = None
    if args.rpc:
        from tlm_core.dataset.rpc import RPCMeasurer, parse_rpc

        host, port, key = parse_rpc(args.rpc)
        measurer = RPCMeasurer(host, port, key, target, parallel=args.rpc_parallel, repeat=args.repeat)
    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    from tlm_core.dataset import Source
    from tlm_core.dataset.search import best_of_search, heuristic_top

    sources = [Source("search", best_of_search(), args.search_trials)] * (args.search_trials > 0)
    sources += [Source("heuristic", heuristic_top(), args.heuristic_top)] * (args.heuristic_top > 0)
    with stop_on_sigterm():
        directory, stats = collect(
            args.models,
            args.out,
            per_task=args.per_task,
            measurer=measurer,
            target=target,
            log=log,
            seed=args.seed,
            repeat=args.repeat,
            top_k=args.top_k,
            max_programs=args.max_programs,
            quiet=args.quiet,
            sources=tuple(sources),
        )
    doc = {"directory": str(directory), **stats.to_dict()}
    text = (
        f"{directory}: {stats.measured} new programs ({stats.failed} failed), {stats.remeasured} re-measured, "
        f"{stats.duplicates} duplicates skipped, {stats.searched} from searches or the heuristic, "
        f"{stats.per_minute:.0f} programs/min"
        + (f", skipped tasks: {', '.join(stats.skipped_tasks)}" if stats.skipped_tasks else "")
    )
    emit(args, doc, text)


def cmd_stats(args: argparse.Namespace) -> None:
    from tlm_core.dataset import stats

    dirs = [Path(args.directory)]
    if not (dirs[0] / "catalog.jsonl").exists() and not (dirs[0] / "catalog.jsonl.gz").exists():
        dirs = sorted(p for p in dirs[0].iterdir() if p.is_dir())  # a collection root: one dir per target
    docs = [stats(d) for d in dirs]
    rows = []
    for d in docs:
        per_task = d["random"].get("programs_per_task") or [0]
        rows.append(
            {
                "directory": d["directory"],
                "variants": len(d["variants"]),
                "tasks": f"{d['random']['tasks']}/{d['catalog_tasks']}",
                "programs": d["random"]["programs"],
                "failed": d["random"]["failed"],
                "remeasured": d["random"]["remeasured"],
                "per task (min/median/max)": f"{min(per_task)}/{statistics.median(per_task):g}/{max(per_task)}",
                **{
                    f"{src} (programs, tasks faster than random)": f"{d[src]['programs']}, "
                    f"{d[f'{src}_vs_random']['faster']}/{d[f'{src}_vs_random']['tasks']}"
                    for src in ("search", "heuristic")
                },  # fmt: skip
            }
        )
    emit(args, {"collections": docs}, table(rows, list(rows[0]) if rows else ["directory"]))


def cmd_export(args: argparse.Namespace) -> None:
    from tlm_core.dataset import export_rows, write_rows
    from tlm_core.progress import step

    with step("exporting (builds every task's space)", args.quiet):
        rows = export_rows(args.directory)
    path = write_rows(rows, args.output)
    emit(args, {"rows": len(rows), "output": str(path)}, f"{len(rows)} rows -> {path}")


def cmd_pack(args: argparse.Namespace) -> None:
    from tlm_core.dataset import export_rows, pack
    from tlm_core.progress import step

    rows = None
    if not args.no_export:
        with step("exporting (builds every task's space)", args.quiet):
            rows = export_rows(args.directory)
    dest = pack(args.directory, args.dest, rows)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    emit(args, {"dest": str(dest), "bytes": size, "rows": len(rows or [])}, f"packed into {dest} ({size} bytes)")


def register(sub: argparse._SubParsersAction, add) -> None:
    parent = sub.add_parser("dataset", help="collect, inspect and export measured programs (TLM training data)",
                            **with_example("tlm dataset collect --models bert-tiny --per-task 16"))  # fmt: skip
    dsub = parent.add_subparsers(dest="dataset_command", required=True)
    sp = add(dsub, "collect", cmd_collect, "sample and measure programs for every task of the training models",
             model=False, example="tlm dataset collect --models bert-tiny --per-task 16")  # fmt: skip
    sp.add_argument("--models", nargs="*", help="families (resnet50 bert gpt2), variants or samples (default: "
                    "the training variants of resnet50, bert and gpt2)")  # fmt: skip
    sp.add_argument("--per-task", type=int, default=128, metavar="N", help="distinct programs per task (128)")
    sp.add_argument("--out", default=DEFAULT_OUT, help=f"collection root (default {DEFAULT_OUT})")
    sp.add_argument("--target", default="llvm", choices=["llvm", "cuda", "auto"])
    sp.add_argument("--rpc", metavar="HOST:PORT:KEY", help="measure through a TVM RPC tracker and its servers")
    sp.add_argument("--rpc-parallel", type=int, default=2, help="programs measured at once over RPC (2)")
    sp.add_argument("--repeat", type=int, default=5, help="timed repeats per program (5); the median counts")
    sp.add_argument("--top-k", type=int, default=4, help="fastest programs per task re-measured (4)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--max-programs", type=int, help="stop after this many new programs")
    sp.add_argument("--search-trials", type=int, default=0,
                    help="after the random stages, an Ansor-style search of N trials per task; its 4 best programs, "
                    "re-measured, become strong fine-tuning targets (0: no search)")  # fmt: skip
    sp.add_argument("--heuristic-top", type=int, default=0, metavar="K",
                    help="after the random stages, measure the Roller-style heuristic's K best candidates per task; "
                    "its 4 fastest, measured again, are strong targets too (0: none)")  # fmt: skip
    sp = add(dsub, "stats", cmd_stats, "counts of a collection (live or packed)", model=False,
             example="tlm dataset stats data/cpu-znver5")  # fmt: skip
    sp.add_argument("directory", help="a target directory (e.g. data/collect/cpu-znver5) or a collection root")
    sp = add(dsub, "export", cmd_export, "one row per distinct program: task, sketch, decisions, latency",
             model=False, example="tlm dataset export data/cpu-znver5 --output dataset.jsonl.gz")  # fmt: skip
    sp.add_argument("directory", help="a target directory of a collection (live or packed)")
    sp.add_argument("--output", default="dataset.jsonl.gz", help="JSON lines (.gz: compressed)")
    sp = add(dsub, "pack", cmd_pack, "compressed copy of a collection for the repository", model=False,
             example="tlm dataset pack data/collect/cpu-znver5 data/cpu-znver5")  # fmt: skip
    sp.add_argument("directory", help="the live target directory, e.g. data/collect/cpu-znver5")
    sp.add_argument("dest", help="where to write it, e.g. data/cpu-znver5")
    sp.add_argument("--no-export", action="store_true", help="records only, without dataset.jsonl.gz")
