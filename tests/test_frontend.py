"""tlm_core.frontend: loading .pt2, ONNX, TVMScript and sample names safely, and refusing the rest clearly."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
import tvm
from onnx import TensorProto, helper
from tvm import relax

from tlm_core.frontend import (
    DynamicShapeError,
    InputSpec,
    LoadedModel,
    ModelLoadError,
    load_model,
    load_model_bytes,
    parse_input_shapes,
)


class TinyConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.register_buffer("scale", torch.tensor(0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) * self.scale + torch.tensor([1.0])  # a buffer and a lifted constant


@pytest.fixture(scope="session")
def files(tmp_path_factory) -> dict[str, Path]:
    """The tiny conv net saved as .pt2 and as .onnx (the ONNX export takes ~2 s: done once)."""
    folder = tmp_path_factory.mktemp("frontend")
    torch.manual_seed(0)
    net = TinyConvNet().eval()
    example = (torch.randn(1, 3, 8, 8),)
    torch.export.save(torch.export.export(net, example), folder / "net.pt2")
    torch.onnx.export(net, example, folder / "net.onnx", dynamo=True, input_names=["x"], external_data=False)
    return {"pt2": folder / "net.pt2", "onnx": folder / "net.onnx", "net": net}


def run_relax(model: LoadedModel, arrays: list[np.ndarray]) -> np.ndarray:
    ex = tvm.compile(model.mod, tvm.target.Target({"kind": "llvm"}))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    out = vm["main"](*[tvm.runtime.tensor(a) for a in arrays])
    return out.numpy()


def check_matches(model: LoadedModel, net: torch.nn.Module) -> None:
    arrays = model.random_inputs(seed=1)
    expected = net(torch.from_numpy(arrays[0])).detach().numpy()
    np.testing.assert_allclose(model.reference(arrays)[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run_relax(model, arrays), expected, rtol=1e-5, atol=1e-5)


# ---- files that load ----


def test_pt2_round_trip(files):
    model = load_model(files["pt2"])
    assert model.source == "pt2" and model.name == "net.pt2"
    assert model.inputs == [InputSpec("x", (1, 3, 8, 8), "float32")]
    check_matches(model, files["net"])


def test_pt2_upload_bytes(files):
    model = load_model_bytes(files["pt2"].read_bytes(), "../../somewhere/uploaded.pt2")
    assert model.name == "uploaded.pt2"  # only the base name is kept; the file itself went to a temp dir
    check_matches(model, files["net"])


def test_onnx_round_trip(files):
    model = load_model(files["onnx"])
    assert model.source == "onnx"
    assert [(s.shape, s.dtype) for s in model.inputs] == [((1, 3, 8, 8), "float32")]
    check_matches(model, files["net"])
    upload = load_model_bytes(files["onnx"].read_bytes(), "net.onnx")
    assert upload.inputs == model.inputs


def _onnx_relu(path: Path, dims: list) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_onnx_batch_dimension_is_set_to_one_with_a_note(tmp_path):
    model = load_model(_onnx_relu(tmp_path / "relu.onnx", ["batch", 4]))
    assert model.inputs[0].shape == (1, 4)
    assert any("'batch'" in n and "set to 1" in n for n in model.notes)
    x = np.array([[-1, 2, -3, 4]], dtype=np.float32)
    np.testing.assert_array_equal(run_relax(model, [x]), np.maximum(x, 0))


def _onnx_add_weight(path: Path, location: str) -> Path:
    """y = x + w with w stored as external data at `location` (relative to the model)."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [4], np.arange(4, dtype=np.float32).tobytes(), raw=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path, save_as_external_data=True, location="w.bin", size_threshold=0)
    if location != "w.bin":  # point the tensor somewhere else
        model = onnx.load(path, load_external_data=False)
        for entry in model.graph.initializer[0].external_data:
            if entry.key == "location":
                entry.value = location
        onnx.save(model, path)
    return path


def test_onnx_external_data_next_to_the_model_loads(tmp_path):
    model = load_model(_onnx_add_weight(tmp_path / "add.onnx", "w.bin"))
    x = np.ones((1, 4), dtype=np.float32)
    np.testing.assert_array_equal(run_relax(model, [x]), x + np.arange(4))


