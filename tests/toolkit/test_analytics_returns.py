"""The tear-sheet figures (``analytics.returns``, ``analytics.benchmark``) against quantstats.

Issue 24: against quantstats' tear sheet on the same daily returns the report lacked CAGR,
volatility, VaR/CVaR, Calmar, skew, kurtosis, best and worst day, the monthly returns table
and a benchmark. Each figure here goes through both on the same series (the sandbox's three
quants' ``daily_returns()``, and hypothesis' series): equal to 1e-9 where the definitions
agree; where they differ (the year's length, VaR's method, months outside the data, a
benchmark that does not move) a test shows the documented difference.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import quantstats as qs
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import quantscope.loaders as L
from quantscope import analytics as A
from quantscope._http.client import Client

REL = 1e-9


@pytest.fixture(scope="module", params=[1, 2, 3], ids=lambda q: f"quant{q}")
def quant_returns(request: pytest.FixtureRequest, module_client: Client) -> pd.Series:
    """A sandbox quant's daily returns, the series the report's tear sheet is over."""
    trades = L.load_trades(request.param, client=module_client)
    return A.daily_returns(trades)


def naive(series: pd.Series) -> pd.Series:
    """The same values on a tz-naive index (quantstats drops the zone itself; done once here
    so both sides see one index)."""
    return series.tz_localize(None)


def test_the_series_is_the_accounts_daily_returns(module_client: Client) -> None:
    """One definition: the tear sheet's returns compound to the account's PnL over capital,
    on the days of ``daily_pnl()`` (every UTC day, zero days included)."""
    trades = L.load_trades(1, client=module_client)
    s = A.summary(trades)
    r = A.daily_returns(trades)
    m = A.return_metrics(r)
    assert m["days"] == s["days"] == len(A.daily_pnl(trades)) == 69
    assert m["losing_days"] == s["losing_days"] == 8
    assert m["total_return"] == pytest.approx(s["total_pnl_usd"] / s["capital_usd"], rel=REL)
    assert list(m.index) == list(A.RETURN_METRICS)
    assert m["short_sample"] is True  # 69 days, 8 losing: flagged like summary()'s Sharpe


def test_cagr_and_volatility_equal_quantstats_over_a_365_day_year(quant_returns: pd.Series) -> None:
    r = naive(quant_returns)
    m = A.return_metrics(quant_returns)
    assert m["cagr"] == pytest.approx(qs.stats.cagr(r, periods=365), rel=REL)
    assert m["volatility"] == pytest.approx(qs.stats.volatility(r, periods=365), rel=REL)
    assert m["calmar"] == pytest.approx(qs.stats.calmar(r, periods=365), rel=REL)
    assert m["max_drawdown"] == pytest.approx(qs.stats.max_drawdown(r), rel=REL)
    assert m["total_return"] == pytest.approx(qs.stats.comp(r), rel=REL)


def test_quantstats_default_year_of_252_days_is_the_documented_difference(
    quant_returns: pd.Series,
) -> None:
    """quantstats' defaults count 252 returns a year (stock-market days): CAGR takes 69 daily
    returns for 69/252 of a year, volatility scales by sqrt(252). quantscope's year is 365."""
    r = naive(quant_returns)
    m = A.return_metrics(quant_returns)
    days = len(r)
    assert qs.stats.cagr(r) == pytest.approx((1 + m["total_return"]) ** (252 / days) - 1, rel=REL)
    assert qs.stats.cagr(r) != pytest.approx(m["cagr"], rel=1e-3)
    assert qs.stats.volatility(r) == pytest.approx(m["volatility"] * math.sqrt(252 / 365), rel=REL)


def test_sharpe_and_psr_of_the_returns_equal_quantstats(quant_returns: pd.Series) -> None:
    r = naive(quant_returns)
    m = A.return_metrics(quant_returns)
    assert m["sharpe"] == pytest.approx(qs.stats.sharpe(r, periods=365), rel=REL)
    assert m["sortino"] == pytest.approx(qs.stats.sortino(r, periods=365), rel=REL)
    assert m["psr"] == pytest.approx(qs.stats.probabilistic_sharpe_ratio(r), rel=REL)


def test_quant_1_sharpe_is_quantstats_19_5_beside_the_headlines_22(module_client: Client) -> None:
    """Issue 24's numbers: the headline's 22.02 is over daily PnL (a fixed capital);
    quantstats' 19.5 over the compounded returns, which the tear sheet now shows too."""
    trades = L.load_trades(1, client=module_client)
    m = A.return_metrics(A.daily_returns(trades))
    assert round(A.summary(trades)["sharpe"], 2) == 22.02
    assert round(m["sharpe"], 2) == 19.54


