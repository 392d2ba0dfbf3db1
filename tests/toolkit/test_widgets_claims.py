"""The README's optimizer showcase in RecommendationsPanel: the claim beside what it does.

Seed 7, Cinder (quant 3), MID_CAP ``smart_money_buys`` 2 -> 3: the service claims win rate
0.528 -> 0.765 with confidence 0.47; replayed (what applying does) it is -10 trades, +0.3
points and -$801.85 (issue 21). The panel shows the replayed figures with their intervals and
the screen's verdict before the Apply button. Only MID_CAP's buy details are loaded (the
evaluations list gives each trade's market cap): ~410 eval-details requests, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pandas as pd
import pytest
from _helpers import reset_quota

import quantscope.loaders as L
from quantscope import backtest as bt
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import RecommendationsPanel

pytestmark = pytest.mark.slow

CINDER = 3


class Showcase(NamedTuple):
    trades: pd.DataFrame
    details: pd.DataFrame


@pytest.fixture(scope="module")
def showcase(sandbox: SandboxServer, module_client: Client) -> Showcase:
    reset_quota(sandbox)
    trades = L.load_trades(CINDER, client=module_client)
    closed = trades[(trades["status"] == "Closed").to_numpy(bool)]
    evaluations = L.load_evaluations(
        CINDER, evaluation_type="TOKEN_BUY", passed=True, client=module_client, confirm=True
    )
    mid = evaluations[
        (bt.market_cap_class(evaluations["market_cap_usd"]) == "MID_CAP")
        & evaluations["evaluation_id"].isin(closed["evaluation_id"])
    ]
    ids = [int(i) for i in mid["evaluation_id"].unique()]
    return Showcase(trades, L.load_eval_details(ids, client=module_client, confirm=True))


def test_the_showcase_claim_sits_beside_its_replayed_effect_and_interval(
    sandbox: SandboxServer, showcase: Showcase, client_for: Callable[..., Client]
) -> None:
    panel = RecommendationsPanel(
        CINDER, client=client_for(sandbox), trades=showcase.trades, details=showcase.details
    )
    recs = panel.recommendations
    assert recs is not None
    assert panel.effects is not None
    claim = recs[
        (recs["market_cap_class"] == "MID_CAP")
        & (recs["criterion"] == "smart_money_buys")
        & (recs["old_threshold"] == 2)
        & (recs["new_threshold"] == 3)
    ].iloc[0]
    assert (round(claim["before_win_rate"], 3), round(claim["after_win_rate"], 3)) == (
        0.528,
        0.765,
    )
    assert round(claim["confidence"], 2) == 0.47
    effect = panel.effects[panel.effects["recommendation_id"] == claim["recommendation_id"]]
    row = effect.iloc[0]
    assert row["d_trades"] == -10
    assert round(row["effect_d_win_rate"] * 100, 1) == 0.3
    assert row["effect_d_total_pnl_usd"] == pytest.approx(-801.85, abs=0.005)
    # each with its interval, which holds zero: applying it is no proven gain
    for name in ("d_win_rate", "d_total_pnl_usd", "d_roi"):
        assert row[f"effect_{name}_lo"] < row[f"effect_{name}"] < row[f"effect_{name}_hi"]
    assert row["effect_d_total_pnl_usd_hi"] > 0 > row["effect_d_total_pnl_usd_lo"]
    table = panel.table.value
    assert "52.8% → 76.5%" in table  # the claim...
    assert "47.0%" in table
    assert "-$801.85 [" in table  # ...its effect
    assert "+0.3 pts [" in table
    assert "(-10)" in table

    panel.select(int(claim["recommendation_id"]))
    detail = panel.detail.value
    assert "The service claims: win rate 52.8% → 76.5% (confidence 47.0%)" in detail
    assert "Replayed, applying it does" in detail
    assert "-$801.85 [" in detail
    assert "Out of sample, smart_money_buys" in detail or "Not a finding" in detail
