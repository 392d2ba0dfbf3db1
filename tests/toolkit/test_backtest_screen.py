"""The search-aware screen (issue 21, item 3) on hand-made clustered trades with a known truth.

``signal`` predicts each trade's outcome (planted); ``trait`` is a token's static trait that
predicts nothing. Trades cluster by token (each token its own win propensity), the situation
in which today's trade-level permutation declares a noise trait significant too often.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from _helpers import clustered_features

from quantscope import backtest as bt
from quantscope._errors import IncompleteDataWarning
from quantscope.backtest.screen import _folds


def test_the_planted_criterion_is_found_out_of_sample_and_the_trait_is_not() -> None:
    frame = clustered_features(n=800, seed=2, planted=0.2)
    found = bt.screen(frame, flips=500, resamples=500).set_index("criterion")
    assert found.loc["signal", "significant"]
    assert found.loc["signal", "p_value"] < 0.01
    assert found.loc["signal", "signal_lo"] > 0  # kept beat dropped, interval and all
    assert not found.loc["trait", "significant"]
    assert (found["hypotheses"] == 2).all()
    info = found.attrs["screen"]
    # Every threshold tried on every training set is counted, and stated on every row.
    assert info["combos_searched"] == found["combos_searched"].iloc[0] > 2 * 4
    assert info["folds"] == 4
    assert info["token_groups"] == 2
    assert info["unused_groups"] == []
    # Test trades: the 4 later blocks of 5, every token on its own side of the split.
    assert found.loc["signal", "test_trades"] == pytest.approx(800 * 4 / 5, abs=2)
    assert found.loc["signal", "tokens"] == 40
    # Without a playbook there is no replayed effect to report: NaN, not a guess.
    assert found["effect_d_win_rate"].isna().all()


@pytest.mark.slow  # 60 / 300 samples: a few seconds
def test_family_wise_false_positives_hold_at_5_percent_in_the_screen_and_the_ranking() -> None:
    """60 samples of clustered trades (30 tokens): how often is the noise trait declared
    significant? The whole-token test measured 6 of 60 here (its size with 30 tokens is a
    little above nominal, docs/metrics.md); the ranking reshuffling single trades (before
    issue 21) 21, the ranking flipping whole tokens (rank_criteria's test now) 6."""
    screened = ranked = 0
    samples = 60
    for seed in range(samples):
        frame = clustered_features(n=600, tokens=30, seed=100 + seed, planted=0.0, spread=0.3)
        found = bt.screen(frame, ["trait"], flips=200, resamples=50, seed=seed)
        screened += bool(found["significant"].any())
        rank = bt.rank_criteria(frame, ["trait"], flips=200, resamples=50, seed=seed)
        ranked += bool((rank["p_value"] < 0.05).any())
    assert screened / samples <= 0.12
    assert ranked / samples <= 0.12  # whole tokens flipped: the token trait does not "work"


def test_folds_purge_training_trades_that_close_after_the_test_block_opens() -> None:
    t0 = np.datetime64("2026-08-01T00:00")
    opened = t0 + np.arange(10) * np.timedelta64(1, "h")
    closed = opened + np.timedelta64(30, "m")
    closed[1] = t0 + np.timedelta64(9, "h")  # trade 1 runs past every later block's start
    folds = _folds(opened, closed, 1, pd.Timedelta(0))
    ((train, test),) = folds
    assert test.nonzero()[0].tolist() == [5, 6, 7, 8, 9]
    assert train.nonzero()[0].tolist() == [0, 2, 3, 4]  # trade 1 purged
    ((train, _),) = _folds(opened, closed, 1, pd.Timedelta("1h"))
    assert train.nonzero()[0].tolist() == [0, 2, 3]  # trade 4 closes within the embargo


def test_groups_too_small_to_screen_are_listed_with_a_warning() -> None:
    frame = clustered_features(n=600, seed=4)
    small = frame.index[:25]
    frame.loc[small, "market_cap_class"] = "MID_CAP"
    with pytest.warns(IncompleteDataWarning, match="quant 1 MID_CAP \\(25 trades\\)"):
        found = bt.screen(frame, flips=100, resamples=100)
    assert set(found["market_cap_class"]) == {"DEGEN_CAP"}
    (unused,) = found.attrs["screen"]["unused_groups"]
    assert unused["market_cap_class"] == "MID_CAP"
    assert unused["trades"] == 25
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bt.screen(frame[frame["market_cap_class"] == "DEGEN_CAP"], flips=10, resamples=10)


def test_the_criterion_score_pools_the_classes_in_standard_errors() -> None:
    """One score per (quant, criterion), what the screen ranks by: the planted criterion's is
    far above the trait's, which stays within noise of 0 (a raw gain has no such scale)."""
    frame = clustered_features(n=800, seed=2, planted=0.2)
    found = bt.screen(frame, flips=200, resamples=100)
    per = found.groupby("criterion")["criterion_score"]
    assert (per.nunique() == 1).all()  # the same on every class row of a criterion
    score = per.first()
    assert score["signal"] > 3.0
    assert abs(score["trait"]) < 2.5
    # One class: the pooled score is that row's own statistic.
    assert found["criterion_score"].to_numpy() == pytest.approx(found["statistic"].to_numpy())
    assert found.attrs["screen"]["min_kept_share"] == 0.35


def test_one_token_set_screens_on_a_time_split_alone() -> None:
    """token_groups=1 shares the tokens between training and test (documented); it used to
    leave every training set empty and screen nothing."""
    frame = clustered_features(n=800, seed=2, planted=0.2)
    found = bt.screen(frame, flips=100, resamples=50, token_groups=1).set_index("criterion")
    assert found.loc["signal", "test_trades"] == pytest.approx(800 * 4 / 5, abs=2)
    assert found.loc["signal", "significant"]
