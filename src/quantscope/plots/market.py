"""Market figures: OHLCV candlesticks with the quant's evaluations and trades marked on them.

Drawn with plain matplotlib (a wick line and a body bar per candle, in greys: the trade marks
carry the outcome colours), so no charting dependency.
Every marker is a value of a frame, looked up, never estimated:

* an evaluation at (``created_at``, ``detection_price_usd``), passed and failed apart;
* a trade's entry at (``opened_at``, its fill price ``buy_cost_usd / tokens_bought``), or, when
  the frame has no fill, ``detection_price_usd`` (the price the quant saw when its buy
  evaluation passed, a minute or so before the buy);
* its exit at (``closed_at``, its fill price ``sell_revenue_usd / tokens_sold``), so the line's
  slope is the trade's own return (issue 21: drawn at the candle's close, a fill of $0.000249
  showed as $0.000326); without fills, the close of the candle that holds ``closed_at``;
* with a transactions frame (``load_trade(id).transactions``), entries and exits at the
  executed ``price_usd`` and ``timestamp`` of the BUY and SELL transactions instead.
"""

from __future__ import annotations

from typing import Any

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection

from quantscope.plots import _style as S

# Candles in greys (rising light, falling dark), so that the trade lines and markers, coloured
# by outcome (``S.WIN``/``S.LOSS``), never share a colour with the candles they are drawn on.
CANDLE_UP = "#bdbdbd"
CANDLE_DOWN = "#737373"


def candles(
    ohlcv: pd.DataFrame,
    *,
    evaluations: pd.DataFrame | None = None,
    trades: pd.DataFrame | None = None,
    transactions: pd.DataFrame | None = None,
    token_id: int | None = None,
    width: float = 0.7,
    ax: Axes | None = None,
) -> Axes:
    """Candlesticks of ``ohlcv`` (``load_ohlcv``), with evaluations and trade entries/exits.

    Args:
        ohlcv: candles on a UTC DatetimeIndex (candle start), columns open/high/low/close.
        evaluations: an evaluations frame; its rows of the token inside the candles' span are
            marked, passed (open circle) and failed (cross) apart; no verdict: not marked.
        trades: a trades frame; each trade of the token that opens or closes inside the span
            gets an entry (triangle up), an exit (triangle down) and a dotted line between them
            coloured by its outcome (win, loss).
        transactions: BUY/SELL transactions (``load_trade(id).transactions``): exact fills.
        token_id: the token whose rows to mark; default the ``token_id`` the loader recorded in
            ``ohlcv.attrs``; with neither, every row is marked.
        width: body width as a fraction of the candle interval.

    Returns:
        The Axes. Wicks are a LineCollection (gid ``wicks``), bodies a BarContainer (label
        ``candles``); markers are Line2D labelled ``evaluation passed``, ``evaluation failed``,
        ``entry``, ``exit``; trade lines a LineCollection labelled ``winning trade`` /
        ``losing trade``.
    """
    ax = S.new_axes(ax, figsize=(10.0, 4.5))
    info: dict[str, Any] = dict(ohlcv.attrs.get("quantscope", {}))
    token = token_id if token_id is not None else info.get("token_id")
    times = S.utc_naive(ohlcv.index)
    x = mdates.date2num(times)
    step = _interval_days(x, info.get("timeframe"))
    span = (
        (times.min(), times.max() + np.timedelta64(int(step * 86_400_000), "ms"))
        if len(x)
        else None
    )

    o, h, lo, c = (
        ohlcv[k].to_numpy(dtype=np.float64, na_value=np.nan)
        for k in ("open", "high", "low", "close")
    )
    colors = [CANDLE_UP if up else CANDLE_DOWN for up in c >= o]
    ax.vlines(x, lo, h, colors=colors, linewidth=0.8, gid="wicks")
    ax.bar(
        x,
        np.abs(c - o),
        width=width * step,
        bottom=np.minimum(o, c),
        color=colors,
        edgecolor=colors,
        linewidth=0.5,
        label="candles",
    )

    symbols: list[str] = []
    if evaluations is not None and span is not None:
        rows = _select(evaluations, token, evaluations["created_at"], span)
        symbols += _symbols(rows)
        _draw_evaluations(ax, rows)
    if (trades is not None or transactions is not None) and span is not None:
        marks = _trade_marks(ohlcv, trades, transactions, token, span, step)
        if trades is not None:
            symbols += _symbols(_select(trades, token, trades["opened_at"], None))
        _draw_trades(ax, marks)

    if span is not None:
        ax.set_xlim(x.min() - step, x.max() + 2 * step)
    name = symbols[0] if symbols else (f"token {token}" if token is not None else "candles")
    timeframe = info.get("timeframe")
    ax.set_title(f"{name}: {timeframe} candles" if timeframe else name)
    ax.set_ylabel("price (USD)")
    ax.yaxis.set_major_formatter(S.PRICE.axis())
    ax.xaxis_date(tz="UTC")
    S.date_axis(ax, "time (UTC)")
    ax.grid(alpha=0.25)
    handles, labels = ax.get_legend_handles_labels()
    keep = [(hd, lb) for hd, lb in zip(handles, labels, strict=True) if lb != "candles"]
    if keep:
        ax.legend(*zip(*keep, strict=True), fontsize="small", frameon=False, loc="upper left")
    return ax


