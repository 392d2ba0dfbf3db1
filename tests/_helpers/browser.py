"""Driving the panels in a real browser: the page, the kernel's activity, the sandbox's playbook.

The browser tests (``tests/browser/``) find widgets only by the CSS classes of the panels' DOM
contract (``qs-threshold-panel``, ``qs-apply``, ``qs-threshold-text``...). ``PanelsPage`` wraps a
Playwright page showing the three panels served by Voila: it waits for the kernel to finish
what an action started (``settle``), reads what a panel shows, and saves numbered screenshots.
``Playbook`` reads and writes the quant's playbook directly over HTTP (the truth the tests
compare the page with). ``console_problems`` keeps the console errors that are the project's.
"""

from __future__ import annotations

import math
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import requests

import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

THRESHOLD = ".qs-threshold-panel"
EDITOR = ".qs-playbook-editor"
RECOMMENDATIONS = ".qs-recommendations-panel"
PANELS = (THRESHOLD, EDITOR, RECOMMENDATIONS)

# The one console error known to be harmless (NOTES.md): under Voila 0.5 the jupytext
# labextension (built for JupyterLab >= 4.6, from the dev dependencies) fails to load its
# module-federation container. Matched narrowly: the word jupytext and a federation failure.
_KNOWN_NOISE = (re.compile(r"jupytext", re.I), re.compile(r"federat|shared module|container", re.I))
_STATE = re.compile(r'"execution_state"\s*:\s*"(busy|idle)"')
# A number written in a message, not a piece of a path or a name (audit.jsonl, quant_2).
NUMBER = re.compile(r"(?<![\w./\\-])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![\w/\\])")


def console_problems(messages: Iterable[str]) -> list[str]:
    """The console errors that are not the known jupytext labextension noise."""
    return [m for m in messages if not all(p.search(m) for p in _KNOWN_NOISE)]


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (``2 → 3`` gives [2.0, 3.0]); thousands separators
    are read as such."""
    return [float(n) for n in NUMBER.findall(text.replace(",", ""))]


# --- the playbook over HTTP ----------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One BUYING/SCANNING entry of the playbook as the service holds it."""

    config_id: str
    market_cap_class: str
    config_type: str
    criterion: str
    threshold: float
    range_min: float | None
    range_max: float | None


class Playbook:
    """A quant's playbook on a sandbox, read and written over HTTP with the Enterprise key
    (every read through a new client and cache: nothing cached)."""

    def __init__(self, server: SandboxServer, quant_id: int) -> None:
        self.server, self.quant_id = server, quant_id

    def entries(self) -> dict[tuple[str, str, str], Entry]:
        """(class, config type, criterion) -> its entry, now."""
        with (
            tempfile.TemporaryDirectory() as cache,
            Client(
                self.server.url, self.server.keys["enterprise"], cache_dir=cache, progress=False
            ) as c,
        ):
            pb = L.load_playbook(self.quant_id, client=c)
        found: dict[tuple[str, str, str], Entry] = {}
        for row in pb.itertuples():
            low, high = _float_or_none(row.range_min), _float_or_none(row.range_max)
            entry = Entry(
                str(row.config_id),
                str(row.market_cap_class),
                str(row.config_type),
                str(row.criterion),
                float(row.threshold),
                low,
                high,
            )
            found[(entry.market_cap_class, entry.config_type, entry.criterion)] = entry
        return found

    def entry(self, market_cap_class: str, criterion: str, config_type: str = "BUYING") -> Entry:
        return self.entries()[(market_cap_class, config_type, criterion)]

    def threshold(self, market_cap_class: str, criterion: str) -> float:
        return self.entry(market_cap_class, criterion).threshold

    def put(self, changes: dict[str, float]) -> None:
        """Set thresholds by config id in one PUT, as any other client of the service would."""
        if not changes:
            return
        response = requests.put(
            f"{self.server.url}/api/degen/config",
            json={
                "quantId": self.quant_id,
                "newConfigs": [
                    {"configId": cid, "field": "threshold", "newValue": value}
                    for cid, value in changes.items()
                ],
            },
            headers={"X-API-Key": self.server.keys["enterprise"]},
            timeout=60,
        )
        assert response.status_code == 200, response.text

    def restore(self, before: dict[tuple[str, str, str], Entry]) -> None:
        """Put back every threshold that differs from ``before``."""
        now = self.entries()
        self.put(
            {
                e.config_id: e.threshold
                for key, e in before.items()
                if key in now and now[key].threshold != e.threshold
            }
        )


