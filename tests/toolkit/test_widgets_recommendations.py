"""RecommendationsPanel, headless against the sandbox: the cross-check beside each
recommendation, Analyze without auto-apply, Apply one (verified, logged, undoable), and a
growth key's message."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from _helpers import QUANT, WidgetData, service_playbook, value_of

from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import AuditLog, RecommendationsPanel
from quantscope.widgets import recommendations as recommendations_module


def service_threshold(server: SandboxServer, config_id: str) -> float:
    """A playbook threshold as the service holds it now (a new client: nothing cached)."""
    return float(value_of(service_playbook(server), config_id))


def test_recommendations_with_the_client_cross_check(
    sandbox: SandboxServer,
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The panel paints before its research (issue 24 item 7): the recommendations and
    buttons show at once, with a visible "computing" line and Apply disabled (saying why);
    the research fills them when done, with the values a panel computing them in its
    constructor shows (outside a kernel, the default)."""
    gate = threading.Event()
    real = recommendations_module.replayed_effects

    def held(*args: object, **kwargs: object) -> pd.DataFrame:
        gate.wait(20)  # a panel computing in its constructor waits the gate out, then fails
        return real(*args, **kwargs)  # type: ignore[arg-type]  # replayed_effects' own args

    monkeypatch.setattr(recommendations_module, "replayed_effects", held)
    panel = RecommendationsPanel(
        QUANT,
        client=client_for(sandbox),
        trades=widget_data.trades,
        details=widget_data.details,
        background=True,
    )
    recs = panel.recommendations
    # what the table held when the computing line went: a page that sees it go reads the table
    table_when_hidden: list[str] = []
    panel.computing.layout.observe(
        lambda change: (
            table_when_hidden.append(panel.table.value) if change["new"] == "none" else None
        ),
        names="display",
    )
    try:
        assert not panel.ready
        assert panel.computing.layout.display == ""
        assert "Computing the effects" in panel.computing.value
        assert panel.apply_button.disabled
        assert "Apply waits" in panel.apply_button.tooltip
        assert recs is not None
        assert len(recs) > 0
        for rec_id in recs["recommendation_id"]:  # the table is drawn, without the effects
            assert f"<td>{rec_id}</td>" in panel.table.value
        assert "effect: PnL change [95 %]" not in panel.table.value
    finally:
        gate.set()
    assert panel.wait(timeout=60)
    assert panel.ready
    assert panel.computing.layout.display == "none"
    assert table_when_hidden
    assert "effect: PnL change [95 %]" in table_when_hidden[0]  # the numbers came first
    assert not panel.apply_button.disabled
    assert panel.apply_button.tooltip == ""
    assert panel.checks is not None
    assert len(panel.checks) == len(recs)
    assert panel.checks["agrees"].all()  # the client recomputes the service's figures
    html = panel.table.value
    for header in ("sample_size (service / client)", "after_win_rate (service / client)", "agrees"):
        assert header in html
    assert "effect: PnL change [95 %]" in html
    # Side by side: the claim, the replayed effect (what applying produces, with its
    # interval) and the screen's out-of-sample signal.
    for header in ("service claims: win rate", "signal out of sample (screen) [95 %]"):
        assert header in html
    assert "Applying a recommendation produces the replayed effect" in html
    assert panel.checks.attrs["crosscheck"]["applying"] == "replay"
    first_check = panel.checks.iloc[0]
    assert f"{first_check['win_rate_change_replay'] * 100:+.1f} pts [" in html
    assert first_check["win_rate_change_filter"] == first_check["win_rate_change_service"]
    for rec_id in recs["recommendation_id"]:
        assert f"<td>{rec_id}</td>" in html
    unapplied = recs[~recs["applied"].fillna(False)]
    assert [v for _, v in panel.picker.options] == unapplied["recommendation_id"].tolist()
    # the selected one: its reasoning and its before/after table
    first = unapplied.iloc[0]
    assert panel.selected is not None
    assert panel.selected["recommendation_id"] == first["recommendation_id"]
    assert "win rate" in panel.detail.value
    assert "now (" in panel.detail.value
    assert "replayed effect" in panel.detail.value


