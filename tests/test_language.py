"""The tensor language: numbers, vocabulary, tokenizer, and the exact round trip decisions -> sentence -> decisions."""

import json
import math
import random

import pytest

from tlm_core.language import (
    VERSION,
    LanguageError,
    decision_mask,
    decision_tokens,
    decode,
    encode,
    encode_ids,
    make_prompt,
    make_tokenizer,
    number_tokens,
    read_number,
    save_language,
    token_ids,
    vocab_tokens,
)
from tlm_core.language.numbers import SMALL_PRIME_LIMIT
from tlm_core.language.vocab import vocab_hash
from tlm_core.space import TILE, DecisionPoint, perfect_tilings, random_decisions


def test_every_number_round_trips():
    for n in [*range(0, 5000), 11008, 50257, 2**45, 101 * 101, 997 * 2 * 3, 2**31 - 1]:
        tokens = list(number_tokens(n))
        assert tokens[-1] == ";"
        assert read_number(tokens + ["tail"], 0) == (n, len(tokens))
        assert "<unk>" not in [vocab_tokens()[i] for i in encode_ids(tokens)]


def test_numbers_are_prime_powers_smallest_first():
    assert number_tokens(12) == ("2^2", "3^1", ";")
    assert number_tokens(128) == ("2^7", ";")
    assert number_tokens(1) == ("1", ";")
    assert number_tokens(202) == ("2^1", "P", "d1", "d0", "d1", ";")  # 101 is spelled in digits
    assert SMALL_PRIME_LIMIT == 100


def test_vocabulary_is_fixed_and_unique():
    tokens = vocab_tokens()
    assert len(set(tokens)) == len(tokens)
    assert tokens[:4] == ("<pad>", "<bos>", "<eos>", "<unk>")
    assert token_ids()["<pad>"] == 0
    assert VERSION.startswith("tlm-lang-")
    assert len(vocab_hash()) == 16


