"""The first Voila page within 10 s on this machine (issue 24, item 7), the ``make panels`` way.

``tools/notebooks.py panels`` (what ``make panels`` runs: a pre-heated kernel, the refill
delayed by ``VOILA_FILL_DELAY_S``) serves quant 2's three panels on the embedded sandbox (a
copy of the session world) with an HTTP cache of its own; Chromium asks for the page as soon
as the server listens, and the clock runs from that request until the three panels are
visible. The recommendations panel may still be computing its effects then (it paints first:
``RecommendationsPanel``); its numbers must follow within the page's timeout.

Timing is not for ``make test``: ``make test`` keeps the page's 0-console-error test
(tests/browser/test_clean_page.py). Measured here (2 shared cores): see the CHANGELOG.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _helpers.browser import PANELS
from _helpers.chromium import ARGS, CHROMIUM, ensure_chromium

from quantscope.sandbox.datadir import WorldInfo, copy_world

pytestmark = [pytest.mark.reliability, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
FIRST_PAGE_S = 10.0  # the budget, from the page's request to the three panels shown
START_TIMEOUT_S = 120
PAGE_TIMEOUT_MS = 120_000
COMPUTED = (
    "() => Array.from(document.querySelectorAll('.qs-computing')).every(e => !e.offsetParent)"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def panels_server(sandbox_world: WorldInfo, tmp_path: Path) -> Iterator[str]:
    """``tools/notebooks.py panels --quant 2`` on a free port; its URL once it listens."""
    world = copy_world(sandbox_world, tmp_path / "sandbox")
    env = dict(os.environ)
    for name in ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY"):
        env.pop(name, None)
    env.update(
        QUANTSCOPE_SANDBOX_DIR=str(world.data_dir),
        QUANTSCOPE_CACHE_DIR=str(tmp_path / "cache"),
        QUANTSCOPE_PROGRESS="0",
        JUPYTER_PLATFORM_DIRS="1",
    )
    port = _free_port()
    argv = [sys.executable, str(ROOT / "tools" / "notebooks.py"), "panels", "--quant", "2"]
    argv += ["--out", str(tmp_path / "out"), "--no-browser", f"--port={port}"]
    log = tmp_path / "voila.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert process.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, f"no answer in {START_TIMEOUT_S} s"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait(timeout=30)


def test_the_first_panels_page_within_ten_seconds(panels_server: str) -> None:
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page: Any = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            started = time.perf_counter()
            page.goto(panels_server, timeout=PAGE_TIMEOUT_MS, wait_until="commit")
            for which in PANELS:
                page.locator(which).first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
            shown = time.perf_counter() - started
            page.wait_for_function(COMPUTED, timeout=PAGE_TIMEOUT_MS)
            computed = time.perf_counter() - started
            load = os.getloadavg()[0]
            print(f"first page {shown:.1f} s, effects {computed:.1f} s (load {load:.1f})")
            assert shown <= FIRST_PAGE_S, (
                f"the first page took {shown:.1f} s (load average {load:.1f}): over "
                f"{FIRST_PAGE_S:.0f} s"
            )
            assert "effect: PnL change" in page.inner_text(".qs-recommendations-table")
            assert errors == []
        finally:
            browser.close()
