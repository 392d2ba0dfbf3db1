"""Rolling windows, the worst drawdowns and the PnL calendar, against hand-computed values.

``HAND`` (tests/_helpers/frames.py) closes its executed trades in this order: +100 (1), -50 (2),
-30 (3), -100 (8), -20 (9), 0 (4), +200 (5), +40 (6); capital 20,000 USD (two quants).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from _helpers import HAND, at, trades_frame

from quantscope import analytics as A
from quantscope.analytics._stats import sharpe_ratio

CLOSE_ORDER_PNL = [100.0, -50.0, -30.0, -100.0, -20.0, 0.0, 200.0, 40.0]


def daily_frame(days: int, seed: int = 3) -> pd.DataFrame:
    """One trade closing each day (noon) for ``days`` days, PnL from a seeded generator."""
    rng = np.random.default_rng(seed)
    pnl = np.round(rng.normal(5.0, 40.0, days), 2)
    return trades_frame(
        [
            {
                "id": i + 1,
                "opened": at(1, 11) + pd.Timedelta(days=i),
                "closed": at(1, 12) + pd.Timedelta(days=i),
                "pnl": float(p),
            }
            for i, p in enumerate(pnl)
        ]
    )


# --------------------------------------------------------------------------------------------
# rolling
# --------------------------------------------------------------------------------------------


def test_rolling_over_trades_is_each_window_of_the_close_order() -> None:
    table = A.rolling(HAND, 3)
    curve = A.equity_curve(HAND)
    assert table.index.equals(curve.index)
    assert list(table["trade_id"]) == list(curve["trade_id"])
    pnl = np.array(CLOSE_ORDER_PNL)
    windows = [pnl[i - 2 : i + 1] for i in range(2, len(pnl))]
    np.testing.assert_array_equal(table["pnl_usd"].iloc[2:], [w.sum() for w in windows])
    np.testing.assert_array_equal(table["win_rate"].iloc[2:], [(w > 0).mean() for w in windows])
    np.testing.assert_allclose(
        table["sharpe"].iloc[2:], [w.mean() / w.std(ddof=1) for w in windows], rtol=1e-12
    )
    assert table["trades"].iloc[2:].tolist() == [3] * 6
    assert table[["trades", "wins"]].iloc[:2].isna().all().all()  # the window is not full yet
    assert table[["win_rate", "pnl_usd", "sharpe"]].iloc[:2].isna().all().all()
    info = table.attrs["rolling"]
    assert (info["unit"], info["size"]) == ("trades", 3)
    assert info["sharpe"].startswith("per trade")
    assert "not annualised" in info["sharpe"]
    assert table.attrs["execution"]["basis"] == "executed"


def test_rolling_over_days_sums_the_daily_series() -> None:
    table = A.rolling(HAND, "2D")
    # Daily PnL 09-01..09-05: 100, -80, -120, 0, 240; trades per day 1, 2, 2, 1, 2.
    assert list(table.index) == list(A.daily_pnl(HAND).index)
    np.testing.assert_array_equal(table["pnl_usd"], [np.nan, 20.0, -200.0, -120.0, 240.0])
    assert table["trades"].iloc[1:].tolist() == [3, 4, 3, 3]
    np.testing.assert_array_equal(table["win_rate"], [np.nan, 1 / 3, 0.0, 0.0, 2 / 3])
    assert table["sharpe"].isna().all()  # 2 days < MIN_RATIO_DAYS: not a measurement
    assert "MIN_RATIO_DAYS" in table.attrs["rolling"]["sharpe_note"]


def test_a_days_window_sharpe_is_the_daily_sharpe_of_each_window() -> None:
    frame = daily_frame(45)
    table = A.rolling(frame, "30D")
    daily = A.daily_pnl(frame).to_numpy()
    expected = [sharpe_ratio(daily[i - 29 : i + 1]) for i in range(29, len(daily))]
    np.testing.assert_allclose(table["sharpe"].iloc[29:], expected, rtol=1e-9)
    assert table["sharpe"].iloc[:29].isna().all()
    assert "annualised by sqrt(365)" in table.attrs["rolling"]["sharpe"]
    assert frame.quant.rolling("30D").equals(table)


@pytest.mark.parametrize(
    ("window", "message"),
    [
        (0, "window must be at least 1 trade, got 0"),
        ("12h", "window='12h' is not a whole number of days; use e.g. '30D'"),
        ("2.5D", "window='2.5D' is not a whole number of days"),
        ("weekly", "window='weekly' is not a whole number of days"),
        (True, "window must be a number of trades \\(50\\) or of days \\('30D'\\), got True"),
    ],
)
def test_a_bad_window_is_refused_in_one_line(window: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        A.rolling(HAND, window)


def test_rolling_counts_the_executed_trades_unless_asked() -> None:
    decision = HAND["decision"].astype(str).where(HAND["trade_id"] != 5, "REJECT")
    frame = HAND.assign(decision=decision.astype(HAND["decision"].dtype.name))
    executed = A.rolling(frame, 2)
    assert 5 not in executed["trade_id"].tolist()
    everything = A.rolling(frame, 2, execution="all")
    assert everything.attrs["execution"]["basis"] == "all"
    assert (
        everything["trade_id"].tolist()
        == A.equity_curve(frame, execution="all")["trade_id"].tolist()
    )


def test_rolling_of_no_closed_trade_is_an_empty_table() -> None:
    for window in (5, "7D"):
        table = A.rolling(HAND[HAND["status"] == "Open"], window)
        assert table.empty
        assert list(table.columns)[-5:] == list(A.ROLLING_COLUMNS)


# --------------------------------------------------------------------------------------------
# worst_drawdowns
# --------------------------------------------------------------------------------------------


def test_hands_one_drawdown_from_peak_to_recovery() -> None:
    table = A.worst_drawdowns(HAND)
    assert list(table.columns) == list(A.DRAWDOWN_COLUMNS)
    assert list(table.index) == [1]
    row = table.loc[1]
    assert row["start"] == at(1, 12)  # trade 1's close: the peak the fall starts from
    assert row["trough"] == at(3)  # trade 9: -200 USD below the 20,100 peak (first of two)
    assert row["recovery"] == at(5, 6)  # trade 5 brings equity back to 20,100
    assert row["depth_usd"] == -200.0
    assert row["depth"] == pytest.approx(-200 / 20_100)
    assert row["depth"] == A.summary(HAND)["max_drawdown"]
    assert row["peak_equity_usd"] == 20_100.0
    assert row["length"] == pd.Timedelta(days=3, hours=18)
    assert bool(row["recovered"])
    assert row["trades"] == 6  # trades 2, 3, 8, 9, 4 and the recovering 5
    assert table.attrs["drawdowns"] == {"episodes": 1, "shown": 1}


def test_drawdowns_are_ranked_deepest_first_and_an_open_one_says_so() -> None:
    pnl = [-10.0, 20.0, -30.0, -5.0, 50.0, -100.0]
    frame = trades_frame(
        [
            {"id": i + 1, "opened": at(i + 1), "closed": at(i + 1, 6), "pnl": p}
            for i, p in enumerate(pnl)
        ]
    )
    table = A.worst_drawdowns(frame, 2)
    assert table.attrs["drawdowns"] == {"episodes": 3, "shown": 2}
    first, second = table.loc[1], table.loc[2]
    # The last fall never recovers: it runs from the peak (close 5) to the last close.
    assert (first["start"], first["trough"]) == (at(5, 6), at(6, 6))
    assert pd.isna(first["recovery"])
    assert not first["recovered"]
    assert first["length"] == at(6, 6) - at(5, 6)
    assert first["trades"] == 1
    assert first["depth"] == pytest.approx(-100 / 10_025)
    assert (second["start"], second["trough"], second["recovery"]) == (at(2, 6), at(4, 6), at(5, 6))
    assert second["depth_usd"] == -35.0
    assert second["trades"] == 3
    # The first loss falls from the starting capital: the episode starts at its own close.
    third = A.worst_drawdowns(frame, 3).loc[3]
    assert (third["start"], third["trough"], third["recovery"]) == (at(1, 6), at(1, 6), at(2, 6))
    assert frame.quant.worst_drawdowns(2).equals(table)


def test_one_fall_that_never_recovers_keeps_the_columns_typed() -> None:
    # Every episode unrecovered: the recovery column is NaT alone (once a raw TypeError from
    # astype, hit by a report of a frame's first 30 trades).
    frame = trades_frame(
        [
            {"id": 1, "opened": at(1), "closed": at(1, 6), "pnl": 10.0},
            {"id": 2, "opened": at(2), "closed": at(2, 6), "pnl": -40.0},
        ]
    )
    table = A.worst_drawdowns(frame)
    assert table.attrs["drawdowns"] == {"episodes": 1, "shown": 1}
    assert str(table["recovery"].dtype) == "datetime64[ms, UTC]"
    assert pd.isna(table.loc[1, "recovery"])
    assert str(table["start"].dtype) == "datetime64[ms, UTC]"
    assert table.loc[1, "start"] == at(1, 6)
    assert table.loc[1, "depth_usd"] == -40.0
    assert not table.loc[1, "recovered"]


def test_no_drawdown_is_an_empty_table_and_n_is_checked() -> None:
    rising = trades_frame([{"id": 1, "opened": at(1), "closed": at(2), "pnl": 5.0}])
    empty = A.worst_drawdowns(rising)
    assert empty.empty
    assert list(empty.columns) == list(A.DRAWDOWN_COLUMNS)
    assert empty.attrs["drawdowns"]["episodes"] == 0
    with pytest.raises(ValueError, match="n must be a whole number of drawdowns >= 1, got 0"):
        A.worst_drawdowns(HAND, 0)


# --------------------------------------------------------------------------------------------
# pnl_calendar
# --------------------------------------------------------------------------------------------


def year_end_frame() -> pd.DataFrame:
    """Closes on Tue 2025-12-02, Tue 2025-12-30 (ISO week 1 of 2026) and Wed 2026-01-14."""
    closes = [pd.Timestamp(d, tz="UTC") for d in ("2025-12-02", "2025-12-30", "2026-01-14")]
    return trades_frame(
        [
            {"id": i + 1, "opened": c - pd.Timedelta(hours=2), "closed": c, "pnl": p}
            for i, (c, p) in enumerate(zip(closes, [10.0, -4.0, 7.0], strict=True))
        ]
    )


def test_the_monthly_calendar_is_by_month_laid_out_years_by_months() -> None:
    frame = year_end_frame()
    table = A.pnl_calendar(frame)
    assert list(table.index) == [2025, 2026]
    assert list(table.columns) == list(range(1, 13))
    assert table.index.name == "year"
    assert table.columns.name == "month"
    monthly = A.by(frame, freq="M")["total_pnl_usd"]
    assert table.loc[2025, 12] == monthly.iloc[0] == 6.0
    assert table.loc[2026, 1] == monthly.iloc[1] == 7.0
    assert int(table.notna().sum().sum()) == len(monthly)
    assert A.pnl_calendar(HAND).loc[2026, 9] == A.summary(HAND)["total_pnl_usd"]
    counts = A.pnl_calendar(frame, metric="trades")
    assert (counts.loc[2025, 12], counts.loc[2026, 1]) == (2.0, 1.0)
    assert table.attrs["calendar"] == {"period": "month", "metric": "total_pnl_usd", "freq": "M"}


def test_the_weekly_calendar_uses_iso_weeks_and_years() -> None:
    table = A.pnl_calendar(year_end_frame(), "W")
    assert table.columns.name == "week"
    assert list(table.columns) == list(range(1, 50))
    assert table.loc[2025, 49] == 10.0  # the week of Monday 2025-12-01
    assert table.loc[2026, 1] == -4.0  # Monday 2025-12-29 starts ISO week 1 of 2026
    assert table.loc[2026, 3] == 7.0
    assert int(table.notna().sum().sum()) == 3
    assert year_end_frame().quant.pnl_calendar("W").equals(table)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"freq": "D"}, "pnl_calendar lays out months \\('M'\\) or weeks \\('W'\\), got freq='D'"),
        ({"freq": "fortnight"}, "freq='fortnight' is not a calendar period"),
        ({"metric": "pnl"}, "unknown metric 'pnl'; by\\(\\) has trades"),
        ({"metric": "avg_holding_time"}, "'avg_holding_time' is not a number per period"),
    ],
)
def test_a_bad_calendar_is_refused_in_one_line(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        A.pnl_calendar(HAND, **kwargs)
