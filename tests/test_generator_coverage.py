"""Tasks outside what the TLM learnt: the task signature, the checkpoint's learnt.json, Generator.unseen_task and
the CLI's note (issue 34, item 5)."""

import json

import pytest
from tvm import te, topi

from tlm_core.generator import Generator
from tlm_core.language.signature import prompt_signature, split_layout, task_signature
from tlm_core.model import default_checkpoint, new_model, preset
from tlm_core.model.learnt import (
    LEARNT,
    example_prompts,
    learnt_from_prompts,
    load_learnt,
    merge_learnt,
    novelty,
    save_learnt,
)
from tlm_core.partition import task_from_primfunc, te_prim_func
from tlm_core.train.teacher import anonymized

SHIPPED = load_learnt(default_checkpoint())


def conv2d(layout: str = "NCHW", c: int = 8, hw: int = 8):
    if layout == "NCHW":
        x, w = te.placeholder((1, c, hw, hw), name="X"), te.placeholder((c, c, 3, 3), name="W")
        return task_from_primfunc(te_prim_func([x, w, topi.nn.conv2d_nchw(x, w, 1, 1, 1)]))
    x, w = te.placeholder((1, hw, hw, c), name="X"), te.placeholder((3, 3, c, c), name="W")
    return task_from_primfunc(te_prim_func([x, w, topi.nn.conv2d_nhwc(x, w, 1, 1, 1)]))


def conv2d_transpose():
    x, w = te.placeholder((1, 8, 8, 8), name="X"), te.placeholder((8, 8, 3, 3), name="W")
    return task_from_primfunc(
        te_prim_func([x, w, topi.nn.conv2d_transpose_nchw(x, w, (2, 2), (1, 1), "float32", (1, 1))])
    )


def conv3d():
    x, w = te.placeholder((1, 4, 6, 6, 6), name="X"), te.placeholder((8, 4, 3, 3, 3), name="W")
    return task_from_primfunc(te_prim_func([x, w, topi.nn.conv3d_ncdhw(x, w, 1, 1, 1, 1)]))


def dense(m: int, k: int, n: int):
    a, w = te.placeholder((m, k), name="A"), te.placeholder((n, k), name="W")
    return task_from_primfunc(te_prim_func([a, w, topi.nn.dense(a, w)]))


@pytest.fixture(scope="module")
def generator():
    gen = Generator(new_model(preset("tiny")))  # the weights do not matter here, only what it learnt
    gen.learnt = SHIPPED
    return gen


def test_signature_reads_kind_layout_and_extents_from_the_prompt():
    sig = task_signature(conv2d())
    assert (sig.family, sig.pattern, sig.layout, sig.name) == ("conv2d", "SSSSRRR", "nchw", "conv2d_nchw")
    assert sig.extents == (1, 8, 8, 8, 8, 3, 3) and sig.kind == "conv2d SSSSRRR"
    assert task_signature(conv2d("NHWC")).layout == "nhwc"
    assert split_layout("matmul_NT") == ("matmul", "NT") and split_layout("softmax_norm") == ("softmax_norm", "")
    assert prompt_signature(["<bos>", "<hw>", "kind", "llvm"]) is None  # no operator part


def test_learnt_set_round_trip_and_novelty(tmp_path):
    from tlm_core.language.operator import operator_tokens

    learnt = learnt_from_prompts([operator_tokens(conv2d(c=16)), operator_tokens(conv2d(c=32))], ["a corpus"])
    assert learnt["prompts"] == 2 and set(learnt["kinds"]) == {"conv2d SSSSRRR"}
    assert learnt["kinds"]["conv2d SSSSRRR"]["nchw"]["extents"][1] == [16, 32]
    assert load_learnt(save_learnt(tmp_path, learnt).parent) == learnt
    assert load_learnt(tmp_path / "nothing") is None
    assert learnt["kinds"]["conv2d SSSSRRR"]["nchw"]["primes"] == [0] * 7  # no prime extent above 16
    assert learnt_from_prompts([operator_tokens(conv2d(c=8, hw=17))])["kinds"]["conv2d SSSSRRR"]["nchw"][
        "primes"
    ] == [0, 0, 17, 17, 0, 0, 0]
    # a prime seen only with names hidden (as fine-tuning shows every kind) counts for the named kind too
    named, unnamed = operator_tokens(dense(64, 64, 64)), operator_tokens(dense(131, 64, 64))
    hidden = anonymized(unnamed, len(unnamed), ("blk:",))
    (prime,) = novelty(task_signature(dense(197, 64, 64)), learnt_from_prompts([named]))
    assert "loop 0 (S) of 197, a prime (it splits only as 1 x 197)" in prime
    assert novelty(task_signature(dense(197, 64, 64)), learnt_from_prompts([named, hidden])) == []
    assert novelty(task_signature(conv2d(c=16)), learnt) == []
    # fine-tuned from a checkpoint: it still knows what its start learnt, widened by the new examples
    wider = merge_learnt(learnt, learnt_from_prompts([operator_tokens(conv2d(c=64))], ["measured"]))
    assert wider["prompts"] == 3 and wider["sources"] == ["a corpus", "measured"]
    assert wider["kinds"]["conv2d SSSSRRR"]["nchw"]["extents"][1] == [16, 64]
    assert learnt["kinds"]["conv2d SSSSRRR"]["nchw"]["extents"][1] == [16, 32]  # the start's set unchanged
    assert merge_learnt(None, learnt) == learnt
    assert novelty(task_signature(conv2d(c=16)), None) == []  # no learnt set: nothing said
    (layout,) = novelty(task_signature(conv2d("NHWC", c=16)), learnt)
    assert "layout nhwc of conv2d (it learnt nchw)" in layout
    (size,) = novelty(task_signature(conv2d(c=512)), learnt)  # 16x beyond the 16-32 channels seen
    assert "loop 1 (S) of 512, where it learnt 16-32" in size


