"""A user's MetaSchedule database whose traces are hostile or corrupt: every workload and trace is loaded by TVM in
a helper process first (tlm_core.compile.database_check), so what raises, hangs or crashes TVM is left out with a
one-line reason and this process goes on; a good database loads exactly as TVM's own JSONDatabase does."""

import base64
import copy
import json
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from tvm import s_tir
from tvm.s_tir import meta_schedule as ms
from tvm_ffi.structural import structural_equal

from tests import workloads as W
from tlm_core.compare import DatabaseError, UserDatabase, database_result, read_database
from tlm_core.compile import Schedule, check_database, load_database, save_database, scheduled_module
from tlm_core.compile.schedules import best_in_database
from tlm_core.measure import MeasureResult
from tlm_core.partition import task_from_primfunc
from tlm_core.records import RecordStore
from tlm_core.target import host_target


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A database of two tasks: matmul_128 with a hand-written schedule (1e-4 s), add_64 untuned (1e-5 s)."""
    matmul, add = task_from_primfunc(W.matmul_128, "matmul_128"), task_from_primfunc(W.add_64, "add_64")
    sch = s_tir.Schedule(matmul.mod)
    i, j, _ = sch.get_loops(sch.get_sblock("C"))
    outer, _ = sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=16, decision=[8, 16]))
    sch.parallel(outer)
    sch.vectorize(sch.split(j, [None, 8])[1])
    directory = tmp_path_factory.mktemp("good")
    store = RecordStore(directory)
    store.append(matmul, sch.trace, MeasureResult(ok=True, latency=1e-4, latencies=[1e-4]), host_target())
    store.append(add, None, MeasureResult(ok=True, latency=1e-5, latencies=[1e-5]), host_target())
    return SimpleNamespace(dir=directory, matmul=matmul, add=add, mod=sch.mod, **_files(directory))


def _files(directory: Path) -> dict:
    lines = (directory / "tuning_record.json").read_text().splitlines()
    return {"workloads": (directory / "workload.json").read_text().splitlines(), "rows": [json.loads(x) for x in lines]}


def _write(directory: Path, workloads: list[str], rows: list) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "workload.json").write_text("".join(f"{w}\n" for w in workloads))
    (directory / "tuning_record.json").write_text("".join(f"{json.dumps(r)}\n" for r in rows))
    return directory


def _tvm_database(directory: Path) -> ms.database.Database:
    return ms.database.JSONDatabase(
        path_workload=str(directory / "workload.json"), path_tuning_record=str(directory / "tuning_record.json")
    )


def _top(records: list) -> list[tuple[str, list[float]]]:
    return [(str(r.trace), [float(s) for s in r.run_secs]) for r in records]


def test_a_good_database_loads_as_tvms_own_json_database(good):
    checked = check_database(good.dir)
    assert checked.problems == [] and checked.records == 2 and checked.skipped == {}
    theirs = _tvm_database(good.dir)
    for db in (checked.db, load_database(good.dir)):
        assert len(db.get_all_tuning_records()) == len(theirs.get_all_tuning_records())
        for task in (good.matmul, good.add):
            assert db.has_workload(task.mod)
            ours = _top(db.get_top_k(db.commit_workload(task.mod), 3))
            assert ours == _top(theirs.get_top_k(theirs.commit_workload(task.mod), 3))
    trace, latency = best_in_database(checked.db, good.matmul, host_target())
    assert latency == pytest.approx(1e-4)
    assert structural_equal(scheduled_module(good.matmul, Schedule(good.matmul.id, "database", trace)), good.mod)


def test_bad_records_are_left_out_each_with_its_line_and_reason(good, tmp_path):
    mm = good.rows[0]

    def bad(edit) -> list:
        row = copy.deepcopy(mm)
        edit(row[1])
        return row

    def inst(k: int, value):
        return lambda r: r[0][0].__setitem__(k, value)

    rows = [
        mm,  # line 1: the good record
        bad(inst(0, ["GetSBlock", [], ["Nope", "main"], ["b0"]])),  # 2: a block that does not exist
        bad(lambda r: r[0][1][0].__setitem__(1, "x")),  # 3: a decision of the wrong type
        bad(inst(5, ["Split", ["l2", "None", 10**12], [1, 0], ["l8", "l9"]])),  # 4: a tile factor past int32
        [1, copy.deepcopy(mm[1])],  # 5: add_64's workload, with matmul's trace
        bad(lambda r: r[0][1][0].__setitem__(0, 99)),  # 6: a decision past the trace's end (TVM reads out of bounds)
        bad(lambda r: r.__setitem__(1, [-1.0])),  # 7: a negative time, which would beat every honest record
        bad(lambda r: r.__setitem__(2, {"kind": "no-such-target"})),  # 8
        bad(inst(1, ["GetLoops"])),  # 9: a truncated instruction
        bad(lambda r: r[0][0].append(["NoSuchKind", [], [], []])),  # 10
        bad(lambda r: r.__setitem__(1, [10**400])),  # 11: no float can hold it
    ]
    add_workload = json.loads(good.workloads[1])
    workloads = [good.workloads[0], json.dumps(["123", add_workload[1]])]  # add_64 claims a wrong structural hash
    checked = check_database(_write(tmp_path / "db", workloads, rows))
    expected = {
        2: "does not replay on its workload: ScheduleError: Cannot find a block with the name: Nope",
        3: "does not replay on its workload: TypeError",
        4: "exceeds range of int32",
        5: "does not replay on its workload: ScheduleError: Cannot find a block with the name: C",
        6: "names no instruction of its trace",
        7: "run_secs are not all positive",
        8: 'TVM cannot load it: ValueError: Target kind "no-such-target" is not defined',
        9: "does not replay on its workload",
        10: "Instruction kind NoSuchKind is not registered",
        11: "run_secs are not all positive, finite",
    }
    assert len(checked.problems) == len(expected) and checked.records == 1
    for problem, (line, reason) in zip(checked.problems, expected.items(), strict=True):
        assert problem.startswith(f"tuning_record.json line {line}: ") and reason in problem and "\n" not in problem
    trace, latency = best_in_database(checked.db, good.matmul, host_target())  # the negative time did not win
    want, _ = best_in_database(_tvm_database(good.dir), good.matmul, host_target())
    assert latency == pytest.approx(1e-4) and str(trace) == str(want)
    # add_64 is found by its module's own hash, and says why it has no usable record
    assert checked.db.has_workload(good.add.mod)
    assert best_in_database(checked.db, good.add, host_target()) == (None, None)
    user = UserDatabase(checked.db, [good.matmul.id], checked.records, "test", checked.problems, checked.skipped)
    row = database_result(SimpleNamespace(task=good.add, target=host_target()), user, measurer=None)
    assert not row.ok and "no usable record" in row.error and "Cannot find a block with the name: C" in row.error
    assert user.summary([good.matmul, good.add])["problems"] == checked.problems


def test_corrupt_files_get_a_clear_error_on_every_path(good, tmp_path):
    cases = {
        "line 1 is not JSON": (good.workloads, json.dumps(good.rows[0])[:150]),  # truncated
        "nests too deeply": (good.workloads, "[" * 100_000),  # TVM's own JSON parser would overflow its stack
    }
    for i, (reason, (workloads, records)) in enumerate(cases.items()):
        data = "\n".join(workloads).encode(), records.encode()
        with pytest.raises(DatabaseError, match=reason):  # an upload (GUI)
            save_database(*data, tmp_path / f"upload{i}")
        directory = tmp_path / f"local{i}"  # a directory given to the CLI, never saved through save_database
        directory.mkdir()
        (directory / "workload.json").write_bytes(data[0])
        (directory / "tuning_record.json").write_bytes(data[1])
        with pytest.raises(DatabaseError, match=reason):
            read_database(directory)


def test_a_workload_that_segfaults_tvm_costs_only_the_helper(good, tmp_path):
    """A real crash: a module nested 200 000 deep overflows the stack of TVM's JSON parser (segfault)."""
    deep = b"[" * 200_000
    module = base64.b64encode(struct.pack("<Q", len(deep)) + deep).decode()  # TVM's framing: length, then JSON
    directory = _write(
        tmp_path / "db", [json.dumps(["1", module]), good.workloads[1]], [[0, good.rows[0][1]], good.rows[1]]
    )
    # what load_database did before, in the server's own process: TVM's JSONDatabase, killed by a signal
    old = "import sys; from tvm.s_tir import meta_schedule as ms; ms.database.JSONDatabase(*sys.argv[1:])"
    paths = [str(directory / "workload.json"), str(directory / "tuning_record.json")]
    assert subprocess.run([sys.executable, "-c", old, *paths], capture_output=True, timeout=300).returncode < 0
    checked = check_database(directory)
    assert checked.problems[0].startswith("workload.json line 1: loading it crashed TVM (signal")
    assert checked.problems[1] == "tuning_record.json line 1: its workload (workload.json line 1) did not load"
    assert checked.records == 1 and checked.db.has_workload(good.add.mod)


