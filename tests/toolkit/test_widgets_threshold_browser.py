"""ThresholdPanel's slider as a browser sees it: no phantom change, whole steps, exact values.

A headless kernel cannot see what a browser does with a slider's state (NOTES.md, turn 2): it
applies each update message whole, snaps the value onto ``min + k*step`` inside
``[min, max]`` and syncs a snapped value back to the kernel as if the user had moved it.
``Browser`` replays that rule on the messages the panel's slider really sends (its comm), so
these tests fail wherever a real browser would show a change nobody made. The real-browser
suite (Voila + Chromium) checks the same facts end to end.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest
from _helpers import QUANT, WidgetData, service_playbook, value_of
from _helpers.slider import Browser, one_per_criterion, phantom_sweep, selections

from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import ThresholdPanel
from quantscope.widgets._controls import ThresholdControl


def test_no_phantom_change_on_any_criterion(
    sandbox: SandboxServer,
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each of the 18 criteria once, the 3 classes taking turns (all 54 selections:
    tests/reliability/test_threshold_sweep.py)."""
    panel = ThresholdPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )
    browser = Browser(lambda: panel.slider, monkeypatch)
    browser.settle()
    assert panel.entry is not None
    assert panel.threshold == panel.entry["threshold"]
    pairs = selections(panel)
    assert len(pairs) == 54  # 3 classes x 18 criteria
    sample = one_per_criterion(pairs)
    assert len(sample) == 18
    assert {c for c, _ in sample} == {c for c, _ in pairs}
    browser.settle()
    assert phantom_sweep(panel, browser, sample) == []
    assert browser.synced_back == []  # the browser never had to move the handle itself


