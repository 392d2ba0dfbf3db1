"""Analytics: every metric on hand-computed fixtures, and properties on generated trade frames.

The hand fixture (``HAND``, shared with the accessor and plot tests in ``_helpers.frames``) is
small enough to check on paper; the numbers in the expectations
are written as the arithmetic that produces them. The properties hold the vectorised kernel to
a plain-Python reference written from docs/metrics.md (``reference_summary``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _helpers import EVALS, HAND, at, details_frame, trades_frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quantscope import analytics as A
from quantscope.analytics import _kernel

ROOT = Path(__file__).resolve().parents[2]
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ATLAS = HAND[HAND["quant_name"] == "Atlas"]
BOREALIS = HAND[HAND["quant_name"] == "Borealis"]

ATLAS_DAILY = [100.0, -80.0, 0.0, 0.0, 240.0]  # 09-01 .. 09-05, the two middle days flat
ATLAS_EXPECTED: dict[str, Any] = {
    "trades": 6,
    "wins": 3,
    "losses": 2,
    "breakeven": 1,
    "win_rate": 3 / 6,
    "total_pnl_usd": 260.0,
    "gross_profit_usd": 340.0,
    "gross_loss_usd": -80.0,
    "avg_pnl_usd": 260 / 6,
    "avg_win_usd": 340 / 3,
    "avg_loss_usd": -80 / 2,
    "payoff_ratio": (340 / 3) / 40,
    "profit_factor": 340 / 80,
    "expectancy_usd": 3 / 6 * (340 / 3) + 2 / 6 * (-40),
    # sum of squares 55000, minus n * mean**2, over n - 1
    "sqn": math.sqrt(6) * (260 / 6) / math.sqrt((55000 - 260**2 / 6) / 5),
    "roi": 260 / 3400,
    "best_trade_usd": 200.0,
    "worst_trade_usd": -50.0,
    "max_win_streak": 2,  # W L L B W W
    "max_loss_streak": 2,
    "avg_holding_time": pd.Timedelta(hours=(2 + 22 + 1 + 24 + 24 + 12) / 6),
    "max_drawdown_usd": -80.0,  # cum 100 50 20 20 220 260, peak 100
    "max_drawdown": -80 / (10_000 + 100),
    "max_drawdown_duration": at(5, 6) - at(1, 12),  # peak: trade 1's close; regained: trade 5
    "days": 5,
    # daily 100 -80 0 0 240: mean 52, squared deviations sum to 60480
    "sharpe": 52 / math.sqrt(60480 / 4) * math.sqrt(365),
    "sortino": 52 / math.sqrt(80**2 / 5) * math.sqrt(365),
    "capital_usd": 10_000.0,
    "open_trades": 1,
    "unrealised_pnl_usd": -25.0,
}
BOREALIS_EXPECTED: dict[str, Any] = {
    "trades": 2,
    "wins": 0,
    "losses": 2,
    "breakeven": 0,
    "win_rate": 0.0,
    "total_pnl_usd": -120.0,
    "gross_profit_usd": 0.0,
    "gross_loss_usd": -120.0,
    "avg_pnl_usd": -60.0,
    "avg_win_usd": math.nan,
    "avg_loss_usd": -60.0,
    "payoff_ratio": math.nan,  # no win
    "profit_factor": 0.0,
    "expectancy_usd": -60.0,
    "sqn": math.sqrt(2) * -60 / math.sqrt((40**2 + 40**2) / 1),
    "roi": -120 / 200,
    "best_trade_usd": -20.0,
    "worst_trade_usd": -100.0,
    "max_win_streak": 0,
    "max_loss_streak": 2,
    "avg_holding_time": pd.Timedelta(hours=(48 + 24) / 2),
    "max_drawdown_usd": -120.0,  # from the flat start, never regained
    "max_drawdown": -120 / 10_000,
    "max_drawdown_duration": at(3) - at(1),  # first open to the last close
    "days": 1,
    "sharpe": math.nan,  # one day
    "sortino": math.nan,
    "capital_usd": 10_000.0,
    "open_trades": 0,
    "unrealised_pnl_usd": 0.0,
}


def assert_metrics(actual: pd.Series | dict[str, Any], expected: dict[str, Any]) -> None:
    """Exact for counts and durations, 1e-12 relative for floats, NaN equal to NaN."""
    for name, want in expected.items():
        got = actual[name]
        if isinstance(want, pd.Timedelta) or want is pd.NaT:
            assert got == want or (pd.isna(got) and pd.isna(want)), name
        elif isinstance(want, int):
            assert got == want, name
            assert float(got).is_integer(), name
        elif math.isnan(want):
            assert math.isnan(got), name
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), name


# --------------------------------------------------------------------------------------------
# Hand fixtures: trades
# --------------------------------------------------------------------------------------------


def test_summary_by_hand() -> None:
    atlas = A.summary(ATLAS)
    assert list(atlas.index) == list(A.SUMMARY_METRICS)
    assert atlas.index.name == "metric"
    assert_metrics(atlas, ATLAS_EXPECTED)
    assert_metrics(A.summary(BOREALIS), BOREALIS_EXPECTED)


def test_summary_with_open_positions_marks_them_at_their_mark_time() -> None:
    # The open -25 joins at 09-06 01:00 (opened 00:00, held 3600 s): W L L B W W L.
    s = A.summary(ATLAS, include_open=True)
    assert_metrics(
        s,
        {
            "trades": 7,
            "wins": 3,
            "losses": 3,
            "win_rate": 3 / 7,
            "total_pnl_usd": 235.0,
            "gross_loss_usd": -105.0,
            "roi": 235 / 3650,
            "max_loss_streak": 2,
            "max_drawdown_usd": -80.0,
            "days": 6,
            "sharpe": A.sharpe_ratio([*ATLAS_DAILY, -25.0]),
            "avg_holding_time": pd.Timedelta(hours=(85 + 1) / 7).round("ms"),  # to the ms
            "open_trades": 1,
            "unrealised_pnl_usd": -25.0,
        },
    )


def test_by_quant_is_each_quants_summary_and_capital_follows_the_quants() -> None:
    table = A.by(HAND, "quant_name")
    assert list(table.index) == ["Atlas", "Borealis"]
    assert table.index.name == "quant_name"
    assert list(table.columns) == list(A.SUMMARY_METRICS)
    assert_metrics(table.loc["Atlas"], ATLAS_EXPECTED)
    assert_metrics(table.loc["Borealis"], BOREALIS_EXPECTED)
    assert A.summary(HAND)["capital_usd"] == 20_000.0  # two quants
    # together: cum 100 50 20 -80 -100 -100 100 140, a fall of 200 from the peak of 100
    assert A.summary(HAND, capital=5_000)["max_drawdown"] == pytest.approx(-200 / 5_100)


def test_by_day_week_and_month_label_periods_by_their_utc_start() -> None:
    daily = A.by(ATLAS, freq="D")
    assert list(daily.index) == [at(1), at(2), at(4), at(5), at(6)]
    assert daily.index.name == "period"
    assert str(daily.index.dtype) == "datetime64[ms, UTC]"
    assert daily["trades"].tolist() == [1, 2, 1, 2, 0]  # 09-06: only the open position's mark
    assert daily["total_pnl_usd"].tolist() == [100.0, -80.0, 0.0, 240.0, 0.0]
    assert daily["open_trades"].tolist() == [0, 0, 0, 0, 1]
    assert daily.loc[at(2), "max_loss_streak"] == 2
    weekly = A.by(HAND, "quant_name", freq="W")
    assert list(weekly.index) == [("Atlas", at(0)), ("Borealis", at(0))]  # Monday 08-31
    assert weekly["trades"].tolist() == [6, 2]
    monthly = A.by(ATLAS, freq="ME")  # resample spelling, the same calendar month
    assert list(monthly.index) == [at(1)]
    assert monthly["trades"].iloc[0] == 6


def test_a_periods_drawdown_reads_the_account_it_starts_under_water() -> None:
    # Atlas's cum 100 | 50 20 | 20 | 220 260 by close day; the peak of 100 is set on 09-01.
    daily = A.by(ATLAS, freq="D")
    assert daily["max_drawdown_usd"].tolist() == [0.0, -80.0, -80.0, 0.0, 0.0]
    assert daily.loc[at(4), "max_drawdown"] == -80 / 10_100  # a flat day, still under water
    assert daily.loc[at(4), "max_drawdown_duration"] == at(5, 6) - at(1, 12)  # peak to recovery
    assert daily.loc[at(6), "trades"] == 0
    assert daily.loc[at(6), "max_drawdown"] == 0.0
    fall = A.drawdown(ATLAS)
    assert daily.loc[at(2), "max_drawdown"] == fall.loc[at(2, 9), "drawdown"].min()
    # each quant is its own account of 10,000 USD; the frame together one of 20,000 USD
    weekly = A.by(HAND, "quant_name", freq="W")
    assert weekly["capital_usd"].tolist() == [10_000.0, 10_000.0]
    assert weekly.loc[("Borealis", at(0)), "max_drawdown"] == -120 / 10_000
    assert A.by(HAND, freq="W")["capital_usd"].tolist() == [20_000.0]


def test_ratio_flags_and_no_ratio_for_a_short_period() -> None:
    s = A.summary(ATLAS)  # five days: reported, flagged
    assert s["few_days"]
    assert not s["no_losing_day"]
    assert math.isfinite(s["sharpe"])
    weekly = A.by(ATLAS, freq="W")
    assert weekly["few_days"].tolist() == [True]
    assert math.isnan(weekly["sharpe"].iloc[0])
    assert math.isnan(weekly["sortino"].iloc[0])
    winners = trades_frame(
        [
            {"id": 1, "opened": at(1), "closed": at(1, 5), "pnl": 10.0},
            {"id": 2, "opened": at(2), "closed": at(2, 5), "pnl": 30.0},
        ]
    )
    assert A.summary(winners)["sortino"] == math.inf
    assert A.summary(winners)["no_losing_day"]
    empty = A.summary(HAND.iloc[:0])
    assert empty["few_days"]
    assert not empty["no_losing_day"]


def test_the_ratios_carry_their_sample_and_a_probabilistic_sharpe() -> None:
    """Issue 21: a headline Sharpe says how many days and losing days it rests on, and the
    probability that the true Sharpe is above 0; a short sample is flagged."""
    s = A.summary(ATLAS)
    daily = A.daily_pnl(ATLAS)
    assert s["losing_days"] == int((daily < 0).sum()) == 1
    assert s["psr"] == pytest.approx(A.probabilistic_sharpe_ratio(daily.to_numpy()), rel=1e-12)
    assert 0.0 < s["psr"] < 1.0
    assert s["short_sample"]  # five days, one lost
    weekly = A.by(ATLAS, freq="W")
    assert weekly["losing_days"].tolist() == [1]
    assert math.isnan(weekly["psr"].iloc[0])
    assert A.summary(HAND.iloc[:0])["short_sample"]
    # the deflated ratio of one trial is the probabilistic one; more trials lower it
    x = daily.to_numpy()
    assert A.deflated_sharpe_ratio(x, 1, 0.5) == A.probabilistic_sharpe_ratio(x)
    assert A.deflated_sharpe_ratio(x, 50, 0.5) < A.probabilistic_sharpe_ratio(x)


def test_psr_of_many_groups_equals_the_one_series_definition() -> None:
    rng = np.random.default_rng(3)
    rows = [
        {"id": i, "opened": at(d), "closed": at(d, 5), "pnl": float(rng.normal(5, 40))}
        for i, d in enumerate(rng.integers(1, 60, size=120).tolist(), start=1)
    ]
    frame = trades_frame(rows)
    s = A.summary(frame)
    x = A.daily_pnl(frame).to_numpy()
    assert s["days"] == x.size
    assert s["losing_days"] == int((x < 0).sum())
    assert s["psr"] == pytest.approx(A.probabilistic_sharpe_ratio(x), rel=1e-9)


@pytest.mark.parametrize("freq", ["week", "2W", "min", "H", "d"])
def test_a_freq_that_is_not_a_calendar_period_is_refused_in_one_line(freq: str) -> None:
    with pytest.raises(ValueError, match=rf"^freq={freq!r} is not a calendar period; use one of "):
        A.by(HAND, freq=freq)
    with pytest.raises(ValueError, match="D \\(day\\), W \\(week\\)"):
        A.pass_rates(EVALS, freq=freq)


def test_hypothetical_trades_are_left_out_unless_asked_for() -> None:
    frame = HAND.assign(
        decision=pd.Categorical(
            [
                "APPROVE",
                "REJECT",
                "APPROVE",
                "RECOMMEND",
                "APPROVE",
                "DELAY",
                "DELAY",
                *["APPROVE"] * 2,
            ]
        ),
        wait_until=pd.Series([pd.NaT] * 6 + [at(7), pd.NaT, pd.NaT], dtype="datetime64[ms, UTC]"),
    )
    # trade 3 rejected, trade 4 recommended; the open DELAY (7) waits past its mark (09-06 01:00)
    assert A.executed(frame).tolist() == [True, False, True, False, True, True, False, True, True]
    assert A.summary(frame)["trades"] == 6
    assert A.summary(frame)["open_trades"] == 0
    assert A.summary(frame, execution="all")["hypothetical_trades"] == 2
    assert A.equity_curve(frame)["trade_id"].tolist() == [1, 2, 8, 9, 5, 6]  # close order
    only = A.select_execution(frame, "hypothetical")
    assert only["trade_id"].tolist() == [3, 4, 7]
    assert only.attrs["execution"]["left_out_rows"] == 6
    assert A.summary(only).name == "hypothetical"  # nothing executed: summarised as such
    entered = frame.assign(wait_until=frame["wait_until"].where(frame["trade_id"] != 7, at(5)))
    assert A.executed(entered).tolist() == [True, False, True, False, True, True, True, True, True]
    assert A.executed(HAND.drop(columns="decision")).all()


def test_by_groups_only_what_occurs_and_keeps_missing_keys() -> None:
    frame = HAND.assign(
        chain=pd.Categorical(
            ["SOLANA", "BASE", "BASE", None, "SOLANA", "SOLANA", "BASE", "BASE", "SOLANA"],
            categories=["BASE", "BSC", "SOLANA"],
        )
    )
    table = A.by(frame, ["chain"])
    assert table.index.tolist()[:2] == ["BASE", "SOLANA"]
    assert pd.isna(table.index[2])
    assert table["trades"].tolist() == [3, 4, 1]  # no BSC row; the open BASE one is apart
    assert table["open_trades"].tolist() == [1, 0, 0]
    assert table["trades"].sum() == A.summary(frame)["trades"]


def test_by_status_reports_the_open_book_in_its_own_row() -> None:
    table = A.by(HAND, "status")
    assert table.loc["Closed", "trades"] == 8
    assert table.loc["Closed", "open_trades"] == 0
    assert table.loc["Open", "trades"] == 0
    assert table.loc["Open", "open_trades"] == 1
    assert math.isnan(table.loc["Open", "win_rate"])
    assert table.loc["Open", "unrealised_pnl_usd"] == -25.0


def test_by_needs_keys_or_freq() -> None:
    with pytest.raises(TypeError, match="summary"):
        A.by(HAND)


def test_win_rate_and_roi_by_hand() -> None:
    assert A.win_rate(ATLAS) == 3 / 6
    assert A.win_rate(ATLAS, include_open=True) == 3 / 7
    assert A.roi(ATLAS) == pytest.approx(260 / 3400)
    assert A.roi(ATLAS, include_open=True) == pytest.approx(235 / 3650)
    assert math.isnan(A.win_rate(HAND.iloc[:0]))


def test_equity_curve_and_drawdown_by_hand() -> None:
    curve = A.equity_curve(ATLAS)
    assert curve.index.name == "closed_at"
    assert str(curve.index.dtype) == "datetime64[ms, UTC]"
    assert list(curve.index) == [at(1, 12), at(2, 9), at(2, 9), at(4), at(5, 6), at(5, 12)]
    assert curve["trade_id"].tolist() == [1, 2, 3, 4, 5, 6]
    assert curve["cum_pnl_usd"].tolist() == [100.0, 50.0, 20.0, 20.0, 220.0, 260.0]
    assert (curve["equity_usd"] - 10_000).tolist() == curve["cum_pnl_usd"].tolist()
    dd = A.drawdown(ATLAS)
    assert dd["drawdown_usd"].tolist() == [0.0, -50.0, -80.0, -80.0, 0.0, 0.0]
    assert dd["peak_equity_usd"].tolist() == [10_100.0] * 4 + [10_220.0, 10_260.0]
    np.testing.assert_allclose(dd["drawdown"], [0, -50 / 10_100, -80 / 10_100, -80 / 10_100, 0, 0])
    assert dd["drawdown_usd"].min() == A.summary(ATLAS)["max_drawdown_usd"]
    first_loss = A.drawdown(BOREALIS)  # the flat start is the peak
    assert first_loss["peak_equity_usd"].tolist() == [10_000.0, 10_000.0]
    assert first_loss["drawdown_usd"].tolist() == [-100.0, -120.0]


def test_daily_pnl_and_returns_by_hand() -> None:
    daily = A.daily_pnl(ATLAS)
    assert daily.name == "pnl_usd"
    assert daily.index.name == "date"
    assert list(daily.index) == [at(d) for d in range(1, 6)]
    assert daily.tolist() == ATLAS_DAILY
    returns = A.daily_returns(ATLAS)
    np.testing.assert_allclose(returns, [100 / 10_000, -80 / 10_100, 0, 0, 240 / 10_020])
    assert 10_000 * np.prod(1 + returns.to_numpy()) == pytest.approx(10_260)
    assert A.daily_pnl(ATLAS, include_open=True).tolist() == [*ATLAS_DAILY, -25.0]


def test_one_series_statistics_by_hand() -> None:
    assert A.sharpe_ratio([1.0, 2.0, 3.0]) == pytest.approx(2 / 1 * math.sqrt(365))
    assert A.sharpe_ratio([1.0, 2.0, 3.0], periods_per_year=252) == pytest.approx(
        2 * math.sqrt(252)
    )
    assert A.sortino_ratio([-1.0, 1.0, 3.0]) == pytest.approx(1 / math.sqrt(1 / 3) * math.sqrt(365))
    assert A.sortino_ratio([1.0, 2.0]) == math.inf
    assert math.isnan(A.sortino_ratio([0.0, 0.0]))
    assert math.isnan(A.sharpe_ratio([0.1, 0.1, 0.1]))  # rounding noise is not a spread
    assert math.isnan(A.sharpe_ratio([5.0]))
    dd = A.max_drawdown([100.0, -50.0, -30.0, 0.0, 200.0, 40.0], 10_000)
    assert dd == A.Drawdown(-80.0, -80 / 10_100, peak=0, trough=2, recovery=4)
    assert A.max_drawdown([-100.0, -20.0], 10_000) == A.Drawdown(-120.0, -0.012, -1, 1, 2)
    assert A.max_drawdown([1.0, 2.0], 10_000) == A.Drawdown(0.0, 0.0, -1, -1, -1)


def test_empty_and_open_only_frames() -> None:
    empty = A.summary(HAND.iloc[:0])
    assert_metrics(
        empty,
        {
            "trades": 0,
            "wins": 0,
            "win_rate": math.nan,
            "total_pnl_usd": 0.0,
            "profit_factor": math.nan,
            "max_drawdown_usd": 0.0,
            "max_drawdown_duration": pd.Timedelta(0),
            "avg_holding_time": pd.NaT,
            "sharpe": math.nan,
            "days": 0,
            "open_trades": 0,
        },
    )
    assert A.by(HAND.iloc[:0], "chain").empty
    assert A.daily_pnl(HAND.iloc[:0]).empty
    assert A.equity_curve(HAND.iloc[:0]).empty
    assert A.drawdown(HAND.iloc[:0]).empty
    only_open = A.summary(HAND[HAND["status"] == "Open"])
    assert only_open["trades"] == 0
    assert only_open["open_trades"] == 1


def test_rows_without_pnl_or_close_time_are_left_out() -> None:
    broken = trades_frame(
        [
            {"id": 10, "opened": at(1), "closed": at(2), "pnl": math.nan},
            {"id": 11, "opened": at(1), "closed": at(2), "pnl": 5.0},
        ]
    )
    broken.loc[1, "status"] = "Closed"
    broken = pd.concat([broken, HAND.iloc[[0]].assign(closed_at=pd.NaT)], ignore_index=True)
    s = A.summary(broken)
    assert s["trades"] == 1
    assert s["total_pnl_usd"] == 5.0
    assert s["open_trades"] == 0


def test_profit_factor_payoff_and_sortino_at_the_edges() -> None:
    winners = trades_frame(
        [
            {"id": 1, "opened": at(1), "closed": at(1, 5), "pnl": 10.0},
            {"id": 2, "opened": at(2), "closed": at(2, 5), "pnl": 30.0},
        ]
    )
    s = A.summary(winners)
    assert s["profit_factor"] == math.inf
    assert s["payoff_ratio"] == math.inf
    assert s["sortino"] == math.inf
    assert s["max_drawdown_usd"] == 0.0
    flat = trades_frame([{"id": 1, "opened": at(1), "closed": at(2), "pnl": 0.0}])
    assert math.isnan(A.summary(flat)["profit_factor"])
    assert math.isnan(A.summary(flat)["sqn"])  # one trade


def test_capital_must_be_positive() -> None:
    for compute in (A.summary, A.equity_curve, A.drawdown, A.daily_returns):
        with pytest.raises(ValueError, match="capital must be > 0 USD, got -1"):
            compute(HAND, capital=-1)


def test_sort_order_falls_back_to_lexsort_for_huge_spans() -> None:
    codes = np.array([1, 0, 0, 1], dtype=np.int64)
    time_ms = np.array([5, 2**62, 7, 5], dtype=np.int64)
    ids = np.array([9, 1, 2, -(2**40)], dtype=np.int64)
    expected = np.lexsort((ids, time_ms, codes))
    np.testing.assert_array_equal(_kernel.sort_order(codes, time_ms, ids), expected)
    np.testing.assert_array_equal(_kernel.sort_order(codes[:0], time_ms[:0], ids[:0]), [])


def test_every_summary_metric_is_defined_in_docs_metrics() -> None:
    doc = (ROOT / "docs" / "metrics.md").read_text()
    for name in A.SUMMARY_METRICS:
        assert re.search(rf"`{name}`", doc), f"docs/metrics.md does not define {name}"


# --------------------------------------------------------------------------------------------
# Hand fixtures: evaluations, criterion results, signals (EVALS, details_frame)
# --------------------------------------------------------------------------------------------


def test_pass_rates_of_evaluations_by_hand() -> None:
    assert A.pass_rate(EVALS) == 2 / 4  # evaluation 4 has no verdict
    by_type = A.pass_rates(EVALS, "evaluation_type")
    assert by_type.index.tolist()[:2] == ["TOKEN_BUY", "TOKEN_STATUS"]
    assert by_type["total"].tolist() == [1, 2, 1]
    assert by_type["passed"].tolist() == [1, 1, 0]
    assert by_type["failed"].tolist() == [0, 1, 1]
    assert by_type["pass_rate"].tolist() == [1.0, 0.5, 0.0]
    daily = A.pass_rates(EVALS, freq="D")
    assert list(daily.index) == [at(1), at(2)]
    assert daily["total"].tolist() == [3, 1]
    assert daily["pass_rate"].tolist() == [2 / 3, 0.0]
    both = A.pass_rates(EVALS, ["chain"], freq="D")
    assert both.loc[("BASE", at(2)), "total"] == 1
    with pytest.raises(TypeError, match="pass_rate"):
        A.pass_rates(EVALS)


def test_pass_rates_of_criteria_by_hand() -> None:
    details = details_frame()
    assert A.pass_rate(details) == 5 / 8  # the disabled result has no verdict
    per = A.pass_rates(details, "criterion")
    assert per["total"].tolist() == [3, 3, 2]
    assert per["pass_rate"].tolist() == [2 / 3, 2 / 3, 1 / 2]
    by_category = A.pass_rates(details, "category")
    assert by_category.loc["Social", "total"] == 5
    assert by_category.loc["Social", "passed"] == 3
    disabled = A.pass_rates(details[details["evaluation_id"] == 13], "criterion")
    assert disabled.loc["c", "total"] == 0
    assert math.isnan(disabled.loc["c", "pass_rate"])


def test_values_by_outcome_by_hand() -> None:
    trades = trades_frame(
        [
            {"id": 1, "opened": at(1), "closed": at(2), "pnl": 10.0, "evaluation_id": 11},
            {"id": 2, "opened": at(1), "closed": at(2), "pnl": 20.0, "evaluation_id": 12},
            {"id": 3, "opened": at(1), "closed": at(2), "pnl": -5.0, "evaluation_id": 13},
            {"id": 4, "opened": at(1), "closed": None, "pnl": 50.0, "evaluation_id": 14},
            {"id": 5, "opened": at(1), "closed": at(2), "pnl": 1.0},  # no evaluation
        ]
    )
    table = A.values_by_outcome(details_frame(), trades)
    assert table.index.names == ["criterion", "outcome"]
    assert list(table.columns) == ["count", "mean", "std", "min", "q25", "median", "q75", "max"]
    expected_index = [(c, o) for c in "abc" for o in ("win", "loss")]  # no breakeven trade
    assert table.index.tolist() == expected_index
    a_win = table.loc[("a", "win")]
    assert a_win["count"] == 2
    assert a_win["mean"] == 4.0
    assert a_win["std"] == pytest.approx(math.sqrt(2))
    quartiles = a_win[["min", "q25", "median", "q75", "max"]].tolist()
    assert quartiles == [3.0, 3.5, 4.0, 4.5, 5.0]  # of the values 3 and 5
    assert table.loc[("b", "loss"), "mean"] == 4.0
    assert table.loc[("c", "loss"), "count"] == 1
    outcomes = A.trade_outcomes(trades)
    assert outcomes["evaluation_id"].tolist() == [11, 12, 13]
    assert outcomes["outcome"].tolist() == ["win", "win", "loss"]


def test_stage_counts_by_hand() -> None:
    signals = pd.DataFrame(
        {
            "chain": ["SOLANA", "SOLANA", "BASE", "BASE", "BASE"],
            "stage": ["BUY", "WATCH", "WATCH", "WATCH", "SELL"],
        }
    ).astype(
        {"chain": "category", "stage": pd.CategoricalDtype(["BUY", "SCREENING", "SELL", "WATCH"])}
    )
    counts = A.stage_counts(signals)
    assert counts.index.tolist() == ["all", "BASE", "SOLANA"]
    assert counts.index.name == "chain"
    assert counts.columns.tolist() == ["total", "BUY", "SELL", "WATCH"]
    assert counts.loc["all"].tolist() == [5, 1, 1, 3]
    assert counts.loc["BASE"].tolist() == [3, 0, 1, 2]
    assert counts.loc["SOLANA"].tolist() == [2, 1, 0, 1]


# --------------------------------------------------------------------------------------------
# Properties on generated trade frames
# --------------------------------------------------------------------------------------------

PNLS = st.one_of(
    st.sampled_from([-100.0, -50.0, -1.5, 0.0, 0.25, 10.0, 75.0]),
    st.integers(-50_000, 50_000).map(lambda cents: cents / 100),
)


@st.composite
def trade_rows(draw: st.DrawFn, max_size: int = 30, pnl: st.SearchStrategy[float] = PNLS) -> Any:
    """Rows for ``trades_frame``: few distinct minutes (ties), three quants, some open."""
    n = draw(st.integers(0, max_size))
    ids = draw(st.permutations(list(range(1, n + 1))))
    rows = []
    for trade_id in ids:
        opened = at(1) + pd.Timedelta(minutes=draw(st.integers(0, 6 * 1440)))
        held = pd.Timedelta(minutes=draw(st.sampled_from([0, 30, 600, 1440, 3000])))
        is_open = draw(st.integers(0, 7)) == 0
        rows.append(
            {
                "id": trade_id,
                "quant": draw(st.sampled_from(["Atlas", "Borealis", "Cinder"])),
                "chain": draw(st.sampled_from(["SOLANA", "BASE"])),
                "opened": opened,
                "closed": None if is_open else opened + held,
                "held_s": held.total_seconds(),
                "pnl": draw(pnl),
                "cost": draw(st.integers(1, 2000)) * 1.0,
            }
        )
    return rows


def reference_summary(
    frame: pd.DataFrame, capital: float, include_open: bool = False
) -> dict[str, Any]:
    """docs/metrics.md in plain Python, one trade at a time (the kernel's independent check)."""
    rows = []
    for r in frame.itertuples():
        if r.status == "Closed":
            rows.append((r.closed_at, r.trade_id, r.opened_at, r.pnl_usd, r.buy_cost_usd))
        elif include_open:
            mark = r.opened_at + pd.Timedelta(seconds=r.duration_s)
            rows.append((mark, r.trade_id, r.opened_at, r.pnl_usd, r.buy_cost_usd))
    rows.sort(key=lambda row: (row[0], row[1]))
    n = len(rows)
    if n == 0:
        return {"trades": 0}
    pnl = [row[3] for row in rows]
    wins, losses = [p for p in pnl if p > 0], [p for p in pnl if p < 0]
    mean = sum(pnl) / n
    std = math.sqrt(sum((p - mean) ** 2 for p in pnl) / (n - 1)) if n > 1 else 0.0
    streak = {1: 0, -1: 0}
    run, last = 0, 0
    for p in pnl:
        sign = (p > 0) - (p < 0)
        run = run + 1 if sign == last else 1
        last = sign
        if sign:
            streak[sign] = max(streak[sign], run)
    # drawdown: walk the equity, remembering where the deepest fall started
    cum, peak, peak_time = 0.0, 0.0, min(row[2] for row in rows)
    worst, worst_fraction = 0.0, 0.0
    cums, falls = [], []
    for i, (time, *_rest) in enumerate(rows):
        cum += pnl[i]
        cums.append(cum)
        if cum >= peak:
            peak, peak_time = cum, time
        worst_fraction = min(worst_fraction, (cum - peak) / (capital + peak))
        falls.append((cum - peak, peak_time, i, peak))
        worst = min(worst, cum - peak)

    def recovery(fall_from: pd.Timestamp, at: int, fall_peak: float) -> pd.Timedelta:
        later = [rows[j][0] for j in range(at + 1, n) if cums[j] >= fall_peak]
        return (later[0] if later else rows[-1][0]) - fall_from

    duration: Any = pd.Timedelta(0)
    if worst < 0:
        # Two falls as deep up to rounding (cumulative sums taken in another order) are both
        # "the deepest": either one's duration is the metric's.
        tie = 1e-9 * max(1.0, abs(worst))
        duration = frozenset(
            recovery(fall_from, at, fall_peak)
            for fall, fall_from, at, fall_peak in falls
            if fall <= worst + tie
        )
    days: dict[pd.Timestamp, float] = {}
    for time, _, _, p, _ in rows:
        days[time.floor("D")] = days.get(time.floor("D"), 0.0) + p
    first, last_day = min(days), max(days)
    span = (last_day - first).days + 1
    daily = [days.get(first + pd.Timedelta(days=k), 0.0) for k in range(span)]
    gp, gl = sum(wins), sum(losses)
    return {
        "trades": n,
        "wins": len(wins),
        "losses": len(losses),
        "breakeven": n - len(wins) - len(losses),
        "win_rate": len(wins) / n,
        "total_pnl_usd": sum(pnl),
        "gross_profit_usd": gp,
        "gross_loss_usd": gl,
        "avg_pnl_usd": mean,
        "avg_win_usd": gp / len(wins) if wins else math.nan,
        "avg_loss_usd": gl / len(losses) if losses else math.nan,
        "payoff_ratio": (
            math.nan
            if not wins
            else math.inf
            if not losses
            else (gp / len(wins)) / abs(gl / len(losses))
        ),
        "profit_factor": gp / abs(gl) if gl else (math.inf if gp > 0 else math.nan),
        "expectancy_usd": len(wins) / n * (gp / len(wins) if wins else 0.0)
        + len(losses) / n * (gl / len(losses) if losses else 0.0),
        "sqn": (
            math.sqrt(n) * mean / std
            if n > 1 and std > 1e-12 * max(abs(p) for p in pnl)
            else math.nan
        ),
        "roi": sum(pnl) / sum(row[4] for row in rows),
        "best_trade_usd": max(pnl),
        "worst_trade_usd": min(pnl),
        "max_win_streak": streak[1],
        "max_loss_streak": streak[-1],
        "avg_holding_time": pd.Timedelta(
            milliseconds=round(sum((r[0] - r[2]) / pd.Timedelta(milliseconds=1) for r in rows) / n)
        ),
        "max_drawdown_usd": worst,
        "max_drawdown": worst_fraction,
        "max_drawdown_duration": duration,
        "days": span,
        "sharpe": A.sharpe_ratio(daily),
        "sortino": A.sortino_ratio(daily),
    }


def assert_close_metrics(actual: pd.Series, expected: dict[str, Any]) -> None:
    """Like assert_metrics, with a tolerance for sums taken in another order."""
    for name, want in expected.items():
        got = actual[name]
        if isinstance(want, frozenset):  # any of these (ties up to rounding)
            assert got in want, (name, got, want)
        elif isinstance(want, pd.Timedelta | int):
            assert got == want, name
        elif math.isnan(want) or math.isinf(want):
            assert got == want or (math.isnan(got) and math.isnan(want)), name
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-9), name


