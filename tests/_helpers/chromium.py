"""Debian's Chromium for the tests that open a page, driven by Playwright (never
``playwright install``: browser downloads are impossible here).

``CHROMIUM``, ``ARGS`` and ``INSTALL`` are the one place the browser, its flags and the command
that installs it are named (the panels' suite in ``tests/browser`` and the report test use
them). ``ensure_chromium()`` installs it when it is missing and we are root, else skips the
test with one loud line naming the command. ``open_page(url)`` yields the page after ``load``
with every request the page made and every one that failed, so a test can assert that a
self-contained page asked for nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL = "apt-get update && apt-get install -y chromium"


@dataclass
class Visit:
    """What the page did: its requests (URLs) and the failed ones (URL, reason)."""

    page: Any
    requests: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def ensure_chromium() -> None:
    """Chromium at ``CHROMIUM``: installed with apt-get when missing and we are root (as in
    CI), else the test is skipped with one line naming the command."""
    if CHROMIUM.exists():
        return
    if not is_root() or shutil.which("apt-get") is None:
        pytest.skip(f"SKIPPED: no Chromium at {CHROMIUM}: install it with `sudo {INSTALL}`")
    print(f"\nChromium is missing: running `{INSTALL}` (as root)", flush=True)
    subprocess.run(["apt-get", "update"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        ["apt-get", "install", "-y", "--no-install-recommends", "chromium"],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )


@contextmanager
def open_page(url: str, *, width: int = 1200, height: int = 900) -> Iterator[Visit]:
    """Open ``url`` in headless Chromium and wait for ``load``; yields the ``Visit``."""
    ensure_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            visit = Visit(page)
            page.on("request", lambda r: visit.requests.append(r.url))
            page.on("requestfailed", lambda r: visit.failed.append((r.url, str(r.failure))))
            page.on(
                "console",
                lambda m: visit.console_errors.append(m.text) if m.type == "error" else None,
            )
            page.goto(url, wait_until="load")
            yield visit
        finally:
            browser.close()
