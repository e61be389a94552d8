"""Teacher sentences: the heuristic's Top-1 programs of the operator zoo, written without measuring."""

import json
from pathlib import Path

import pytest

from tlm_core.baselines.heuristic import heuristic_program
from tlm_core.dataset import Catalog, variants_for
from tlm_core.dataset.zoo import KINDS, PER_PART, zoo_names, zoo_ops
from tlm_core.language import decode
from tlm_core.model.learnt import is_prime
from tlm_core.train import teacher_examples, write_teacher_corpus
from tlm_core.train.teacher import catalog_path


def test_zoo_is_seeded_and_named():
    assert len(zoo_names()) == sum(KINDS.values())
    assert zoo_ops("conv", 3) == zoo_ops("conv", 3) != zoo_ops("conv", 4)
    assert all(len(zoo_ops(k, 0)) == PER_PART for k in KINDS)
    depthwise = [op for p in range(KINDS["conv"]) for op in zoo_ops("conv", p) if op[6]]
    assert depthwise and all(op[1] == op[2] and op[4] > 1 for op in depthwise)  # cout == cin, a real kernel
    assert [v.family for v in variants_for(["zoo-pool-0", "gpt2-b2-s48"])] == ["zoo", "gpt2"]
    plain = [op for p in range(KINDS["plain"]) for op in zoo_ops("plain", p)]
    assert {op[0] for op in plain} == {"conv", "matmul", "reduce"}  # single operators, no epilogue
    assert all(op[-1] == "plain" for op in plain if op[0] == "conv")
    wide = [op for p in range(KINDS["widths"]) for op in zoo_ops("widths", p)]
    # channel counts with a factor 3, 5 or 7 (not powers of two), mostly pointwise as in mobile CNN blocks
    assert all(c % 8 == 0 and c & (c - 1) for op in wide for c in op[1:3])
    assert sum(op[4] == 1 for op in wide) > len(wide) / 2
    odd = [op for p in range(KINDS["odd"]) for op in zoo_ops("odd", p)]
    rows = {op[3] if op[1] in ("bmm", "bmm_ctx", "softmax") else op[2] for op in odd}
    # rows a prime above 16 or 2-3 times one; 197 (ViT's tokens, in the test split) never drawn
    assert 197 not in rows and all(is_prime(r) or is_prime(r // 2) or is_prime(r // 3) for r in rows)
    assert {op[1] for op in odd} == {"dense", "matmul", "bmm", "bmm_ctx", "softmax", "sum"}
    grouped = [op for p in range(KINDS["grouped"]) for op in zoo_ops("grouped", p)]
    # groups of several channels each (neither dense nor depthwise), some dilated
    assert all(1 < op[6] < op[1] and op[1] % op[6] == 0 == op[2] % op[6] for op in grouped)
    assert any(op[7] == 2 for op in grouped)


def test_topi_zoo_variants_are_single_te_operators_with_topis_layouts(tmp_path):
    from tlm_core.dataset.zoo import topi_tasks

    specs = [op for p in range(KINDS["topi"]) for op in zoo_ops("topi", p)]
    assert {op[1] for op in specs} >= {"dense", "matmul", "depthwise", "conv", "bmm"}
    tasks = topi_tasks("zoo-topi-1")
    assert len(tasks) == PER_PART and [t.id for t in tasks] == [t.id for t in topi_tasks("zoo-topi-1")]  # seeded
    for spec, task in zip(zoo_ops("topi", 1), tasks, strict=True):
        params = dict((name, shape) for name, shape, _ in task.params)
        if spec[1] == "dense":  # the weight is W[n, k], read along its rows (no Relax model has it)
            rows, k, n = spec[2:5]
            assert params["A"] == (rows, k) and params["W"] == (n, k) and task.ops[0] == "dense"
        assert "layout_free_buffers" not in (task.func.attrs or {})
    with pytest.raises(ValueError, match="no PyTorch zoo variant"):
        variants_for(["zoo-topi-1"])[0].build()
    catalog = Catalog(tmp_path / "catalog.jsonl")
    catalog.ensure(variants_for(["zoo-topi-1"]), "llvm", log=lambda m: None)  # no model to load or partition
    assert {t.id for t in catalog.for_variants(["zoo-topi-1"])} == {t.id for t in tasks}


def test_gemm_zoo_variants_are_large_te_gemms_without_the_peak_benchmarks_shape():
    from tlm_core.dataset.zoo import topi_tasks

    specs = [op for p in range(KINDS["gemm"]) for op in zoo_ops("gemm", p)]
    shapes = [op[2:5] for op in specs]
    assert all(min(s) >= 512 for s in shapes) and (1024, 1024, 1024) not in shapes  # benchmarks/peak.py's GEMM
    assert sum(s[0] >= 1024 for s in shapes) > len(shapes) // 2
    tasks = topi_tasks("zoo-gemm-0")
    assert [t.ops[0] for t in tasks] == [op[1] for op in zoo_ops("gemm", 0)]
    with pytest.raises(ValueError, match="no PyTorch zoo variant"):
        variants_for(["zoo-gemm-0"])[0].build()


def test_zoo_variant_loads_with_its_own_description():
    from tlm_core.dataset.variants import load_variant

    model = load_variant(variants_for(["zoo-pool-0"])[0])
    assert model.notes[0].startswith("Operator zoo part zoo-pool-0") and not any("BatchNorm" in n for n in model.notes)


@pytest.fixture(scope="module")
def zoo_corpus(tmp_path_factory) -> tuple[Path, dict]:
    """The teacher corpus of one zoo part, and the counts of writing it."""
    out = tmp_path_factory.mktemp("teacher") / "teacher.jsonl"
    return out, write_teacher_corpus(out, ["zoo-pool-0"], [], log=lambda m: None)


def test_teacher_corpus_is_the_heuristics_top1_resumes_and_excludes(zoo_corpus, tmp_path, space_builder):
    out, counts = zoo_corpus
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert counts["written"] == len(rows) > 4 and {r["variant"] for r in rows} == {"zoo-pool-0"}
    tasks = Catalog(catalog_path(out)).tasks
    for row in rows[:3]:  # each sentence decodes to the heuristic's own program of that task
        cand = heuristic_program(space_builder.build(tasks[row["task_id"]].task()))
        assert decode(row["text"]) == (cand.sketch_index, cand.decisions)
    examples = teacher_examples([out])
    assert len(examples) == len(rows) and all(any(e.loss_mask) for e in examples)
    assert not any(examples[0].loss_mask[: rows[0]["prompt_len"]])  # no loss on the prompt

    again = write_teacher_corpus(out, ["zoo-pool-0"], [], log=lambda m: None)
    assert again["written"] == 0 and len(out.read_text().splitlines()) == len(rows)  # resumed: nothing twice
    other = tmp_path / "other.jsonl"
    held_out = write_teacher_corpus(other, ["zoo-pool-0"], ["zoo-pool-0"], log=lambda m: None)
    assert held_out["written"] == 0 and held_out["excluded"] == counts["written"] + counts["no_decisions"]
    by_id = write_teacher_corpus(tmp_path / "ids.jsonl", ["zoo-pool-0"], [], lambda m: None, {rows[0]["task_id"]})
    assert by_id["written"] == len(rows) - 1 and by_id["excluded"] == 1


def test_teacher_corpus_logs_and_skips_a_task_the_heuristic_fails_on(zoo_corpus, tmp_path, monkeypatch):
    import shutil

    import tlm_core.baselines.heuristic as heuristic

    calls, logged = [], []

    def flaky(space):  # TVM failing on the first task only
        calls.append(space)
        if len(calls) == 1:
            raise RuntimeError("InternalError: Check failed")
        return heuristic_program(space)

    monkeypatch.setattr(heuristic, "heuristic_program", flaky)
    out = tmp_path / "t.jsonl"
    shutil.copy(catalog_path(zoo_corpus[0]), catalog_path(out))  # the zoo part's tasks, loaded once
    counts = write_teacher_corpus(out, ["zoo-pool-0"], [], log=logged.append)
    assert counts["failed"] == 1 and counts["written"] == len(calls) - 1 > 0
    assert any("RuntimeError: InternalError" in m for m in logged)


def test_anonymized_sentences_hide_names_only_in_the_prompt():
    from tlm_core.train.teacher import anonymized

    tokens = "<bos> <op> op:matmul block b0 blk:matmul S 2^7 ; <dec> s0 tile b0 x 2^7 ; = 2^4 ; ; <eos>".split()
    prompt_len = tokens.index("<dec>") + 1
    out = anonymized(tokens, prompt_len)
    assert out[:prompt_len] == "<bos> <op> op? block b0 blk? S 2^7 ; <dec>".split()
    assert out[prompt_len:] == tokens[prompt_len:]
    only_ops = anonymized(tokens, prompt_len, ("op:",))
    assert only_ops[:prompt_len] == "<bos> <op> op? block b0 blk:matmul S 2^7 ; <dec>".split()
    two = "<bos> <op> op:matmul op:add block b0 blk:matmul S 2^7 ; <dec> s0 <eos>".split()
    one = anonymized(two, len(two) - 2, ("ops",))  # the list as one unknown name, as a TVMScript operator's
    assert one == "<bos> <op> op? block b0 blk:matmul S 2^7 ; <dec> s0 <eos>".split()


def test_teacher_examples_add_one_copy_per_hidden_name_set(tmp_path):
    import gzip

    from tlm_core.language.vocab import VERSION
    from tlm_core.train.teacher import teacher_examples

    text = "<bos> <op> op:matmul block b0 blk:matmul S 2^7 ; <dec> s0 tile b0 x 2^7 ; = 2^4 ; ; <eos>"
    row = {"text": text, "prompt_len": text.split().index("<dec>") + 1, "language": VERSION}
    path = tmp_path / "t.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(row) + "\n")
    assert [len(teacher_examples([path], a)) for a in (None, "all", "each")] == [1, 2, 4]


def test_small_tasks_sentences_can_be_repeated(tmp_path):
    from tlm_core.language.vocab import VERSION
    from tlm_core.train.teacher import teacher_examples, work_of

    rows = []
    for work in (12, 20, 21, 30):
        prompt = f"<bos> <op> op:matmul block b0 blk:matmul S 2^7 ; work w{work} <dec>"
        text = f"{prompt} s0 tile b0 dim0 x 2^7 ; = 2^7 ; <eos>"
        rows.append({"text": text, "prompt_len": text.split().index("<dec>") + 1, "language": VERSION})
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert work_of(rows[0]["text"].split()) == 12 and work_of(["<op>", "op:matmul"]) is None
    assert len(teacher_examples([path])) == 4
    assert len(teacher_examples([path], small_repeat=3)) == 3 + 3 + 1 + 1  # at most 2^20 FLOPs: repeated
    assert len(teacher_examples([path], "each", small_repeat=2)) == 4 * (2 + 2 + 1 + 1)


def test_teacher_corpus_for_another_cpu(zoo_corpus, tmp_path):
    """A corpus for the machine the data was measured on, written on any host (caches known, not read here)."""
    import shutil

    from tlm_core.target import host_cpu

    out = tmp_path / "zen.jsonl"
    shutil.copy(catalog_path(zoo_corpus[0]), catalog_path(out))  # the models are loaded once per module
    assert write_teacher_corpus(out, ["zoo-pool-0"], [], log=lambda m: None, cpu="znver5")["written"] > 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert all("cpu znver5 cores" in r["text"] and " l2 2^10 ; l3 2^15 ; <op>" in r["text"] for r in rows)
    unknown = "znver1" if host_cpu() != "znver1" else "znver2"
    with pytest.raises(ValueError, match="caches are unknown"):
        write_teacher_corpus(tmp_path / "x.jsonl", ["zoo-pool-0"], [], log=lambda m: None, cpu=unknown)