@PROPERTY
@given(trade_rows(), st.booleans())
def test_summary_agrees_with_the_plain_python_reference(rows: Any, include_open: bool) -> None:
    frame = trades_frame(rows)
    capital = A.default_capital(frame)
    got = A.summary(frame, include_open=include_open)
    assert_close_metrics(got, reference_summary(frame, capital, include_open))
    assert got["open_trades"] == int((frame["status"] == "Open").sum())


@pytest.mark.slow
@PROPERTY
@given(trade_rows(), st.randoms(use_true_random=False))
def test_row_order_does_not_matter(rows: Any, rnd: Any) -> None:
    frame = trades_frame(rows)
    shuffled = frame.sample(frac=1.0, random_state=rnd.randint(0, 2**31))
    pd.testing.assert_series_equal(A.summary(shuffled), A.summary(frame))
    pd.testing.assert_frame_equal(A.by(shuffled, "chain", freq="D"), A.by(frame, "chain", freq="D"))
    pd.testing.assert_frame_equal(A.equity_curve(shuffled), A.equity_curve(frame))


@pytest.mark.slow
@PROPERTY
@given(trade_rows())
def test_each_by_row_is_the_summary_of_its_group(rows: Any) -> None:
    frame = trades_frame(rows)
    table = A.by(frame, "quant_name")
    for quant, row in table.iterrows():
        alone = A.summary(frame[frame["quant_name"] == quant])
        assert_close_metrics(row, {k: v for k, v in alone.items() if not pd.isna(v)})
    daily = A.by(frame, freq="D")
    assert daily["trades"].sum() == A.summary(frame)["trades"]
    assert daily["total_pnl_usd"].sum() == pytest.approx(A.summary(frame)["total_pnl_usd"])


