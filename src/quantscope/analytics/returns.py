"""The tear-sheet figures of a daily returns series: CAGR, volatility, VaR/CVaR, Calmar, skew,
kurtosis, best and worst day, a monthly returns table, and a benchmark beside it.

One series, one definition (docs/metrics.md, "Return-based figures"): a **day** is a UTC
calendar day, every day from the first close day to the last (days without a close count as
0); a **return** is the day's realised PnL over the account's equity at the start of the day,
``daily_returns()`` of a trades frame. Compounding them rebuilds the account's equity, so these
figures describe the account the trade-level figures describe. Any daily returns Series (a
benchmark's, or your own) goes through the same functions. Every formula equals quantstats' on
the same series where the definitions agree (a test per figure); where they differ (the year's
length, VaR's method, months without data, no drawdown) the difference is documented and
tested, never silent.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from quantscope.analytics._stats import (
    MIN_LOSING_DAYS,
    PERIODS_PER_YEAR,
    SHORT_SAMPLE_DAYS,
    max_drawdown,
    moments,
    probabilistic_sharpe_ratio,
    sharpe_ratio,
    sortino_ratio,
)

#: VaR and CVaR are historical at this confidence: the worst 5 % of days.
VAR_CONFIDENCE = 0.95

#: The figures of ``return_metrics()``, in order: name -> what it is.
RETURN_METRICS: dict[str, str] = {
    "days": "daily returns in the series (UTC days, first to last close day, zero days included)",
    "losing_days": "days whose return is below 0",
    "total_return": "prod(1 + r) - 1: the whole period's compounded return (fraction)",
    "cagr": "compound annual growth rate: (1 + total_return) ** (365 / days) - 1",
    "volatility": "annualised volatility: std(r, ddof=1) * sqrt(365)",
    "sharpe": "mean(r) / std(r, ddof=1) * sqrt(365), on the daily returns",
    "psr": "probabilistic Sharpe ratio of the daily returns: P(true Sharpe > 0)",
    "sortino": "mean(r) / sqrt(mean(min(r, 0)^2)) * sqrt(365), on the daily returns",
    "max_drawdown": "deepest fall of the compounded daily equity below its running peak (<= 0)",
    "calmar": "cagr / |max_drawdown| (+inf with no drawdown and a positive CAGR)",
    "var_95": "historical value at risk, 95 %: the 5th percentile of daily returns (<= 0 "
    "for a loss; linear interpolation between days)",
    "cvar_95": "historical conditional VaR (expected shortfall), 95 %: the mean of the daily "
    "returns at or below var_95",
    "skew": "sample skewness of the daily returns, bias-adjusted (pandas' skew())",
    "kurtosis": "EXCESS kurtosis of the daily returns (a normal series gives 0), bias-adjusted "
    "(pandas' kurt(), as quantstats' kurtosis())",
    "best_day": "the largest daily return",
    "best_day_date": "the UTC day of best_day",
    "worst_day": "the smallest daily return",
    "worst_day_date": "the UTC day of worst_day",
    "short_sample": "days < SHORT_SAMPLE_DAYS or losing_days < MIN_LOSING_DAYS: annualised "
    "figures (CAGR, volatility, Sharpe, Calmar) uncertain",
}

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _values(returns: pd.Series | np.ndarray) -> np.ndarray:
    """The finite values of a returns series, as float64 (missing days are not zero days)."""
    x = np.asarray(returns, dtype=np.float64)
    return x[np.isfinite(x)]


def total_return(returns: pd.Series | np.ndarray) -> float:
    """``prod(1 + r) - 1``; 0 for an empty series."""
    return float(np.prod(1.0 + _values(returns)) - 1.0)


def cagr(returns: pd.Series | np.ndarray, periods_per_year: int = PERIODS_PER_YEAR) -> float:
    """Compound annual growth rate: ``(1 + total_return) ** (periods_per_year / days) - 1``.

    A year is ``periods_per_year`` daily returns (365: crypto trades every day); quantstats'
    default year is 252 (docs/metrics.md). NaN for no day or a total loss beyond -100 %.
    """
    x = _values(returns)
    wealth = 1.0 + total_return(x)
    if x.size == 0 or wealth < 0:
        return float("nan")
    return float(wealth ** (periods_per_year / x.size) - 1.0)


def volatility(returns: pd.Series | np.ndarray, periods_per_year: int = PERIODS_PER_YEAR) -> float:
    """Annualised volatility: ``std(r, ddof=1) * sqrt(periods_per_year)``; NaN below 2 days."""
    x = _values(returns)
    return float(np.std(x, ddof=1) * math.sqrt(periods_per_year)) if x.size >= 2 else float("nan")


def return_drawdown(returns: pd.Series | np.ndarray) -> float:
    """The deepest fall (<= 0, a fraction) of the compounded equity ``prod(1 + r)`` below its
    running peak, the start (1) counting as a peak: ``max_drawdown`` of the equity's steps.
    """
    x = _values(returns)
    equity = np.cumprod(1.0 + x)
    steps = np.diff(np.concatenate(([1.0], equity)))
    return max_drawdown(steps, 1.0).fraction


def calmar(returns: pd.Series | np.ndarray, periods_per_year: int = PERIODS_PER_YEAR) -> float:
    """``cagr / |return_drawdown|``: +inf with no drawdown and a positive CAGR, NaN with none
    and a CAGR of 0 or less (quantstats divides by zero there).
    """
    growth, fall = cagr(returns, periods_per_year), return_drawdown(returns)
    if fall == 0.0:
        return float("inf") if growth > 0 else float("nan")
    return growth / abs(fall)


def value_at_risk(returns: pd.Series | np.ndarray, confidence: float = VAR_CONFIDENCE) -> float:
    """Historical VaR: the ``1 - confidence`` quantile of the daily returns (linear
    interpolation between days, numpy's and pandas' default); a loss is negative.
    quantstats' ``var`` is parametric (a normal fitted to the mean and std): not this.
    """
    x = _values(returns)
    return float(np.quantile(x, 1.0 - confidence)) if x.size else float("nan")


def conditional_value_at_risk(
    returns: pd.Series | np.ndarray, confidence: float = VAR_CONFIDENCE
) -> float:
    """Historical CVaR (expected shortfall): the mean of the daily returns at or below the
    historical VaR; equal to quantstats' ``cvar(..., method="historical")``.
    """
    x = _values(returns)
    if x.size == 0:
        return float("nan")
    return float(np.mean(x[x <= value_at_risk(x, confidence)]))


def check_daily(returns: pd.Series, name: str) -> pd.Series:
    """A returns Series on a DatetimeIndex (UTC; a naive index is taken as UTC), float64."""
    if not isinstance(returns, pd.Series) or not isinstance(returns.index, pd.DatetimeIndex):
        raise TypeError(
            f"{name} must be a pandas Series of daily returns on a DatetimeIndex (as "
            f"daily_returns() gives), got {type(returns).__name__}"
        )
    index = returns.index
    index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
    return pd.Series(returns.to_numpy(dtype=np.float64, na_value=np.nan), index=index)


def return_metrics(
    returns: pd.Series,
    *,
    periods_per_year: int = PERIODS_PER_YEAR,
    confidence: float = VAR_CONFIDENCE,
) -> pd.Series:
    """Every figure of ``RETURN_METRICS`` of a daily returns Series, labelled.

    Args:
        returns: daily returns on a DatetimeIndex (``daily_returns()`` of a trades frame, or
            any daily returns); missing values are left out, never taken as 0.
        periods_per_year: the year's length in daily returns (365).
        confidence: of VaR and CVaR (0.95; the labels ``var_95``/``cvar_95`` keep their names).
    """
    daily = check_daily(returns, "returns").dropna()
    x = daily.to_numpy()
    skew, kurt = moments(x)
    losing = int(np.count_nonzero(x < 0))
    best = int(np.argmax(x)) if x.size else -1
    worst = int(np.argmin(x)) if x.size else -1
    values = {
        "days": int(x.size),
        "losing_days": losing,
        "total_return": total_return(x),
        "cagr": cagr(x, periods_per_year),
        "volatility": volatility(x, periods_per_year),
        "sharpe": sharpe_ratio(x, periods_per_year),
        "psr": probabilistic_sharpe_ratio(x),
        "sortino": sortino_ratio(x, periods_per_year),
        "max_drawdown": return_drawdown(x),
        "calmar": calmar(x, periods_per_year),
        "var_95": value_at_risk(x, confidence),
        "cvar_95": conditional_value_at_risk(x, confidence),
        "skew": skew,
        "kurtosis": kurt,
        "best_day": float(x[best]) if x.size else float("nan"),
        "best_day_date": daily.index[best] if x.size else pd.NaT,
        "worst_day": float(x[worst]) if x.size else float("nan"),
        "worst_day_date": daily.index[worst] if x.size else pd.NaT,
        "short_sample": bool(x.size < SHORT_SAMPLE_DAYS or losing < MIN_LOSING_DAYS),
    }
    out = pd.Series(values, index=list(RETURN_METRICS), dtype=object, name="returns")
    out.index.name = "metric"
    return out


def monthly_returns(returns: pd.Series) -> pd.DataFrame:
    """Compounded returns per calendar month (UTC), laid out years x months, with the year's.

    Returns:
        Index ``year`` (int), columns ``Jan`` .. ``Dec`` and ``year`` (the year's compounded
        return over the days it has). A month without a day in the series is NaN (quantstats
        shows 0 there: a month outside the data is not a flat month).
    """
    daily = check_daily(returns, "returns").dropna()
    naive = daily.index.tz_localize(None)
    growth = pd.Series(1.0 + daily.to_numpy(), index=naive)
    months = growth.groupby([naive.year, naive.month]).prod() - 1.0
    years = growth.groupby(naive.year).prod() - 1.0
    table = pd.DataFrame(
        np.nan, index=pd.Index(years.index.astype(np.int64), name="year"), columns=[*MONTHS, "year"]
    )
    for (year, month), value in months.items():
        table.loc[int(year), MONTHS[int(month) - 1]] = value
    table["year"] = years.to_numpy()
    return table
