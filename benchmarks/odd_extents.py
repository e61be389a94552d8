"""Prime extents no checkpoint trained on: a matmul + bias whose rows are a prime (a sequence length like ViT's 197
tokens), so the row loop tiles only as 1 x p. Greedy programs of one or two checkpoints and the heuristic's Top-1,
measured side by side (rounds in rotated order, medians), outputs checked against the untuned task.

The primes here are drawn by neither the operator zoo's `odd` kind (tlm_core.dataset.zoo._PRIMES) nor the test
split (197), so neither checkpoint's training saw them: a validation-style probe, never the test split.

    python benchmarks/odd_extents.py --checkpoint out/ft22 --compare assets/tlm-small

Writes benchmarks/results/odd_extents.json and .md (or --results NAME).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402

ROWS = [59, 83, 109, 167, 233, 317]  # primes outside the zoo's list and the test split
SHAPES = [(768, 768), (768, 3072)]  # (k, n): a transformer's projection and its MLP's first layer


def odd_task(rows: int, k: int, n: int):
    from tvm import te, topi

    from tlm_core.partition import task_from_primfunc, te_prim_func

    a, b = te.placeholder((rows, k), name="A"), te.placeholder((k, n), name="B")
    bias = te.placeholder((n,), name="bias")
    out = topi.add(topi.nn.matmul(a, b), bias)
    return task_from_primfunc(te_prim_func([a, b, bias, out]), "matmul_add", ["matmul", "add"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", default=None, help="default: the shipped assets/tlm-small")
    p.add_argument("--compare", help="a second checkpoint, measured in the same batches")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--results", default="odd_extents")
    args = p.parse_args()

    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.generator import Generator
    from tlm_core.measure import Measurer
    from tlm_core.model import default_checkpoint
    from tlm_core.program import apply_decisions
    from tlm_core.space import SpaceBuilder
    from tlm_core.target import host_target

    target = host_target()
    builder = SpaceBuilder.for_target(target)
    paths = {"tlm": args.checkpoint or str(default_checkpoint())} | ({"cmp": args.compare} if args.compare else {})
    gens = {role: Generator.from_checkpoint(path) for role, path in paths.items()}
    rows, ratios = [], {}
    with Measurer(target, repeat=5, min_repeat_ms=10) as measurer:
        for m in ROWS:
            for k, n in SHAPES:
                task = odd_task(m, k, n)
                space = builder.build(task)
                mods = {"heuristic": heuristic_program(space).program.mod}
                row = {"rows": m, "k": k, "n": n}
                for role, gen in gens.items():
                    g = gen.greedy(space)
                    mods[role] = apply_decisions(space, g.sketch_index, g.decisions).mod
                    row[f"{role}_decisions"] = str(g.decisions[:2])
                medians = measurer.side_by_side(task, mods, args.rounds)
                for role in mods:
                    row[f"{role}_ms"] = report.ms(medians.get(role))
                for role in gens:
                    if row[f"{role}_ms"] and row["heuristic_ms"]:
                        ratios.setdefault(role, []).append(row["heuristic_ms"] / row[f"{role}_ms"])
                print(m, k, n, {r: row[f"{r}_ms"] for r in mods}, flush=True)
                rows.append(row)
    g = {role: report.geomean(v) for role, v in ratios.items()}
    notes = [
        f"Greedy programs of tlm = `{paths['tlm']}`" + (f" and cmp = `{paths['cmp']}`" if "cmp" in paths else "")
        + f" and the heuristic's Top-1, side by side ({args.rounds} rounds, medians), outputs checked.",
        "vs heuristic (geomean, > 1 = the TLM faster): " + ", ".join(f"{r} {v:.2f}x" for r, v in g.items() if v),
        "Rows: primes outside tlm_core.dataset.zoo._PRIMES and the test split; the decisions columns show the "
        "first two tile decisions (rows, columns): [1, p, 1, 1] then an untiled [1, n, 1, 1] is the failure.",
        f"Load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other jobs share the machine).",
        f"Command: `python benchmarks/odd_extents.py --checkpoint {paths['tlm']}"
        + (f" --compare {paths['cmp']}`" if "cmp" in paths else "`"),
    ]
    columns = ["rows", "k", "n", "heuristic_ms", *(f"{r}_ms" for r in gens), *(f"{r}_decisions" for r in gens)]
    doc = {"checkpoints": paths, "rounds": args.rounds, "geomean_vs_heuristic": g, "rows": rows}
    print(report.write(args.results, doc, columns, rows, "Prime extents no checkpoint trained on", notes))


if __name__ == "__main__":
    main()
