"""The Streamlit app, driven headless with AppTest: every page on real (tiny) models."""

import pytest
from streamlit.testing.v1 import AppTest

import sample_models
from tests.apptest import app_page, metrics, start


@pytest.fixture(scope="module")
def app() -> AppTest:
    return start()


def test_model_page_summarises_the_default_sample(app):
    assert app.selectbox(key="w_sample").value == sample_models.DEFAULT
    m = metrics(app)
    assert int(m["Subgraph calls"]) > 5 and int(m["Tuning tasks"]) > 3
    assert int(m["Operators"]) >= int(m["Subgraph calls"])
    assert int(m["Parameters"].replace(",", "")) > 1000
    rows = app.dataframe(key="table").value
    assert len(rows) == int(m["Subgraph calls"])
    tasks = app.dataframe[-1].value
    assert tasks["weight"].sum() == int(m["Subgraph calls"])
    assert any("Fusion" in md.value for md in app.markdown)


def test_search_filters_the_subgraph_table(app):
    app.text_input(key="w_search").set_value("max_pool").run()
    rows = app.dataframe(key="table").value
    assert len(rows) >= 1 and all("pool" in name for name in rows["subgraph"])
    app.text_input(key="w_search").set_value("").run()


def test_picking_a_subgraph_makes_it_current(app):
    node = app.selectbox(key="w_node")
    target = next(n for n in node.options if "max_pool" in n)
    node.set_value(int(target.split()[0][1:])).run()
    assert not app.exception, app.exception
    label, picked = app.session_state["subgraph"]
    assert label == sample_models.DEFAULT and picked == int(target.split()[0][1:])
    assert app.selectbox(key="w_node").value == picked
    assert any(md.value == "Operators: max_pool2d" for md in app.markdown)


def test_switching_sample(app):
    app.selectbox(key="w_sample").set_value("bert-tiny").run()
    assert not app.exception, app.exception
    assert any("matmul" in name for name in app.dataframe(key="table").value["subgraph"])
    app.selectbox(key="w_sample").set_value(sample_models.DEFAULT).run()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("garbage.onnx", bytes(range(256)) * 4, "not a valid ONNX file"),
        ("weights.pth", b"not really a pickle", "pickled checkpoints"),
        ("notes.txt", b"hello", "unsupported file type"),
    ],
)
def test_bad_upload_shows_its_error_and_the_app_stays_up(app, name, content, message):
    app.file_uploader[0].set_value((name, content, "application/octet-stream")).run()
    assert not app.exception, app.exception
    assert any(message in e.value for e in app.error), [e.value for e in app.error]
    assert metrics(app)["Subgraph calls"]  # the sample is still shown
    app.file_uploader[0].set_value(None).run()
    assert not app.error


def test_upload_of_a_real_onnx_model_and_its_space(tiny_onnx):
    at = start()
    path, data = tiny_onnx
    at.file_uploader[0].set_value((path.name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["source"] == "upload"
    assert metrics(at)["Subgraph calls"] == "1"
    at.switch_page("views/space.py").run()
    assert not at.exception, at.exception
    assert int(metrics(at)["Decision points"]) > 0
    assert any("tiny_mlp.onnx" in md.value for md in at.markdown)


def test_upload_with_a_dynamic_dimension_asks_for_its_shape(tmp_path):
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    at = start()
    at.file_uploader[0].set_value(("seq.onnx", data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert any("dimension 1 is dynamic ('seq')" in i.value for i in at.info), [i.value for i in at.info]
    field = at.text_input(key="w_shape_x")
    assert field.value == "1x128x4"  # the suggested shape
    field.set_value("1x6x4")
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert at.session_state["source"] == "upload"
    assert any("x [1, 6, 4] float32" in c.value for c in at.caption), [c.value for c in at.caption]


def test_checkpoint_folder_opens_from_its_path(tmp_path):
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(tmp_path / "my-bert")
    at = start()
    at.text_input(key="w_folder").set_value(str(tmp_path / "my-bert")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["source"] == "upload"
    assert any("input_ids [1, 128] int64" in c.value for c in at.caption)


@pytest.fixture(scope="module")
def space_page() -> AppTest:
    return app_page("views/space.py")


def test_space_page_shows_the_current_subgraphs_space(space_page):
    m = metrics(space_page)
    assert int(m["Sketches"]) >= 1 and int(m["Decision points"]) > 3
    assert float(m["Space size"].removeprefix("10^")) > 1
    codes = [c.value for c in space_page.code]
    assert any("T.prim_func" in c and "T.parallel" not in c for c in codes)  # unscheduled
    assert any("T.parallel" in c for c in codes)  # scheduled
    assert any("sample_perfect_tile" in c for c in codes)  # trace
    points = space_page.dataframe[0].value
    assert int(m["Decision points"]) >= len(points) > 3
    assert (points["legal choices"] >= 1).all() and (points["sampled"] == points["chosen"]).all()
    assert len(space_page.get("plotly_chart")) == 2  # tiling and loop nest
    titles = [e.label for e in space_page.expander]
    for concept in ("tiling", "parallel", "vectorize", "unroll", "compute location"):
        assert any(concept in t for t in titles), titles


def test_changing_a_decision_changes_the_program(space_page):
    before = next(c.value for c in space_page.code if "T.parallel" in c.value)
    tile = next(s for s in space_page.selectbox if "tile of loop" in s.label and len(s.options) > 2)
    new = next(o for o in tile.options if o != tile.value)
    tile.set_value(new).run()
    assert not space_page.exception, space_page.exception
    points = space_page.dataframe[0].value
    index = int(tile.label.split()[0][1:])
    assert points["chosen"][index] == new != points["sampled"][index]
    after = next(c.value for c in space_page.code if "T.parallel" in c.value)
    assert after != before


def test_compute_location_choices_follow_earlier_decisions(space_page):
    loc = [s for s in space_page.selectbox if "compute location" in s.label]
    if not loc:
        pytest.skip("this sketch has no compute-location decision")
    assert loc[0].value in loc[0].options
    space_page.selectbox(key=loc[0].key).set_value(loc[0].options[0]).run()
    assert not space_page.exception, space_page.exception


def test_measure_on_the_spot(space_page):
    measure = next(b for b in space_page.button if b.label == "Measure")
    measure.click().run()
    assert not space_page.exception, space_page.exception
    assert not space_page.error, [e.value for e in space_page.error]
    m = metrics(space_page)
    assert m["Numeric check"] == "passed"
    assert float(m["Latency (median)"].split()[0].replace(",", "")) > 0
    assert float(m["GFLOP/s"].replace(",", "")) > 0


def test_space_page_of_a_subgraph_without_decisions():
    at = start()
    option = next(o for o in at.selectbox(key="w_node").options if o.split()[1] == "reshape")
    at.session_state["subgraph"] = (sample_models.DEFAULT, int(option.split()[0][1:]))
    at.switch_page("views/space.py").run()
    assert not at.exception, at.exception
    assert any("no decisions" in i.value for i in at.info)
    assert any("No loop of this sketch is tiled" in c.value for c in at.caption)
    assert any("T.parallel" in c.value or "T.vectorized" in c.value for c in at.code)
