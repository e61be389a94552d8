"""The `tlm` command line: tables, --json documents, records, and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tlm_core.cli import main
from tlm_core.records import RecordStore

OPERATOR = str(Path(__file__).parent / "data" / "matmul_relu.py")


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def test_models_lists_every_sample(capsys):
    import sample_models

    doc = run_json(capsys, "models")
    assert [m["name"] for m in doc["models"]] == list(sample_models.SAMPLES)
    assert doc["default"] == sample_models.DEFAULT


def test_inspect_a_sample(capsys, space_builder):
    doc = run_json(capsys, "inspect", "resnet50-tiny")
    assert doc["calls"] == doc["subgraphs"] == sum(t["weight"] for t in doc["tasks"])
    assert all(t["sketches"] >= 1 for t in doc["tasks"])
    conv = [t for t in doc["tasks"] if "conv2d" in t["ops"]]
    assert conv and all(t["log10_space"] > 3 and t["flops"] > 0 for t in conv)


def test_space_of_an_operator_file(capsys, space_builder):
    doc = run_json(capsys, "space", OPERATOR, "--choices")
    (task,) = doc["tasks"]
    sketch = task["space"]["sketches"][0]
    tiles = [p for p in sketch["points"] if p["kind"] == "tile"]
    assert tiles and all(len(p["choices"]) == p["num_choices"] for p in tiles)
    text_main = main(["space", OPERATOR, "--task", task["id"][:6], "--quiet"])
    assert text_main == 0
    assert "sketch 0" in capsys.readouterr().out


def test_measure_writes_records_tvm_can_read(capsys, tmp_path, space_builder):
    doc = run_json(capsys, "measure", OPERATOR, "--task", "main", "--random", "3", "--records", str(tmp_path))
    assert len(doc["programs"]) == 3
    assert all(p["ok"] and p["latency_s"] > 0 for p in doc["programs"]), doc["programs"]
    store = RecordStore(tmp_path)
    assert len(store) == 3
    best = store.best(doc["task"]["id"])
    assert best is not None and best.latency == pytest.approx(doc["best"]["latency_s"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["inspect", "no-such-file.onnx"], "no-such-file.onnx"),
        (["inspect", "no-such-sample"], "unknown sample"),
        (["space", OPERATOR, "--task", "ffffffff"], "no task"),
    ],
)
def test_errors_are_one_line_and_nonzero(capsys, argv, message):
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_console_script_is_installed():
    tlm = Path(sys.executable).parent / "tlm"
    out = subprocess.run([str(tlm), "models", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout)["models"]
