"""The TLM on held-out tasks: validity, top-1 and best-of-10 latency against random sampling and search.

Held-out models (never collected, never trained on): MobileNetV2, EfficientNet-B0, LLaMA-7B. Per model, the
--tasks heaviest tasks with decisions by calls x FLOPs. Per task, every method's programs are measured here
with the collection's settings (5 repeats of >= 10 ms, median; numeric check against the untuned task):

- tlm: greedy (top-1) and 10 distinct candidates (greedy + beam search's most likely others:
  Generator.candidates; best-of-10) with the checkpoint; generation time (greedy + beam search) and compile
  time = generation + measuring the 10 candidates and the 3 fastest again (best-of-10 is the fastest of that
  second measurement). Both as the product picks (tlm_core.compile.tlm_schedule, tlm_core.measure.screen).
- compare (with --compare DIR): the same with another checkpoint (the shipped one, the pre-trained-only one).
- heuristic: the Roller-style heuristic's Top-1 (rules, no measurement), measured the same way.
- random: 10 uniformly random legal programs (seeded); top-1 = the first, best-of-10 picked as the TLM's.
- search: Ansor-style evolutionary search (MetaSchedule, tlm_core.baselines.search) with --search-trials
  trials on the task alone; its best latency, wall time and best so far after 16, 32, ... trials; its
  records are kept in <work>/search-<trials>/.
- together: the TLM's top-1 and best-of-10 programs (and the --compare checkpoint's), the heuristic's and
  search's best (the fastest of its 5 best records, measured again) measured again side by side (--rounds
  rounds, 3 by default, rotated order, medians): a best-of-N
  figure is the minimum of N noisy measurements, a top-1 figure one measurement, and on this shared machine
  that alone favours search.

    .venv/bin/python benchmarks/evaluation.py                     # shipped checkpoint, the full run
    .venv/bin/python benchmarks/evaluation.py --compare DIR       # also a second checkpoint, same window
    .venv/bin/python benchmarks/evaluation.py --quick             # one small task, tiny budgets (CI)

Every finished (task, method) is appended to <work>/rows.jsonl, so a killed run resumes where it stopped;
tlm rows are keyed by the checkpoint's content, so a new checkpoint re-runs only its own rows. The task
catalogue (models loaded and partitioned once) is cached in <work>/catalog.jsonl.
Writes benchmarks/results/evaluation.json and .md (evaluation-quick with --quick).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402
from benchmarks.evaluation_report import write_results, write_test_results  # noqa: E402
from benchmarks.tasks import held_out_tasks, test_split_tasks  # noqa: E402
from tlm_core.dataset.splits import TEST_MAX_GFLOP, TEST_MODELS, TEST_PER_MODEL, VALIDATION_MODELS  # noqa: E402

FULL = {"models": list(VALIDATION_MODELS), "tasks": 2, "k": 10, "search_trials": 64,
        "max_gflop": 0.3, "rounds": 3}  # fmt: skip
QUICK = {"models": ["mobilenetv2-tiny"], "tasks": 1, "k": 2, "search_trials": 4, "max_gflop": 0.3, "rounds": 3}
# The clean test split (tlm_core.dataset.splits): its declared tasks; search on --search-tasks of them (spread
# evenly: 512 trials cost 10-20 minutes a task here); no random sampling; TVM default and the heuristic's Top-10.
TEST = {"models": list(TEST_MODELS), "tasks": TEST_PER_MODEL, "k": 10, "search_trials": 512,
        "max_gflop": TEST_MAX_GFLOP, "rounds": 3, "split": "test", "search_tasks": 0}  # fmt: skip


def checkpoint_key(path: Path) -> str:
    """A checkpoint's identity: its weights' hash (the folder name says nothing about what is in it)."""
    return hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest()[:12]


class Evaluation:
    def __init__(self, work: Path, k: int, search_trials: int, seed: int = 0, cpu: str | None = None) -> None:
        from tlm_core.measure import Measurer
        from tlm_core.space import SpaceBuilder
        from tlm_core.target import host_target

        self.work, self.k, self.search_trials, self.seed = work, k, search_trials, seed
        # cpu: an older instruction set this host runs (e.g. znver3's AVX2 on an AVX-512 host), with its caches
        self.target = host_target(cpu=cpu, runs_here=True) if cpu else host_target()
        self.builder = SpaceBuilder.for_target(self.target)
        self.measurer = Measurer(self.target, repeat=5, min_repeat_ms=10, timeout_s=60.0)
        self.rows_path = work / "rows.jsonl"
        lines = self.rows_path.read_text().splitlines() if self.rows_path.exists() else []
        self.rows = [json.loads(line) for line in lines]

    def done(self, task_id: str, method: str) -> dict | None:
        """The latest row of (task, method): a redone side-by-side row replaces the one before."""
        return next((r for r in reversed(self.rows) if r["task"] == task_id and r["method"] == method), None)

    def add(self, row: dict) -> None:
        self.rows.append(row)
        with self.rows_path.open("a") as f:
            f.write(json.dumps(row) + "\n")

    def measure(self, task, mods) -> tuple[list[float | None], float]:
        """Latencies of scheduled modules (None: failed) and the wall time of measuring them."""
        start = time.perf_counter()
        results = self.measurer.measure(task, mods)
        return [r.latency if r.ok else None for r in results], time.perf_counter() - start

    def best_of(self, task, mods) -> dict:
        """A best-of-k row's measurements, as the product picks (tlm_core.measure.screen): every candidate
        once, the fastest few again; best = the winner's second latency."""
        from tlm_core.measure import fastest_again

        start = time.perf_counter()
        lat, _ = self.measure(task, mods)
        screened = fastest_again(task, mods, lat, self.measurer)
        again = {str(i): r.latency if r.ok else None for i, r in screened.again.items()}
        return {"latencies": lat, "again": again, "pick": screened.pick, "best": screened.latency(lat),
                "measure_s": time.perf_counter() - start}  # fmt: skip

    def tlm(self, task, space, generator) -> dict:
        from tlm_core.program import InvalidDecisions, apply_decisions

        start = time.perf_counter()
        gens = generator.candidates(space, self.k)  # the product's best-of-k: greedy first, then beam search
        gen_s = time.perf_counter() - start
        programs, valid = [], 0
        for g in gens:
            try:
                programs.append(apply_decisions(space, g.sketch_index, g.decisions))
                valid += 1
            except InvalidDecisions:  # never expected: decoding is constrained
                pass
        measured = self.best_of(task, [p.mod for p in programs])
        top1 = measured["latencies"][0] if valid == len(gens) else None  # the greedy program's
        return {"candidates": len(gens), "valid": valid, "top1": top1, **measured, "generation_s": gen_s,
                "greedy_s": gens[0].seconds, "compile_s": gen_s + measured["measure_s"],
                "programs": [[g.sketch_index, g.decisions] for g in gens]}  # fmt: skip

    def random(self, task, space) -> dict:
        from tlm_core.program import random_program

        start = time.perf_counter()
        programs, seen = [], set()
        for i in range(self.k * 4):  # distinct programs, as the TLM's candidates are
            p = random_program(space, rng=self.seed + i)
            if (p.sketch_index, tuple(p.decisions)) not in seen:
                seen.add((p.sketch_index, tuple(p.decisions)))
                programs.append(p)
            if len(programs) == self.k:
                break
        measured = self.best_of(task, [p.mod for p in programs])
        return {"candidates": len(programs), "top1": measured["latencies"][0], **measured,
                "compile_s": time.perf_counter() - start}  # fmt: skip

    def heuristic(self, task, space) -> dict:
        from tlm_core.baselines.heuristic import heuristic_program

        start = time.perf_counter()
        top1 = heuristic_program(space)
        rules_s = time.perf_counter() - start
        (lat,), _ = self.measure(task, [top1.program.mod])
        return {"top1": lat, "rules_s": rules_s, "compile_s": time.perf_counter() - start,
                "program": [top1.program.sketch_index, top1.program.decisions]}  # fmt: skip

    def heuristic10(self, task, space) -> dict:
        """The heuristic's Top-k (its k best candidates by its own cost model) as a best-of-k, like the TLM's."""
        from tlm_core.baselines.heuristic import heuristic_candidates

        start = time.perf_counter()
        cands = heuristic_candidates(space, self.k)
        measured = self.best_of(task, [c.program.mod for c in cands])
        return {"candidates": len(cands), **measured, "compile_s": time.perf_counter() - start,
                "programs": [[c.program.sketch_index, c.program.decisions] for c in cands]}  # fmt: skip

    def default(self, task) -> dict:
        """TVM's default: DLight's CPU rules where one applies, else the untuned task (tlm_core.baselines.default)."""
        from tlm_core.baselines.default import default_module

        (result,) = self.measurer.measure(task, [default_module(task, self.target)])
        return {"top1": result.latency if result.ok else None, "error": result.error}

    def search(self, task) -> dict:
        from tlm_core.baselines.search import search
        from tlm_core.records import RecordStore

        # its programs kept (MetaSchedule JSONDatabase files, one folder per budget): `together` reads its best
        store = RecordStore(self.search_records())
        result = search([task], self.target, self.search_trials, self.measurer, store=store, seed=self.seed)
        curve = result.convergence(task.id)
        # best so far and wall time after 16, 32, 64, ... trials: a 512-trial run also says what 64 found
        at = {str(n): [curve[n - 1]["best_latency"], curve[n - 1]["wall_s"]] for n in (2**i for i in range(4, 12))
              if n <= len(curve)}  # fmt: skip
        return {"trials": len(result.trials), "best": result.best.get(task.id),
                "compile_s": result.seconds, "best_at": at}  # fmt: skip

    def search_records(self) -> Path:
        return self.work / f"search-{self.search_trials}"

    def search_database(self, task):
        """The kept search records as a TVM database, None unless they hold this task (older runs, no search)."""
        from tlm_core.records import RecordStore

        if not self.search_records().exists():
            return None
        db = RecordStore(self.search_records()).tvm_database()
        return db if db.has_workload(task.mod) else None

    def reuse_search(self, results: str, key: str) -> None:
        """Take the search rows (method `key`) and kept records of an earlier run (benchmarks/results/<results>.json
        and <results>-records/) instead of searching: 512 trials of 6 tasks cost this machine two hours, and the
        side-by-side step measures search's programs again here anyway. Their face-value figures (search_ms,
        search_s) stay the earlier run's; each row says where it came from."""
        from tlm_core.dataset import unpack

        doc = json.loads((report.results_dir() / f"{results}.json").read_text())
        if doc["summary"]["config"]["search_trials"] != self.search_trials:
            raise SystemExit(f"{results} searched {doc['summary']['config']['search_trials']} trials, not "
                             f"{self.search_trials}: pass the same --search-trials")  # fmt: skip
        if not self.search_records().exists():
            unpack(report.results_dir() / f"{results}-records", self.search_records())
        for row in doc["rows"]:
            if row["method"] == key and not self.done(row["task"], key):
                self.add({**row, "reused_from": results})

    def together(
        self,
        task,
        space,
        tlm_row: dict,
        heuristic_row: dict | None = None,
        rounds: int = 3,
        search_top: int = 5,
        cmp_row: dict | None = None,
        extra: dict | None = None,
    ) -> dict | None:
        """The TLM's top-1 and best-of-k programs (and those of `cmp_row`, a second checkpoint's row, as cmp_top1
        and cmp_best), the heuristic's and search's best measured again in one batch,
        `rounds` times in rotated order; each program's median. A best-of-N latency is the minimum of N noisy
        medians, a top-1 latency one median: measured side by side, that bias is gone. Search's program is the
        fastest of its `search_top` best records measured again first (its top record alone may be a lucky
        measurement), as the TLM's best-of-k is the fastest of its k. None when the search's records were not
        kept or the task was not searched (then without search). The heuristic's program is its row's (rebuilt by
        the rules for older rows).
        extra (the test split): {"heuristic10": its row}; adds TVM default and the heuristic's best-of-k, and
        search only where it ran on this task."""
        from tlm_core.baselines.heuristic import heuristic_program
        from tlm_core.compile.schedules import remeasured_best
        from tlm_core.program import apply_decisions

        lat = tlm_row["latencies"]
        if "programs" not in tlm_row or all(x is None for x in lat):
            return None
        db = self.search_database(task)
        searched = None if db is None else remeasured_best(db, task, self.measurer, search_top)
        programs = _top1_and_best(tlm_row)
        if cmp_row and "programs" in cmp_row and any(x is not None for x in cmp_row["latencies"]):
            programs |= {f"cmp_{role}": p for role, p in _top1_and_best(cmp_row).items()}
        if heuristic_row and "program" in heuristic_row:
            programs["heuristic"] = heuristic_row["program"]
        h10 = (extra or {}).get("heuristic10")
        if h10 and h10.get("pick") is not None:  # the test split's: the heuristic's best-of-k too
            programs["heuristic10"] = h10["programs"][h10["pick"]]
        mods = {}
        for role, (sketch, decisions) in programs.items():
            decisions = [tuple(d) if isinstance(d, list) else d for d in decisions]
            mods[role] = apply_decisions(space, sketch, decisions).mod
        if "heuristic" not in mods:
            mods["heuristic"] = heuristic_program(space).program.mod
        if extra:  # the test split's: TVM default too
            from tlm_core.baselines.default import default_module

            mods["default"] = default_module(task, self.target)
        if searched is not None and searched.mod is not None:
            mods["search"] = searched.mod
        medians = self.measurer.side_by_side(task, mods, rounds)
        if searched is None:
            return medians | {"rounds": rounds}
        return medians | {"rounds": rounds, "search_screened": searched.latencies, "search_rank": searched.pick}


