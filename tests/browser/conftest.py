"""The browser tests' fixtures: Voila serving the three panels, Debian's Chromium, a page each.

* ``browser_sandbox``: a sandbox server of the browser tests' own (a copy of the session world):
  the Voila kernels talk to it with its Enterprise key (QUANTSCOPE_URL, QUANTSCOPE_API_KEY).
* ``voila``: one Voila server for the session, on a free loopback port, serving the panels page
  of ``tools/notebooks.py`` (``panels_notebook``) for ``QUANT``; each page load is a new kernel
  with an HTTP cache of its own (so what a panel shows is what the service holds now).
* ``chromium``: Chromium launched by Playwright from ``/usr/bin/chromium`` (never a download).
  When it is missing, the tests install it as root (apt-get) or are skipped with one line
  naming the command.
* ``panels``: a new browser context on the page, its three panels rendered (a lazy panel's
  ``qs-open`` button clicked, the recommendations' research computed: ``COMPUTED``), the
  quota reset; at teardown the quant's playbook is put back as
  it was and no console error of the project may have been logged (``console_problems``).
  Screenshots go to ``build/browser/<test>-<NN>-<step>.png``.

Measured here (2 shared cores): see ``timings`` (printed at the end with ``-s``).
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers import reset_quota
from _helpers.browser import PANELS, THRESHOLD, PanelsPage, Playbook, console_problems
from _helpers.chromium import ARGS, CHROMIUM, INSTALL, ensure_chromium, is_root
from _helpers.notebooks_tool import load_notebooks_tool

from quantscope._http.client import Client
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets._offer import load_research

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "browser"
QUANT = 2  # the browser tests' quant (its playbook has 3 classes × 18 BUYING criteria)
VOILA_START_TIMEOUT_S = 120
PAGE_TIMEOUT_MS = 120_000  # a page's load: a kernel starts and builds three panels
ACTION_TIMEOUT_MS = 20_000  # finding a widget of a loaded page
timings: dict[str, float] = {}

# Each kernel gets an HTTP cache of its own, a copy of one warmed with the quant's trades and
# eval details (which never change) but never the playbook: the playbook is cached 10 minutes,
# and the tests write it directly over HTTP (as another client would) between page loads.
KERNEL_PRELUDE = """\
import os, shutil, tempfile
_cache = tempfile.mkdtemp(prefix="kernel-cache-", dir=os.environ["QUANTSCOPE_BROWSER_TMP"])
shutil.copytree(os.environ["QUANTSCOPE_BROWSER_WARM_CACHE"], _cache, dirs_exist_ok=True)
os.environ["QUANTSCOPE_CACHE_DIR"] = _cache"""


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for module in ("playwright", "voila"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (make install)"
    if not CHROMIUM.exists() and not is_root():
        return f"Chromium is missing: install it with `sudo {INSTALL}`"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = [item for item in items if Path(str(item.fspath)).is_relative_to(Path(__file__).parent)]
    # Last in the run: Playwright's sync API keeps an event loop running in this thread while
    # the session's Chromium is open, and any later test that calls asyncio.run() (FastAPI's
    # TestClient, the report's own Chromium) would fail with "a running event loop".
    mine = set(map(id, here))
    items[:] = [item for item in items if id(item) not in mine] + here
    why = _missing() if here else None
    if why is None:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    line = f"BROWSER TESTS SKIPPED: {why}"
    if reporter is not None:
        reporter.write_line(line, red=True, bold=True)
    skip = pytest.mark.skip(reason=why)
    for item in here:
        if "browser" in item.keywords:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def browser_sandbox(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxServer]:
    info = copy_world(sandbox_world, tmp_path_factory.mktemp("browser-sandbox"))
    with SandboxServer(info) as server:
        yield server


@pytest.fixture(scope="session")
def voila(
    browser_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The panels page's URL, served by Voila (one process for the session)."""
    tool = load_notebooks_tool()
    work = tmp_path_factory.mktemp("voila")
    notebook = work / "panels.ipynb"
    tool.write_if_changed(tool.panels_notebook(QUANT, prelude=KERNEL_PRELUDE), notebook)
    warm = work / "warm-cache"
    with Client(
        browser_sandbox.url, browser_sandbox.keys["enterprise"], cache_dir=warm, progress=False
    ) as client:
        load_research(QUANT, client)  # what the panels load first: trades, eval details
    env = tool.kernel_env(work, fresh=True)  # the tests' world, cache, progress off
    env.update(
        QUANTSCOPE_URL=browser_sandbox.url,
        QUANTSCOPE_API_KEY=browser_sandbox.keys["enterprise"],
        QUANTSCOPE_BROWSER_TMP=str(work),
        QUANTSCOPE_BROWSER_WARM_CACHE=str(warm),
        MPLBACKEND="Agg",
        JUPYTER_PLATFORM_DIRS="1",
    )
    port = _free_port()
    argv = tool.voila_argv(notebook, port=port, extra=["--no-browser"])
    log = work / "voila.log"
    started = time.perf_counter()
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, env=env, cwd=work, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_for_port(port, process, log)
        timings["voila_start_s"] = time.perf_counter() - started
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + VOILA_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text()[-3000:]
            raise RuntimeError(f"voila exited with {process.returncode}:\n{tail}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"voila did not listen within {VOILA_START_TIMEOUT_S} s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        timings["chromium_launch_s"] = time.perf_counter() - started
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def playbook(browser_sandbox: SandboxServer) -> Iterator[Playbook]:
    """The quant's playbook over HTTP; put back as it was after the test."""
    book = Playbook(browser_sandbox, QUANT)
    before = book.entries()
    yield book
    book.restore(before)
    assert book.entries() == before


@pytest.fixture
def panels(
    chromium: Any,
    voila: str,
    browser_sandbox: SandboxServer,
    playbook: Playbook,
    request: pytest.FixtureRequest,
) -> Iterator[PanelsPage]:
    """A new page with the three panels rendered and ready (lazy ones opened)."""
    reset_quota(browser_sandbox)
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    context.route(OUTSIDE, _offline)
    page = context.new_page()
    name = request.node.name.removeprefix("test_").replace("[", "-").rstrip("]")
    shown = PanelsPage(page, SHOTS, name)
    started = time.perf_counter()
    try:
        page.goto(voila, timeout=PAGE_TIMEOUT_MS)
        for which in PANELS:
            page.locator(which).first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        _open_lazy_panels(shown)
        shown.part(THRESHOLD, ".qs-criterion-picker select").wait_for(state="visible")
        page.wait_for_function(
            "() => { const s = document.querySelector("
            "'.qs-threshold-panel .qs-criterion-picker select'); return s && !s.disabled "
            "&& s.options.length > 0 }",
            timeout=PAGE_TIMEOUT_MS,
        )
        # the recommendations panel paints first and researches after: wait for its numbers
        page.wait_for_function(COMPUTED, timeout=PAGE_TIMEOUT_MS)
        shown.settle(start=0.5)
        timings.setdefault("first_page_ready_s", time.perf_counter() - started)
        timings["last_page_ready_s"] = time.perf_counter() - started
        shown.screenshot("loaded")
        yield shown
        shown.screenshot("end")
        problems = console_problems(shown.console)
        assert not problems, "console errors in the page:\n" + "\n".join(problems)
    finally:
        context.close()


# Every panel's research is computed: the "computing" line of RecommendationsPanel is drawn
# (a panel's children render after the panel, and before they do, no line is "every line
# hidden" too: a page under load then read a table without its effects) and hidden.
COMPUTED = (
    "() => { const c = document.querySelectorAll('.qs-computing'); "
    "return c.length > 0 && Array.from(c).every(e => !e.offsetParent) }"
)


# Voila's page template links Font Awesome from a CDN: the tests never leave the machine, so
# anything not on loopback is answered here (an empty stylesheet: the icons are not drawn).
OUTSIDE = re.compile(r"^(?!https?://(127\.0\.0\.1|localhost)[:/])[a-z]+://")


def _offline(route: Any) -> None:
    if route.request.resource_type == "stylesheet":
        route.fulfill(status=200, content_type="text/css", body="")
    else:
        route.abort()


def _open_lazy_panels(shown: PanelsPage) -> None:
    """Click every visible ``qs-open`` button (a panel that states its cost before loading)."""
    buttons = shown.page.locator(".qs-open")
    for n in range(buttons.count()):
        button = buttons.nth(n)
        if button.is_visible() and button.is_enabled():
            shown.settle(button.click, start=1.0)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if timings:
        shown = ", ".join(f"{k} {v:.1f}" for k, v in timings.items())
        terminalreporter.write_line(f"browser tests: {shown}")
