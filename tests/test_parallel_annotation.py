"""benchmarks/parallel_annotation.py: the parallel annotation rewritten in a trace, and the quick run."""

import json
import math
import sys

import pytest

from benchmarks import parallel_annotation


@pytest.mark.slow
def test_parallel_annotation_quick(tmp_path, monkeypatch, space_builder):
    from benchmarks.tasks import held_out_tasks
    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.program import apply_decisions
    from tlm_core.target import host_target

    ((_, task, space),) = held_out_tasks(tmp_path, ["mobilenetv2-tiny"], 1, 0.3, space_builder, host_target())
    heuristic = heuristic_program(space).program
    assert parallel_annotation.parallel_of(heuristic.trace) == 32  # the sketch's value, which our space keeps
    # the heuristic's tiles with every spatial tile's outer factors at the outermost level: outer loops to fuse
    outer = [(math.prod(d[:-1]), *[1] * (len(d) - 2), d[-1]) if isinstance(d, tuple) and len(d) == 4 else d
             for d in heuristic.decisions]  # fmt: skip
    trace = apply_decisions(space, heuristic.sketch_index, outer).trace
    one, many = (parallel_annotation.with_parallel(space, trace, v).script() for v in (1, 1024))
    parallel = [[line.split(" in ")[0].strip() for line in s.splitlines() if "T.parallel" in line] for s in (one, many)]
    # 1: the outermost loop with an extent above 1 ends the fusion; 1024: every outer loop fused into it
    assert parallel[0] and parallel[1] and parallel[0] != parallel[1], parallel

    monkeypatch.setenv("TLM_BENCH_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(sys, "argv", ["parallel_annotation.py"])
    assert parallel_annotation.main(["--quick", "--work", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results" / "parallel-annotation-quick.json").read_text())
    (row,) = doc["rows"]
    assert row["record_value"] == 32 and row["p1_us"] > 0 and row["p32_us"] > 0 and row["max_over_min"] >= 1
