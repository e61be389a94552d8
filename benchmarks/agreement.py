"""How closely checkpoints' greedy programs follow the Roller-style heuristic's Top-1 on held-out tasks.

No measurement: for every task with decisions of the held-out models (MobileNetV2, EfficientNet-B0,
LLaMA-7B; never trained on, their tasks excluded from the teacher corpus), the greedy program of each
checkpoint is compared with the heuristic's program. A model fine-tuned on the heuristic's sentences
(`tlm train finetune --teacher`) should agree more on unseen tasks; where it does not, it has not learnt the
rules (tile factors: the innermost one decides vectorisation). Columns per checkpoint:

- sketch: same sketch as the heuristic; programs: the whole program equal;
- tiles / innermost: of the tile decisions of tasks on the same sketch, equal / equal innermost factor.

    .venv/bin/python benchmarks/agreement.py --checkpoints assets/tlm-small out/ft8
    .venv/bin/python benchmarks/agreement.py --quick     # mobilenetv2-tiny (CI)
    .venv/bin/python benchmarks/agreement.py --cpus znver5 emeraldrapids   # other CPUs' prompts and heuristic

With --cpus, both the prompt and the heuristic's program are written for each named CPU (its caches from
tlm_core.target.KNOWN_CACHES_KIB): a regression check for hardware the host is not, without measuring.

The task catalogue is cached in --work (the evaluation's, by default). Writes benchmarks/results/agreement.json
and .md (agreement-quick with --quick).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402


def agreement(generator, spaces_and_programs: list) -> dict:
    tasks = sketch = programs = tiles = exact = inner = 0
    for space, cand in spaces_and_programs:
        g = generator.greedy(space)
        tasks += 1
        if g.sketch_index != cand.sketch_index:
            continue
        sketch += 1
        programs += g.decisions == cand.decisions
        for mine, theirs in zip(g.decisions, cand.decisions, strict=True):
            if isinstance(theirs, tuple):
                tiles, exact, inner = tiles + 1, exact + (mine == theirs), inner + (mine[-1] == theirs[-1])
    return {"tasks": tasks, "sketch": sketch / tasks, "programs": programs / tasks,
            "tiles": exact / max(tiles, 1), "innermost": inner / max(tiles, 1), "tile_decisions": tiles}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoints", nargs="+", help="default: the shipped assets/tlm-small")
    p.add_argument("--models", nargs="+", help="default: the validation models (tlm_core.dataset.splits)")
    p.add_argument("--work", help="task catalogue cache (default out/evaluation, or out/evaluation-quick)")
    p.add_argument("--quick", action="store_true", help="mobilenetv2-tiny only (CI)")
    p.add_argument("--cpus", nargs="+", help="LLVM CPUs to write for (default: this host's)")
    p.add_argument("--results", help="results name (default agreement, or agreement-quick)")
    args = p.parse_args()

    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.dataset import VALIDATION_MODELS, Catalog, variants_for
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    models = args.models or (["mobilenetv2-tiny"] if args.quick else list(VALIDATION_MODELS))
    work = Path(args.work or ("out/evaluation-quick" if args.quick else "out/evaluation"))
    work.mkdir(parents=True, exist_ok=True)
    catalog = Catalog(work / "catalog.jsonl")
    catalog.ensure(variants_for(models), host_target())
    generators = {ckpt: Generator.from_checkpoint(ckpt) for ckpt in args.checkpoints or [str(default_checkpoint())]}
    rows = []
    for cpu in args.cpus or [None]:
        target = host_target(cpu=cpu)
        builder = SpaceBuilder.for_target(target)
        pairs = []
        for t in catalog.for_variants(models):
            space = builder.build(t.task())
            if any(s.points for s in space.sketches):
                pairs.append((space, heuristic_program(space)))
        for ckpt, generator in generators.items():
            rows.append({"cpu": str(target.attrs.get("mcpu", "")), "checkpoint": ckpt, **agreement(generator, pairs)})
            print(rows[-1], flush=True)
    name = args.results or ("agreement-quick" if args.quick else "agreement")
    columns = ["cpu", "checkpoint", "tasks", "sketch", "programs", "tile_decisions", "tiles", "innermost"]
    notes = [
        f"Tasks with decisions of {', '.join(models)} (held out from training); the greedy program of each "
        "checkpoint against the Roller-style heuristic's Top-1 (its rules; no measurement).",
        "sketch, programs: fraction of tasks with the same sketch / the same whole program; tiles, innermost: "
        "fraction of the tile decisions (tasks on the same sketch) equal / with the same innermost factor.",
    ]
    md = report.write(name, {"models": models, "rows": rows}, columns, rows, "Greedy programs vs the heuristic", notes)
    print(md.read_text())


if __name__ == "__main__":
    main()
