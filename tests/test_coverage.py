"""The coverage corpus of what users bring (sample_models/user_models.py): transformers architectures at small
configs, exported as users export them, each loaded, partitioned, compiled end to end and checked.

Every case: tlm_core.frontend.load_model on the export (a dynamic export with input_shapes at batch 1),
partition, TVM's default schedules for every task (as `tlm compile --method default`), one executable run on the
export's inputs (right-padded attention masks for text) and checked against LoadedModel.reference (PyTorch for
.pt2, onnxruntime for ONNX): max relative error <= RTOL (tlm_core.measure.check.errors: relative to each element,
floored at 1e-2 of the output's scale). The reference itself must agree with the PyTorch module the export came
from. The slow tests add, for representative models, a legal heuristic and TLM program for every task and the
whole model compiled with each.

Time (2 cores): all 60 (architecture, format) pairs take ~10 min here, over the suite's budget. The fast set
covers every architecture and every format in 20 cases (< 3 min with the exports), the slow set 29 more (< 5 min
with the heuristic/TLM tests); `benchmarks/coverage.py --size small` runs all 60 (the 11 left out here
are mostly the slowest: CNN .pt2-dynamic, MobileNetV2 and EfficientNet variants). A case that fails because of
the frontend is marked xfail(strict=True) with its error's first line (KNOWN_FAILURES): once fixed it XPASSes,
which fails, so unmark it then.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.coverage import load_export, run_compiled
from sample_models import user_models as U

SIZE = "small"
RTOL = 1e-3  # max relative error of the compiled model against the reference (a few 1e-7 seen with default)
REFERENCE_RTOL = 1e-4  # the reference (onnxruntime, the loaded program) against the PyTorch module exported

# The fast set: every architecture at least once, every format at least twice.
FAST = [
    ("bert", "pt2"), ("bert", "onnx-dynamic"), ("roberta", "onnx"), ("distilbert", "pt2-dynamic"),
    ("gpt2", "pt2"), ("gpt2", "onnx-legacy"), ("llama", "pt2"), ("llama", "onnx"), ("t5-encoder", "onnx-legacy"),
    ("vit", "pt2-dynamic"), ("resnet", "onnx"), ("convnext", "pt2"), ("mobilenet-v2", "onnx-legacy"),
    ("efficientnet", "onnx-dynamic"), ("regnet", "onnx"), ("t5-encoder", "pt2"), ("gpt2", "onnx"),
    ("llama", "onnx-legacy"), ("vit", "onnx-legacy"), ("convnext", "onnx-legacy"),
]  # fmt: skip
SLOW = [
    ("bert", "onnx"), ("roberta", "pt2"), ("distilbert", "onnx-legacy"), ("gpt2", "onnx-dynamic"),
    ("gpt2", "pt2-dynamic"), ("llama", "onnx-dynamic"), ("llama", "pt2-dynamic"), ("t5-encoder", "onnx-dynamic"),
    ("vit", "onnx"), ("resnet", "pt2"), ("convnext", "onnx-dynamic"), ("mobilenet-v2", "pt2"),
    ("efficientnet", "onnx"), ("regnet", "pt2-dynamic"), ("bert", "pt2-dynamic"), ("distilbert", "onnx"),
    ("roberta", "onnx-dynamic"), ("t5-encoder", "onnx"), ("vit", "pt2"), ("resnet", "onnx-legacy"),
    ("efficientnet", "pt2"), ("bert", "onnx-legacy"), ("roberta", "onnx-legacy"), ("distilbert", "onnx-dynamic"),
    ("vit", "onnx-dynamic"), ("t5-encoder", "pt2-dynamic"), ("convnext", "onnx"), ("regnet", "onnx-legacy"),
    ("resnet", "onnx-dynamic"),
]  # fmt: skip
# (arch, format) -> the first line of the error it fails with today (the frontend): strict xfail.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _case(arch: str, fmt: str, slow: bool = False):
    marks = [pytest.mark.slow] if slow else []
    if (arch, fmt) in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[(arch, fmt)]))
    return pytest.param(arch, fmt, marks=marks, id=f"{arch}-{fmt}")


CASES = [_case(a, f) for a, f in FAST] + [_case(a, f, slow=True) for a, f in SLOW]


@pytest.fixture(scope="session")
def user_exports(tmp_path_factory):
    """(arch, format) -> (path, {input name: array}): each small export made once per session, when a test
    first asks for it (only the selected cases are exported)."""
    folder = tmp_path_factory.mktemp("user-models")
    made: dict[tuple[str, str], tuple] = {}

    def get(arch: str, fmt: str):
        if (arch, fmt) not in made:
            made[arch, fmt] = U.export(arch, SIZE, fmt, folder)
        return made[arch, fmt]

    return get


def loaded(user_exports, arch: str, fmt: str):
    """(model, partition, inputs) of one case, with the checks every case shares."""
    import torch

    from tlm_core.partition import partition
    from tlm_core.target import host_target

    path, inputs = user_exports(arch, fmt)
    model = load_export(path, fmt, inputs)
    assert model.source == ("pt2" if fmt.startswith("pt2") else "onnx")
    assert [(s.name, s.shape, s.dtype) for s in model.inputs] == [(n, a.shape, str(a.dtype)) for n, a in inputs.items()]
    # the reference runs the file as loaded: it must agree with the PyTorch module that was exported
    module, _ = U.build(arch, SIZE)
    with torch.no_grad():
        eager = module(*[torch.from_numpy(a) for a in inputs.values()]).numpy()
    (ref,) = model.reference(list(inputs.values()))
    assert ref.shape == eager.shape and np.abs(ref - eager).max() <= REFERENCE_RTOL * np.abs(eager).max()
    part = partition(model, host_target())
    assert part.tasks and all(t.weight >= 1 for t in part.tasks)
    return model, part, inputs


@pytest.mark.parametrize(("arch", "fmt"), CASES)
def test_loads_partitions_compiles_and_matches(arch, fmt, user_exports):
    from tlm_core.compile import compile_model, default_schedules
    from tlm_core.target import host_target

    model, part, inputs = loaded(user_exports, arch, fmt)
    compiled = compile_model(part, default_schedules(part), host_target())
    result = run_compiled(model, compiled, inputs)
    assert result["ok"] and result["max_rel_error"] <= RTOL, result


def test_cases_cover_every_architecture_and_format():
    for cases in (FAST, FAST + SLOW):
        assert {a for a, _ in cases} == set(U.ARCHS) and {f for _, f in cases} == set(U.FORMATS)
    assert len(set(FAST + SLOW)) == len(FAST + SLOW) and set(KNOWN_FAILURES) <= set(FAST + SLOW)


def test_exports_are_seeded_and_padded(user_exports):
    _, inputs = user_exports("bert", "pt2")
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    assert mask.shape == ids.shape == (1, U.SEQ[SIZE]) and mask[0, -1] == 0 and mask[0, 0] == 1
    assert (ids[mask == 0] == 0).all() and (ids[mask == 1] != 0).all()  # padded positions carry the pad token
    again, _ = U.build.__wrapped__("bert", SIZE)  # a fresh build, not the cached module
    first, _ = U.build("bert", SIZE)
    for (k, a), (_, b) in zip(first.state_dict().items(), again.state_dict().items(), strict=True):
        assert bool((a == b).all()), k


@pytest.fixture(scope="module")
def tlm_generator():
    from tlm_core.generator import Generator
    from tlm_core.model import default_checkpoint

    return Generator.from_checkpoint(default_checkpoint())


@pytest.mark.slow
@pytest.mark.parametrize(("arch", "fmt"), [("bert", "pt2"), ("resnet", "onnx")])
def test_every_task_gets_a_legal_heuristic_and_tlm_program(arch, fmt, user_exports, space_builder, tlm_generator):
    """Masked BERT (.pt2) and ResNet (ONNX, dynamo exporter): every task's space, a heuristic and a TLM program for
    each (both are built by apply_decisions, which raises on anything illegal), and the whole model compiled with
    each method matches the reference."""
    from tlm_core.compile import compile_model, schedules_for

    model, part, inputs = loaded(user_exports, arch, fmt)
    target = space_builder.target
    spaces = {t.id: space_builder.build(t) for t in part.tasks}
    assert all(s.sketches for s in spaces.values())
    for method in ("heuristic", "tlm"):
        schedules = schedules_for(method, part, target, lambda t: spaces[t.id], generator=tlm_generator)
        assert sorted(schedules) == sorted(t.id for t in part.tasks)
        assert all(s.method == method and s.trace is not None for s in schedules.values()), method
        compiled = compile_model(part, schedules, target)
        assert compiled.scheduled == len(part.tasks), method
        result = run_compiled(model, compiled, inputs)
        assert result["ok"] and result["max_rel_error"] <= RTOL, (method, result)
