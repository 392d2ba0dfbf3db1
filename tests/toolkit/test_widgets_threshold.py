"""ThresholdPanel and the audit log, headless against the sandbox: set values, click, read.

Quant 2's trades and buy-evaluation details are loaded once per session over HTTP (conftest's
``widget_data``: one eval-details request per closed trade), and handed to panels that run on
fresh sandboxes (copies of the same world) when they write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _helpers import QUANT, WidgetData, service_playbook, value_of

import quantscope.loaders as L
from quantscope import backtest as bt
from quantscope._errors import APIConnectionError
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import (
    AuditLog,
    Change,
    ThresholdPanel,
    UndoRefusedError,
    undo,
    write_changes,
)


def test_table_shows_what_if_numbers_and_slider_moves_the_line(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> None:
    panel = ThresholdPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )
    assert panel.message.value == ""
    # default class: the one with most closed trades
    features = bt.trade_features(widget_data.trades, details=widget_data.details)
    features = features[(features["quant_id"] == QUANT).to_numpy(bool)]
    biggest = features["market_cap_class"].value_counts().idxmax()
    assert panel.class_picker.value == biggest

    panel.select("smart_money_buys")
    entry = panel.entry
    assert entry is not None
    assert entry["config_type"] == "BUYING"
    assert panel.threshold == entry["threshold"]  # the slider starts at the current threshold
    panel.set_threshold(entry["threshold"] + 1)

    mine = features[(features["market_cap_class"] == biggest).to_numpy(bool)]
    expected = bt.what_if(
        mine,
        "smart_money_buys",
        [entry["threshold"] + 1],
        operator=str(entry["operator"]),
        current=float(entry["threshold"]),
        playbook=panel.playbook,
        bootstrap=False,  # the panel's intervals come from backtest.uncertainty
    )
    assert panel.what_if is not None
    pd.testing.assert_frame_equal(panel.what_if, expected)
    assert expected.attrs["what_if"]["rule"] == "replay"  # the default: what applying does
    assert "what applying the change would have done" in panel.table_html.value
    assert "upper bound" not in panel.table_html.value.lower()
    row, base = expected.iloc[0], expected.attrs["what_if"]["baseline"]
    html = panel.table_html.value
    for text in (
        f"{int(row['trades']):,}",
        f"{int(base['trades']):,}",
        f"{row['win_rate']:.1%}",
        f"{base['win_rate']:.1%}",
        f"${row['total_pnl_usd']:,.2f}",
        f"{row['d_win_rate'] * 100:+.1f} pts",
        f"{int(row['d_trades']):+,}",
    ):
        assert text in html, text
    assert panel.table is not None
    assert panel.table.loc["win_rate", "proposed"] == row["win_rate"]

    # live updates: the line moves, the histograms stay, the picture changes
    assert panel.plot is not None
    bars = list(panel.plot.ax.patches)
    before = panel.figure.outputs[0]["data"]["image/png"]
    panel.slider.value = panel.control.index(float(entry["threshold"]) + 2)  # its position
    line = next(ln for ln in panel.plot.ax.lines if ln.get_label() == "threshold")
    assert list(line.get_xdata()) == [entry["threshold"] + 2] * 2
    assert list(panel.plot.ax.patches) == bars
    assert panel.figure.outputs[0]["data"]["image/png"] != before
    assert f"with ≥ {entry['threshold'] + 2:g}" in panel.table_html.value

    # the hard filter as the other question, labelled as the signal (it bounds nothing)
    panel.rule_picker.value = "filter"
    assert panel.what_if is not None
    assert panel.what_if.attrs["what_if"]["rule"] == "filter"
    assert "does not bound it" in panel.table_html.value
    assert "upper bound" not in panel.table_html.value.lower()
    assert panel.table is not None
    assert panel.table.attrs["rule"].startswith("signal:")
    upper = bt.what_if(
        mine,
        "smart_money_buys",
        [entry["threshold"] + 2],
        current=entry["threshold"],
        rule="filter",
    )
    assert panel.what_if["trades"].iloc[0] == upper["trades"].iloc[0]


def test_out_of_range_threshold_is_refused_before_anything_is_sent(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox)
    panel = ThresholdPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )
    panel.select("smart_money_buys")
    with pytest.raises(ValueError, match=r"range \[0, 50\]"):
        panel.set_threshold(999)
    assert "range [0, 50]" in panel.message.value
    panel.slider.value = panel.slider.max  # within the slider: fine
    panel.select("lp_locked")  # an options criterion: the slider steps through option ids
    assert (panel.slider.min, panel.slider.max, panel.slider.step) == (0.0, 3.0, 1.0)


def test_loads_trades_and_details_itself(
    sandbox: SandboxServer, widget_data: WidgetData, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = tmp_path_factory.getbasetemp() / "widgets-cache"  # the session's: no re-download
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        panel = ThresholdPanel(QUANT, client=c, market_cap_class="MID_CAP", criterion="rsi_14")
    assert panel.research is not None
    assert len(panel.research.details) == len(widget_data.details)
    assert panel.class_picker.value == "MID_CAP"
    assert panel.criterion_picker.value == "rsi_14"
    assert "≤" in panel.table_html.value  # rsi_14 passes when value <= threshold


def test_apply_cancel_confirm_undo_against_the_service(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    panel = ThresholdPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )
    panel.select("smart_money_buys")
    entry = panel.entry
    assert entry is not None
    config_id, old = str(entry["config_id"]), float(entry["threshold"])
    new = old + 1
    original = service_playbook(server)

    panel.set_threshold(new)
    panel.apply_button.click()
    assert panel.confirmation.visible
    shown = panel.confirmation.text.value
    assert config_id in shown
    assert f"<td>{old:g}</td>" in shown
    assert f"<td>{new:g}</td>" in shown

    spent = client.quota.remaining
    panel.confirmation.cancel_button.click()
    assert not panel.confirmation.visible
    assert "nothing was sent" in panel.message.value
    assert client.quota.remaining == spent  # no request at all
    pd.testing.assert_frame_equal(service_playbook(server), original, check_like=True)
    assert not (tmp_path / "audit.jsonl").exists()

    panel.apply()
    written = panel.confirm()
    assert written is not None
    assert written.verified
    assert "verified" in panel.message.value
    assert value_of(service_playbook(server), config_id) == new
    assert panel.audit_log.path == tmp_path / "audit.jsonl"  # next to the client's cache
    (entry_logged,) = AuditLog(tmp_path / "audit.jsonl").entries()
    assert entry_logged.verified
    assert entry_logged.action == "change"
    assert (entry_logged.config_id, entry_logged.old_value, entry_logged.new_value) == (
        config_id,
        old,
        new,
    )
    assert (entry_logged.quant_id, entry_logged.criterion, entry_logged.field) == (
        QUANT,
        "smart_money_buys",
        "threshold",
    )
    assert entry_logged.service == client.settings.service
    assert server.keys["enterprise"] not in (tmp_path / "audit.jsonl").read_text()
    assert panel.entry is not None  # the panel moved on
    assert panel.entry["threshold"] == new

    assert not panel.undo_button.disabled
    panel.undo_button.click()
    assert value_of(service_playbook(server), config_id) == old
    first, second = AuditLog(tmp_path / "audit.jsonl").entries()
    assert second.action == "undo"
    assert second.undoes == first.id
    assert second.verified
    assert (second.old_value, second.new_value) == (new, old)
    with pytest.raises(UndoRefusedError, match="already undone"):
        undo(first, client=client, log=panel.audit_log)
    assert panel.undo() is None
    assert "Nothing to undo" in panel.message.value


def test_growth_key_can_analyse_but_not_apply(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox, "growth")
    panel = ThresholdPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )
    assert panel.apply_button.disabled
    assert "Enterprise can change it" in panel.message.value
    assert "growth" in panel.message.value
    panel.select("smart_money_buys")
    panel.set_threshold(3)
    assert "win rate" in panel.table_html.value
    spent = client.quota.remaining
    assert panel.apply() is None
    assert not panel.confirmation.visible
    assert client.quota.remaining == spent


def test_basic_key_gets_a_message_not_an_error(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    panel = ThresholdPanel(QUANT, client=client_for(sandbox, "basic"))
    text = panel.message.value
    assert "Growth or higher can read the playbook; Enterprise can change it" in text
    assert panel.apply_button.disabled
    assert panel.slider.disabled
    assert panel.entry is None
    assert panel.apply() is None


def test_audit_log_skips_a_torn_line_and_refuses_a_moved_value(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    log = AuditLog(tmp_path / "elsewhere" / "log.jsonl")
    panel = ThresholdPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details, audit_log=log
    )
    panel.select("buy_sell_ratio")
    entry = panel.entry
    assert entry is not None
    panel.set_threshold(float(entry["threshold"]) + 0.5)
    panel.apply()
    assert panel.confirm() is not None
    with log.path.open("a") as f:
        f.write('{"id": "torn')  # a crash mid-write
    (logged,) = log.entries()
    frame = log.frame()
    assert len(frame) == 1
    assert str(frame["timestamp"].dtype) == "datetime64[ms, UTC]"
    assert json.loads(log.path.read_text().splitlines()[0])["verified"] is True
    # someone else changes the value: undo would not restore what the entry changed
    L.update_playbook(QUANT, [{"config_id": logged.config_id, "value": 2.5}], client=client)
    with pytest.raises(UndoRefusedError, match="changed"):
        undo(logged, client=client, log=log)
    assert value_of(service_playbook(server), logged.config_id) == 2.5
    assert np.isclose(float(logged.new_value), float(entry["threshold"]) + 0.5)


def test_a_put_without_an_answer_is_settled_by_the_read_back(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection lost after the PUT was sent (a fault the sandbox cannot produce)."""
    server = fresh_sandbox()
    client = client_for(server)
    playbook = L.load_playbook(QUANT, client=client)
    row = playbook[
        (playbook["criterion"] == "smart_money_buys")
        & (playbook["market_cap_class"] == "DEGEN_CAP")
        & (playbook["config_type"] == "BUYING")
    ].iloc[0]
    change = Change.of(row, "threshold", float(row["threshold"]) + 1)
    log = AuditLog(tmp_path / "faults.jsonl")
    real = L.update_playbook

    def lost(*args: object, **kwargs: object) -> None:
        raise APIConnectionError("connection reset", endpoint="/api/degen/config")

    def applied_then_lost(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        lost()

    monkeypatch.setattr(L, "update_playbook", lost)
    with pytest.raises(APIConnectionError):
        write_changes(QUANT, [change], client=client, log=log)
    assert log.entries() == []  # not applied: nothing to log

    monkeypatch.setattr(L, "update_playbook", applied_then_lost)
    written = write_changes(QUANT, [change], client=client, log=log)
    assert written.verified
    (logged,) = log.entries()
    assert logged.verified
    assert logged.note is not None
    assert "no answer" in logged.note
    assert value_of(service_playbook(server), change.config_id) == change.new_value


def test_panel_displays_its_widget(
    sandbox: SandboxServer,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import IPython.display

    shown: list[object] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    panel = ThresholdPanel(QUANT, client=client_for(sandbox, "basic"))
    panel._ipython_display_()
    assert shown == [panel.widget]


def _classes(widget: Any) -> set[str]:
    return set(widget._dom_classes)


def test_widgets_carry_the_dom_contract_and_widths(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> None:
    panel = ThresholdPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )
    assert {"qs-panel", "qs-threshold-panel"} <= _classes(panel.widget)
    for widget, name in (
        (panel.message, "qs-status"),
        (panel.class_picker, "qs-class-picker"),
        (panel.criterion_picker, "qs-criterion-picker"),
        (panel.slider, "qs-threshold-slider"),
        (panel.text, "qs-threshold-text"),
        (panel.table_html, "qs-whatif"),
        (panel.apply_button, "qs-apply"),
        (panel.undo_button, "qs-undo"),
        (panel.reload_button, "qs-reload"),
        (panel.open_button, "qs-open"),
        (panel.confirmation.box, "qs-confirmation"),
        (panel.confirmation.confirm_button, "qs-confirm"),
        (panel.confirmation.cancel_button, "qs-cancel"),
    ):
        assert name in _classes(widget), name
    # layout nits: the criterion dropdown is wide enough for its labels, metric names one line
    assert panel.criterion_picker.layout.min_width == "34em"
    assert panel.criterion_picker.style.description_width == "initial"
    assert "white-space:nowrap" in panel.table_html.value  # metric names on one line
    assert panel.table_html.layout.min_width == "30em"


def test_opening_never_spends_more_than_the_quota_share_without_a_click(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    with Client(
        sandbox.url,
        sandbox.keys["enterprise"],
        cache_dir=str(tmp_path / "cold"),
        progress=False,
        quota_share=0.05,  # 5% of 5,000: less than one request per closed trade
    ) as client:
        panel = ThresholdPanel(QUANT, client=client)
        assert panel.research is None
        assert panel.slider.disabled
        spent = 5000 - (client.quota.remaining or 0)
        assert spent <= 0.05 * 5000  # the playbook and the trades' page only
        text = panel.message.value
        assert "not in the cache" in text
        assert "5% share" in text
        assert "Press Open" in text
        assert panel.open_button.layout.display != "none"
        needed = int(panel.open_button.description.split()[2].replace(",", ""))
        assert needed > 0.05 * 5000
        assert f"needs {needed} more requests" in text
        panel.open_button.click()
        assert panel.research is not None
        assert not panel.slider.disabled
        assert panel.open_button.layout.display == "none"
        assert panel.entry is not None
        assert panel.threshold == panel.entry["threshold"]
        assert 5000 - (client.quota.remaining or 0) >= spent + needed  # spent on the click


def test_growth_is_told_the_cost_instead_of_spending_its_quota(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox, "growth")
    panel = ThresholdPanel(QUANT, client=client)
    assert (client.quota.remaining or 0) >= 500 - 2  # the playbook and one page of trades
    assert panel.research is None
    assert panel.open_button.layout.display != "none"
    assert "Open: spend" in panel.open_button.description
    assert "25%" in panel.message.value


def test_reload_reads_the_service_and_resets_the_control(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    panel = ThresholdPanel(
        QUANT,
        client=client,
        market_cap_class="DEGEN_CAP",
        criterion="smart_money_buys",
        trades=widget_data.trades,
        details=widget_data.details,
    )
    entry = panel.entry
    assert entry is not None
    assert panel.threshold == 2
    # someone else changes the entry (another client: this one's cache still holds 2)
    with Client(
        server.url, server.keys["enterprise"], cache_dir=tmp_path / "other", progress=False
    ) as other:
        L.update_playbook(QUANT, [{"config_id": entry["config_id"], "value": 4}], client=other)
    panel.set_threshold(5)
    panel.reload_button.click()
    assert "Reloaded" in panel.message.value
    assert panel.threshold == 4
    assert panel.text.value == "4"
    assert panel.apply() is None
