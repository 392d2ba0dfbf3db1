"""The screen and the calibrated intervals on the sandbox world's history, over HTTP.

Atlas' (quant 1) closed, executed trades with their buy evaluations' values (838 trades of
seed 7: one eval-details request each), loaded once. The generator plants
``smart_money_buys``, ``buy_sell_ratio``, ``ai_confidence`` and ``top10_holders_pct``; the
social criteria are noise.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from _helpers import reset_quota

import quantscope.loaders as L
from quantscope import backtest as bt
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.sandbox.sim import criteria as sim_criteria

pytestmark = pytest.mark.slow

# The generator's declared truth (the toolkit never reads it; its tests may).
PLANTED = set(sim_criteria.PLANTED)
NOISE = set(sim_criteria.NOISE)


@pytest.fixture(scope="module")
def features(sandbox: SandboxServer, research_client: Client) -> pd.DataFrame:
    reset_quota(sandbox)
    trades = L.load_trades(1, client=research_client)
    return bt.trade_features(trades, confirm=True, client=research_client)


def test_intervals_of_the_replayed_rows_equal_what_if_and_cover_every_decision_number(
    features: pd.DataFrame,
) -> None:
    degen = features[features["market_cap_class"] == "DEGEN_CAP"]
    degen.attrs = features.attrs
    got = bt.what_if_intervals(degen, "smart_money_buys", [1, 2, 3, 4, 5])
    ref = bt.what_if(degen, "smart_money_buys", [1, 2, 3, 4, 5])
    for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
        assert got[name].to_numpy() == pytest.approx(ref[name].to_numpy(), abs=1e-9)
    # 1 and 2 keep what the current threshold (2) keeps: replayed, nothing moves; the row
    # still says how far a future sample could move (what_if's bootstrap said [0, 0] before
    # it took its intervals from uncertainty: now the same rule-of-three interval).
    assert got["interval"].tolist()[:2] == ["nothing moved: rule of three"] * 2
    assert ref["d_total_pnl_usd_hi"].iloc[0] > 0 > ref["d_total_pnl_usd_lo"].iloc[0]
    for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
        for side in ("lo", "hi"):
            column = f"{name}_{side}"
            assert got[column].to_numpy() == pytest.approx(ref[column].to_numpy(), abs=1e-9)
    assert (got["d_win_rate_hi"].iloc[:2] > 0.02).all()
    assert (got["d_win_rate_lo"].iloc[:2] < 0).all()
    moved = got.iloc[2:]
    assert (moved["interval"] == "bootstrap").all()
    assert (moved["moved_tokens"] >= 10).all()
    assert (moved["d_win_rate_lo"] < moved["d_win_rate"]).all()
    assert (moved["d_win_rate"] < moved["d_win_rate_hi"]).all()
    assert got.attrs["intervals"]["unit"] == "token"


def test_the_screen_finds_planted_criteria_and_no_noise_out_of_sample(
    features: pd.DataFrame,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every class of Atlas is big enough: no warning
        found = bt.screen(features)
    assert set(found["market_cap_class"]) == {"DEGEN_CAP", "LOW_CAP", "MID_CAP"}
    # 18 criteria x 3 classes, but those no training set could split (a value nearly every
    # trade shares: thresholds keep all or under 35 %) are listed apart, untested.
    untested = found.attrs["screen"]["untested"]
    assert len(found) + len(untested) == 18 * 3
    assert (found["hypotheses"] == len(found)).all()
    assert {u["criterion"] for u in untested} <= {"lp_locked", "mint_authority"}
    assert found.attrs["screen"]["combos_searched"] > len(found) * 4
    significant = found[found["significant"]]
    assert set(significant["criterion"])
    assert set(significant["criterion"]) <= PLANTED
    assert not found.loc[found["criterion"].isin(NOISE), "significant"].any()
    # The replayed effect is there (the features keep the playbook), with an interval.
    effect = found[["effect_d_win_rate_lo", "effect_d_win_rate", "effect_d_win_rate_hi"]]
    assert effect.notna().all().all()
    assert (effect.iloc[:, 0] <= effect.iloc[:, 1] + 1e-12).all()
    assert (effect.iloc[:, 1] <= effect.iloc[:, 2] + 1e-12).all()
    # A planted criterion's signal beats a noise one's more often than not.
    pairs = []
    for _, g in found.groupby("market_cap_class"):
        p = g.loc[g["criterion"].isin(PLANTED), "signal"].to_numpy()
        n = g.loc[g["criterion"].isin(NOISE), "signal"].to_numpy()
        pairs.append((p[:, None] > n[None, :]).ravel())
    assert np.concatenate(pairs).mean() > 0.65  # 0.69 here (Atlas, seed 7); see docs/metrics.md
    # Ranked by the criterion's score (classes pooled, in standard errors), every planted
    # criterion but the weak top10_holders_pct is above every noise one.
    score = found.groupby("criterion")["criterion_score"].first()
    p = score[score.index.isin(PLANTED)]
    n = score[score.index.isin(NOISE)]
    beats = (p.to_numpy()[:, None] > n.to_numpy()[None, :]).mean()
    assert beats > 0.9, (beats, score.sort_values())
    # The signal alone (effect=False, what the RecommendationsPanel runs): the same signal,
    # tests and scores, and no replayed effect.
    alone = bt.screen(features, effect=False)
    effects = [c for c in found.columns if c.startswith("effect_")]
    pd.testing.assert_frame_equal(alone.drop(columns=effects), found.drop(columns=effects))
    assert effects
    assert alone[effects].isna().all().all()