def test_analyze_then_apply_one_verify_and_undo(
    fresh_sandbox: Callable[..., SandboxServer],
    widget_data: WidgetData,
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    panel = RecommendationsPanel(
        QUANT, client=client, trades=widget_data.trades, details=widget_data.details
    )
    assert panel.recommendations is not None
    assert panel.ready
    assert not panel.background
    before_ids = set(panel.recommendations["recommendation_id"])

    panel.analyze_button.click()
    recs = panel.recommendations
    assert "none applied" in panel.message.value
    assert not recs["applied"].fillna(False).any()  # analysis never auto-applies
    assert not set(recs["recommendation_id"]) & before_ids  # the unapplied ones were replaced

    top = recs.iloc[0]
    config_id = str(top["config_id"])
    old, new = float(top["old_threshold"]), float(top["new_threshold"])
    panel.select(int(top["recommendation_id"]))
    assert service_threshold(server, config_id) == old  # analyze changed no threshold
    panel.apply_button.click()
    shown = panel.confirmation.text.value
    assert config_id in shown
    assert f"#{int(top['recommendation_id'])}" in shown
    panel.cancel()
    assert service_threshold(server, config_id) == old

    panel.apply()
    written = panel.confirm()
    assert written is not None
    assert written.verified
    assert service_threshold(server, config_id) == new
    (logged,) = AuditLog(tmp_path / "audit.jsonl").entries()
    assert logged.action == "recommendation"
    assert logged.verified
    assert logged.recommendation_id == int(top["recommendation_id"])
    assert (logged.old_value, logged.new_value) == (old, new)
    applied = panel.recommendations
    assert applied is not None
    assert bool(
        applied.loc[applied["recommendation_id"] == top["recommendation_id"], "applied"].iloc[0]
    )
    rec_id = int(top["recommendation_id"])
    assert rec_id not in {v for _, v in panel.picker.options}
    assert panel._state(rec_id) == "applied"
    with pytest.raises(ValueError, match="it is applied"):  # refused before any request
        panel.select(rec_id)

    panel.undo_button.click()
    assert service_threshold(server, config_id) == old
    assert AuditLog(tmp_path / "audit.jsonl").entries()[-1].undoes == logged.id

    # Right after the undo (issue 24): the service still says applied, the panel says what
    # the playbook holds, offers it again, and re-applying is a compare-and-swap write (the
    # service's apply would answer 409 for an applied recommendation).
    undone = panel.recommendations
    assert undone is not None
    assert bool(undone.loc[undone["recommendation_id"] == rec_id, "applied"].iloc[0])
    assert panel._state(rec_id) == "undone"
    assert "<td>undone</td>" in panel.table.value
    assert rec_id in {v for _, v in panel.picker.options}
    panel.apply(rec_id)
    assert f"#{rec_id} again (it was undone)" in panel.confirmation.text.value
    again = panel.confirm()
    assert again is not None, panel.message.value
    assert again.verified, panel.message.value
    assert "again; verified" in panel.message.value
    assert "try again" not in panel.message.value
    assert service_threshold(server, config_id) == new
    assert panel._state(rec_id) == "applied"
    last = AuditLog(tmp_path / "audit.jsonl").entries()[-1]
    assert (last.action, last.old_value, last.new_value) == ("change", old, new)


def test_growth_key_gets_a_message_not_a_failing_call(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox, "growth")
    panel = RecommendationsPanel(QUANT, client=client)
    assert "Enterprise can read, run and apply" in panel.message.value
    assert panel.analyze_button.disabled
    assert panel.apply_button.disabled
    assert panel.recommendations is None
    assert panel.research is None

    # once the plan is known (the 403 reported it), a new panel sends nothing at all
    assert client.quota.plan == "growth"
    spent = client.quota.remaining
    again = RecommendationsPanel(QUANT, client=client)
    assert "growth" in again.message.value
    assert client.quota.remaining == spent