def _draw_evaluations(ax: Axes, rows: pd.DataFrame) -> None:
    """Passed and failed evaluations at their detection price; no verdict: not drawn."""
    verdict = rows["passed"].astype("boolean")
    styles: tuple[tuple[bool, dict[str, Any]], ...] = (
        (True, {"marker": "o", "markerfacecolor": "white", "markeredgecolor": "black"}),
        (False, {"marker": "x", "color": "black"}),
    )
    for passed, style in styles:
        chosen = rows[(verdict == passed).to_numpy(dtype=bool, na_value=False)]
        ax.plot(
            mdates.date2num(S.utc_naive(chosen["created_at"])),
            chosen["detection_price_usd"].to_numpy(dtype=np.float64, na_value=np.nan),
            linestyle="none",
            markersize=5,
            alpha=0.8,
            label=f"evaluation {'passed' if passed else 'failed'}",
            **style,
        )


def _interval_days(x: np.ndarray, timeframe: object) -> float:
    """The candle interval in days: the closest spacing of the candles, else the timeframe."""
    spacings = np.diff(np.unique(x))
    if spacings.size:
        return float(spacings.min())
    try:
        days: float = pd.Timedelta(str(timeframe)) / pd.Timedelta(days=1)
        return days
    except ValueError:
        return 1 / 24


def _select(
    frame: pd.DataFrame, token: object, when: pd.Series, span: tuple[Any, Any] | None
) -> pd.DataFrame:
    """Rows of ``token`` (when known and the frame has ``token_id``) whose time is in ``span``."""
    keep = np.ones(len(frame), dtype=bool)
    if token is not None and "token_id" in frame.columns:
        keep &= (frame["token_id"] == token).to_numpy(dtype=bool, na_value=False)
    if span is not None:
        t = S.utc_naive(when)
        keep &= (t >= span[0]) & (t <= span[1])
    return frame[keep]


def _symbols(rows: pd.DataFrame) -> list[str]:
    if "token_symbol" not in rows.columns:
        return []
    return [str(s) for s in rows["token_symbol"].dropna().unique()[:1]]


