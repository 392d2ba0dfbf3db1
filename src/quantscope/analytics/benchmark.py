"""A benchmark beside a daily returns series: beta, alpha, correlation, and the benchmark's own
figures over the same days.

The benchmark is a daily returns Series (the user's) or a token's candles made into one
(``candle_returns``): a day's return is its last close over the previous day's last close, so
benchmark and strategy share the definition of ``analytics.returns`` (UTC days, simple
returns). The figures are over the **paired** days, where both have a value; a day the
benchmark does not cover is left out, never taken as 0 (docs/metrics.md, "Against a
benchmark").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope.analytics._stats import PERIODS_PER_YEAR
from quantscope.analytics.returns import check_daily, return_metrics

#: The figures of ``benchmark_metrics()``, in order: name -> what it is.
BENCHMARK_METRICS: dict[str, str] = {
    "paired_days": "days on which both the returns and the benchmark have a value",
    "beta": "cov(r, b) / var(b) over the paired days (ddof=1 both)",
    "alpha": "(mean(r) - beta * mean(b)) * 365: annualised, arithmetic (as quantstats' greeks)",
    "correlation": "Pearson correlation of r and b over the paired days",
    "benchmark_total_return": "the benchmark's total_return over the paired days",
    "benchmark_cagr": "the benchmark's cagr over the paired days",
    "benchmark_volatility": "the benchmark's volatility over the paired days",
    "benchmark_sharpe": "the benchmark's sharpe over the paired days",
    "benchmark_psr": "the benchmark's probabilistic Sharpe ratio over the paired days",
    "benchmark_max_drawdown": "the benchmark's max_drawdown over the paired days",
}
# The benchmark's own figures, taken from return_metrics of its paired days.
_OWN = ("total_return", "cagr", "volatility", "sharpe", "psr", "max_drawdown")


def candle_returns(ohlcv: pd.DataFrame) -> pd.Series:
    """Daily returns of a token's candles (``load_ohlcv``): each UTC day's last close over the
    previous day's last close, minus 1; the first day's over its first open. A day without a
    candle inside the range keeps the last close (a return of 0).

    Returns:
        A float64 Series named ``return`` on a UTC DatetimeIndex of days named ``date``.
    """
    missing = [c for c in ("open", "close") if c not in ohlcv.columns]
    if missing or not isinstance(ohlcv.index, pd.DatetimeIndex):
        raise ValueError(
            "candle_returns needs candles on a DatetimeIndex with open and close columns "
            "(load_ohlcv); " + (f"missing {', '.join(missing)}" if missing else "no time index")
        )
    frame = ohlcv[["open", "close"]].sort_index()
    index = frame.index
    frame.index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
    days = frame.resample("D")
    close = days["close"].last().ffill()
    first_open = float(days["open"].first().iloc[0]) if len(close) else float("nan")
    previous = close.shift(1)
    if len(previous):
        previous.iloc[0] = first_open
    out = (close / previous - 1.0).astype(np.float64).rename("return")
    out.index = pd.DatetimeIndex(out.index.as_unit("ms"), name="date")
    return out


def benchmark_metrics(
    returns: pd.Series, benchmark: pd.Series, *, periods_per_year: int = PERIODS_PER_YEAR
) -> pd.Series:
    """Every figure of ``BENCHMARK_METRICS``: ``returns`` against ``benchmark`` (both daily
    returns on a DatetimeIndex, matched by UTC day), over the days both have a value.

    Beta and correlation are NaN when the benchmark does not move (quantstats reports 0).
    """
    r = check_daily(returns, "returns")
    b = check_daily(benchmark, "benchmark")
    r.index, b.index = r.index.normalize(), b.index.normalize()
    if b.index.has_duplicates or r.index.has_duplicates:
        raise ValueError("returns and benchmark need one value per UTC day")
    paired = pd.concat({"r": r, "b": b}, axis=1, join="inner").dropna()
    x, y = paired["r"].to_numpy(), paired["b"].to_numpy()
    beta = alpha = corr = float("nan")
    if x.size >= 2:
        cov = np.cov(x, y)
        if cov[1, 1] > 0:
            beta = float(cov[0, 1] / cov[1, 1])
            alpha = float((np.mean(x) - beta * np.mean(y)) * periods_per_year)
            if cov[0, 0] > 0:
                corr = float(cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]))
    own = return_metrics(paired["b"], periods_per_year=periods_per_year)
    values = {
        "paired_days": int(x.size),
        "beta": beta,
        "alpha": alpha,
        "correlation": corr,
        **{f"benchmark_{name}": own[name] for name in _OWN},
    }
    out = pd.Series(values, index=list(BENCHMARK_METRICS), dtype=object, name="benchmark")
    out.index.name = "metric"
    return out