def test_tokenizer_matches_our_ids_and_reloads(tmp_path):
    from transformers import AutoTokenizer

    text = "<bos> <hw> kind llvm cpu znver5 cores 2^1 ; <dec> s0 tile b0 x 2^7 ; n 2^2 ; max 2^6 ; = 2^1 ; 1 ; <eos>"
    assert make_tokenizer()(text)["input_ids"] == encode_ids(text.split())
    save_language(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded(text)["input_ids"] == encode_ids(text.split())
    assert loaded.decode(encode_ids(text.split())) == text
    assert loaded.convert_tokens_to_ids("<unk>") == token_ids()["<unk>"]


@pytest.mark.parametrize("extent", [1, 7, 12, 64, 96, 128, 172, 224, 1000, 3072, 11008])
def test_every_tiling_of_any_extent_is_writable(extent):
    for n, limit in [(2, -1), (4, 64)]:
        point = DecisionPoint(0, 0, TILE, None, [], (extent,), extent=extent, n=n, max_innermost_factor=limit)
        for tiling in perfect_tilings(extent, n, limit):
            tokens = decision_tokens(point, tiling)
            sentence = ["<dec>", "s0", "tile", "=", *tokens, "<eos>"]
            assert decode(sentence) == (0, [tiling])


def _round_trip(space, rng, samples=3):
    prompt = make_prompt(space)
    for sketch in space.sketches:
        vectors = [sketch.sampled_decisions] + [random_decisions(sketch, rng) for _ in range(samples)]
        for decisions in vectors:
            sentence = encode(space, sketch.index, decisions, prompt)
            assert decode(sentence.tokens) == (sketch.index, decisions)
            assert decode(sentence.text) == (sketch.index, decisions)
            assert "<unk>" not in sentence.tokens
            assert decision_mask(sentence.tokens, sentence.prompt_len) == sentence.decision_mask  # from text
            assert sentence.tokens[: sentence.prompt_len] == prompt.tokens


def test_round_trip_on_workloads(workload_spaces):
    rng = random.Random(0)
    for space in workload_spaces.values():
        _round_trip(space, rng)


def test_sentence_shape(workload_spaces):
    space = workload_spaces["matmul_relu_64"]
    sentence = encode(space, 0, space.sketches[0].sampled_decisions)
    assert sentence.tokens[0] == "<bos>" and sentence.tokens[-1] == "<eos>"
    assert sentence.tokens[sentence.prompt_len - 1] == "<dec>"
    assert sentence.tokens[sentence.prompt_len] == "s0"
    for word in ["<hw>", "kind", "llvm", "cores", "vec", "<op>", "block", "sketches"]:
        assert word in sentence.tokens[: sentence.prompt_len]
    # the loss mask covers the sketch, every decision token and the end, never the prompt or the contexts
    chosen = [t for t, m in zip(sentence.tokens, sentence.decision_mask, strict=True) if m]
    assert chosen[0] == "s0" and chosen[-1] == "<eos>"
    assert not any(sentence.decision_mask[: sentence.prompt_len])
    assert "tile" not in chosen and "=" not in chosen


def test_unreadable_and_unwritable_sentences():
    with pytest.raises(LanguageError, match="no '<dec>'"):
        decode("<bos> <hw> <eos>")
    with pytest.raises(LanguageError, match="sketch token"):
        decode("<dec> tile = 2^1 ; <eos>")
    with pytest.raises(LanguageError, match="expected a categorical"):
        decode("<dec> s0 cat = L3 <eos>")
    point = DecisionPoint(0, 0, "compute_location", "b", [70], 70)
    with pytest.raises(LanguageError, match="beyond"):
        decision_tokens(point, 70)


@pytest.mark.slow
def test_round_trip_on_every_task_of_every_tiny_sample(tiny_sample_spaces):
    rng = random.Random(1)
    tasks = 0
    for spaces in tiny_sample_spaces.values():
        for space in spaces:
            _round_trip(space, rng, samples=2)
            tasks += 1
    assert tasks > 100


@pytest.mark.slow
def test_round_trip_on_a_paper_size_model(space_builder):
    from tlm_core.frontend import load_model
    from tlm_core.partition import partition

    rng = random.Random(2)
    tasks = partition(load_model("resnet50"), space_builder.target).tasks
    for task in tasks:
        _round_trip(space_builder.build(task), rng, samples=1)


def test_tiles_name_their_block_iterator_and_the_prompt_the_work(workload_spaces):
    space = workload_spaces["conv2d_relu_8"]  # conv loops n k h w c r s; h and w both of extent 8
    sentence = encode(space, 0, space.sketches[0].sampled_decisions)
    tokens = sentence.tokens
    tiles = [tokens[i + 1 : tokens.index("=", i)] for i, t in enumerate(tokens) if t == "tile"]
    conv = [t for t in tiles if t[0] == tiles[0][0]]
    assert [t[1] for t in conv] == [f"dim{i}" for i in range(7)]  # every loop named, in the block's order
    assert len({" ".join(t) for t in conv}) == 7  # equal extents no longer give equal contexts
    work = tokens.index("work")
    assert tokens[work + 1] == f"w{round(math.log2(space.task.flops))}"
    assert work < sentence.prompt_len


def test_a_tiling_is_written_innermost_then_outermost_then_inside_out():
    point = DecisionPoint(0, 0, TILE, None, [], (2, 8, 1, 4), extent=64, n=4, max_innermost_factor=64)
    tokens = decision_tokens(point, (2, 8, 1, 4))  # TVM's order: outer (parallel) to inner (vector)
    assert " ".join(tokens) == "2^2 ; 2^1 ; 1 ; 2^3 ;"  # 4, then 2, then 1, then 8
    assert decode(["<dec>", "s0", "tile", "=", *tokens, "<eos>"]) == (0, [(2, 8, 1, 4)])
    two = DecisionPoint(0, 0, TILE, None, [], (3, 5), extent=15, n=2)
    assert " ".join(decision_tokens(two, (3, 5))) == "5^1 ; 3^1 ;"


def test_a_known_cpu_has_its_own_caches_in_the_prompt_on_any_host():
    """Sentences of data measured on Zen 5 must read the same on whatever machine builds them (training from
    the committed data), even on a host of the same CPU name with other caches; the host's own target carries
    the host's caches, and so do the records measured with it."""
    from tvm.target import Target

    from tlm_core.language import hardware_tokens
    from tlm_core.target import KNOWN_CACHES_KIB, caches_kib, host_caches_kib, host_cpu, host_target

    here = host_target()
    assert caches_kib(here) == host_caches_kib()
    assert caches_kib(Target(json.loads(str(here)))) == host_caches_kib()  # a record's target, read back
    zen = Target({"kind": "llvm", "mcpu": "znver5", "num-cores": 2})
    assert caches_kib(zen) == KNOWN_CACHES_KIB["znver5"]
    shipped = "<hw> kind llvm cpu znver5 cores 2^1 ; vec 2^9 ; l1d 2^4 3^1 ; l2 2^10 ; l3 2^15 ;"
    assert " ".join(hardware_tokens(zen)) == shipped
    assert caches_kib(host_target(cpu="emeraldrapids")) == KNOWN_CACHES_KIB["emeraldrapids"]
    if host_cpu() not in KNOWN_CACHES_KIB:  # an unknown CPU named for the host: the host's caches
        assert caches_kib(host_target(cpu=host_cpu())) == host_caches_kib()
    corrupt = Target({"kind": "llvm", "mcpu": "znver5", "num-cores": 2, "model": "caches-a-b"})
    with pytest.raises(ValueError, match="is not caches-L1d-L2-L3"):
        caches_kib(corrupt)
    unknown = Target({"kind": "llvm", "mcpu": "znver1" if host_cpu() != "znver1" else "znver2", "num-cores": 2})
    assert caches_kib(unknown) == (0, 0, 0) and "l2" not in hardware_tokens(unknown)


def test_hardware_differences_name_each_field():
    """The Generator's warning on other hardware says what differs (numbers read back from their tokens)."""
    from tlm_core.language import hardware_differences
    from tlm_core.language.hardware import hardware_fields

    old = "<hw> kind llvm cpu emeraldrapids cores 2^1 ; vec 2^9 ; l1d 2^4 3^1 ; l2 2^11 ; l3 2^12 3^1 5^2 ;"
    new = "<hw> kind llvm cpu emeraldrapids cores 2^1 ; vec 2^9 ; l1d 2^4 3^1 ; l2 2^11 ; l3 2^12 5^1 13^1 ;"
    assert hardware_fields(old) == {"kind": "llvm", "cpu": "emeraldrapids", "cores": 2, "vec": 512, "l1d": 48,
                                    "l2": 2048, "l3": 307200}  # fmt: skip
    assert hardware_differences(old, old) == []
    assert hardware_differences(old, new) == ["l3: 300 MiB trained, 260 MiB here"]
    assert hardware_differences("<hw> kind llvm cpu znver1 cores 2^6 ;", old)[:2] == [
        "cpu: znver1 trained, emeraldrapids here", "cores: 64 trained, 2 here"]  # fmt: skip


def test_a_cpu_the_checkpoint_never_learnt_is_read_by_its_numbers():
    """A checkpoint that learnt hidden CPU names ("cpu cpu?") reads an unknown CPU that way: the name's embedding
    was never trained, the vector width and caches after it were. Known names, and checkpoints without hidden
    ones, keep the name."""
    from tvm.target import Target

    from tlm_core.language import hardware_tokens, hide_cpu
    from tlm_core.train.data import Example, hide_cpu_names

    zen3 = Target({"kind": "llvm", "mcpu": "znver3", "num-cores": 2})
    named = hardware_tokens(zen3)
    assert named[:6] == ["<hw>", "kind", "llvm", "cpu", "znver3", "cores"]
    hidden = "<hw> kind llvm cpu cpu? cores 2^1 ; vec 2^8 ;"
    assert hardware_tokens(zen3, [hidden]) == hide_cpu(named)
    assert hide_cpu(named)[4] == "cpu?" and hide_cpu(named)[5:] == named[5:]
    learnt_zen3 = "<hw> kind llvm cpu znver3 cores 2^1 ;"
    assert hardware_tokens(zen3, [hidden, learnt_zen3]) == named  # e.g. adapted on this very CPU
    assert hardware_tokens(zen3, ["<hw> kind llvm cpu znver4 cores 2^1 ;"]) == named  # never learnt "cpu?"

    from tlm_core.language import encode_ids

    tokens = ["<bos>", *named, "<op>"]
    examples = [Example(encode_ids(tokens), [False] * len(tokens)) for _ in range(200)]
    out = hide_cpu_names(examples, 0.5, seed=1)
    changed = [e for e in out if e.ids != examples[0].ids]
    assert 60 < len(changed) < 140  # about half, seeded
    assert all(e.ids == encode_ids(["<bos>", *hide_cpu(named), "<op>"]) for e in changed)
    assert out == hide_cpu_names(examples, 0.5, seed=1) and hide_cpu_names(examples, 0.0) == examples
