"""The panels page is clean (issue 24, item 7): no request to another origin, no failed
request, no console error, no "Error displaying widget"; and a panel's button labels are
never cut.

Measured on the page as a user gets it: no route answers for the page here (the ``panels``
fixture answers requests to other origins, which would hide them). Before: 2 failed Font
Awesome requests to cdn.jsdelivr.net (Voila's lab template) and a jupytext module-federation
error (a labextension built for a newer JupyterLab) on every load.
"""

from __future__ import annotations

from typing import Any

import pytest
from _helpers.browser import PANELS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE_TIMEOUT_MS = 120_000

# A label as long as the Open button's longest, measured in a panel with the page's own CSS.
LONG_LABEL = "Open what fits: spend 12,345 requests"
MEASURE_LABEL = """([label, width]) => {
    const panel = document.querySelector('.qs-panel');
    const button = document.createElement('button');
    button.className = 'jupyter-widgets jupyter-button widget-button mod-warning';
    if (width) button.style.width = width;
    button.innerHTML = '<i class="fa fa-play"></i>' + label;
    panel.appendChild(button);
    const cut = button.scrollWidth > button.clientWidth;
    button.remove();
    return cut;
}"""


def test_the_panels_page_is_clean(chromium: Any, voila: str) -> None:
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    origin = voila.rstrip("/")
    elsewhere: list[str] = []
    failed: list[str] = []
    errors: list[str] = []
    page.on(
        "request",
        lambda r: None if r.url.startswith((origin, "data:")) else elsewhere.append(r.url),
    )
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(voila, timeout=PAGE_TIMEOUT_MS)
        for which in PANELS:
            page.locator(which).first.wait_for(state="visible", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
        assert elsewhere == []
        assert failed == []
        assert errors == []
        assert "Error displaying widget" not in page.inner_text("body")
        # every button of the panels shows its whole label
        cut = page.evaluate(
            "() => Array.from(document.querySelectorAll('.qs-panel button'))"
            ".filter(b => b.offsetParent && b.scrollWidth > b.clientWidth)"
            ".map(b => b.innerText)"
        )
        assert cut == []
        # the Open button's layout (width auto) keeps a long label whole; a default one cuts it
        assert page.evaluate(MEASURE_LABEL, [LONG_LABEL, "auto"]) is False
        assert page.evaluate(MEASURE_LABEL, [LONG_LABEL, ""]) is True
    finally:
        context.close()