@PROPERTY
@given(trade_rows())
def test_identities_between_metrics(rows: Any) -> None:
    s = A.summary(frame := trades_frame(rows))
    assert s["trades"] == s["wins"] + s["losses"] + s["breakeven"]
    assert s["total_pnl_usd"] == pytest.approx(s["gross_profit_usd"] + s["gross_loss_usd"])
    if s["gross_loss_usd"] < 0:
        assert s["profit_factor"] == pytest.approx(s["gross_profit_usd"] / -s["gross_loss_usd"])
    if s["trades"]:
        assert s["expectancy_usd"] == pytest.approx(s["avg_pnl_usd"], abs=1e-9)
        assert s["worst_trade_usd"] <= s["avg_pnl_usd"] <= s["best_trade_usd"]
        assert max(s["max_win_streak"], s["max_loss_streak"]) <= s["trades"]
    # the drawdown fraction is measured against a peak equity of at least the capital
    assert s["max_drawdown_usd"] / s["capital_usd"] <= s["max_drawdown"] + 1e-12 <= 1e-12
    # a daily series sees at most the trade-level fall
    daily_fall = A.max_drawdown(A.daily_pnl(frame).to_numpy(), s["capital_usd"]).usd
    assert daily_fall >= s["max_drawdown_usd"] - 1e-9
    assert A.win_rate(frame) == s["win_rate"] or s["trades"] == 0


