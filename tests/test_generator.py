"""Constrained decoding: every generated program is valid, greedy is deterministic, candidates are distinct."""

import itertools
import math

import numpy as np
import pytest

from tlm_core.generator import Generator, point_trie
from tlm_core.language import decode, decode_ids, token_ids
from tlm_core.model import new_model, preset
from tlm_core.program import apply_decisions
from tlm_core.space import TILE, DecisionPoint, perfect_tilings


@pytest.fixture(scope="module")
def gen():
    return Generator(new_model(preset("tiny"), seed=0))  # untrained: legality comes from the mask alone


def assert_valid(space, g):
    program = apply_decisions(space, g.sketch_index, g.decisions)  # raises InvalidDecisions otherwise
    assert decode(g.sentence.tokens) == (g.sketch_index, g.decisions)
    return program


def test_greedy_is_valid_and_deterministic(gen, workload_spaces):
    for space in workload_spaces.values():
        first = gen.greedy(space)
        assert_valid(space, first)
        again = gen.greedy(space)
        assert (again.sketch_index, again.decisions, again.sentence.text) == (
            first.sketch_index,
            first.decisions,
            first.sentence.text,
        )
        other = Generator(new_model(preset("tiny"), seed=0)).greedy(space)  # a fresh copy of the same model
        assert other.sentence.text == first.sentence.text


def test_every_sketch_can_be_forced(gen, workload_spaces):
    for space in workload_spaces.values():
        for sketch in space.sketches:
            g = gen.greedy(space, sketch_index=sketch.index)
            assert g.sketch_index == sketch.index
            assert_valid(space, g)


def test_steps_are_recorded(gen, workload_spaces):
    space = workload_spaces["conv2d_relu_8"]
    g = gen.greedy(space)
    vocab = len(token_ids())
    assert g.steps[0].point is None and g.steps[0].token == f"s{g.sketch_index}"
    assert g.steps[-1].token == "<eos>"
    choices = [s for s in g.steps if s.num_legal > 1]
    assert choices, "a conv has real choices"
    for s in g.steps:
        assert s.num_legal + s.num_masked == vocab
        assert g.sentence.tokens[s.position] == s.token
        assert 0 < s.prob <= 1 and s.top[0][1] >= s.prob - 1e-6
        assert sum(p for _, p in s.top) <= 1 + 1e-5
        assert 0 <= s.entropy <= math.log(s.num_legal) + 1e-5
    assert {s.point for s in g.steps if s.point is not None} == set(range(len(g.decisions)))
    assert g.logprob == pytest.approx(sum(math.log(s.prob) for s in choices), abs=1e-4)
    assert g.to_dict(steps=True)["steps"][0]["token"] == g.steps[0].token


def test_tile_mask_is_what_remains():
    point = DecisionPoint(0, 0, TILE, None, perfect_tilings(12, 3, 4), (12, 1, 1), extent=12, n=3,
                          max_innermost_factor=4)  # fmt: skip
    node = point_trie(point)
    assert node.leaves == len(perfect_tilings(12, 3, 4))
    ids = token_ids()
    first = set(decode_ids(list(node.children)))
    assert first == {"1", "2^1", "2^2", "3^1"}  # every divisor of 12 starts a factor
    node = node.children[ids["2^2"]]  # first factor 4 (or 12 = 2^2 3^1)...
    node = node.children[ids[";"]]  # ... it is 4: 3 remains
    assert set(decode_ids(list(node.children))) == {"1", "3^1"}
    node = node.children[ids["1"]].children[ids[";"]]  # second factor 1: the last must be 3
    assert decode_ids(list(node.children)) == ["3^1"]


def test_sampling_gives_distinct_valid_candidates(gen, workload_spaces):
    space = workload_spaces["matmul_128"]
    cands = gen.sample(space, k=6, temperature=1.0, seed=1)
    assert len(cands) == 6
    assert len({c.key for c in cands}) == 6
    for c in cands:
        assert_valid(space, c)
    assert [c.key for c in gen.sample(space, k=6, temperature=1.0, seed=1)] == [c.key for c in cands]
    top = gen.sample(space, k=3, temperature=0.7, top_k=2, seed=2)
    assert len({c.key for c in top}) == len(top) >= 1


def test_sampling_stops_when_the_space_is_smaller(gen, workload_spaces):
    space = workload_spaces["add_64"]  # no decisions: one program per sketch
    cands = gen.sample(space, k=10, temperature=1.0)
    assert len(cands) == len(space.sketches)