@pytest.mark.parametrize(("fault", "reason"), [("abort", "crashed TVM (signal 6)"), ("hang", "took over 3 s in TVM")])
def test_a_crash_or_a_hang_kills_only_the_helper_and_the_check_goes_on(good, tmp_path, fault, reason):
    rows = [good.rows[0], good.rows[0], good.rows[1]]
    directory = _write(tmp_path / "db", good.workloads, rows)
    checked = check_database(directory, item_timeout_s=3, fault={"line": 2, "do": fault})
    assert checked.problems == [f"tuning_record.json line 2: replaying its trace {reason}"]
    assert checked.records == 2  # a new helper went on with line 3
    assert best_in_database(checked.db, good.matmul, host_target())[1] == pytest.approx(1e-4)


def test_what_the_time_limit_leaves_unchecked_is_said(good):
    with pytest.raises(DatabaseError, match=r"TVM could not load any of it: .*time limit \(0.1 s\) ran out"):
        check_database(good.dir, budget_s=0.1)


def test_the_run_page_survives_an_upload_that_segfaults_tvm(good):
    """The GUI path end to end (AppTest runs the page in this process): the crash stays in the helper."""
    from tests.apptest import app_page

    deep = b"[" * 200_000
    module = base64.b64encode(struct.pack("<Q", len(deep)) + deep).decode()
    workloads = f"{json.dumps(['1', module])}\n{good.workloads[1]}\n".encode()
    records = f"{json.dumps([0, good.rows[0][1]])}\n{json.dumps(good.rows[1])}\n".encode()
    page = app_page("views/run.py")
    page.radio(key="run_method").set_value("database").run()
    page.file_uploader(key="run_workload").set_value(("workload.json", workloads, "application/json"))
    page.file_uploader(key="run_records").set_value(("tuning_record.json", records, "application/json")).run()
    assert not page.exception and not page.error, (page.exception, [e.value for e in page.error])
    assert any("2 left out of the database" in w.value for w in page.warning)
    assert any("workload.json line 1: loading it crashed TVM (signal" in c.value for c in page.code)
    assert not next(b for b in page.button if b.key == "run_go").disabled  # the usable record is there to run