@PROPERTY
@given(trade_rows(pnl=st.integers(1, 10_000).map(lambda c: c / 100)))
def test_an_all_winning_frame_has_no_drawdown(rows: Any) -> None:
    s = A.summary(trades_frame(rows))
    assert s["max_drawdown_usd"] == 0.0
    assert s["max_drawdown"] == 0.0
    assert s["max_drawdown_duration"] == pd.Timedelta(0)
    assert s["max_loss_streak"] == 0
    if s["trades"]:
        assert s["profit_factor"] == math.inf
        assert s["win_rate"] == 1.0


@PROPERTY
@given(trade_rows(), st.sampled_from([0.01, 3.0, 1000.0]))
def test_ratios_do_not_depend_on_the_pnl_scale(rows: Any, k: float) -> None:
    frame = trades_frame(rows)
    scaled = frame.assign(pnl_usd=frame["pnl_usd"] * k)
    a, b = A.summary(frame), A.summary(scaled)
    for name in ("win_rate", "profit_factor", "payoff_ratio", "sqn", "sharpe", "sortino"):
        assert b[name] == pytest.approx(a[name], rel=1e-9) or (
            math.isnan(a[name]) and math.isnan(b[name])
        ), name
    assert b["max_drawdown_usd"] == pytest.approx(k * a["max_drawdown_usd"], abs=1e-9)


