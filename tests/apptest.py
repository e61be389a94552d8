"""What the headless page tests (tests/test_app_*.py) share: the app opened on one of its pages with AppTest.

Beside tests/browser.py, which drives the same app in a real browser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).parents[1] / "app" / "studio.py")
TIMEOUT = 600  # s per script run: generous, as the first loads and partitions a model on a busy 2-core box


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def table(at: AppTest, column: str):
    """The first table on the page with this column (st.dataframe without selection has no key here)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def start() -> AppTest:
    """The app run once on its start page (the Model page)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def app_page(
    page: str, state: Mapping[str, Any] | None = None, before: Callable[[AppTest], None] | None = None
) -> AppTest:
    """The app run once on its start page, then switched to `page` (e.g. "views/run.py"), as a user arrives.

    state: session state set before the first run (e.g. the sample to load); before: what to do on the start
    page once it has run (e.g. pick a subgraph), before switching."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    if before:
        before(at)
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at
