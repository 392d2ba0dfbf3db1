"""One-dimensional statistics on plain arrays: Sharpe, Sortino and drawdown of a PnL series.

These are the reference definitions of docs/metrics.md, written for one series at a time. The
grouped kernel (``_kernel.py``) computes the same numbers for many groups at once; tests hold
the two to each other, and these to quantstats where the definitions coincide.
"""

from __future__ import annotations

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
