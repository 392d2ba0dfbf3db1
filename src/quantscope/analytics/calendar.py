"""A trade metric per calendar month or week, laid out years x months (or weeks): a PnL calendar.

``pnl_calendar(trades, "M")`` is ``by(trades, freq="M")[metric]`` reshaped, nothing
recomputed: one row per year, one column per month (1..12, every month, NaN without a trade),
or with ``"W"`` per ISO week (weeks start on Monday, numbered and yeared by ISO 8601, so the
week of Monday 2025-12-29 is week 1 of 2026; columns from the first to the last week seen).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope.analytics._execution import Execution
from quantscope.analytics._periods import check_freq
from quantscope.analytics.trades import SUMMARY_METRICS, by

_LAYOUTS = ("month", "week")  # the periods a calendar lays out


def pnl_calendar(
    trades: pd.DataFrame,
    freq: str = "M",
    metric: str = "total_pnl_usd",
    *,
    capital: float | None = None,
    include_open: bool = False,
    execution: Execution | None = None,
) -> pd.DataFrame:
    """``by(trades, freq=freq)[metric]`` as a years x months (or x ISO weeks) table.

    Args:
        trades: a trades frame (``load_trades``).
        freq: ``"M"`` (months, also ``ME``/``MS``) or ``"W"`` (weeks).
        metric: a numeric column of ``by()`` (``total_pnl_usd``, ``trades``, ``win_rate``...).
        capital, include_open, execution: as in ``by()``.

    Returns:
        Index ``year`` (int), columns ``month`` 1..12 or ``week`` numbers, the metric's values
        (NaN for periods without a trade). ``attrs["calendar"]`` has the period word and the
        metric; ``attrs["execution"]`` the trades counted.
    """
    period = check_freq(freq)
    if period.word not in _LAYOUTS:
        raise ValueError(f"pnl_calendar lays out months ('M') or weeks ('W'), got freq={freq!r}")
    if metric not in SUMMARY_METRICS:
        raise ValueError(f"unknown metric {metric!r}; by() has {', '.join(SUMMARY_METRICS)}")
    table = by(trades, freq=freq, capital=capital, include_open=include_open, execution=execution)
    values = table[metric]
    if not pd.api.types.is_numeric_dtype(values.dtype) or values.dtype == bool:
        raise ValueError(f"pnl_calendar draws numbers; {metric!r} is not a number per period")
    starts = pd.DatetimeIndex(table.index.get_level_values("period"))
    if period.word == "month":
        year, part = starts.year, starts.month
        columns = pd.RangeIndex(1, 13, name="month")
    else:
        iso = starts.isocalendar()
        year, part = iso["year"].to_numpy(), iso["week"].to_numpy()
        first, last = (int(part.min()), int(part.max())) if len(part) else (1, 0)
        columns = pd.RangeIndex(first, last + 1, name="week")
    long = pd.DataFrame(
        {
            "year": np.asarray(year, dtype=np.int64),
            "part": np.asarray(part, dtype=np.int64),
            "value": values.to_numpy(dtype=np.float64),
        }
    )
    out = long.pivot(index="year", columns="part", values="value").reindex(columns=columns)
    out.index = pd.Index(out.index.astype(np.int64), name="year")
    out.attrs["execution"] = table.attrs["execution"]
    out.attrs["calendar"] = {"period": period.word, "metric": metric, "freq": freq}
    return out