def test_historical_var_and_cvar(quant_returns: pd.Series) -> None:
    """Historical, 95 %: the 5th percentile of the days and the mean at or below it. quantstats'
    CVaR with method="historical" is the same; its ``var`` (and default ``cvar``) is parametric,
    a normal fitted to the mean and std: the documented difference."""
    r = naive(quant_returns)
    m = A.return_metrics(quant_returns)
    assert m["var_95"] == pytest.approx(np.quantile(r.to_numpy(), 0.05), rel=REL)
    assert m["var_95"] == pytest.approx(r.quantile(0.05), rel=REL)
    assert m["cvar_95"] == pytest.approx(qs.stats.cvar(r, method="historical"), rel=REL)
    assert m["cvar_95"] == pytest.approx(r[r <= m["var_95"]].mean(), rel=REL)
    parametric = norm.ppf(0.05, r.mean(), r.std())
    assert qs.stats.var(r) == pytest.approx(parametric, rel=REL)
    assert m["var_95"] != pytest.approx(parametric, rel=1e-3)
    assert m["cvar_95"] <= m["var_95"] < 0


def test_skew_excess_kurtosis_best_and_worst_day(quant_returns: pd.Series) -> None:
    r = naive(quant_returns)
    m = A.return_metrics(quant_returns)
    assert m["skew"] == pytest.approx(qs.stats.skew(r), rel=REL)
    assert m["kurtosis"] == pytest.approx(qs.stats.kurtosis(r), rel=REL)  # excess: normal is 0
    assert m["best_day"] == pytest.approx(qs.stats.best(r), rel=REL)
    assert m["worst_day"] == pytest.approx(qs.stats.worst(r), rel=REL)
    assert m["best_day_date"] == quant_returns.idxmax()
    assert m["worst_day_date"] == quant_returns.idxmin()


def test_monthly_returns_equal_quantstats_where_there_is_data(quant_returns: pd.Series) -> None:
    """Compounded per month, and the year's; a month outside the data is NaN here and 0 in
    quantstats (the documented difference)."""
    ours = A.monthly_returns(quant_returns)
    theirs = qs.stats.monthly_returns(naive(quant_returns))
    assert list(ours.columns) == [*A.returns.MONTHS, "year"]
    assert list(ours.index) == [int(y) for y in theirs.index] == [2026]
    for month in A.returns.MONTHS:
        mine, qs_value = ours.loc[2026, month], theirs.loc["2026", month.upper()]
        if month in ("Jul", "Aug", "Sep"):  # the sandbox's months
            assert mine == pytest.approx(qs_value, rel=REL)
        else:
            assert math.isnan(mine)
            assert qs_value == 0
    assert ours.loc[2026, "year"] == pytest.approx(theirs.loc["2026", "EOY"], rel=REL)
    assert ours.loc[2026, "year"] == pytest.approx(A.total_return(quant_returns), rel=REL)


def test_monthly_returns_span_years() -> None:
    days = pd.date_range("2025-12-30", periods=4, freq="D", tz="UTC")
    r = pd.Series([0.1, -0.1, 0.2, 0.0], index=days)
    table = A.monthly_returns(r)
    assert list(table.index) == [2025, 2026]
    assert table.loc[2025, "Dec"] == pytest.approx(1.1 * 0.9 - 1)
    assert table.loc[2026, "Jan"] == pytest.approx(0.2)
    assert table.loc[2025, "year"] == pytest.approx(1.1 * 0.9 - 1)
    assert math.isnan(table.loc[2026, "Dec"])