def test_example_prompts_are_the_distinct_prompts_of_training_examples(workload_spaces):
    from tlm_core.baselines.heuristic import heuristic_program
    from tlm_core.language import PROMPT_END, decision_mask, encode
    from tlm_core.train.data import decision_example

    space = workload_spaces["conv2d_relu_8"]
    cand = heuristic_program(space)
    s = encode(space, cand.sketch_index, cand.decisions)
    example = decision_example(s.ids, decision_mask(s.tokens, s.prompt_len))
    (prompt,) = example_prompts([example, example])
    assert prompt == s.tokens[: s.tokens.index(PROMPT_END)]
    assert prompt_signature(prompt) == prompt_signature(s.tokens)


def test_the_shipped_checkpoint_says_what_it_learnt():
    path = default_checkpoint() / LEARNT
    assert SHIPPED is not None and path.stat().st_size < 50_000
    assert SHIPPED["kinds"]["conv2d SSSSRRR"].keys() == {"nchw"}  # its teacher corpora hold NCHW convolutions only
    assert json.loads(path.read_text())["prompts"] > 1000


def test_tasks_like_the_training_data_get_no_warning(generator, workload_spaces):
    assert generator.unseen_task(conv2d()) is None
    for name in ("matmul_128", "softmax_64", "conv2d_relu_8"):
        assert generator.unseen_task(workload_spaces[name]) is None, name
    assert generator.unseen_task(workload_spaces["add_64"]) is None  # nothing to decide
    assert generator.unseen_task(dense(196, 768, 768)) is None  # ViT's 196 patches: composite, learnt
    assert generator.unseen_task(dense(197, 768, 768)) is None  # fine-tuning 22 learnt prime rows (teacher v16)
    assert generator.unseen_task(dense(17, 8, 8)) is None  # prime, but microseconds whatever the schedule
    assert Generator(generator.model).unseen_task(conv3d()) is None  # a checkpoint without learnt.json


@pytest.mark.parametrize(
    ("task", "says"),
    [
        (conv2d_transpose, ["operator kind compute", "data_dilate", "kernel_transform"]),
        (conv3d, ["operator kind conv3d_ncdhw (loops: 5 spatial, 4 reduction)"]),
        (lambda: conv2d("NHWC"), ["layout nhwc of conv2d (it learnt nchw)"]),
        (lambda: dense(64, 1 << 17, 64), ["sizes of matmul: loop 2 (R) of 131072, where it learnt 64-4096"]),
    ],
    ids=["conv2d_transpose", "conv3d", "nhwc", "long-reduction"],
)
def test_tasks_outside_the_training_data_are_named(generator, task, says):
    t = task()
    note = generator.unseen_task(t)
    assert note is not None and f"task {t.name} ({t.id}" in note
    for phrase in says:
        assert phrase in note, note
    assert "tlm compare MODEL --task" in note and "tlm adapt MODEL" in note  # what to do about it


def test_cli_generate_notes_an_unseen_task(capsys, tmp_path):
    from tlm_core.cli import main

    path = tmp_path / "conv3d.py"
    path.write_text("from tvm.script import tirx as T\n" + conv3d().func.script())
    assert main(["generate", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    (note,) = doc["task_notes"].values()
    assert "conv3d_ncdhw" in note and f"tlm compare {path} --task" in note
    assert f"note: {note}" in captured.err
