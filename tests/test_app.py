"""The Streamlit app, driven headless with AppTest on the embedded default sample."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).parents[1] / "app" / "studio.py")


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    return at


def test_model_page_shows_the_partitioned_default_sample(app):
    import sample_models

    assert app.selectbox[0].value == sample_models.DEFAULT
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["Subgraph calls"]) > 5
    assert int(metrics["Tuning tasks"]) > 3
    frame = app.dataframe[0].value
    assert frame["weight"].sum() == int(metrics["Subgraph calls"])


def test_switching_sample(app):
    app.selectbox[0].set_value("bert-tiny").run()
    assert not app.exception, app.exception
    assert any("matmul" in name for name in app.dataframe[0].value["name"])