def _trade_marks(
    ohlcv: pd.DataFrame,
    trades: pd.DataFrame | None,
    transactions: pd.DataFrame | None,
    token: object,
    span: tuple[Any, Any],
    step_days: float,
) -> pd.DataFrame:
    """One row per trade (index ``trade_id``): entry and exit time and price (module doc), and
    ``pnl_usd`` when closed; only trades that open or close inside ``span``.
    """
    marks = pd.DataFrame(
        {
            "entry_at": pd.Series(dtype="datetime64[ms, UTC]"),
            "entry_usd": pd.Series(dtype=np.float64),
            "exit_at": pd.Series(dtype="datetime64[ms, UTC]"),
            "exit_usd": pd.Series(dtype=np.float64),
            "pnl_usd": pd.Series(dtype=np.float64),
        },
        index=pd.Index([], dtype="Int64", name="trade_id"),
    )
    if trades is not None:
        rows = _select(trades, token, trades["opened_at"], None)
        closed = (rows["status"] == "Closed").to_numpy(dtype=bool, na_value=False)
        exit_at = rows["closed_at"].where(closed)
        # The candle that holds the close: the last one starting at or before it.
        held = (
            ohlcv["close"]
            .sort_index()
            .reindex(
                pd.DatetimeIndex(exit_at), method="ffill", tolerance=pd.Timedelta(days=step_days)
            )
        )
        entry_usd = _fill(rows, "buy_cost_usd", "tokens_bought").fillna(
            rows["detection_price_usd"].astype("Float64")
        )
        exit_usd = (
            _fill(rows, "sell_revenue_usd", "tokens_sold")
            .where(pd.Series(closed, index=rows.index))
            .fillna(pd.Series(held.to_numpy(), index=rows.index).astype("Float64"))
        )
        marks = pd.DataFrame(
            {
                "entry_at": rows["opened_at"].to_numpy(),
                "entry_usd": entry_usd.to_numpy(np.float64, na_value=np.nan),
                "exit_at": exit_at.to_numpy(),
                "exit_usd": exit_usd.to_numpy(np.float64, na_value=np.nan),
                "pnl_usd": rows["pnl_usd"].where(closed).to_numpy(np.float64, na_value=np.nan),
            },
            index=pd.Index(rows["trade_id"], name="trade_id"),
        )
    if transactions is not None:
        marks = _fills(marks, transactions, add_trades=trades is None)
    entry, exit_ = S.utc_naive(marks["entry_at"]), S.utc_naive(marks["exit_at"])
    inside = ((entry >= span[0]) & (entry <= span[1])) | ((exit_ >= span[0]) & (exit_ <= span[1]))
    return marks[inside]


def _fill(rows: pd.DataFrame, usd: str, tokens: str) -> pd.Series:
    """The average fill price of one side of each trade (USD per token); missing where the
    frame lacks the columns or no token changed hands.
    """
    if usd not in rows.columns or tokens not in rows.columns:
        return pd.Series(pd.NA, index=rows.index, dtype="Float64")
    amount = rows[tokens].astype("Float64")
    price = rows[usd].astype("Float64") / amount.where(amount > 0)
    return price.where(price > 0)


def _fills(marks: pd.DataFrame, transactions: pd.DataFrame, *, add_trades: bool) -> pd.DataFrame:
    """``marks`` with entries at each trade's first BUY and exits at its last SELL."""
    marks = marks.copy()
    ordered = transactions.sort_values("timestamp", kind="stable")
    sides = (("BUY", "first", "entry_at", "entry_usd"), ("SELL", "last", "exit_at", "exit_usd"))
    for action, pick, at, usd in sides:
        rows = ordered[(ordered["action"] == action).to_numpy(dtype=bool, na_value=False)]
        fill = rows.groupby("trade_id", observed=True, sort=True).agg(
            at=("timestamp", pick), usd=("price_usd", pick)
        )
        if add_trades:
            marks = marks.reindex(marks.index.union(fill.index))
        fill = fill[fill.index.isin(marks.index)]
        marks.loc[fill.index, at] = fill["at"]
        marks.loc[fill.index, usd] = fill["usd"]
    return marks


def _draw_trades(ax: Axes, marks: pd.DataFrame) -> None:
    """Entry and exit markers, and a dotted line per trade coloured by its outcome."""
    entry_x = mdates.date2num(S.utc_naive(marks["entry_at"]))
    exit_x = mdates.date2num(S.utc_naive(marks["exit_at"]))
    entry_y = marks["entry_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    exit_y = marks["exit_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    pnl = marks["pnl_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    for label, win in (("winning trade", pnl > 0), ("losing trade", pnl < 0)):
        drawn = win & np.isfinite(entry_x) & np.isfinite(exit_x)
        segments = np.stack(
            [np.column_stack([entry_x, entry_y]), np.column_stack([exit_x, exit_y])], axis=1
        )[drawn]
        if segments.size:
            color = S.WIN if label.startswith("winning") else S.LOSS
            ax.add_collection(
                LineCollection(
                    list(segments), colors=color, linestyles=":", linewidths=1.2, label=label
                )
            )
    ax.plot(
        entry_x,
        entry_y,
        linestyle="none",
        marker="^",
        markersize=8,
        color=S.LINE,
        markeredgecolor="white",
        label="entry",
    )
    ax.plot(
        exit_x,
        exit_y,
        linestyle="none",
        marker="v",
        markersize=8,
        color="black",
        markeredgecolor="white",
        label="exit",
    )