def test_beam_search_gives_k_distinct_best_first(gen, workload_spaces):
    for name in ["matmul_relu_64", "softmax_64"]:
        space = workload_spaces[name]
        beams = gen.beam(space, k=4)
        assert len(beams) == 4 and len({b.key for b in beams}) == 4
        assert [b.logprob for b in beams] == sorted((b.logprob for b in beams), reverse=True)
        for b in beams:
            assert_valid(space, b)
        # not asserted: beams[0] >= greedy; a beam of 4 can drop the greedy prefix for one that ends worse
        # (an untrained model on this Intel machine's prompt does)
    assert len(gen.generate(workload_spaces["matmul_128"], candidates=3)) == 3


def test_candidates_start_with_the_greedy_program_then_the_beam(gen, workload_spaces):
    space = workload_spaces["matmul_relu_64"]
    cands = gen.candidates(space, 5)
    greedy = gen.greedy(space)
    beam = [b.key for b in gen.beam(space, 5) if b.key != greedy.key]
    assert [c.key for c in cands] == [greedy.key, *beam][:5]
    assert len({c.key for c in cands}) == 5
    assert [c.key for c in gen.candidates(space, 1)] == [greedy.key]


def test_override_forces_a_decision_and_redecodes_the_rest(gen, workload_spaces):
    space = workload_spaces["conv2d_relu_8"]
    g = gen.greedy(space)
    points = space.sketches[g.sketch_index].points
    i = next(p.index for p in points if p.kind == TILE and len(p.choices) > 1)
    value = next(c for c in points[i].choices if c != g.decisions[i])
    o = gen.override(space, g, i, value)
    assert o.sketch_index == g.sketch_index
    assert o.decisions[:i] == g.decisions[:i] and o.decisions[i] == value
    assert o.method == "override"
    assert_valid(space, o)
    assert [s.forced for s in o.steps if s.point == i] == [True] * len([s for s in o.steps if s.point == i])
    with pytest.raises(ValueError, match="multiply"):
        gen.override(space, g, i, (7,) * len(value))


@pytest.mark.slow
def test_every_task_of_every_tiny_sample_generates_valid_programs(tiny_sample_spaces):
    gen = Generator(new_model(preset("tiny"), seed=0))
    total = 0
    for spaces in tiny_sample_spaces.values():
        for space in spaces:
            for g in [gen.greedy(space), *gen.sample(space, k=2, temperature=1.0, seed=0)]:
                assert_valid(space, g)
                total += 1
    assert total > 200


@pytest.mark.slow
def test_generated_program_computes_the_right_thing(gen, workload_spaces, measurer):
    space = workload_spaces["matmul_relu_64"]
    program = assert_valid(space, gen.greedy(space))
    (result,) = measurer.measure(space.task, [program.mod])
    assert result.ok, result.error
    assert np.isfinite(result.latency)


def test_fast_forward_matches_transformers():
    import torch

    from tlm_core.generator.fast import FastGPT2, supports

    model = new_model(preset("tiny"), seed=5)
    assert supports(model)
    ids = torch.randint(4, len(token_ids()), (90,), generator=torch.Generator().manual_seed(0)).tolist()
    with torch.no_grad():
        ref = model(input_ids=torch.tensor([ids])).logits[0]
    fast = FastGPT2(model)
    for a, b in [(0, 40), (40, 41), (41, 57), (57, 58), (58, 90)]:  # chunks as the generator feeds them
        assert torch.allclose(fast.feed(ids[a:b]), ref[b - 1], atol=1e-4)


def test_fast_path_follows_weights_changed_in_place():
    import torch

    from tlm_core.generator.fast import FastGPT2

    # the prepared layers are cached on the model: a training step between generations must not be missed
    model = new_model(preset("tiny"), seed=5)
    ids = torch.randint(4, len(token_ids()), (30,), generator=torch.Generator().manual_seed(2)).tolist()
    before = FastGPT2(model).feed(ids)
    with torch.no_grad():
        model.transformer.h[0].mlp.c_fc.weight.mul_(2)
        ref = model(input_ids=torch.tensor([ids])).logits[0, -1]
    after = FastGPT2(model).feed(ids)
    assert torch.allclose(after, ref, atol=1e-4)
    assert not torch.allclose(after, before, atol=1e-3)


