"""The worst drawdowns of an account, one row each: when it fell, how deep, how long.

A drawdown *episode* is a run of closed trades after which equity stays below its running
peak (``drawdown()["drawdown_usd"] < 0``), from the last close at the peak to the first close
back at it (docs/metrics.md, Drawdown: the starting capital is a peak, so a first losing trade
starts an episode). ``worst_drawdowns`` ranks the episodes by depth, as pyfolio's drawdown
table does; the deepest one is ``summary()``'s ``max_drawdown``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope.analytics._execution import Execution
from quantscope.analytics.trades import drawdown

#: The columns of ``worst_drawdowns()``, in order, and what each is.
DRAWDOWN_COLUMNS: dict[str, str] = {
    "start": "close of the last trade at the peak (the first falling close when the peak is "
    "the starting capital)",
    "trough": "close of the trade at the bottom of the episode",
    "recovery": "close of the first trade back at the peak (NaT while not recovered)",
    "depth": "deepest fall as a fraction of the peak equity (<= 0)",
    "depth_usd": "deepest fall in USD (<= 0)",
    "peak_equity_usd": "the equity at the peak the episode fell from",
    "length": "recovery - start, or last close - start when not recovered",
    "recovered": "whether equity got back to the peak",
    "trades": "closed trades from the first fall to the recovery (included)",
}


def _episodes(fall: np.ndarray) -> list[tuple[int, int]]:
    """``(first, last)`` positions of each run of ``fall < 0``."""
    below = np.concatenate(([False], fall < 0, [False]))
    edges = np.flatnonzero(below[1:] != below[:-1])
    return list(zip(edges[::2].tolist(), (edges[1::2] - 1).tolist(), strict=True))


def worst_drawdowns(
    trades: pd.DataFrame,
    n: int = 5,
    *,
    capital: float | None = None,
    execution: Execution | None = None,
) -> pd.DataFrame:
    """The ``n`` deepest drawdown episodes of the equity curve, deepest first.

    Args:
        trades: a trades frame (``load_trades``); closed trades, in close order.
        n: how many episodes (fewer when there are fewer).
        capital, execution: as in ``drawdown()`` (default 10,000 USD per quant, the executed
            trades).

    Returns:
        One row per episode, index ``rank`` (1 = deepest), the ``DRAWDOWN_COLUMNS``; ties in
        depth are ranked by start. ``attrs["drawdowns"]`` has the number of ``episodes`` found
        and ``attrs["execution"]`` the trades counted.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a whole number of drawdowns >= 1, got {n!r}")
    fall = drawdown(trades, capital=capital, execution=execution)
    times = pd.DatetimeIndex(fall.index)
    usd = fall["drawdown_usd"].to_numpy(dtype=np.float64)
    depth = fall["drawdown"].to_numpy(dtype=np.float64)
    peak = fall["peak_equity_usd"].to_numpy(dtype=np.float64)
    rows = []
    for first, last in _episodes(usd):
        bottom = first + int(np.argmin(depth[first : last + 1]))
        recovered = last + 1 < len(usd)
        end = last + 1 if recovered else last
        start = times[first - 1] if first > 0 else times[first]
        rows.append(
            {
                "start": start,
                "trough": times[bottom],
                "recovery": times[end] if recovered else pd.NaT,
                "depth": depth[bottom],
                "depth_usd": usd[bottom],
                "peak_equity_usd": peak[bottom],
                "length": times[end] - start,
                "recovered": recovered,
                "trades": end - first + 1,
            }
        )
    # Each column built at its dtype: a column of NaT alone (no episode recovered) or no rows at
    # all would be naive or object, which ``astype`` cannot make tz-aware.
    dtypes = {
        "start": "datetime64[ms, UTC]",
        "trough": "datetime64[ms, UTC]",
        "recovery": "datetime64[ms, UTC]",
        "depth": np.float64,
        "depth_usd": np.float64,
        "peak_equity_usd": np.float64,
        "length": "timedelta64[ms]",
        "recovered": bool,
        "trades": np.int64,
    }
    table = pd.DataFrame(
        {
            name: pd.Series([row[name] for row in rows], dtype=dtypes[name])
            for name in DRAWDOWN_COLUMNS
        }
    )
    table = table.sort_values(["depth", "start"], kind="stable").head(n).reset_index(drop=True)
    table.index = pd.RangeIndex(1, len(table) + 1, name="rank")
    table.attrs["execution"] = fall.attrs["execution"]
    table.attrs["drawdowns"] = {"episodes": len(rows), "shown": len(table)}
    return table