def test_a_token_as_benchmark(module_client: Client, quant_returns: pd.Series) -> None:
    """A token's candles made into daily returns (last close over the previous day's), then
    beta and alpha as quantstats' greeks, the correlation, and the benchmark's own CAGR and
    volatility beside, over the days both have."""
    trades = L.load_trades(1, client=module_client)
    token = int(trades["token_id"].dropna().iloc[0])
    candles = L.load_ohlcv(token, client=module_client)
    b = A.candle_returns(candles)
    closes = candles["close"].resample("D").last()
    assert b.iloc[1:].to_numpy() == pytest.approx((closes / closes.shift(1) - 1).iloc[1:])
    assert b.iloc[0] == pytest.approx(closes.iloc[0] / candles["open"].iloc[0] - 1)
    m = A.benchmark_metrics(quant_returns, b)
    assert list(m.index) == list(A.BENCHMARK_METRICS)
    r = naive(quant_returns)
    bn = naive(b).reindex(r.index)
    assert m["paired_days"] == int(bn.notna().sum()) == len(r)
    greeks = qs.stats.greeks(r, bn, periods=365)
    assert m["beta"] == pytest.approx(greeks["beta"], rel=REL)
    assert m["alpha"] == pytest.approx(greeks["alpha"], rel=REL)
    assert m["correlation"] == pytest.approx(r.corr(bn), rel=REL)
    assert m["benchmark_cagr"] == pytest.approx(qs.stats.cagr(bn, periods=365), rel=REL)
    assert m["benchmark_volatility"] == pytest.approx(qs.stats.volatility(bn, periods=365), rel=REL)


def test_a_benchmark_covering_part_of_the_days_is_paired_not_zero_filled() -> None:
    days = pd.date_range("2026-09-01", periods=6, freq="D", tz="UTC")
    r = pd.Series([0.01, -0.02, 0.03, 0.0, 0.01, -0.01], index=days)
    b = pd.Series([0.02, -0.01, 0.01], index=days[2:5].tz_localize(None))  # naive: taken as UTC
    m = A.benchmark_metrics(r, b)
    assert m["paired_days"] == 3
    x, y = r.iloc[2:5].to_numpy(), b.to_numpy()
    assert m["beta"] == pytest.approx(np.cov(x, y)[0, 1] / np.var(y, ddof=1), rel=REL)
    assert m["correlation"] == pytest.approx(np.corrcoef(x, y)[0, 1], rel=REL)


def test_a_benchmark_that_does_not_move_has_no_beta_where_quantstats_says_0() -> None:
    days = pd.date_range("2026-09-01", periods=5, freq="D")
    r = pd.Series([0.01, -0.02, 0.03, 0.0, 0.01], index=days)
    flat = pd.Series(0.0, index=days)
    m = A.benchmark_metrics(r, flat)
    assert math.isnan(m["beta"])
    assert math.isnan(m["correlation"])
    assert qs.stats.greeks(r, flat, periods=365)["beta"] == 0


def test_no_drawdown_gives_an_infinite_calmar_where_quantstats_divides_by_zero() -> None:
    r = pd.Series([0.01, 0.0, 0.02], index=pd.date_range("2026-09-01", periods=3, tz="UTC"))
    assert A.return_metrics(r)["calmar"] == math.inf
    assert A.return_metrics(-r)["max_drawdown"] < 0


def test_a_series_that_is_not_daily_returns_is_one_clear_line() -> None:
    with pytest.raises(TypeError, match="DatetimeIndex"):
        A.return_metrics(pd.Series([0.1, 0.2]))
    with pytest.raises(ValueError, match="missing open"):
        A.candle_returns(pd.DataFrame({"close": [1.0]}, index=pd.DatetimeIndex(["2026-01-01"])))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.integers(-4_000, 4_000).map(lambda bp: bp / 10_000), min_size=5, max_size=90
    ).filter(lambda xs: len(set(xs)) > 2 and min(xs) < 0 < max(xs)),
)
def test_one_series_figures_equal_quantstats(values: list[float]) -> None:
    index = pd.date_range("2026-01-01", periods=len(values), freq="D")
    r = pd.Series(values, index=index)
    m = A.return_metrics(r)
    assert m["cagr"] == pytest.approx(qs.stats.cagr(r, periods=365), rel=REL)
    assert m["volatility"] == pytest.approx(qs.stats.volatility(r, periods=365), rel=REL)
    assert m["max_drawdown"] == pytest.approx(qs.stats.max_drawdown(r), rel=REL, abs=1e-15)
    if m["max_drawdown"] < 0:
        assert m["calmar"] == pytest.approx(qs.stats.calmar(r, periods=365), rel=REL)
    assert m["cvar_95"] == pytest.approx(qs.stats.cvar(r, method="historical"), rel=REL)
    assert m["skew"] == pytest.approx(qs.stats.skew(r), rel=REL, abs=1e-12)
    assert m["kurtosis"] == pytest.approx(qs.stats.kurtosis(r), rel=REL, abs=1e-12)
    assert m["best_day"] == qs.stats.best(r)
    assert m["worst_day"] == qs.stats.worst(r)
