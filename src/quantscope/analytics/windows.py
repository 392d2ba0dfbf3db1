"""Rolling trade metrics: win rate, PnL and Sharpe over the last N trades or N days (``rolling``).

``rolling(trades, 50)`` slides a window of 50 closed trades along the close order (the order
of ``equity_curve``); ``rolling(trades, "30D")`` a window of 30 UTC days along ``daily_pnl``
(zero days included). Each row is a window ending at that trade or day; windows that are not
yet full have NaN metrics (a figure starts where the window is full). Like every trade
function it counts the executed trades unless ``execution=`` says otherwise, and says which
in ``attrs["execution"]``.

Sharpe differs by window (``attrs["rolling"]["sharpe"]`` says which): over trades it is the
per-trade ``mean / std(ddof=1)`` of the window's trade PnL (not annualised: trades are not
periods); over days it is the daily Sharpe of docs/metrics.md, annualised by
``sqrt(periods_per_year)``, and NaN for windows shorter than ``MIN_RATIO_DAYS`` days (as
``by(freq=...)`` does: a week's ratio is a guess, not a measurement).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope.analytics._execution import Execution
from quantscope.analytics._stats import MIN_RATIO_DAYS, PERIODS_PER_YEAR, TINY
from quantscope.analytics.trades import daily_pnl, equity_curve

Window = int | str

#: The columns of ``rolling()``, in order, and what each is.
ROLLING_COLUMNS: dict[str, str] = {
    "trades": "closed trades in the window",
    "wins": "trades with pnl_usd > 0 in the window",
    "win_rate": "wins / trades (fraction)",
    "pnl_usd": "sum of pnl_usd in the window",
    "sharpe": "Sharpe of the window (attrs['rolling']['sharpe'] says which)",
}
_SHARPE_TRADES = "per trade: mean / std(ddof=1) of the window's trade PnL, not annualised"
_SHARPE_DAYS = "daily: mean / std(ddof=1) of daily PnL, annualised by sqrt({ppy})"


def parse_window(window: Window) -> tuple[str, int]:
    """``("trades", n)`` for an int, ``("days", n)`` for a whole number of days (``"30D"``);
    ValueError in one line otherwise.
    """
    if isinstance(window, bool) or not isinstance(window, int | str):
        raise ValueError(
            f"window must be a number of trades (50) or of days ('30D'), got {window!r}"
        )
    if isinstance(window, int):
        if window < 1:
            raise ValueError(f"window must be at least 1 trade, got {window}")
        return "trades", window
    try:
        span = pd.Timedelta(window)
    except ValueError:
        span = None
    days = None if span is None else span / pd.Timedelta(days=1)
    if days is None or days < 1 or days != int(days):
        raise ValueError(
            f"window={window!r} is not a whole number of days; use e.g. '30D', or an int of trades"
        )
    return "days", int(days)


def _ratio(mean: pd.Series, std: pd.Series, scale: pd.Series) -> np.ndarray:
    """``mean / std``, NaN where the spread is rounding noise (``_stats.TINY``) or undefined."""
    m, s, big = (x.to_numpy(dtype=np.float64) for x in (mean, std, scale))
    out = np.full(m.shape, np.nan)
    ok = np.isfinite(s) & (s > TINY * big)
    out[ok] = m[ok] / s[ok]
    return out


def rolling(
    trades: pd.DataFrame,
    window: Window = 50,
    *,
    execution: Execution | None = None,
    periods_per_year: int = PERIODS_PER_YEAR,
) -> pd.DataFrame:
    """Win rate, PnL and Sharpe over a sliding window of closed trades or of days.

    Args:
        trades: a trades frame (``load_trades``); open positions are not in it.
        window: an int ``n``: the last ``n`` closed trades (rows: each trade, indexed by
            ``closed_at``, with its ``trade_id``); a string of whole days (``"30D"``): the
            last so many UTC days of close (rows: every day of ``daily_pnl``, indexed by
            ``date``).
        execution: which trades, as in ``summary()`` (default the executed ones).
        periods_per_year: annualisation of a days window's Sharpe.

    Returns:
        The ``ROLLING_COLUMNS`` per row, NaN until the window is full. ``attrs["rolling"]``
        has the window's ``unit`` (``trades``/``days``), its ``size``, and the ``sharpe``
        definition (with ``sharpe_note`` when a days window is too short for it).
    """
    unit, size = parse_window(window)
    curve = equity_curve(trades, execution=execution)
    info: dict[str, object] = {"unit": unit, "size": size, "window": window}
    if unit == "trades":
        pnl = curve["pnl_usd"].astype(np.float64)
        frame = pd.DataFrame({"trade_id": curve["trade_id"]}, index=curve.index)
        win = (pnl > 0).astype(np.float64)
        roll = pnl.rolling(size, min_periods=size)
        count = pnl.rolling(size, min_periods=size).count()
        std = roll.std(ddof=1) if size > 1 else pd.Series(np.nan, index=pnl.index)
        sharpe = _ratio(roll.mean(), std, pnl.abs().rolling(size, min_periods=size).max())
        info["sharpe"] = _SHARPE_TRADES
    else:
        pnl = daily_pnl(trades, execution=execution).astype(np.float64)
        frame = pd.DataFrame(index=pnl.index)
        day = pd.DatetimeIndex(curve.index).floor("D")
        per_day = pd.DataFrame({"n": 1.0, "win": (curve["pnl_usd"] > 0).to_numpy(np.float64)})
        daily = per_day.groupby(day).sum().reindex(pnl.index, fill_value=0.0)
        count = daily["n"].rolling(size, min_periods=size).sum()
        win = daily["win"]
        roll = pnl.rolling(size, min_periods=size)
        info["sharpe"] = _SHARPE_DAYS.format(ppy=periods_per_year)
        if size < MIN_RATIO_DAYS:
            sharpe = np.full(len(pnl), np.nan)
            info["sharpe_note"] = (
                f"NaN: a window of {size} days is shorter than MIN_RATIO_DAYS "
                f"({MIN_RATIO_DAYS}); an annualised ratio over it is a guess"
            )
        else:
            ratio = _ratio(
                roll.mean(), roll.std(ddof=1), pnl.abs().rolling(size, min_periods=size).max()
            )
            sharpe = ratio * np.sqrt(periods_per_year)
    wins = win.rolling(size, min_periods=size).sum()
    counted = count.to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(counted > 0, wins.to_numpy() / counted, np.nan)
    frame["trades"] = pd.array(counted, dtype="Float64").astype("Int64")
    frame["wins"] = pd.array(wins.to_numpy(), dtype="Float64").astype("Int64")
    frame["win_rate"] = rate
    frame["pnl_usd"] = roll.sum().to_numpy()
    frame["sharpe"] = sharpe
    frame.attrs["execution"] = curve.attrs["execution"]
    frame.attrs["rolling"] = info
    return frame