def _float_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


# --- HTML read back ------------------------------------------------------------------------


class _Tables(HTMLParser):
    """The rows of every <table> in a piece of HTML, as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(html: str) -> list[list[str]]:
    parser = _Tables()
    parser.feed(html)
    return parser.rows


def whatif_says_no_change(html: str, text: str) -> str | None:
    """None when the what-if shows no change (it says "no change", or its before and after
    columns, thresholds included, are identical); else what differs."""
    if "no change" in text.lower():
        return None
    rows = table_rows(html)
    if not rows:
        return "the what-if shows no table and does not say 'no change'"
    header, body = rows[0], rows[1:]
    now = [h for h in header if h.lower().startswith("now")]
    after = [h for h in header if h.lower().startswith(("with", "proposed", "after"))]
    if now and after and numbers_in(now[0]) != numbers_in(after[0]):
        return f"thresholds differ: {now[0]!r} vs {after[0]!r}"
    for row in body:
        if len(row) >= 3 and row[1] != row[2]:
            return f"{row[0]}: {row[1]} → {row[2]}"
    return None


# --- the page ------------------------------------------------------------------------------


@dataclass
class PanelsPage:
    """A Playwright page showing the three panels, with the kernel's activity followed.

    ``settle(action)`` runs ``action`` and waits until the kernel has handled what it sent
    (busy, then idle for a quiet while) so the DOM shows the kernel's answer.
    """

    page: Any
    shots: Path
    name: str
    console: list[str] = field(default_factory=list)
    busy: int = 0
    idle: int = 0
    state: str = "idle"
    last_activity: float = 0.0
    _shot: int = 0

    def __post_init__(self) -> None:
        self.page.on("websocket", self._websocket)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))

    def _console(self, message: Any) -> None:
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            self.console.append(f"console.error: {message.text} ({where})")

    def _websocket(self, socket: Any) -> None:
        if "/api/kernels/" in socket.url:
            socket.on("framereceived", self._frame)

    def _frame(self, payload: Any) -> None:
        text = payload if isinstance(payload, str) else bytes(payload).decode("utf-8", "replace")
        for state in _STATE.findall(text):
            self.state = state
            self.last_activity = time.monotonic()
            if state == "busy":
                self.busy += 1
            else:
                self.idle += 1

    # ----- waiting -----

    def settle(
        self,
        action: Callable[[], Any] | None = None,
        *,
        timeout: float = 60.0,
        quiet: float = 0.15,
        start: float = 2.0,
    ) -> None:
        """Run ``action``, then wait until the kernel went busy and is idle again for ``quiet``
        seconds. When nothing reaches the kernel within ``start`` seconds, return."""
        before = self.busy
        if action is not None:
            action()
        began = time.monotonic()
        while True:
            self.page.wait_for_timeout(40)
            now = time.monotonic()
            if self.busy == before:
                if now - began > start:
                    return
                continue
            if self.state == "idle" and now - self.last_activity >= quiet:
                self.page.wait_for_timeout(60)  # the views render the last updates
                return
            if now - began > timeout:
                raise AssertionError(f"the kernel stayed busy for {timeout:.0f} s")

    # ----- reading -----

    def panel(self, which: str) -> Any:
        return self.page.locator(which).first

    def part(self, which: str, css: str) -> Any:
        return self.page.locator(f"{which} {css}").first

    def status(self, which: str) -> str:
        return str(self.part(which, ".qs-status").inner_text())

    def wait_for_status_change(self, which: str, before: str, timeout: float = 60.0) -> str:
        """Wait until the panel's message line no longer says ``before``: the outcome of an
        action the kernel finished (a loaded machine can take longer than ``settle``'s start
        window to even begin it). Returns the new message."""
        began = time.monotonic()
        while (now := self.status(which)) == before:
            if time.monotonic() - began > timeout:
                raise AssertionError(f"the panel still says {before!r} after {timeout:.0f} s")
            self.page.wait_for_timeout(100)
        return now

    def confirmation_visible(self, which: str) -> bool:
        return bool(self.part(which, ".qs-confirmation").is_visible())

    def confirmation_text(self, which: str) -> str:
        return str(self.part(which, ".qs-confirmation").inner_text())

    def exact_threshold(self) -> float:
        """The EXACT threshold the ThresholdPanel shows and would write (its text box)."""
        text = self.part(THRESHOLD, ".qs-threshold-text input").input_value()
        return float(text.strip().replace(",", ""))

    def whatif_problem(self) -> str | None:
        box = self.part(THRESHOLD, ".qs-whatif")
        return whatif_says_no_change(box.inner_html(), box.inner_text())

    def selected_label(self, which: str, picker: str) -> str:
        select = self.part(which, f"{picker} select")
        return str(select.evaluate("s => s.options[s.selectedIndex]?.text ?? ''"))

    def option_count(self, which: str, picker: str) -> int:
        return int(self.part(which, f"{picker} select").locator("option").count())

    # ----- acting -----

    def choose(self, which: str, picker: str, *, index: int | None = None, label: str = "") -> None:
        """Choose an option of a dropdown by index or by the label containing ``label``."""
        select = self.part(which, f"{picker} select")
        if index is None:
            labels = select.evaluate("s => Array.from(s.options, o => o.text)")
            hits = [i for i, text in enumerate(labels) if label in text]
            assert hits, f"no option with {label!r} in {picker}: {labels}"
            index = hits[0]
        if select.evaluate("s => s.selectedIndex") == index:
            return
        self.settle(lambda: select.select_option(index=index))

    def pick(self, which: str, picker: str, label: str) -> None:
        """Choose ``label`` in a picker that is a dropdown or toggle buttons."""
        root = self.part(which, picker)
        if root.locator("select").count():
            self.choose(which, picker, label=label)
            return
        button = root.locator("button", has_text=label).first
        if "mod-active" not in (button.get_attribute("class") or ""):
            self.settle(button.click)

    def click(self, which: str, button: str) -> None:
        self.settle(lambda: self.part(which, button).click())

    def press_slider(self, key: str, times: int = 1) -> None:
        handle = self.part(THRESHOLD, ".qs-threshold-slider [role=slider]")
        for _ in range(times):
            self.settle(lambda: handle.press(key))

    def type_threshold(self, value: float) -> None:
        """Type ``value`` into the ThresholdPanel's exact text box and press Enter."""
        box = self.part(THRESHOLD, ".qs-threshold-text input")
        box.fill(repr(value))
        self.settle(lambda: box.press("Enter"))

    def edit_cell(self, criterion: str, value: float, field_name: str = "threshold") -> None:
        """Type ``value`` into the editor's cell and press Enter (the edit is staged)."""
        cell = self.part(EDITOR, f".qs-cell.qs-field-{field_name}.qs-criterion-{criterion} input")
        cell.fill(repr(value))
        self.settle(lambda: cell.press("Enter"))

    def cell_value(self, criterion: str, field_name: str = "threshold") -> float:
        cell = self.part(EDITOR, f".qs-cell.qs-field-{field_name}.qs-criterion-{criterion} input")
        return float(cell.input_value())

    def screenshot(self, step: str) -> Path:
        """Save the page as ``<test>-<NN>-<step>.png`` under the screenshots folder."""
        self._shot += 1
        path = self.shots / f"{self.name}-{self._shot:02d}-{step}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def matching(label: str, names: Iterable[str]) -> str:
    """The longest of ``names`` written in ``label`` as a whole word (a picker's label)."""
    hits = [n for n in names if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", label)]
    assert hits, f"none of {sorted(names)} in {label!r}"
    return max(hits, key=len)