def test_onnx_external_data_outside_the_folder_is_refused(tmp_path):
    (tmp_path / "sub").mkdir()
    path = _onnx_add_weight(tmp_path / "sub" / "add.onnx", "../w.bin")
    with pytest.raises(ModelLoadError, match=r"external data '\.\./w\.bin' outside the model's folder"):
        load_model(path)


def test_onnx_upload_with_external_data_is_refused(tmp_path):
    path = _onnx_add_weight(tmp_path / "add.onnx", "w.bin")
    with pytest.raises(ModelLoadError, match="external_data=False"):
        load_model_bytes(path.read_bytes(), "add.onnx")


def test_tvmscript_loads_only_with_allow_code(tmp_path):
    path = tmp_path / "mm.tvmscript"  # printed TVMScript: its imports are comments
    path.write_text(
        "# from tvm.script import tirx as T\n"
        "@T.prim_func(s_tir=True)\n"
        'def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),'
        ' C: T.Buffer((16, 16), "float32")):\n'
        "    for i, j, k in T.grid(16, 16, 16):\n"
        '        with T.sblock("C"):\n'
        '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n'
        "            with T.init():\n"
        "                C[vi, vj] = T.float32(0)\n"
        "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    )
    with pytest.raises(ModelLoadError, match="allow_code=True"):
        load_model(path)
    model = load_model(path, allow_code=True)
    assert model.source == "tvmscript" and model.reference is None
    assert [g.name_hint for g in model.mod.get_global_vars()] == ["main"]
    assert [s.name for s in model.inputs] == ["A", "B"] and "outputs: C" in model.notes
    a, b = model.random_inputs()
    c = tvm.runtime.tensor(np.zeros((16, 16), dtype="float32"))
    tvm.compile(model.mod, tvm.target.Target({"kind": "llvm"}))["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5)


def test_tvmscript_code_never_runs_without_allow_code(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\n"
    path = tmp_path / "op.py"
    path.write_text(code)
    for call in (lambda: load_model(path), lambda: load_model_bytes(code.encode(), "op.py")):
        with pytest.raises(ModelLoadError, match="Python code"):
            call()
    assert not marker.exists()


def test_tvmscript_with_several_primfuncs_names_them(tmp_path):
    with pytest.raises(ModelLoadError, match=r"holds \d+ PrimFuncs \(matmul_128, "):
        load_model(Path(__file__).parent / "workloads.py", allow_code=True)


def test_sample_names_dispatch_to_the_registered_samples(monkeypatch):
    """The loader finds samples through the registry (entry points "tlm_core.samples" or register_samples)."""
    from tlm_core.frontend import samples

    built = []

    class Spec:
        description, shape, tiny, notes = "a fake sample", "1x4", True, ("seeded",)

        def __init__(self, name: str) -> None:
            self.name = name

        def build(self, **overrides):
            built.append(self.name)
            return torch.nn.ReLU(), (torch.ones(1, 4),)

    monkeypatch.setattr(samples, "_registry", samples.Registry(group=None))  # no entry points: only these two
    with pytest.raises(ModelLoadError, match="sample models are not available"):
        load_model("tiny-a")
    samples.register_samples([Spec("tiny-b"), Spec("tiny-a")], default="tiny-b")
    assert list(samples.catalog().samples) == ["tiny-b", "tiny-a"] and samples.catalog().default == "tiny-b"
    model = load_model("tiny-a")
    assert (model.name, model.source, built) == ("tiny-a", "sample", ["tiny-a"])
    assert model.notes[:2] == ["a fake sample", "seeded"] and model.reference is not None
    with pytest.raises(ModelLoadError, match=r"unknown sample model 'resnet9000'; known samples: tiny-a, tiny-b"):
        load_model("resnet9000")


def test_the_installed_entry_point_registers_sample_models():
    import sample_models
    from tlm_core.frontend.samples import Registry

    found = Registry().catalog()
    assert not found.errors and found.default == sample_models.DEFAULT
    assert found.samples == sample_models.SAMPLES


def test_gpt2_without_attention_mask_compiles_and_matches():
    """transformers 5.x: cumsum on a bool mask; without the converter TVM's LLVM codegen fails."""
    from transformers import GPT2Config, GPT2Model

    from tlm_core.frontend.torch_program import import_exported

    torch.manual_seed(0)
    config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=16, bos_token_id=0, eos_token_id=0)
    config.use_cache = False
    gpt2 = GPT2Model(config).eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gpt2 = gpt2

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.gpt2(input_ids=ids).last_hidden_state  # no attention_mask

    ep = torch.export.export(Hidden().eval(), (torch.randint(0, 64, (1, 8)),))
    cumsum_inputs = [n.args[0].meta["val"].dtype for n in ep.graph.nodes if "cumsum" in str(n.target)]
    assert torch.bool in cumsum_inputs  # the case the converter exists for
    model = import_exported(ep, "gpt2", "test", int_high={"ids": 64})
    ids = model.random_inputs()
    np.testing.assert_allclose(run_relax(model, ids), model.reference(ids)[0], rtol=1e-4, atol=1e-5)


class MaskedBert(torch.nn.Module):
    """A tiny BERT called as users call it: ids and an attention mask (transformers builds it with `&`)."""

    def __init__(self) -> None:
        from transformers import BertConfig, BertModel

        super().__init__()
        config = BertConfig(
            vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=32,
        )  # fmt: skip
        self.bert = BertModel(config)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


@pytest.fixture(scope="session")
def bert_files(tmp_path_factory) -> dict[str, Path]:
    """The masked BERT as users export it: .pt2 (static, dynamic sequence), ONNX from both exporters."""
    folder = tmp_path_factory.mktemp("bert")
    torch.manual_seed(0)
    bert = MaskedBert().eval()
    ids, mask = torch.randint(0, 64, (1, 8)), torch.tensor([[1, 1, 1, 1, 1, 1, 0, 0]])
    names = ["input_ids", "attention_mask"]
    torch.export.save(torch.export.export(bert, (ids, mask)), folder / "bert.pt2")
    seq = {1: torch.export.Dim("sequence", min=2, max=32)}
    dyn = torch.export.export(bert, (ids, mask), dynamic_shapes={"input_ids": seq, "attention_mask": seq})
    torch.export.save(dyn, folder / "bert-dynamic.pt2")
    torch.onnx.export(bert, (ids, mask), folder / "bert.onnx", dynamo=True, input_names=names, external_data=False)
    # The TorchScript exporter: a scalar ConstantOfShape for the mask, shape arithmetic on the sequence axis.
    torch.onnx.export(bert, (ids, mask), folder / "bert-legacy.onnx", dynamo=False, input_names=names, opset_version=17)
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    torch.onnx.export(
        bert, (ids, mask), folder / "bert-dynamic.onnx", dynamo=False, input_names=names, opset_version=17,
        dynamic_axes=axes,
    )  # fmt: skip
    return {p.name: p for p in folder.iterdir()} | {"model": bert}


def _check_bert(model: LoadedModel, bert: torch.nn.Module, seq: int) -> None:
    assert [(s.name, s.shape) for s in model.inputs] == [("input_ids", (1, seq)), ("attention_mask", (1, seq))]
    assert model.inputs[0].high == 64  # token ids cover the vocabulary (the embedding's rows)
    ids = np.random.default_rng(0).integers(0, 64, (1, seq))
    mask = np.ones((1, seq), dtype=np.int64)
    mask[0, seq // 2 :] = 0
    expected = bert(torch.from_numpy(ids), torch.from_numpy(mask)).detach().numpy()
    np.testing.assert_allclose(model.reference([ids, mask])[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run_relax(model, [ids, mask]), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("stem", ["bert", "bert-legacy"])
def test_masked_bert_loads_and_matches(bert_files, stem):
    """aten.__and__.Tensor is a registered overload (.pt2); the legacy ONNX export needs its constants folded."""
    for path in [p for p in bert_files.values() if isinstance(p, Path) and p.stem == stem]:
        model = load_model(path)
        assert model.reference_name == ("onnxruntime" if path.suffix == ".onnx" else "PyTorch eager")
        _check_bert(model, bert_files["model"], 8)


@pytest.mark.parametrize("stem", ["bert-dynamic"])
def test_dynamic_sequence_takes_the_shape_given(bert_files, stem):
    for path in [p for p in bert_files.values() if isinstance(p, Path) and p.stem == stem]:
        with pytest.raises(DynamicShapeError, match=r"input 'input_ids' dimension 1 is dynamic .*--input-shape") as e:
            load_model(path)
        assert e.value.suggested["input_ids"] == (1, 128)  # the default offered: batch 1, 128 tokens
        # The mask shares the sequence symbol: one input's shape is enough.
        _check_bert(load_model(path, input_shapes={"input_ids": (1, 12)}), bert_files["model"], 12)


def test_input_shapes_that_do_not_fit_are_named(bert_files):
    path = bert_files["bert-dynamic.onnx"]
    with pytest.raises(ModelLoadError, match=r"names 'ids', which is not an input; inputs: \['input_ids'"):
        load_model(path, input_shapes={"ids": (1, 8)})
    with pytest.raises(ModelLoadError, match=r"input 'input_ids' has 2 dimensions .*; given \(1, 8, 1\)"):
        load_model(path, input_shapes={"input_ids": (1, 8, 1)})
    with pytest.raises(ModelLoadError, match=r"input 'input_ids' dimension 0 is fixed at 1; given 2"):
        load_model(bert_files["bert.pt2"], input_shapes={"input_ids": (2, 8)})


def test_parse_input_shapes():
    assert parse_input_shapes(["input_ids=1x128", "pixel_values=1X3x224x224"]) == {
        "input_ids": (1, 128),
        "pixel_values": (1, 3, 224, 224),
    }
    for bad in ["input_ids", "input_ids=", "input_ids=1x0", "=1x2", "x=1xa"]:
        with pytest.raises(ValueError, match="NAME=DIMxDIM"):
            parse_input_shapes([bad])


# ---- files that are refused, with a message that names the problem ----


def test_pytorch_unsupported_operator_is_named(tmp_path):
    class Bessel(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.special.bessel_j0(x)

    torch.export.save(torch.export.export(Bessel(), (torch.randn(4),)), tmp_path / "bessel.pt2")
    with pytest.raises(ModelLoadError, match=r"bessel\.pt2: .*Unsupported function types.*special_bessel_j0"):
        load_model(tmp_path / "bessel.pt2")


def test_pt2_dynamic_shape_asks_for_the_shape_naming_the_input(tmp_path):
    class Double(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    dims = {"x": {1: torch.export.Dim("width")}}
    ep = torch.export.export(Double(), (torch.randn(4, 3),), dynamic_shapes=dims)
    torch.export.save(ep, tmp_path / "dyn.pt2")
    with pytest.raises(DynamicShapeError, match=r"input 'x' dimension 1 is dynamic .*--input-shape x=4x128"):
        load_model(tmp_path / "dyn.pt2")
    model = load_model(tmp_path / "dyn.pt2", input_shapes={"x": (4, 5)})
    assert model.inputs[0].shape == (4, 5)
    x = np.ones((4, 5), dtype=np.float32)
    np.testing.assert_array_equal(run_relax(model, [x]), 2 * x)


def test_onnx_unsupported_operator_is_named(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Celu", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "celu.onnx")
    with pytest.raises(ModelLoadError, match="ONNX frontend does not support these operators: Celu"):
        load_model(tmp_path / "celu.onnx")


def test_onnx_dynamic_dimension_asks_for_the_shape_naming_input_and_dim(tmp_path):
    path = _onnx_relu(tmp_path / "seq.onnx", [1, "seq", 4])
    with pytest.raises(DynamicShapeError, match=r"input 'x' dimension 1 is dynamic \('seq'\): give the shape"):
        load_model(path)
    assert load_model(path, input_shapes={"x": (1, 6, 4)}).inputs[0].shape == (1, 6, 4)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.pt2", b"", "the file is empty"),
        ("empty.onnx", b"", "the file is empty"),
        ("truncated.pt2", "TRUNCATED_PT2", r"not a valid \.pt2 archive \(truncated or corrupt zip\)"),
        ("truncated.onnx", "TRUNCATED_ONNX", "not a valid ONNX file"),
        ("garbage.onnx", bytes(range(256)) * 8, "not a valid ONNX file"),
        ("notes.txt", b"hello", r"unsupported file type \(\.txt\).*\.pt2.*\.onnx"),
        ("model.pth", b"x", r"pickled checkpoints \(\.pth\) are refused.*torch\.export\.save"),
        ("model.pkl", b"x", r"pickled checkpoints \(\.pkl\) are refused.*torch\.export\.save"),
        ("zip.onnx", "PT2", "not a valid ONNX file"),  # a zip renamed to .onnx
    ],
)
def test_bad_files_are_refused(tmp_path, files, name, content, message):
    if content == "TRUNCATED_PT2":
        content = files["pt2"].read_bytes()[:-200]
    elif content == "TRUNCATED_ONNX":
        content = files["onnx"].read_bytes()[:300]
    elif content == "PT2":
        content = files["pt2"].read_bytes()
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ModelLoadError, match=message):
        load_model(tmp_path / name)
    with pytest.raises(ModelLoadError, match=message):
        load_model_bytes(content, name)


def test_missing_file_and_size_limit(tmp_path, files):
    with pytest.raises(ModelLoadError, match="no such file"):
        load_model(tmp_path / "missing.pt2")
    with pytest.raises(ModelLoadError, match=r"over the limit of 1000 bytes"):
        load_model(files["pt2"], max_bytes=1000)
    with pytest.raises(ModelLoadError, match=r"over the limit of 1000 bytes"):
        load_model_bytes(files["onnx"].read_bytes(), "net.onnx", max_bytes=1000)


# ---- crafted .pt2 archives: refused before anything in them runs ----


class _Payload:
    """Unpickling this creates the marker file: the attack the loader must never let run."""

    marker = ""

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _payload(marker: Path) -> bytes:
    _Payload.marker = str(marker)
    return pickle.dumps(_Payload(), protocol=2)


def _rewrite(src: Path, dst: Path, change) -> Path:
    """Copy a .pt2 archive, letting `change` edit its members (names below the root folder)."""
    with zipfile.ZipFile(src) as zin:
        members = {i.filename: zin.read(i.filename) for i in zin.infolist()}
    root = next(iter(members)).split("/")[0]
    rel = {k[len(root) + 1 :]: v for k, v in members.items()}
    change(rel)
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for name, data in rel.items():
            zout.writestr(name if name.startswith("..") else f"{root}/{name}", data)
    return dst


def _edit_json(rel: dict, member: str, edit) -> None:
    data = json.loads(rel[member])
    edit(data)
    rel[member] = json.dumps(data).encode()


def _sample_inputs(rel, payload):
    rel["data/sample_inputs/model.pt"] = payload


def _pickled_weight(rel, payload):
    def edit(cfg):
        meta = next(iter(cfg["config"].values()))
        meta["use_pickle"] = True
        rel["data/weights/" + meta["path_name"]] = payload

    _edit_json(rel, "data/weights/model_weights_config.json", edit)


def _opaque_constant(rel, payload):
    rel["data/constants/opaque_obj_0"] = payload
    meta = {"path_name": "opaque_obj_0", "is_param": False, "use_pickle": True, "tensor_meta": None}
    _edit_json(rel, "data/constants/model_constants_config.json", lambda cfg: cfg["config"].update(evil=meta))


def _legacy_weights(rel, payload):
    rel["data/weights/model.pt"] = payload


def _aoti_library(rel, payload):
    rel["data/aotinductor/model/model.so"] = payload


def _path_traversal(rel, payload):
    rel["../../evil.pkl"] = payload


def _operator_target(rel, payload):
    model = rel["models/model.json"].decode()
    rel["models/model.json"] = model.replace("torch.ops.aten.relu.default", "torch.serialization.os.system").encode()


def _target(name: str):
    def craft(rel, payload):
        model = rel["models/model.json"].decode()
        rel["models/model.json"] = model.replace("torch.ops.aten.relu.default", name).encode()

    return craft


def _sympy_expression(rel, payload):
    # No pickle here: sympy.sympify evaluates an expression string as Python.
    def edit(program):
        values = program["graph_module"]["graph"]["tensor_values"]
        first = next(iter(values.values()))
        expr = f"__import__('builtins').open({str(_Payload.marker)!r}, 'w')"
        first["sizes"][0] = {"as_expr": {"expr_str": expr, "hint": {"as_int": 1}}}

    _edit_json(rel, "models/model.json", edit)


@pytest.mark.parametrize(
    ("expr", "ok"),
    [
        ("Pow(Symbol('s53', positive=True, integer=True), Integer(2))", True),  # a seq x seq mask
        ("Mul(Integer(2), Pow(Symbol('s1'), Integer(3)))", True),
        ("Pow(Integer(10), Integer(100000000))", False),  # sympy would compute it: a hang
        ("Pow(Symbol('s1'), Symbol('s2'))", False),
        ("Pow(Pow(Integer(99), Integer(16)), Integer(16))", False),
        ("Pow(Symbol('s1'), Integer(2)", False),
    ],
)
def test_symbolic_powers_only_with_small_literal_exponents(expr, ok):
    from tlm_core.frontend.pt2 import _check_sym_expr

    if ok:
        _check_sym_expr(expr)
    else:
        with pytest.raises(ModelLoadError, match="not plain shape arithmetic"):
            _check_sym_expr(expr)


@pytest.mark.parametrize(
    ("craft", "message"),
    [
        (
            _sample_inputs,
            r"weights-only unpickler rejected it .*Unsupported global: GLOBAL io\.open was not an allowed global",
        ),
        (_pickled_weight, r"'conv\.weight' is stored as a pickle .*refused"),
        (_opaque_constant, r"'data/constants/opaque_obj_0' is refused: pickled opaque Python objects"),
        (_legacy_weights, r"'data/weights/model\.pt' is refused: a legacy pickled state dict"),
        (_aoti_library, r"'data/aotinductor/model/model\.so' is refused: AOTInductor compiled code"),
        (_path_traversal, r"unsafe member path '\.\./\.\./evil\.pkl'"),
        (_operator_target, r"operator 'torch\.serialization\.os\.system' is refused"),
        # Shaped like an ATen operator, but an attribute walk: torch knows no schema for it.
        (_target("torch.ops.aten.__class__.__init__"), r"operator 'torch\.ops\.aten\.__class__\.__init__' is refused"),
        (_target("torch.ops.aten.relu.no_such_overload"), r"'torch\.ops\.aten\.relu\.no_such_overload' is refused"),
        (_target("torch.ops.higher_order.__init__"), r"operator 'torch\.ops\.higher_order\.__init__' is refused"),
        (_sympy_expression, r"symbolic shape expression .* is refused"),
    ],
)
def test_crafted_pt2_is_refused_and_the_payload_never_runs(tmp_path, files, craft, message):
    marker = tmp_path / "payload_ran"
    payload = _payload(marker)
    path = _rewrite(files["pt2"], tmp_path / "crafted.pt2", lambda rel: craft(rel, payload))
    with pytest.raises(ModelLoadError, match=message):
        load_model(path)
    with pytest.raises(ModelLoadError, match=message):
        load_model_bytes(path.read_bytes(), "crafted.pt2")
    assert not marker.exists()


def test_torch_export_load_itself_would_run_the_payload(tmp_path, files):
    """Why the loader exists: torch 2.13's own torch.export.load unpickles sample inputs with full pickle."""
    marker = tmp_path / "payload_ran"
    payload = _payload(marker)
    path = _rewrite(files["pt2"], tmp_path / "crafted.pt2", lambda rel: _sample_inputs(rel, payload))
    try:
        torch.export.load(path)
    except Exception:
        pass  # the payload returns a file object, not inputs: loading then fails, after the damage
    assert marker.exists()


def test_zip_bomb_is_refused(tmp_path, files):
    with zipfile.ZipFile(files["pt2"]) as zin:
        members = {i.filename: zin.read(i.filename) for i in zin.infolist()}
    root = next(iter(members)).split("/")[0]
    path = tmp_path / "bomb.pt2"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zout:
        for name, data in members.items():
            zout.writestr(name, data)
        zout.writestr(f"{root}/extra/bomb.txt", b"\0" * (4 * 1024 * 1024))
    assert path.stat().st_size < 1024 * 1024
    with pytest.raises(ModelLoadError, match="unpacks to .* over the limit"):
        load_model(path, max_bytes=1024 * 1024)