@PROPERTY
@given(trade_rows())
def test_daily_returns_compound_back_to_the_equity(rows: Any) -> None:
    frame = trades_frame(rows)
    s = A.summary(frame)
    returns = A.daily_returns(frame).to_numpy()
    equity = s["capital_usd"] * np.prod(1 + returns)
    assert equity == pytest.approx(s["capital_usd"] + s["total_pnl_usd"], rel=1e-12)
    assert A.sharpe_ratio(A.daily_pnl(frame)) == pytest.approx(s["sharpe"], rel=1e-9) or (
        math.isnan(s["sharpe"])
    )


@PROPERTY
@given(
    st.lists(st.sampled_from([True, False, None]), max_size=40),
    st.lists(st.sampled_from(["a", "b", "c"]), min_size=40, max_size=40),
)
def test_pass_rates_add_up(verdicts: list[bool | None], criteria: list[str]) -> None:
    frame = pd.DataFrame(
        {"passed": pd.array(verdicts, dtype="boolean"), "criterion": criteria[: len(verdicts)]}
    )
    per = A.pass_rates(frame, "criterion")
    assert per["total"].sum() == sum(v is not None for v in verdicts)
    assert per["passed"].sum() == sum(v is True for v in verdicts)
    if per["total"].sum():
        assert A.pass_rate(frame) == pytest.approx(per["passed"].sum() / per["total"].sum())
