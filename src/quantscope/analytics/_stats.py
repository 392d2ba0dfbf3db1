"""One-dimensional statistics on plain arrays: Sharpe, Sortino, the probabilistic and deflated
Sharpe ratios, and drawdown of a PnL series.

These are the reference definitions of docs/metrics.md, written for one series at a time. The
grouped kernel (``_kernel.py``) computes the same numbers for many groups at once; tests hold
the two to each other, and these to quantstats where the definitions coincide.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

PERIODS_PER_YEAR = 365  # crypto markets trade every day of the year
# Annualised ratios from fewer daily values than this are flagged (``few_days``), and not
# reported at all for calendar periods (by(freq=...)): sqrt(365) times a week's mean/std is
# a guess, not a measurement (docs/metrics.md).
MIN_RATIO_DAYS = 30
# A spread below TINY x the largest magnitude is rounding noise (the mean of [0.1, 0.1, 0.1]
# is not exactly 0.1): the ratio over it is undefined (NaN), not 1e17.
TINY = 1e-12
# A headline ratio over fewer days than this (about six months), or with fewer losing days
# than ``MIN_LOSING_DAYS``, rests on a short sample and is flagged (``short_sample``): a
# Sharpe of 20 over 69 days with 8 losing days says little about the next 69.
SHORT_SAMPLE_DAYS = 182
MIN_LOSING_DAYS = 20


def sharpe_ratio(daily_pnl: ArrayLike, periods_per_year: int = PERIODS_PER_YEAR) -> float:
    """Annualised Sharpe ratio: ``mean / std(ddof=1) * sqrt(periods_per_year)``.

    Scale-free, so daily PnL in USD and daily PnL over a fixed capital give the same number.
    NaN for fewer than two periods or a constant series.
    """
    x = np.asarray(daily_pnl, dtype=np.float64)
    if x.size < 2:
        return float("nan")
    std = float(np.std(x, ddof=1))
    if std <= TINY * float(np.max(np.abs(x))):
        return float("nan")
    return float(np.mean(x)) / std * float(np.sqrt(periods_per_year))


def sortino_ratio(daily_pnl: ArrayLike, periods_per_year: int = PERIODS_PER_YEAR) -> float:
    """Annualised Sortino ratio: ``mean / sqrt(sum(min(x, 0)**2) / n) * sqrt(periods_per_year)``.

    The downside deviation is taken over every period (the losing ones squared, the others
    zero), as quantstats and Red Rock Capital define it. With no losing period it is +inf when
    the mean is positive and NaN otherwise; NaN for fewer than two periods.
    """
    x = np.asarray(daily_pnl, dtype=np.float64)
    if x.size < 2:
        return float("nan")
    mean = float(np.mean(x))
    downside = float(np.sqrt(np.sum(np.square(np.minimum(x, 0.0))) / x.size))
    if downside == 0.0:
        return float("inf") if mean > 0 else float("nan")
    return mean / downside * float(np.sqrt(periods_per_year))


def moments(x: np.ndarray) -> tuple[float, float]:
    """Sample skewness and excess kurtosis, bias-adjusted as pandas' ``skew``/``kurt`` (the
    estimators quantstats feeds the probabilistic Sharpe ratio); NaN below 3 and 4 values.
    """
    n = x.size
    dev = x - x.mean() if n else x
    m2 = float(np.sum(dev**2))
    if n < 3 or m2 <= 0.0:
        return float("nan"), float("nan")
    g1 = float(np.sum(dev**3)) / n / (m2 / n) ** 1.5
    skew = math.sqrt(n * (n - 1)) / (n - 2) * g1
    if n < 4:
        return skew, float("nan")
    g2 = float(np.sum(dev**4)) / n / (m2 / n) ** 2 - 3.0
    return skew, (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6.0)


def psr_from(
    sr: float, n: int, skew: float, excess_kurtosis: float, benchmark: float = 0.0
) -> float:
    """``P(true SR > benchmark)`` of a per-period Sharpe ``sr`` over ``n`` periods (Bailey and
    López de Prado 2012): ``Φ((sr - benchmark) sqrt(n - 1) / sqrt(1 - γ3 sr + (γ4 - 1)/4 sr²))``
    with ``γ4 = excess_kurtosis + 3``. NaN where undefined (fewer than 4 periods, or moments
    that make the variance negative).
    """
    if n < 4 or not all(map(math.isfinite, (sr, skew, excess_kurtosis))):
        return float("nan")
    var = 1.0 - skew * sr + (excess_kurtosis + 2.0) / 4.0 * sr * sr
    if var <= 0.0:
        return float("nan")
    return NormalDist().cdf((sr - benchmark) * math.sqrt(n - 1) / math.sqrt(var))


def probabilistic_sharpe_ratio(daily_pnl: ArrayLike, benchmark: float = 0.0) -> float:
    """The probability that the true (per-day) Sharpe ratio of ``daily_pnl`` exceeds
    ``benchmark`` (default 0), given the series' length, skewness and kurtosis.

    Equal to quantstats' ``probabilistic_sharpe_ratio`` of ``daily_pnl / capital``
    (docs/metrics.md, "Probabilistic and deflated Sharpe"). Scale-free, like the Sharpe ratio.
    """
    x = np.asarray(daily_pnl, dtype=np.float64)
    per_day = sharpe_ratio(x, periods_per_year=1) if x.size >= 4 else float("nan")
    if np.isnan(per_day):  # too few days, or a constant series
        return float("nan")
    skew, kurt = moments(x)
    return psr_from(per_day, x.size, skew, kurt, benchmark)


def deflated_sharpe_ratio(daily_pnl: ArrayLike, trials: int, trial_sr_std: float) -> float:
    """The probabilistic Sharpe ratio of the best of ``trials`` searched strategies (Bailey and
    López de Prado 2014): the benchmark is the Sharpe the best of ``trials`` independent
    strategies of true Sharpe 0 would show by luck,
    ``SR0 = σ_SR ((1 - γ) Φ⁻¹(1 - 1/N) + γ Φ⁻¹(1 - 1/(N e)))``, with ``σ_SR`` the standard
    deviation of the per-day Sharpe ratios across the trials and γ Euler's constant.
    With one trial it is the probabilistic Sharpe ratio.
    """
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    benchmark = 0.0
    if trials > 1:
        gamma = 0.5772156649015329
        inv = NormalDist().inv_cdf
        benchmark = trial_sr_std * (
            (1 - gamma) * inv(1 - 1 / trials) + gamma * inv(1 - 1 / (trials * math.e))
        )
    return probabilistic_sharpe_ratio(daily_pnl, benchmark)


class Drawdown(NamedTuple):
    """The deepest fall of cumulative PnL below its running peak.

    ``usd`` and ``fraction`` are <= 0. ``fraction`` is the deepest fall relative to the peak
    equity (capital + peak cumulative PnL) and may come from a different trough than ``usd``.
    ``peak``, ``trough`` and ``recovery`` are positions of the deepest USD fall in the series:
    ``peak`` is -1 when the fall starts from the flat start, ``recovery`` is the series length
    when the peak is never regained. All three are -1 when there is no drawdown.
    """

    usd: float
    fraction: float
    peak: int
    trough: int
    recovery: int


def max_drawdown(pnl: ArrayLike, capital: float) -> Drawdown:
    """The maximum drawdown of ``capital + cumsum(pnl)``, starting flat at ``capital``.

    Args:
        pnl: PnL per step (trades in close order, or days) in USD.
        capital: the equity before the first step, > 0.
    """
    x = np.asarray(pnl, dtype=np.float64)
    if x.size == 0:
        return Drawdown(0.0, 0.0, -1, -1, -1)
    cum = np.cumsum(x)
    peak = np.maximum(np.maximum.accumulate(cum), 0.0)  # the flat start is a peak at 0
    fall = cum - peak
    trough = int(np.argmin(fall))
    usd = float(fall[trough])
    fraction = float(np.min(fall / (capital + peak)))
    if usd == 0.0:
        return Drawdown(0.0, 0.0, -1, -1, -1)
    at_peak = np.flatnonzero(fall == 0.0)
    before = at_peak[at_peak < trough]
    after = at_peak[at_peak > trough]
    return Drawdown(
        usd,
        fraction,
        int(before[-1]) if before.size else -1,
        trough,
        int(after[0]) if after.size else int(x.size),
    )
