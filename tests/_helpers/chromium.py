"""A small Chromium launcher for tests that open a page (Debian's /usr/bin/chromium driven by
Playwright; never ``playwright install``). Tests skip with one loud line when it is missing.

``open_page(url)`` yields the page after ``load`` together with every request the page made
and every request that failed, so a test can assert that a self-contained page asked for
nothing.
"""

from __future__ import annotations

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


@dataclass
class Visit:
    """What the page did: its requests (URLs) and the failed ones (URL, reason)."""

    page: Any
    requests: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


def require_chromium() -> None:
    """Skip the test, loudly, when Debian's Chromium is not installed."""
    if not CHROMIUM.exists():
        pytest.skip(f"SKIPPED: no Chromium at {CHROMIUM} (apt-get install chromium)")


@contextmanager
def open_page(url: str, *, width: int = 1200, height: int = 900) -> Iterator[Visit]:
    """Open ``url`` in headless Chromium and wait for ``load``; yields the ``Visit``."""
    require_chromium()
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
