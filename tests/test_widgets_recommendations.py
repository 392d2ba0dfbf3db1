"""RecommendationsPanel, headless against the sandbox: the cross-check beside each
recommendation, Analyze without auto-apply, Apply one (verified, logged, undoable), and a
growth key's message."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pytest

import quantscope.loaders as L
from quantscope._client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import AuditLog, RecommendationsPanel

QUANT = 2


class Data(NamedTuple):
    trades: pd.DataFrame
    details: pd.DataFrame


@pytest.fixture(scope="module")
def data(sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> Data:
    """Quant 2's executed trades and the details of its closed buys (the session's widget
    cache: test_widgets_threshold loads the same, so only one module downloads them)."""
    with sqlite3.connect(sandbox.info.db_path) as conn:  # module fixtures run before the reset
        conn.execute("DELETE FROM quota")
    cache = tmp_path_factory.getbasetemp() / "widgets-cache"
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        trades = L.load_trades(QUANT, client=c)
        closed = trades[(trades["status"] == "Closed").to_numpy(bool)]
        ids = [int(i) for i in closed["evaluation_id"].dropna().unique()]
        return Data(trades, L.load_eval_details(ids, client=c))


def service_threshold(server: SandboxServer, config_id: str) -> float:
    """A playbook threshold as the service holds it now (a new client: nothing cached)."""
    with (
        tempfile.TemporaryDirectory() as cache,
        Client(server.url, server.keys["enterprise"], cache_dir=cache, progress=False) as c,
    ):
        playbook = L.load_playbook(QUANT, client=c)
    return float(playbook.loc[playbook["config_id"] == config_id, "threshold"].iloc[0])


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    made: list[Client] = []

    def make(server: SandboxServer, plan: str = "enterprise") -> Client:
        c = Client(server.url, server.keys[plan], cache_dir=str(tmp_path), progress=False)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def test_recommendations_with_the_client_cross_check(
    sandbox: SandboxServer, data: Data, client_for: Callable[..., Client]
) -> None:
    panel = RecommendationsPanel(
        QUANT, client=client_for(sandbox), trades=data.trades, details=data.details
    )
    recs = panel.recommendations
    assert recs is not None and len(recs) > 0
    assert panel.checks is not None and len(panel.checks) == len(recs)
    assert panel.checks["agrees"].all()  # the client recomputes the service's figures
    html = panel.table.value
    for header in ("sample_size (service / client)", "after_win_rate (service / client)", "agrees"):
        assert header in html
    assert "PnL vs now (what-if)" in html
    for rec_id in recs["recommendation_id"]:
        assert f"<td>{rec_id}</td>" in html
    unapplied = recs[~recs["applied"].fillna(False)]
    assert [v for _, v in panel.picker.options] == unapplied["recommendation_id"].tolist()
    # the selected one: its reasoning and its before/after table
    first = unapplied.iloc[0]
    assert panel.selected is not None
    assert panel.selected["recommendation_id"] == first["recommendation_id"]
    assert "win rate" in panel.detail.value and "now (" in panel.detail.value


def test_analyze_then_apply_one_verify_and_undo(
    fresh_sandbox: Callable[..., SandboxServer],
    data: Data,
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    client = client_for(server)
    panel = RecommendationsPanel(QUANT, client=client, trades=data.trades, details=data.details)
    assert panel.recommendations is not None
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
    assert config_id in shown and f"#{int(top['recommendation_id'])}" in shown
    panel.cancel()
    assert service_threshold(server, config_id) == old

    panel.apply()
    written = panel.confirm()
    assert written is not None and written.verified
    assert service_threshold(server, config_id) == new
    (logged,) = AuditLog(tmp_path / "audit.jsonl").entries()
    assert logged.action == "recommendation" and logged.verified
    assert logged.recommendation_id == int(top["recommendation_id"])
    assert (logged.old_value, logged.new_value) == (old, new)
    applied = panel.recommendations
    assert applied is not None
    assert bool(
        applied.loc[applied["recommendation_id"] == top["recommendation_id"], "applied"].iloc[0]
    )
    assert int(top["recommendation_id"]) not in {v for _, v in panel.picker.options}

    panel.undo_button.click()
    assert service_threshold(server, config_id) == old
    assert AuditLog(tmp_path / "audit.jsonl").entries()[-1].undoes == logged.id


def test_growth_key_gets_a_message_not_a_failing_call(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    client = client_for(sandbox, "growth")
    panel = RecommendationsPanel(QUANT, client=client)
    assert "Enterprise can read, run and apply" in panel.message.value
    assert panel.analyze_button.disabled and panel.apply_button.disabled
    assert panel.recommendations is None and panel.research is None

    # once the plan is known (the 403 reported it), a new panel sends nothing at all
    assert client.quota.plan == "growth"
    spent = client.quota.remaining
    again = RecommendationsPanel(QUANT, client=client)
    assert "growth" in again.message.value and client.quota.remaining == spent
