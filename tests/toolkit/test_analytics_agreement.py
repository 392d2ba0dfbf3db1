"""The accessor's numbers against the service's own, over HTTP, and against quantstats.

The sandbox computes its trade summary, trade statistics and dashboard in SQL from exact PnL;
the list serves PnL rounded to the cent, so sums agree within half a cent per trade and counts
exactly. Like is compared with like: the service's ``realized`` group with ``summary()`` (closed
trades), its ``unrealized`` group with the open positions, its totals with
``summary(include_open=True)``. The service's summary of a filter counts every trade the filter
returns, executed or hypothetical, so the accessor is asked for the same: ``execution="all"``
(its default is the executed trades).

Where a definition coincides with quantstats (Sharpe, Sortino, max drawdown of a return series)
the same daily series goes through both (quantstats is a dev dependency).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
import quantstats as qs
from hypothesis import given, settings
from hypothesis import strategies as st

import quantscope.accessor  # noqa: F401  (registers df.quant)
import quantscope.loaders as L
from quantscope import analytics as A
from quantscope._http.client import Client

QUANTS = {1: "Atlas", 2: "Borealis", 3: "Cinder"}
CENT = 0.005  # the list's display rounding, per trade


def close(got: float, want: float, trades: int) -> bool:
    return math.isclose(got, want, abs_tol=CENT * max(trades, 1) + 1e-9)


FILTERS: list[tuple[int | None, dict[str, Any]]] = [
    (None, {}),
    (1, {}),
    (2, {"trading_status": "all"}),
    (3, {"trading_status": "rejected"}),
    (1, {"chain": "BASE"}),
    (2, {"start": "2026-09-01", "end": "2026-09-15"}),
    (3, {"status": "Loss"}),
    (None, {"trading_mode": "live", "position_closed": True}),
]


@pytest.mark.parametrize(("quant_id", "filters"), FILTERS)
def test_summary_equals_the_service_summary(
    module_client: Client, quant_id: int | None, filters: dict[str, Any]
) -> None:
    trades = L.load_trades(quant_id, client=module_client, **filters)
    service = trades.attrs["quantscope"]["summary"]
    realised = trades.quant.summary(execution="all")
    everything = trades.quant.summary(include_open=True, execution="all")
    assert len(trades) == service["totalTrades"] > 0

    for ours, theirs in ((realised, service["realized"]), (everything, None)):
        group = theirs or {
            "trades": service["totalTrades"],
            "profitableTrades": service["profitableTrades"],
            "lossTrades": service["lossTrades"],
            "winRate": service["winRate"],
            "profit": service["totalProfit"],
            "loss": service["totalLoss"],
            "pnl": service["totalProfit"] + service["totalLoss"],
        }
        n = group["trades"]
        assert ours["trades"] == n
        assert ours["wins"] == group["profitableTrades"]
        assert ours["losses"] == group["lossTrades"]
        assert 100 * ours["win_rate"] == pytest.approx(group["winRate"]) or n == 0
        assert close(ours["gross_profit_usd"], group["profit"], n)
        assert close(ours["gross_loss_usd"], group["loss"], n)
        assert close(ours["total_pnl_usd"], group["pnl"], n)
    if realised["trades"]:
        cost = realised["total_pnl_usd"] / realised["roi"]
        tolerance = 100 * CENT * realised["trades"] * 2 / cost
        assert 100 * realised["roi"] == pytest.approx(service["realized"]["roi"], abs=tolerance)
        assert 100 * trades.quant.roi(execution="all") == pytest.approx(100 * realised["roi"])

    unrealised = service["unrealized"]
    assert realised["open_trades"] == unrealised["trades"]
    assert close(realised["unrealised_pnl_usd"], unrealised["pnl"], unrealised["trades"])
    if quant_id is not None or trades["quant_name"].nunique() == len(QUANTS):
        # accountValue: 10,000 USD per quant of the filter plus all PnL
        account = everything["capital_usd"] + everything["total_pnl_usd"]
        assert close(account, service["accountValue"], len(trades))


@pytest.mark.parametrize("quant_id", [None, 1, 2, 3])
def test_trade_count_equals_trade_stats(module_client: Client, quant_id: int | None) -> None:
    stats = L.load_trade_stats(quant_id, client=module_client)
    executed = L.load_trades(quant_id, client=module_client)  # the service's default: executed
    assert executed.quant.summary(include_open=True)["trades"] == stats["total_trades"]


@pytest.mark.parametrize("quant_id", [None, 1, 3])
def test_dashboard_performance_and_weekly_trend_equal_the_accessor(
    module_client: Client, quant_id: int | None
) -> None:
    dashboard = L.load_dashboard(quant_id, client=module_client)
    perf = dashboard.performance
    s = L.load_trades(quant_id, client=module_client).quant.summary()
    assert perf["completed_trades"] == s["trades"]
    assert perf["active_trades"] == s["open_trades"]
    assert perf["total_trades"] == s["trades"] + s["open_trades"]
    assert perf["winning_trades"] == s["wins"]
    assert perf["losing_trades"] == s["losses"]
    assert perf["win_rate"] == pytest.approx(s["win_rate"])
    assert perf["avg_profit_winning_usd"] == pytest.approx(s["avg_win_usd"], abs=CENT)
    assert perf["avg_loss_losing_usd"] == pytest.approx(s["avg_loss_usd"], abs=CENT)
    assert close(perf["total_pnl_usd"], s["total_pnl_usd"], s["trades"])

    # historicalTrends: closed trades by close week (Monday 00:00 UTC) = by(freq="W")
    weekly = L.load_trades(quant_id, client=module_client).quant.by(freq="W")
    trend = dashboard.weekly[dashboard.weekly["closed_trades"] > 0]
    assert list(trend.index) == list(weekly.index[weekly["trades"] > 0])
    closed = weekly.loc[trend.index]
    assert trend["closed_trades"].tolist() == closed["trades"].tolist()
    np.testing.assert_allclose(trend["win_rate"], closed["win_rate"], rtol=1e-12)
    np.testing.assert_allclose(
        trend["pnl"], closed["total_pnl_usd"], atol=CENT * int(closed["trades"].max())
    )


def test_by_quant_and_by_chain_equal_the_filtered_service_summaries(module_client: Client) -> None:
    everything = L.load_trades(trading_status="all", client=module_client)
    for key, groups in (
        ("quant_name", {name: {"quant_id": q} for q, name in QUANTS.items()}),
        ("chain", {c: {"chain": c} for c in ("SOLANA", "BASE", "BSC")}),
    ):
        table = everything.quant.by(key, execution="all")
        assert sorted(map(str, table.index)) == sorted(groups)
        for name, filters in groups.items():
            one = L.load_trades(trading_status="all", client=module_client, **filters)
            realised = one.attrs["quantscope"]["summary"]["realized"]
            row = table.loc[name]
            assert row["trades"] == realised["trades"]
            assert row["wins"] == realised["profitableTrades"]
            assert row["losses"] == realised["lossTrades"]
            assert close(row["total_pnl_usd"], realised["pnl"], realised["trades"])
            assert row["open_trades"] == one.attrs["quantscope"]["summary"]["unrealized"]["trades"]


def test_pass_rates_equal_eval_count_and_timeseries(module_client: Client) -> None:
    start, end = "2026-09-20T00:00:00Z", "2026-09-22T00:00:00Z"  # 48 h: hourly buckets
    evals = L.load_evaluations(2, start=start, end=end, client=module_client)
    count = L.load_eval_count(2, start=start, end=end, client=module_client)
    assert evals.quant.pass_rate() == pytest.approx(count["pass_rate"], abs=5e-5)
    hourly = evals.quant.pass_rates(freq="h")
    series = L.load_eval_timeseries(2, start=start, end=end, client=module_client)
    series = series[series["evaluations"] > 0]
    assert list(series.index) == list(hourly.index)
    assert series["evaluations"].tolist() == hourly["total"].tolist()
    assert series["passed"].tolist() == hourly["passed"].tolist()
    np.testing.assert_allclose(series["pass_rate"], hourly["pass_rate"], atol=5e-5)


def test_stage_counts_equal_signal_stats(module_client: Client) -> None:
    signals = L.load_signals(limit=500, client=module_client)
    stats = L.load_signal_stats(limit=500, client=module_client)
    ours = signals.quant.stage_counts()
    ours.index = ours.index.str.lower()
    ours.columns = ours.columns.str.lower()
    theirs = stats.reindex(columns=ours.columns).astype("int64")
    theirs.index = theirs.index.astype(str)
    pd.testing.assert_frame_equal(ours, theirs.loc[ours.index], check_names=False)
    assert stats.drop(index=ours.index).sum().sum() == 0  # chains without a signal are empty


# --------------------------------------------------------------------------------------------
# quantstats, on the same daily series
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("quant_id", [1, 2, 3])
def test_sharpe_sortino_and_drawdown_equal_quantstats_on_sandbox_trades(
    module_client: Client, quant_id: int
) -> None:
    trades = L.load_trades(quant_id, client=module_client)
    s = trades.quant.summary()
    capital = s["capital_usd"]
    daily = trades.quant.daily_pnl()
    assert len(daily) == s["days"] > 30
    returns = daily / capital  # a fixed capital: the ratios are scale-free
    assert qs.stats.sharpe(returns, periods=365) == pytest.approx(s["sharpe"], rel=1e-9)
    assert qs.stats.sortino(returns, periods=365) == pytest.approx(s["sortino"], rel=1e-9)

    compounding = trades.quant.daily_returns()  # compounds back to capital + cumulative PnL
    ours = A.max_drawdown(daily.to_numpy(), capital)
    assert qs.stats.max_drawdown(compounding) == pytest.approx(ours.fraction, rel=1e-9)
    cum = daily.cumsum().to_numpy()
    peak = np.maximum(np.maximum.accumulate(cum), 0.0)
    np.testing.assert_allclose(
        qs.stats.to_drawdown_series(compounding).to_numpy(),
        (cum - peak) / (capital + peak),
        atol=1e-12,
    )
    assert s["max_drawdown"] <= ours.fraction  # trade by trade sees at least the daily fall


@pytest.mark.parametrize("quant_id", [1, 2, 3])
def test_probabilistic_sharpe_equals_quantstats_on_sandbox_trades(
    module_client: Client, quant_id: int
) -> None:
    """Issue 21: the probabilistic Sharpe (Bailey and López de Prado) and the sample it rests
    on; quantstats' annualised Sharpe differs only by its 252-day year (docs/metrics.md)."""
    trades = L.load_trades(quant_id, client=module_client)
    s = trades.quant.summary()
    daily = trades.quant.daily_pnl()
    returns = daily / s["capital_usd"]
    assert qs.stats.probabilistic_sharpe_ratio(returns) == pytest.approx(s["psr"], rel=1e-9)
    assert s["losing_days"] == int((daily < 0).sum())
    assert s["short_sample"] == (s["days"] < 182 or s["losing_days"] < 20)
    assert qs.stats.sharpe(returns) == pytest.approx(s["sharpe"] * math.sqrt(252 / 365))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.integers(-3_000, 3_000).map(lambda cents: cents / 100), min_size=2, max_size=120
    ).filter(lambda xs: any(x < 0 for x in xs) and len(set(xs)) > 1),  # Sortino and Sharpe defined
)
def test_one_series_definitions_equal_quantstats(pnl: list[float]) -> None:
    capital = 10_000.0
    index = pd.date_range("2026-07-23", periods=len(pnl), freq="D", tz="UTC")
    daily = pd.Series(pnl, index=index)
    assert A.sharpe_ratio(pnl) == pytest.approx(
        qs.stats.sharpe(daily / capital, periods=365), rel=1e-9
    )
    assert A.sortino_ratio(pnl) == pytest.approx(
        qs.stats.sortino(daily / capital, periods=365), rel=1e-9
    )
    start = capital + np.concatenate(([0.0], np.cumsum(pnl)[:-1]))
    returns = pd.Series(np.asarray(pnl) / start, index=index)
    assert A.max_drawdown(pnl, capital).fraction == pytest.approx(
        qs.stats.max_drawdown(returns), rel=1e-9, abs=1e-15
    )


def test_sortino_without_a_losing_day_is_inf_where_quantstats_gives_nan() -> None:
    """The one documented difference (docs/metrics.md): no downside at all is +inf here."""
    daily = pd.Series([5.0, 0.0, 12.0], index=pd.date_range("2026-09-01", periods=3, tz="UTC"))
    assert A.sortino_ratio(daily) == math.inf
    assert math.isnan(qs.stats.sortino(daily / 10_000, periods=365))


def test_quantscope_as_qsc_sits_beside_quantstats_as_qs(module_client: Client) -> None:
    """The docs' alias: researchers already write ``import quantstats as qs``."""
    import quantscope as qsc

    assert qs.__name__ == "quantstats"
    assert qsc.__name__ == "quantscope"
    trades = qsc.load_trades(2, client=module_client)
    returns = trades.quant.daily_pnl() / trades.quant.summary()["capital_usd"]
    assert qs.stats.sharpe(returns, periods=365) == pytest.approx(
        trades.quant.summary()["sharpe"], rel=1e-9
    )
    assert len(qs.stats.to_drawdown_series(trades.quant.daily_returns())) == len(returns)