def test_integer_criteria_move_in_whole_steps_and_write_them(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fresh_sandbox()
    panel = ThresholdPanel(
        QUANT,
        client=client_for(server),
        market_cap_class="DEGEN_CAP",
        criterion="smart_money_buys",
        trades=widget_data.trades,
        details=widget_data.details,
    )
    browser = Browser(lambda: panel.slider, monkeypatch)
    entry = panel.entry
    assert entry is not None
    assert entry["threshold"] == 2
    config_id = str(entry["config_id"])
    browser.press("ArrowRight")
    assert panel.threshold == 3
    assert panel.text.value == "3"
    browser.press("ArrowRight")
    browser.press("ArrowLeft")
    assert panel.threshold == 3
    assert "with ≥ 3" in panel.table_html.value
    assert "no change" not in panel.table_html.value
    change = panel.apply()
    assert change is not None
    assert (change.old_value, change.new_value) == (2, 3)
    assert "2 → 3" in panel.confirmation.text.value
    written = panel.confirm()
    assert written is not None
    assert written.verified
    assert value_of(service_playbook(server), config_id) == 3
    browser.settle()
    assert panel.threshold == 3  # the panel moved on, no phantom
    assert panel.apply() is None

    panel.undo()
    assert value_of(service_playbook(server), config_id) == 2
    browser.settle()
    assert panel.threshold == 2  # after Undo: no phantom either
    assert panel.apply() is None
    assert browser.synced_back == []

    # every integer criterion of every class steps by one whole unit
    for market_cap_class in ("DEGEN_CAP", "LOW_CAP", "MID_CAP"):
        for criterion in ("smart_money_buys", "lp_locked", "mint_authority"):
            panel.select(criterion, market_cap_class)
            browser.settle()
            start = panel.threshold
            browser.press("ArrowLeft")
            assert panel.threshold in (start - 1, start), (market_cap_class, criterion)
            browser.press("ArrowRight")
            browser.press("ArrowRight")
            assert panel.threshold in (start + 1, start), (market_cap_class, criterion)
            assert float(panel.threshold).is_integer()


def test_a_typed_value_is_used_exactly_never_snapped(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = fresh_sandbox()
    panel = ThresholdPanel(
        QUANT,
        client=client_for(server),
        market_cap_class="LOW_CAP",
        criterion="buy_sell_ratio",
        trades=widget_data.trades,
        details=widget_data.details,
    )
    browser = Browser(lambda: panel.slider, monkeypatch)
    entry = panel.entry
    assert entry is not None
    panel.text.value = "1.23457"  # typed, then Enter (the text box syncs on Enter or blur)
    browser.settle()
    assert panel.threshold == 1.23457
    assert panel.text.value == "1.23457"
    assert "with ≥ 1.23457" in panel.table_html.value
    assert browser.synced_back == []
    change = panel.apply()
    assert change is not None
    assert change.new_value == 1.23457
    assert panel.confirm() is not None
    assert value_of(service_playbook(server), str(entry["config_id"])) == 1.23457

    # a neighbour of the typed value is a step away on the slider, and back is exact again
    browser.press("ArrowRight")
    assert panel.threshold > 1.23457
    browser.press("ArrowLeft")
    assert panel.threshold == 1.23457

    # bad input: one clear line, the exact value stays
    panel.text.value = "abc"
    assert "not a number" in panel.message.value
    assert panel.threshold == 1.23457
    assert panel.text.value == "1.23457"
    panel.text.value = "11"
    assert "range [0, 10]" in panel.message.value
    assert panel.threshold == 1.23457
    panel.select("smart_money_buys")
    panel.text.value = "2.5"
    assert "whole number" in panel.message.value
    assert panel.threshold == 2


def test_a_changed_playbook_resets_the_control_without_a_phantom(
    sandbox: SandboxServer,
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    panel = ThresholdPanel(
        QUANT,
        client=client_for(sandbox),
        market_cap_class="DEGEN_CAP",
        criterion="smart_money_buys",
        trades=widget_data.trades,
        details=widget_data.details,
    )
    browser = Browser(lambda: panel.slider, monkeypatch)
    panel.set_threshold(5)
    assert panel.apply() is not None
    assert panel.confirmation.visible
    assert panel.playbook is not None
    changed = panel.playbook.copy()
    where = (
        (changed["market_cap_class"] == "DEGEN_CAP")
        & (changed["config_type"] == "BUYING")
        & (changed["criterion"] == "smart_money_buys")
    )
    changed.loc[where, "threshold"] = 4.0  # another panel wrote 2 -> 4
    panel._playbook_changed(changed)
    browser.settle()
    assert panel.threshold == 4
    assert panel.text.value == "4"
    assert not panel.confirmation.visible  # the change asked for was from 2: dropped
    assert "now <b>4</b>" in panel.entry_html.value
    assert "no change" in panel.table_html.value
    assert "now (≥ 4)" in panel.table_html.value
    assert panel.apply() is None
    assert browser.synced_back == []
    pd.testing.assert_frame_equal(panel.playbook, changed)


def test_switching_value_lists_either_way_never_clamps_in_the_browser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Short and long lists, the held value first, last or inside: every switch arrives as
    one consistent state, so the browser never moves the handle (headless, no service)."""
    moved: list[float] = []
    control = ThresholdControl(moved.append, lambda _: None, moved.append)
    browser = Browser(lambda: control.slider, monkeypatch)
    lists = [
        ((0.0, 1.0, 2.0, 3.0), 2.0),
        (tuple(float(v) for v in range(51)), 2.0),
        (tuple(float(v) for v in range(51)), 50.0),
        ((0.0, 1.0), 1.0),
        ((-100.0, -8.00746, -8.0, 0.0, 500.0), -8.0),
        (tuple(v / 100 for v in range(1001)), 9.99),
        ((45.0,), 45.0),
        (tuple(float(v) for v in range(51)), 0.0),
    ]
    for values, value in lists + lists[::-1]:
        control.reset(values, value)
        browser.settle()
        assert control.value == value
        assert values[browser.state["value"]] == value  # what the page shows is the value
    assert browser.synced_back == []  # nothing moved, nothing proposed
    assert moved == []
    control.set(0.123)  # a value off the list joins it, exactly
    browser.settle()
    assert control.value == 0.123
    assert control.text.value == "0.123"
    assert browser.synced_back == []


def test_a_fraction_already_in_a_whole_number_entry_is_held_and_left_alone(
    sandbox: SandboxServer,
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """3.09 was written to smart_money_buys by the old slider: shown exactly, proposing
    nothing, and one key press away from the whole numbers either side."""
    panel = ThresholdPanel(
        QUANT,
        client=client_for(sandbox),
        market_cap_class="DEGEN_CAP",
        criterion="smart_money_buys",
        trades=widget_data.trades,
        details=widget_data.details,
    )
    browser = Browser(lambda: panel.slider, monkeypatch)
    assert panel.playbook is not None
    written = panel.playbook.copy()
    where = (
        (written["market_cap_class"] == "DEGEN_CAP")
        & (written["config_type"] == "BUYING")
        & (written["criterion"] == "smart_money_buys")
    )
    written.loc[where, "threshold"] = 3.09
    panel._playbook_changed(written)
    browser.settle()
    assert panel.threshold == 3.09
    assert panel.text.value == "3.09"
    assert panel.apply() is None
    assert "nothing to change" in panel.message.value
    browser.press("ArrowRight")
    assert panel.threshold == 4
    browser.press("ArrowLeft")
    browser.press("ArrowLeft")
    assert panel.threshold == 3
    assert browser.synced_back == []
