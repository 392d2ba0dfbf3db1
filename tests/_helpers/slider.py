"""A browser's slider replayed headless (``Browser``), and the sweep of a ThresholdPanel's
selections that finds a phantom change (tests/toolkit/test_widgets_threshold_browser.py:
one selection per criterion; tests/reliability/test_threshold_sweep.py: all of them).

A headless kernel cannot see what a browser does with a slider's state (NOTES.md, turn 2): it
applies each update message whole, snaps the value onto ``min + k*step`` inside
``[min, max]`` and syncs a snapped value back to the kernel as if the user had moved it.
``Browser`` replays that rule on the messages the panel's slider really sends (its comm).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from quantscope.widgets import ThresholdPanel

BOUNDS = ("min", "max", "step", "value")


def snap(state: dict[str, Any]) -> float:
    """The browser slider's rule (noUiSlider): the nearest ``min + k*step`` within bounds."""
    low, high, step, value = (state[k] for k in BOUNDS)
    value = min(max(value, low), high)
    k = round((value - low) / step)
    return min(max(low + k * step, low), high)


class Browser:
    """The front end of a control's slider: the state it holds, and what it syncs back.

    The control makes a new slider for each list of values; the page then renders that new
    widget from its whole state, so the browser follows ``current()`` to the newest one."""

    def __init__(self, current: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> None:
        self.current = current
        self.monkeypatch = monkeypatch
        self.inbox: list[dict[str, Any]] = []
        self.synced_back: list[float] = []
        self.rendered = 0  # sliders rendered from their whole state
        self._render(current())

    def _render(self, slider: Any) -> None:
        self.slider = slider
        self.rendered += 1
        full = slider.get_state()  # what the page gets when it renders the widget
        self.state = {k: full[k] for k in BOUNDS}
        self.inbox = []
        self.monkeypatch.setattr(
            slider.comm, "send", lambda data=None, buffers=None, **_: self.inbox.append(data)
        )
        self._show()

    def settle(self) -> None:
        """Apply the updates sent so far, one message at a time, as the page does; a new
        slider is rendered from its whole state."""
        for _ in range(100):
            if self.current() is not self.slider:
                self._render(self.current())
                continue
            if not self.inbox:
                return
            message = self.inbox.pop(0)
            if message.get("method") != "update":
                continue
            self.state.update({k: v for k, v in message["state"].items() if k in BOUNDS})
            self._show()
        raise AssertionError("the kernel and the browser keep correcting each other")

    def _show(self) -> None:
        shown = snap(self.state)
        if abs(shown - self.state["value"]) > 1e-12 * max(1.0, abs(shown)):
            self.state["value"] = shown
            self.synced_back.append(shown)
            self.slider.set_state({"value": shown})  # the front end's update message

    def press(self, key: str) -> None:
        """An arrow key on the focused slider handle: one step, snapped, synced."""
        self.settle()
        sign = {"ArrowRight": 1, "ArrowUp": 1, "ArrowLeft": -1, "ArrowDown": -1}[key]
        moved = snap({**self.state, "value": self.state["value"] + sign * self.state["step"]})
        self.state["value"] = moved
        self.slider.set_state({"value": moved})
        self.settle()


def selections(panel: ThresholdPanel) -> list[tuple[str, str]]:
    """Every (class, criterion) the panel offers, in its pickers' order."""
    pairs = []
    for _, market_cap_class in panel.class_picker.options:
        panel.select(panel.criterion_picker.value, market_cap_class)
        pairs += [(market_cap_class, c) for _, c in panel.criterion_picker.options]
    return pairs


def one_per_criterion(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each criterion once, the classes taking turns (criterion i of class i mod 3): every
    criterion and every class is selected, and each selection switches class and criterion."""
    classes = list(dict.fromkeys(c for c, _ in pairs))
    criteria = list(dict.fromkeys(k for _, k in pairs))
    return [(c, k) for c, k in pairs if classes.index(c) == criteria.index(k) % len(classes)]


def phantom_sweep(
    panel: ThresholdPanel, browser: Browser, pairs: Sequence[tuple[str, str]]
) -> list[tuple[str, str, float, float]]:
    """Select each pair in turn, as the browser shows it: the selections whose slider shows
    a threshold other than the playbook's (class, criterion, playbook's, shown). Each other
    selection must say "no change" and apply nothing."""
    phantoms = []
    for market_cap_class, criterion in pairs:  # both directions of a switch: the next pair
        panel.select(criterion, market_cap_class)
        browser.settle()
        entry = panel.entry
        assert entry is not None
        if panel.threshold != entry["threshold"]:
            phantoms.append((market_cap_class, criterion, entry["threshold"], panel.threshold))
            continue
        assert "no change" in panel.table_html.value, (market_cap_class, criterion)
        assert panel.apply() is None
        assert not panel.confirmation.visible
        assert "nothing to change" in panel.message.value
    return phantoms
