"""tlm_core.dataset: resumable collection, TVM-loadable records, export round trip, RPC measurement."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from workloads import add_64, matmul_relu_64, softmax_64

from tlm_core.dataset import (
    Source,
    collect_tasks,
    export_rows,
    pack,
    read_rows,
    stats,
    target_dir_name,
    unpack,
    variants_for,
    write_rows,
)
from tlm_core.dataset.files import read_records
from tlm_core.dataset.traces import program_key, trace_json
from tlm_core.partition import task_from_primfunc
from tlm_core.program import apply_decisions


@pytest.fixture(scope="module")
def tasks():
    return [
        task_from_primfunc(matmul_relu_64, "matmul_relu"),
        task_from_primfunc(softmax_64, "softmax"),
        task_from_primfunc(add_64, "add"),  # no decisions: a single program
    ]


def _counts(directory) -> tuple[dict[str, int], int]:
    """Distinct programs per task, and the number of records."""
    records = read_records(directory / "random")
    per_task: dict[str, set] = {}
    for r in records:
        per_task.setdefault(r.task_id, set()).add(program_key(r.trace))
    return {k: len(v) for k, v in per_task.items()}, len(records)


def test_variants():
    names = [v.name for v in variants_for(None)]
    assert "resnet50-b1-160" in names and "bert-s256" in names and "gpt2-s64" in names
    assert not any(n.startswith(("mobilenet", "efficientnet", "llama")) for n in names)  # held out
    assert [v.name for v in variants_for(["bert"])] == ["bert-s64", "bert-s128", "bert-s256", "bert-s32"]
    assert variants_for(["mobilenetv2-tiny"])[0].family == "mobilenetv2-tiny"  # a sample, as it is


def test_target_dir_name():
    from tlm_core.target import host_target

    assert target_dir_name(host_target()).startswith("cpu-")


def test_resume_after_stop_adds_up_without_duplicates(tmp_path, tasks, measurer, space_builder):
    first = collect_tasks(tasks, tmp_path, 6, measurer, builder=space_builder, max_programs=5, top_k=0)
    assert first.measured == 5
    counts, records = _counts(tmp_path)
    assert sum(counts.values()) == records == 5
    # a kill mid-append leaves a torn last line: the resume must repair it, not choke or lose earlier lines
    with open(tmp_path / "random" / "tuning_record.json", "a") as f:
        f.write('[0,[[["Sample')
    second = collect_tasks(tasks, tmp_path, 6, measurer, builder=space_builder, top_k=0)
    counts, records = _counts(tmp_path)
    ids = [t.id for t in tasks]
    assert counts == {ids[0]: 6, ids[1]: 6, ids[2]: 1}
    assert records == 13 == first.measured + second.measured  # nothing measured twice
    third = collect_tasks(tasks, tmp_path, 6, measurer, builder=space_builder, top_k=0)
    assert third.measured == 0 and _counts(tmp_path)[1] == 13


def test_same_seed_same_programs(tmp_path, tasks, measurer, space_builder):
    for sub in ("a", "b"):
        collect_tasks(tasks[:1], tmp_path / sub, 3, measurer, builder=space_builder, top_k=0)
    keys = [{program_key(r.trace) for r in read_records(tmp_path / sub / "random")} for sub in ("a", "b")]
    assert keys[0] == keys[1] and len(keys[0]) == 3


def test_records_load_in_tvm_and_export_round_trip(tmp_path, tasks, measurer, space_builder):
    from tvm.s_tir import meta_schedule as ms

    stats_ = collect_tasks(tasks[:2], tmp_path, 5, measurer, builder=space_builder, top_k=2, remeasure_repeat=4)
    assert stats_.remeasured == 4  # the top 2 of each task, once
    counts, records = _counts(tmp_path)
    assert records == 10 + 4 and sum(counts.values()) == 10

    db = ms.database.JSONDatabase(
        path_workload=str(tmp_path / "random" / "workload.json"),
        path_tuning_record=str(tmp_path / "random" / "tuning_record.json"),
    )
    assert len(db.get_all_tuning_records()) == records
    assert db.query_tuning_record(tasks[0].mod, measurer.target, "main") is not None

    rows = export_rows(tmp_path, builder=space_builder)
    assert len(rows) == 10
    by_task = {t.id: t for t in tasks}
    merged = [r for r in rows if r["records"] == 2]
    assert len(merged) == 4 and all(len(r["runs"]) == 3 + 4 for r in merged)  # first run + re-measurement
    keys = {program_key(r.trace) for r in read_records(tmp_path / "random")}
    for row in rows:  # decisions -> program reproduces the recorded program exactly
        space = space_builder.build(by_task[row["task"]])
        decisions = [tuple(d) if isinstance(d, list) else d for d in row["decisions"]]
        program = apply_decisions(space, row["sketch"], decisions)
        assert program_key(trace_json(program.trace)) in keys
        assert row["latency"] > 0
    path = write_rows(rows, tmp_path / "rows.jsonl.gz")
    assert read_rows(path) == json.loads(json.dumps(rows))

    packed = pack(tmp_path, tmp_path / "packed", rows)
    assert stats(packed)["random"] == stats(tmp_path)["random"]
    assert len(read_rows(packed / "dataset.jsonl.gz")) == 10
    restored = unpack(packed, tmp_path / "restored")
    again = collect_tasks(tasks[:2], restored, 5, measurer, builder=space_builder, top_k=2)
    assert again.measured == 0 and again.remeasured == 0


def test_cli_stats(tmp_path, tasks, measurer, space_builder, capsys):
    from tlm_core.cli import main

    collect_tasks(tasks[2:], tmp_path / "cpu-test", 4, measurer, builder=space_builder)
    assert main(["dataset", "stats", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["collections"][0]["random"]["programs"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(ready, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if ready():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("the RPC tracker or servers did not come up")
        time.sleep(0.5)


@pytest.mark.slow
def test_rpc_tracker_and_two_servers(tmp_path, tasks, space_builder):
    pytest.importorskip("tornado", reason="TVM's RPC tracker needs tornado")
    from tlm_core.dataset.rpc import RPCMeasurer, parse_rpc

    port = _free_port()
    py = sys.executable
    # each in its own process group: a server's session workers (tvm.exec.popen_worker) go down with it
    procs = [subprocess.Popen([py, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(port),
                               "--port-end", str(port + 1)], start_new_session=True)]  # fmt: skip
    try:
        for _ in range(2):
            server_port = _free_port()
            procs.append(subprocess.Popen([
                py, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1", "--port", str(server_port),
                "--port-end", str(server_port + 1), "--tracker", f"127.0.0.1:{port}", "--key", "tlm-test",
            ], start_new_session=True))  # fmt: skip
        host, tport, key = parse_rpc(f"127.0.0.1:{port}:tlm-test")
        _wait(lambda: socket.create_connection((host, tport), timeout=1).close() or True)  # TVM imports slowly
        m = RPCMeasurer(host, tport, key, parallel=2, repeat=3, cache_dir=tmp_path / "cache")
        _wait(lambda: m.servers() == 2)  # servers retry the tracker every 5 s
        result = collect_tasks(tasks[:1], tmp_path, 4, m, builder=space_builder, top_k=1)
        assert result.measured == 4 and result.failed == 0 and result.remeasured == 1
        records = read_records(tmp_path / "random")
        assert len(records) == 5 and all(r.ok and len(r.run_secs) >= 3 for r in records)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(timeout=10)


def test_parse_rpc():
    from tlm_core.dataset.rpc import parse_rpc

    assert parse_rpc("10.0.0.1:9190:cpu") == ("10.0.0.1", 9190, "cpu")
    with pytest.raises(ValueError):
        parse_rpc("10.0.0.1:cpu")


def test_a_source_is_asked_again_with_the_programs_it_holds(tmp_path, tasks, measurer, space_builder):
    from tlm_core.program import random_program

    calls = []

    def searcher(task, space, m, trials, known):  # stands in for a search: measured (trace, result), new ones
        calls.append(len(known))
        programs = [random_program(space, i) for i in range(trials)]
        programs = [p for p in programs if program_key(trace_json(p.trace)) not in known]
        return [(p.trace, r) for p, r in zip(programs, m.measure(task, [p.mod for p in programs]), strict=True)]

    runs = [collect_tasks(tasks[:1], tmp_path, 2, measurer, builder=space_builder,
                          sources=(Source("search", searcher, 2),)) for _ in range(2)]  # fmt: skip
    assert calls == [0, 2] and [r.searched for r in runs] == [2, 0]  # the second run knew both programs
    assert len(read_records(tmp_path / "search")) == 2
    assert {r["source"] for r in export_rows(tmp_path, builder=space_builder)} == {"random", "search"}


def test_heuristic_top_stores_its_candidates_and_measures_the_best_again(tmp_path, tasks, measurer, space_builder):
    from tlm_core.dataset.search import heuristic_top

    result = collect_tasks(tasks[:1], tmp_path, 0, measurer, builder=space_builder,
                           sources=(Source("heuristic", heuristic_top(top=2), 4),))  # fmt: skip
    assert read_records(tmp_path / "random") == []  # --per-task 0: the heuristic's programs only
    found = read_records(tmp_path / "heuristic")
    per_program: dict[str, int] = {}
    for r in found:
        per_program[program_key(r.trace)] = per_program.get(program_key(r.trace), 0) + 1
    assert result.searched == len(found) and all(r.task_id == tasks[0].id for r in found)
    assert sorted(per_program.values()).count(2) == 2  # the 2 fastest, measured twice
    rows = [r for r in export_rows(tmp_path, builder=space_builder) if r["source"] == "heuristic"]
    assert rows and all(r["decisions"] for r in rows) and sum(r["records"] == 2 for r in rows) == 2
    again = collect_tasks(tasks[:1], tmp_path, 2, measurer, builder=space_builder,
                          sources=(Source("heuristic", heuristic_top(top=2), 4),))  # fmt: skip
    assert again.searched == 0  # the same rules build the same programs: nothing new to measure


@pytest.mark.slow
def test_best_of_search_stores_re_measured_search_programs(tmp_path, tasks, measurer, space_builder):
    from tlm_core.dataset.search import best_of_search

    result = collect_tasks(tasks[:1], tmp_path, 2, measurer, builder=space_builder,
                           sources=(Source("search", best_of_search(top=2), 8),))  # fmt: skip
    found = read_records(tmp_path / "search")
    assert result.searched == len(found) == 2 and all(r.ok and r.task_id == tasks[0].id for r in found)
    assert len({program_key(r.trace) for r in found}) == 2  # the search's 2 best distinct programs
    rows = [r for r in export_rows(tmp_path, builder=space_builder) if r["source"] == "search"]
    # fine-tuning reads them like random ones (but for a rare MutateParallel program, outside our space)
    assert rows and all(r["decisions"] for r in rows)


@pytest.mark.slow
def test_cli_collect_a_tiny_sample(tmp_path, capsys, monkeypatch):
    from tlm_core.cli import main

    monkeypatch.setenv("TLM_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["dataset", "collect", "--models", "bert-tiny", "--per-task", "2", "--out", str(tmp_path), "--quiet"]
    assert main([*argv, "--max-programs", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["measured"] == 3 and doc["directory"].startswith(str(tmp_path))
    assert main([*argv, "--max-programs", "2", "--json"]) == 0  # resumes from the catalogue: no model load
    assert json.loads(capsys.readouterr().out)["measured"] == 2
    assert sum(_counts(Path(doc["directory"]))[0].values()) == 5
    # records of a machine with other caches (same CPU name): this one's programs must not join them
    records = Path(doc["directory"]) / "random" / "tuning_record.json"
    lines = [json.loads(x) for x in records.read_text().splitlines()]
    for line in lines:  # this host's L1 and L2, an L3 of 1 KiB
        line[1][2]["model"] = line[1][2]["model"].rsplit("-", 1)[0] + "-1"
    records.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main([*argv, "--max-programs", "1"]) != 0
    err = capsys.readouterr().err
    assert "other hardware (l3: 1 KiB there" in err and "another --out" in err
    assert records.read_text().count("\n") == len(lines)  # nothing added, nothing lost


def test_source_vs_random_compares_the_best_remeasured_programs():
    from tlm_core.dataset.export import source_vs_random

    random = {
        "a": {"p1": ([], [1.0], 1), "p2": ([], [4.0, 4.0], 2)},  # the lucky single timing does not count
        "b": {"p1": ([], [1.0], 1)},  # no re-measured program: the singles count
        "c": {"p1": ([], [1.0, 1.0], 2)},  # never searched
    }
    search = {"a": {"q": ([], [2.0], 1)}, "b": {"q": ([], [4.0], 1)}}
    doc = source_vs_random(random, search)
    assert doc["tasks"] == 2 and doc["faster"] == 1
    assert doc["random_over_source"] == pytest.approx((2.0 * 0.25) ** 0.5)


def test_sigterm_stops_a_collection_even_when_the_interrupt_is_swallowed():
    """A KeyboardInterrupt turned into a TVMError and swallowed by a "skip this task" handler must not keep a
    killed collection running: the process ends itself after the grace period."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    code = textwrap.dedent("""
        import time
        from tlm_core.cli.dataset import stop_on_sigterm
        with stop_on_sigterm(grace_s=1.0):
            print("ready", flush=True)
            while True:
                try:
                    time.sleep(0.05)
                except BaseException:  # what a broad handler around a TVM call does
                    pass
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    # the grace timer's exit; or, rarely under load, the KeyboardInterrupt raised between two `try`s escapes and
    # Python ends itself by SIGINT (-2): stopped too
    assert proc.wait(timeout=20) in (128 + signal.SIGTERM, -signal.SIGINT)
    assert time.monotonic() - start < 10


def test_the_model_splits_are_declared_once_and_disjoint():
    from tlm_core.dataset import splits

    assert splits.CORPUS_MODELS == ("resnet50", "bert", "gpt2", "resnet50-tiny", "bert-tiny", "gpt2-tiny")
    assert splits.VALIDATION_MODELS == ("mobilenetv2", "efficientnet-b0", "llama-7b")
    assert not set(splits.CORPUS_MODELS) & set(splits.VALIDATION_MODELS)
    assert not set(splits.TEST_MODELS) & (set(splits.CORPUS_MODELS) | set(splits.VALIDATION_MODELS))
