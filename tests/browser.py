"""What the browser tests share: one `streamlit run` server, Chromium pages, and helpers to drive Streamlit.

Test modules named test_browser*.py run first (conftest) and take the `page` fixture: one browser page per
module, whose steps run in order as a user would. Screenshots go to out/screenshots/, or to TLM_SCREENSHOTS
(e.g. assets/screenshots to refresh the README's pictures).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).parents[1]
SHOTS = ROOT / os.environ.get("TLM_SCREENSHOTS", "out/screenshots")
SAMPLE = "bert-tiny"  # branches (attention) make a telling graph; its matmul spaces build fast
SLOW = 480_000  # ms: the first space in a fresh server pays TVM's start-up (minutes on a busy 2-core box)

# conftest's pytest_terminal_summary prints the reason once: say how to enable the browser tests
if not CHROMIUM.exists():
    reason = f"Chromium not found at {CHROMIUM}; `apt-get install -y chromium` enables them"
    pytest.skip(reason, allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is not installed; `make venv` (the [test] extra) enables them"
)
expect = sync_api.expect


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(tmp_path_factory) -> Iterator[str]:
    """`streamlit run app/studio.py` on a free port, until the session ends."""
    port = _free_port()
    log = (tmp_path_factory.mktemp("streamlit") / "server.log").open("w")
    env = {**os.environ, "TLM_CACHE_DIR": str(tmp_path_factory.mktemp("tlm-cache"))}
    cmd = [sys.executable, "-m", "streamlit", "run", "app/studio.py", "--server.port", str(port)]
    cmd += ["--server.headless", "true", "--server.address", "localhost"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start (exit code {proc.poll()}); see {log.name}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def open_page(server: str):
    """A fresh Chromium page (a new Streamlit session) on the app."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        page.set_default_timeout(60_000)
        page.goto(server)
        yield page
        browser.close()


def selectbox(page, label: str):
    return page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(label, exact=True))


def choose(page, label: str, option: str) -> None:
    """Open a Streamlit selectbox by its label and click an option."""
    selectbox(page, label).click()
    page.get_by_role("option", name=option, exact=True).click()


def wait_idle(page, timeout: int = SLOW) -> None:
    """Until the script run the last interaction started has finished."""
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)


def upload(page, label: str, path: Path) -> None:
    """Put a file into the Streamlit file uploader labelled `label`, and wait until it shows and the run it starts
    has finished (a second upload sent during that re-run can be lost)."""
    region = page.get_by_role("region", name=label, exact=True)
    region.locator("input[type=file]").set_input_files(str(path))
    expect(region.get_by_test_id("stFileChipName")).to_have_text(path.name)
    wait_idle(page)


def value(page, label: str) -> str:
    """What a Streamlit selectbox shows (its combobox input's value)."""
    return selectbox(page, label).locator("input").input_value()


def screenshot(page, name: str, height: int) -> None:
    """The top of the page at `height` px (Streamlit scrolls inside its own container, not the window)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    page.mouse.move(0, 0)
    page.evaluate("document.querySelectorAll('*').forEach(e => { if (e.scrollTop > 0) e.scrollTop = 0; })")
    page.set_viewport_size({"width": size["width"], "height": height})
    page.wait_for_timeout(1500)  # let Plotly re-lay out to the new size
    page.screenshot(path=str(SHOTS / name))
    page.set_viewport_size(size)


def figure_points(page) -> dict[int | str, tuple[int, int]]:
    """Every point of the graph figure inside its axes' current ranges, as Plotly has drawn it now: customdata ->
    (trace, point index). Calls are ints; a collapsed group's box is "expand:<id>", an expanded one's header
    "collapse:<id>" (tlm_core.viz.graph). A deep graph opens on a window of itself: points outside are left out."""
    graph = page.locator(".js-plotly-plot").first
    for _ in range(120):  # while Plotly re-renders, the figure has no _fullData yet
        rows = graph.evaluate(
            """gd => {
                if (!gd._fullLayout || !gd._fullLayout.yaxis) return [];
                const [y0, y1] = gd._fullLayout.yaxis.range, [x0, x1] = gd._fullLayout.xaxis.range;
                return (gd._fullData || []).flatMap((d, t) => (d.customdata || []).map((n, i) => [n, t, i])
                    .filter(([n, t, i]) => d.y[i] > Math.min(y0, y1) && d.y[i] < Math.max(y0, y1)
                                           && d.x[i] > Math.min(x0, x1) && d.x[i] < Math.max(x0, x1)));
            }"""
        )
        if rows:
            return {(n if isinstance(n, str) else int(n)): (t, i) for n, t, i in rows}
        page.wait_for_timeout(250)
    pytest.fail("the graph figure was never drawn (no Plotly data after 30 s)")


def graph_points(page) -> dict[int, tuple[int, int]]:
    """Graph node -> (trace, point index), the calls drawn (not in a collapsed group) and in view."""
    return {n: ti for n, ti in figure_points(page).items() if isinstance(n, int)}


def wait_for_graph(page) -> str:
    """Until the figure on screen is the current model's, its selected node the one the "Current subgraph" box
    names; returns that name ("#8 fused_..."). After choosing a sample either can lag the script run (the box
    was seen still naming the previous model's subgraph), and positions read from an old figure click the
    wrong node."""
    graph = page.locator(".js-plotly-plot").first
    deadline = time.monotonic() + 60
    while True:
        current = value(page, "Current subgraph")
        drawn = graph.evaluate(
            "gd => (gd.data || []).flatMap(d => (d.customdata || [])"
            ".map((n, i) => d.marker.size[i] === 16 ? d.hovertext[i] : '')).filter(h => h)"
        )
        if len(drawn) == 1 and drawn[0].startswith(f"<b>{current}</b>"):
            return current
        assert time.monotonic() < deadline, f"the graph's selected node is {drawn}, not {current}"
        page.wait_for_timeout(250)


def click_graph_node(page, node: int | str) -> None:
    """Hover a graph point (a call, or a group's "expand:"/"collapse:" point) at its pixel position (from Plotly's
    own axes) until Plotly reports that very point under the mouse, then click it: a click is only sent once the
    pointer is known to be on the right point."""
    graph = page.locator(".js-plotly-plot").first
    hovered = None
    for _ in range(20):
        page.wait_for_timeout(250)  # scrolling and re-rendering move the figure (or replace it): read it afresh
        trace, point = figure_points(page)[node]
        graph.evaluate("gd => gd.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(250)
        xy = graph.evaluate(
            """(gd, [t, i]) => {
                const L = gd._fullLayout, d = gd._fullData[t], box = gd.getBoundingClientRect();
                return [box.left + L.xaxis._offset + L.xaxis.l2p(d.x[i]),
                        box.top + L.yaxis._offset + L.yaxis.l2p(d.y[i])];
            }""",
            [trace, point],
        )
        page.mouse.move(xy[0] + 3, xy[1] + 3)
        page.mouse.move(xy[0], xy[1])
        page.wait_for_timeout(250)
        hovered = graph.evaluate("gd => (gd._hoverdata || []).map(p => p.customdata)")
        if hovered == [node]:
            page.mouse.click(xy[0], xy[1])
            return
    pytest.fail(f"the mouse never hovered graph point {node!r} alone (Plotly reports {hovered} under it)")
