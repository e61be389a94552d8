"""`tlm adapt`: measure, fine-tune and write a local checkpoint per hardware; resume; default checkpoint choice."""

import json

import pytest

from tlm_core.cli import main
from tlm_core.generator import Generator
from tlm_core.model import (
    adapted_checkpoint,
    default_checkpoint,
    default_checkpoint_for,
    hardware_key,
    new_model,
    preset,
    save_checkpoint,
    train_state,
)
from tlm_core.model.adapted import ADAPTED_ENV, hardware_prompt
from tlm_core.model.learnt import load_learnt
from tlm_core.program import apply_decisions
from tlm_core.target import host_target
from tlm_core.train.adapt import ROWS_FILE, AdaptSettings, adapt, program_key

TINY = dict(minutes=0.05, steps=2, batch_size=2, samples=1, heuristic_k=2, mutations=1, again=1, min_train_s=5)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """Adapted checkpoints in a temporary folder, never the user's ~/.cache."""
    monkeypatch.setenv(ADAPTED_ENV, str(tmp_path / "adapted"))
    return tmp_path / "adapted"


@pytest.fixture
def tiny_base(tmp_path):
    return save_checkpoint(new_model(preset("tiny"), seed=0), tmp_path / "base", extra={"hardware": []})


class Interrupting:
    """A Measurer that measures `batches` batches, then is interrupted (a killed adapt)."""

    def __init__(self, measurer, batches):
        self.measurer, self.batches, self.calls = measurer, batches, 0

    def measure(self, task, mods, progress=None):
        if self.calls >= self.batches:
            raise KeyboardInterrupt
        self.calls += 1
        return self.measurer.measure(task, mods)


def rows(work):
    return [json.loads(x) for x in (work / ROWS_FILE).read_text().splitlines()]


def test_adapt_writes_a_checkpoint_for_this_hardware_and_resumes(tmp_path, cache, tiny_base, measurer,
                                                                 workload_spaces, space_builder):  # fmt: skip
    space = workload_spaces["matmul_relu_64"]
    task, target, work, out = space.task, space.target, tmp_path / "work", adapted_checkpoint(space.target)
    settings = AdaptSettings(**TINY)
    # killed after the first batch of measurements
    with pytest.raises(KeyboardInterrupt):
        adapt([task], target, work, out, tiny_base, settings, measurer=Interrupting(measurer, 1), builder=space_builder,
              log=lambda m: None)  # fmt: skip
    first = rows(work)
    assert first and not out.exists()
    # resumed: the measured programs are not measured again
    summary = adapt([task], target, work, out, tiny_base, settings, measurer=measurer, builder=space_builder,
                    log=lambda m: None)  # fmt: skip
    again = rows(work)
    assert again[: len(first)] == first
    keys = [program_key(r["sketch"], r["decisions"]) for r in again if r["source"] != "again" and r["records"]]
    assert len(keys) == len(set(keys))  # each program measured once (the fastest again, on purpose)
    assert len(again) > len(first)
    # the checkpoint: loadable, lists this hardware, generates valid programs
    assert summary["out"] == str(out) and (out / "config.json").exists()
    state = train_state(out)
    assert hardware_prompt(target) in state["hardware"]
    assert state["adapted"]["hardware_key"] == hardware_key(target)
    assert load_learnt(out)["prompts"] > 0  # what it learnt: its start's set and the measured tasks
    g = Generator.from_checkpoint(out).greedy(space)
    apply_decisions(space, g.sketch_index, g.decisions)
    assert default_checkpoint_for(target) == out  # generate / compile / the GUI pick it up on this hardware
    # a finished adapt run again measures nothing
    n = len(again)
    adapt([task], target, work, out, tiny_base, settings, measurer=Interrupting(measurer, 0), builder=space_builder,
          log=lambda m: None)  # fmt: skip
    assert len(rows(work)) == n


def test_default_checkpoint_prefers_the_adapted_one_for_its_hardware_only(cache):
    haswell = host_target("llvm", "haswell", 1, runs_here=True)
    here = host_target()
    assert default_checkpoint_for(haswell) == default_checkpoint() == default_checkpoint_for(None)
    folder = adapted_checkpoint(haswell)
    assert folder.is_relative_to(cache) and hardware_key(haswell).startswith("llvm-haswell-1c-")
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "train_state.json").write_text(json.dumps({"hardware": ["<hw> kind llvm cpu znver5 ;"]}))
    assert default_checkpoint_for(haswell) == default_checkpoint()  # not trained on this hardware
    (folder / "train_state.json").write_text(json.dumps({"hardware": [hardware_prompt(haswell)]}))
    assert default_checkpoint_for(haswell) == folder
    assert default_checkpoint_for(here) == default_checkpoint()  # another machine: the shipped one
    assert hardware_key(here) != hardware_key(haswell)


def test_a_cpu_this_host_runs_gets_the_hosts_caches():
    haswell = host_target("llvm", "haswell", 1, runs_here=True)
    assert haswell.attrs["mcpu"] == "haswell" and int(haswell.attrs["num-cores"]) == 1
    assert str(haswell.attrs["model"]) == str(host_target().attrs.get("model", ""))
    with pytest.raises(ValueError, match="caches are unknown"):
        host_target("llvm", "skylake")  # without runs_here: a CPU whose caches nobody knows
    with pytest.raises(ValueError, match="does not know the CPU"):
        host_target("llvm", "no-such-cpu", runs_here=True)


def test_cli_bad_input_is_one_line(capsys, cache):
    assert main(["adapt", "tests/data/matmul_relu.py", "--minutes", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "tlm adapt: error: --minutes must be positive, not 0"
    assert main(["adapt", "--cpu", "no-such-cpu", "--quiet"]) == 2
    assert "does not know the CPU 'no-such-cpu'" in capsys.readouterr().err
    assert main(["adapt", "no/such/model.onnx", "--quiet"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_checkpoint_label_names_the_cpus_learnt_and_hidden_ones(tmp_path):
    from tlm_core.model import checkpoint_label

    state = {"hardware": ["<hw> kind llvm cpu znver4 cores 2^1 ; vec 2^9 ;", "<hw> kind llvm cpu cpu? cores 2^1 ;"]}
    (tmp_path / "train_state.json").write_text(json.dumps(state))
    label = checkpoint_label(tmp_path)
    assert "trained on cpu znver4; other CPUs by their vector width and caches" in label and "cpu?" not in label