def test_forked_streams_are_independent():
    import torch

    from tlm_core.generator.lm import TokenStream

    model = new_model(preset("tiny"), seed=5)
    ids = torch.randint(4, len(token_ids()), (100,), generator=torch.Generator().manual_seed(1)).tolist()
    with torch.no_grad():
        ref_a = model(input_ids=torch.tensor([ids[:90]])).logits[0, -1]
        ref_b = model(input_ids=torch.tensor([ids[:80] + ids[90:100]])).logits[0, -1]
    base = TokenStream(model, wide_threads=2)
    base.push(ids[:80])
    a, b = base.fork(), base.fork()
    a.push(ids[80:90])
    b.push(ids[90:100])
    assert torch.allclose(b.logits(), ref_b, atol=1e-4)
    assert torch.allclose(a.logits(), ref_a, atol=1e-4)
    assert a.length == b.length == 90


def test_generation_without_the_fast_path_is_the_same(workload_spaces, monkeypatch):
    from tlm_core.generator import lm

    space = workload_spaces["conv2d_relu_8"]
    gen = Generator(new_model(preset("tiny"), seed=0))
    fast = gen.greedy(space)
    monkeypatch.setattr(lm, "supports", lambda model: False)
    slow = gen.greedy(space)
    assert slow.sentence.text == fast.sentence.text
    assert slow.logprob == pytest.approx(fast.logprob, abs=1e-3)
    samples = gen.sample(space, 3, seed=2)  # forked prompt streams, through transformers' cache
    monkeypatch.undo()
    assert [g.key for g in gen.sample(space, 3, seed=2)] == [g.key for g in samples]


def test_padded_feeds_give_the_logits_of_exact_ones():
    import torch

    from tlm_core.generator.fast import FastGPT2, padded_rows

    assert [padded_rows(n) for n in (0, 1, 2, 9, 16, 17, 33, 107, 231)] == [0, 1, 2, 9, 16, 18, 36, 112, 240]
    model = new_model(preset("tiny"), seed=5)
    ids = torch.randint(4, len(token_ids()), (1024,), generator=torch.Generator().manual_seed(3)).tolist()
    with torch.no_grad():
        ref = model(input_ids=torch.tensor([ids])).logits[0]
    padded, exact = FastGPT2(model), FastGPT2(model)
    exact.pad_rows = False
    # a prompt, steps of 1 and 2 tokens, contexts of odd lengths (padded rows land in slots later feeds take),
    # and feeds near the last position, whose padding is cut at the last (846 tokens on 863 rows, 17 on 17)
    cuts = [0, 107, 108, 110, 127, 128, 161, 1007, 1024]
    for a, b in itertools.pairwise(cuts):
        assert b - a <= padded.rows(b - a) <= len(ids) - a
        p, e = padded.feed(ids[a:b]), exact.feed(ids[a:b])
        assert torch.allclose(p, e, atol=1e-5) and torch.allclose(p, ref[b - 1], atol=1e-4)
        assert padded.length == exact.length == b


def test_padding_and_warm_up_leave_greedy_decisions_unchanged(workload_spaces, monkeypatch):
    from tlm_core.generator.fast import FastGPT2
    from tlm_core.model import default_checkpoint

    # an untrained model as it is, and the shipped one warmed up at load (kernels for every row bucket)
    gens = [Generator(new_model(preset("tiny"), seed=0)), Generator.from_checkpoint(default_checkpoint())]
    names = ["matmul_128", "conv2d_relu_8", "softmax_64"]
    padded = [gen.greedy(workload_spaces[n]) for gen in gens for n in names]
    monkeypatch.setattr(FastGPT2, "pad_rows", False)
    exact = [gen.greedy(workload_spaces[n]) for gen in gens for n in names]
    for p, e in zip(padded, exact, strict=True):
        assert (p.sketch_index, p.decisions, p.sentence.text) == (e.sketch_index, e.decisions, e.sentence.text)
        assert p.logprob == pytest.approx(e.logprob, abs=1e-4)


def test_a_cpu_never_learnt_is_hidden_in_the_prompt_when_the_model_learnt_hidden_names(workload_spaces):
    space = workload_spaces["matmul_relu_64"]
    g = Generator(new_model(preset("tiny"), seed=0))
    assert "cpu?" not in g.prompt(space).tokens  # a model that says nothing of its hardware
    g.hardware = ["<hw> kind llvm cpu cpu? cores 2^1 ; vec 2^9 ;", "<hw> kind llvm cpu generic-never ;"]
    assert "cpu?" in g.prompt(space).tokens
    assert "cpu?" in g.greedy(space).sentence.tokens  # what the model read is what the sentence shows
