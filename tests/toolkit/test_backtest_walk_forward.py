"""walk_forward on hand-made frames: purged training windows, the embargo, several criteria
per call with the search counted, groups left out with a warning, intervals on every fold.

The seed-7 figures (292 of 4,767 training rows leaked, 25 of 58 in one fold) are checked in
test_backtest_replay_default.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from quantscope import IncompleteDataWarning
from quantscope import backtest as bt
from quantscope.backtest.questions import QUESTION_LABELS


def timed_frame(n: int, seed: int, hold_hours: float, classes: dict[str, int] | None = None):
    """``n`` trades of quant 1 opened an hour apart and closed ``hold_hours`` later (trades
    overlap the next ones), 4 per token; ``signal`` predicts the outcome, ``noise`` does not.
    ``classes``: trades per market-cap class (default: all DEGEN_CAP)."""
    classes = classes or {"DEGEN_CAP": n}
    rng = np.random.default_rng(seed)
    klass = np.concatenate([[c] * m for c, m in classes.items()])
    n = len(klass)
    opened = pd.Timestamp("2026-01-01", tz="UTC") + pd.to_timedelta(np.arange(n), unit="h")
    signal = rng.normal(size=n)
    pnl = np.where(signal + rng.normal(size=n) > 0, 10.0, -10.0)
    frame = pd.DataFrame(
        {
            "trade_id": pd.array(np.arange(n), dtype="Int64"),
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "token_id": pd.array(np.arange(n) // 4, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(klass),
            "opened_at": opened,
            "closed_at": opened + pd.Timedelta(hours=hold_hours),
            "buy_cost_usd": 100.0,
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "signal": signal,
            "noise": rng.normal(size=n),
        }
    )
    ops = {"signal": "V_GTE_T", "noise": "V_GTE_T"}
    frame.attrs["backtest"] = {
        "criteria": tuple(ops),
        "operators": ops,
        "decided_thresholds": {(1, c): {"signal": -10.0, "noise": -10.0} for c in classes},
    }
    return frame


def test_training_trades_that_close_after_the_test_block_opens_are_purged() -> None:
    # 10-hour holds, trades an hour apart: the last 10 training trades of every fold are
    # still open when its test block opens.
    frame = timed_frame(400, 1, hold_hours=10.0)
    table = bt.walk_forward(frame, "signal", rule="filter", folds=3, resamples=200)
    assert table["train_purged"].tolist() == [10, 10, 10]
    assert table["train_trades"].tolist() == [100 - 10, 200 - 10, 300 - 10]
    # No training trade's outcome was unknown when the test block began.
    for row in table.itertuples():
        train = frame[frame["opened_at"] <= row.train_end]
        known = train[train["closed_at"] < row.test_start]
        assert len(known) == row.train_trades
    info = table.attrs["walk_forward"]
    assert (info["train_purged"], info["train_rows_before_purge"]) == (30, 600)
    assert info["embargo"] == "0 days 00:00:00"
    assert "purge" in info
    # An embargo drops those closing within it before the test block opens too.
    later = bt.walk_forward(frame, "signal", rule="filter", folds=3, embargo="5h", resamples=200)
    assert later["train_purged"].tolist() == [15, 15, 15]
    assert later.attrs["walk_forward"]["embargo"] == "0 days 05:00:00"
    with pytest.raises(ValueError, match="embargo must not be negative"):
        bt.walk_forward(frame, "signal", rule="filter", embargo="-1h")


def test_every_criterion_by_default_with_the_search_counted() -> None:
    frame = timed_frame(300, 2, hold_hours=0.5)
    table = bt.walk_forward(frame, rule="filter", folds=2, resamples=200)
    assert table["criterion"].tolist() == ["signal"] * 2 + ["noise"] * 2
    combos = int(table["candidates"].sum())
    assert combos > 4
    assert (table["combos_searched"] == combos).all()
    info = table.attrs["walk_forward"]
    assert info["combos_searched"] == combos
    assert info["criteria"] == ["signal", "noise"]
    assert info["criterion"] is None  # several: no single one
    assert (info["question"], info["label"]) == ("signal", QUESTION_LABELS["signal"])
    assert "upper_bound" not in info
    two = bt.walk_forward(frame, ["noise", "signal"], rule="filter", folds=2, resamples=200)
    assert two["criterion"].tolist() == ["noise"] * 2 + ["signal"] * 2
    one = bt.walk_forward(frame, "signal", rule="filter", folds=2, resamples=200)
    assert one.attrs["walk_forward"]["criterion"] == "signal"
    pd.testing.assert_frame_equal(
        one.drop(columns="combos_searched"),
        table[table["criterion"] == "signal"].drop(columns="combos_searched"),
    )


def test_each_fold_carries_its_decision_numbers_with_intervals_and_sample_sizes() -> None:
    frame = timed_frame(400, 3, hold_hours=0.5)
    table = bt.walk_forward(frame, "signal", rule="filter", folds=3, resamples=300)
    for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
        lo, est, hi = table[f"{name}_lo"], table[name], table[f"{name}_hi"]
        assert (lo <= est + 1e-12).all()
        assert (est <= hi + 1e-12).all()
        assert (hi > lo).all()
    assert table["d_win_rate"].tolist() == table["out_of_sample_gain"].tolist()
    assert table["d_total_pnl_usd"].tolist() == table["out_of_sample_pnl_change_usd"].tolist()
    assert set(table["interval"]) <= {"bootstrap", "nothing moved: rule of three"}
    # The test blocks' sizes: 100 trades of 25 tokens each (4 trades a token).
    assert table["test_trades"].tolist() == [100, 100, 100]
    assert table["test_tokens"].tolist() == [25, 25, 25]
    # The same figures as the interval module gives on the test block alone.
    row = table.iloc[1]
    block = frame.iloc[200:300]
    block.attrs = frame.attrs
    again = bt.what_if_intervals(block, "signal", [row["threshold"]], rule="filter", resamples=300)
    for name in ("d_win_rate", "d_win_rate_lo", "d_win_rate_hi", "win_rate_lo"):
        assert row[name] == pytest.approx(again[name].iloc[0], abs=1e-12)


def test_groups_under_the_minimum_are_left_out_with_a_warning() -> None:
    frame = timed_frame(0, 4, hold_hours=0.5, classes={"DEGEN_CAP": 200, "MID_CAP": 40})
    with pytest.warns(IncompleteDataWarning, match=r"1 quant/class group\(s\) left out") as got:
        table = bt.walk_forward(frame, rule="filter", folds=2, resamples=200)
    assert "quant 1 MID_CAP (40 trades)" in str(got[0].message)
    assert set(table["market_cap_class"]) == {"DEGEN_CAP"}
    assert table.attrs["walk_forward"]["skipped"] == [
        {"quant_id": 1, "market_cap_class": "MID_CAP", "trades": 40}
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bt.walk_forward(frame, "signal", rule="filter", folds=2, min_trades=30, resamples=200)