def _top1_and_best(row: dict) -> dict[str, list]:
    """A tlm row's greedy program and its best-of-k winner's, as [sketch, decisions] (rows written before the
    screen (tlm_core.measure.screen) have no pick: their fastest first measurement)."""
    lat = row["latencies"]
    best = row.get("pick")
    if best is None:
        best = min((i for i, x in enumerate(lat) if x is not None), key=lambda i: lat[i])
    return {"top1": row["programs"][0], "best": row["programs"][best]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="one small task of mobilenetv2-tiny, tiny budgets (CI)")
    p.add_argument("--split", choices=["validation", "test"], default="validation",
                   help="test: the clean test split, once per shipped checkpoint (never for choosing)")
    p.add_argument("--search-tasks", type=int, help="test split: search on this many of its tasks (spread evenly)")
    p.add_argument("--checkpoint", help="default: the shipped assets/tlm-small")
    p.add_argument("--compare", help="a second checkpoint, evaluated the same way (cmp_* columns)")
    p.add_argument("--models", nargs="+")
    p.add_argument("--tasks", type=int, help="heaviest tasks per model")
    p.add_argument("--search-trials", type=int)
    p.add_argument("--max-gflop", type=float, help="only tasks of at most this many GFLOP per call")
    p.add_argument("--rounds", type=int, help="rounds of the side-by-side step (default 3)")
    p.add_argument("--work", help="resume folder (default out/evaluation or out/evaluation-quick)")
    p.add_argument("--results", help="results name (default evaluation or evaluation-quick)")
    p.add_argument(
        "--search-from",
        metavar="RESULTS",
        help="reuse the search of an earlier run (results name): "
        "its rows and kept records (RESULTS-records/), its programs measured again here side by side",
    )
    p.add_argument("--cpu", help="write and measure for this LLVM CPU, one this host runs (e.g. znver3: AVX2 on an "
                   "AVX-512 host), with the host's caches and cores")  # fmt: skip
    args = p.parse_args()
    test = args.split == "test"
    cfg = dict(QUICK if args.quick else TEST if test else FULL)
    given = {"models": args.models, "tasks": args.tasks, "search_trials": args.search_trials,
             "max_gflop": args.max_gflop, "rounds": args.rounds, "search_tasks": args.search_tasks}  # fmt: skip
    if test and any(given[k] is not None for k in ("models", "tasks", "max_gflop")):
        raise SystemExit("the test split is declared in tlm_core.dataset.splits: --models/--tasks/--max-gflop "
                         "do not apply to it")  # fmt: skip
    cfg.update({k: v for k, v in given.items() if v is not None})
    if args.cpu:
        cfg["cpu"] = args.cpu
    name = "evaluation-quick" if args.quick else "evaluation-test" if test else "evaluation"
    work = Path(args.work or f"out/{name}")
    name = args.results or name
    work.mkdir(parents=True, exist_ok=True)

    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint

    ckpt = Path(args.checkpoint) if args.checkpoint else default_checkpoint()
    models = {"tlm": (ckpt, checkpoint_key(ckpt))}
    if args.compare:
        models["compare"] = (Path(args.compare), checkpoint_key(Path(args.compare)))
    ev = Evaluation(work, cfg["k"], cfg["search_trials"], cpu=args.cpu)
    try:
        if args.search_from:
            ev.reuse_search(args.search_from, _keys(models, cfg)["search"])
        if test:
            tasks = test_split_tasks(ev.builder, ev.target)
            n = cfg["search_tasks"]
            searched = {tasks[i * len(tasks) // n][1].id for i in range(n)} if n else set()
        else:
            tasks = held_out_tasks(work, cfg["models"], cfg["tasks"], cfg["max_gflop"], ev.builder, ev.target)
            searched = {t.id for _, t, _ in tasks} if cfg["search_trials"] else set()
        generators: dict[str, Generator] = {}
        keys = _keys(models, cfg)
        for model, task, space in tasks:
            base = {"model": model, "task": task.id, "name": task.name, "weight": task.weight, "flops": task.flops}
            # search 0: none (the CI test; tests/test_baselines_search tests it); together: after the others
            todo = [(m, k) for m, k in keys.items() if m != "together" and (m != "search" or task.id in searched)]
            for method, row_key in todo:
                if ev.done(task.id, row_key):
                    continue
                print(f"{model} {task.name[:40]} {method}", flush=True)
                if method in models:
                    if method not in generators:
                        generators[method] = Generator.from_checkpoint(models[method][0])
                    row = ev.tlm(task, space, generators[method])
                elif method == "random":
                    row = ev.random(task, space)
                elif method == "heuristic":
                    row = ev.heuristic(task, space)
                elif method == "heuristic10":
                    row = ev.heuristic10(task, space)
                elif method == "default":
                    row = ev.default(task)
                else:
                    row = ev.search(task)
                ev.add({**base, **row, "method": row_key})
            tlm_row, together = ev.done(task.id, keys["tlm"]), ev.done(task.id, keys["together"])
            if together and together.get("search") is None and ev.search_database(task) is not None:
                together = None  # search ran after this side-by-side row: measure them all again with it
            if tlm_row and not together:
                cmp_row = ev.done(task.id, keys["compare"]) if "compare" in keys else None
                extra = {"heuristic10": ev.done(task.id, keys["heuristic10"])} if test else None
                row = ev.together(task, space, tlm_row, ev.done(task.id, keys["heuristic"]), cfg["rounds"],
                                  cmp_row=cmp_row, extra=extra)  # fmt: skip
                if row is not None:
                    print(f"{model} {task.name[:40]} together", flush=True)
                    ev.add({**base, **row, "method": keys["together"]})
    finally:
        ev.measurer.close()
    (write_test_results if test else write_results)(name, ev.rows, tasks, models, cfg, keys)


def _keys(models: dict, cfg: dict) -> dict[str, str]:
    """role (tlm, compare, random, heuristic, search, together) -> its rows' method key (checkpoints by content)."""
    # tlm2: candidates by Generator.candidates (beam search); model: rows of older runs sampled them
    if cfg.get("split") == "test":  # no random sampling; TVM default and the heuristic's Top-10
        return {**{m: f"tlm2:{k}" for m, (_, k) in models.items()}, "default": "default", "heuristic": "heuristic",
                "heuristic10": f"heuristic{cfg['k']}", "search": f"search:{cfg['search_trials']}",
                "together": f"together-test:{models['tlm'][1]}:{cfg['search_trials']}"
                            + (f":{models['compare'][1]}" if "compare" in models else "")}  # fmt: skip
    return {**{m: f"tlm2:{k}" for m, (_, k) in models.items()}, "random": "random", "heuristic": "heuristic",
            "search": f"search:{cfg['search_trials']}",
            "together": f"together3:{models['tlm'][1]}:{cfg['search_trials']}"
                        + (f":{models['compare'][1]}" if "compare" in models else "")
                        + (f":r{cfg['rounds']}" if cfg["rounds"] != 3 else "")}  # fmt: skip


if __name__ == "__main__":
    main()
