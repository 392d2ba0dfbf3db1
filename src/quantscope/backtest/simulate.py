"""Simulated entries for evaluations that failed: what a looser threshold would have traded.

A threshold looser than the current one would have passed evaluations that failed, and those
have no trade to measure. ``simulated_entries`` makes a clearly labelled stand-in for each: it
enters at the evaluation's detection price (plus the researcher's ``slippage``), in the hourly
candle of the evaluation, and exits by a rule the researcher sets (``ExitRule``), read off the
token's candles the way the service's quants exit (docs/service-contract.md, "The
simulator"): from the entry candle on, stop-loss first, then take-profit (a candle that opens
beyond a level fills at its open), else the close of the horizon's last candle. A position
still open at the last candle is marked to its close and is ``Open``. Fees are the
researcher's (``fee_rate`` per side); there is no model validation. Each entry is simulated on
its own: a simulated position does not block the quant's later evaluations of the same token,
as a real one would.

The rows have the columns of ``trade_features`` with ``simulated=True`` and no trade id, plus
``entry_price_usd``, ``exit_price_usd`` and ``exit_reason``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from quantscope._http.client import Client
from quantscope.backtest.features import TRADE_COLUMNS, backtest_attrs, profitable, wide_details
from quantscope.loaders import load_eval_details, load_ohlcv

HOUR = pd.Timedelta(hours=1)
_REASONS = np.array(["stop_loss", "take_profit", "horizon", "open"], dtype=object)
_STOP, _TAKE, _HORIZON, _OPEN = range(4)


@dataclass(frozen=True)
class ExitRule:
    """When a simulated position exits: the first of stop-loss, take-profit and horizon.

    Args:
        take_profit: exit when the price reaches ``entry * (1 + take_profit)``; None: never.
        stop_loss: exit when the price falls to ``entry * (1 - stop_loss)``; None: never.
        horizon_h: otherwise exit at the close of the ``horizon_h``-th hourly candle.
    """

    take_profit: float | None = 0.8
    stop_loss: float | None = 0.35
    horizon_h: int = 72

    def __post_init__(self) -> None:
        if self.horizon_h < 1:
            raise ValueError(f"horizon_h must be at least 1 hour, got {self.horizon_h}")
        if self.take_profit is not None and self.take_profit <= 0:
            raise ValueError(f"take_profit must be > 0, got {self.take_profit}")
        if self.stop_loss is not None and not 0 < self.stop_loss < 1:
            raise ValueError(f"stop_loss must be in (0, 1), got {self.stop_loss}")


class Exits(NamedTuple):
    """Where simulated positions ended (arrays aligned with the entries)."""

    candle: np.ndarray  # int: the candle of the exit (of the mark, for open positions)
    price: np.ndarray  # float64: exit (or mark) price
    reason: np.ndarray  # int: _STOP, _TAKE, _HORIZON or _OPEN


def simulate_exits(
    candles: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    entry_index: np.ndarray,
    entry_price: np.ndarray,
    rule: ExitRule,
) -> Exits:
    """Exits of positions on one token's hourly candles, all entries at once.

    Args:
        candles: ``open``, ``high``, ``low``, ``close`` arrays, oldest first.
        entry_index: the candle each position enters in (valid indexes).
        entry_price: the price paid.
        rule: the exit rule.

    Every position's window of ``horizon_h`` candles is gathered into one matrix; the first
    candle that touches a level is found with ``argmax``. In a candle after the entry, an
    open beyond a level fills at the open (a gap); within a candle the stop-loss is checked
    first, as the service's quants do.
    """
    open_, high, low, close = (np.asarray(a, dtype=np.float64) for a in candles)
    last = len(close) - 1
    entry_index = np.asarray(entry_index, dtype=np.intp)
    entry_price = np.asarray(entry_price, dtype=np.float64)
    steps = np.arange(rule.horizon_h)
    window = entry_index[:, None] + steps
    inside = window <= last
    window = np.minimum(window, last)
    tp = entry_price * (1 + rule.take_profit) if rule.take_profit is not None else np.inf
    sl = entry_price * (1 - rule.stop_loss) if rule.stop_loss is not None else -np.inf
    tp = np.broadcast_to(tp, entry_price.shape)[:, None]
    sl = np.broadcast_to(sl, entry_price.shape)[:, None]
    later = steps > 0
    o = open_[window]
    stop_gap = later & (o <= sl) & inside
    stop = (low[window] <= sl) & inside
    take_gap = later & (o >= tp) & inside
    take = (high[window] >= tp) & inside
    touched = stop | take
    hit = touched.any(axis=1)
    step = np.argmax(touched, axis=1)
    rows = np.arange(len(entry_index))
    at = window[rows, step]
    end = entry_index + rule.horizon_h - 1
    ended = end <= last
    # No level touched: the horizon's close, or a mark at the last close while still open.
    index = np.where(hit, at, np.where(ended, end, last))
    price = np.where(ended, close[np.minimum(end, last)], close[last])
    reason = np.where(ended, _HORIZON, _OPEN)
    gap = stop_gap[rows, step] | (~stop[rows, step] & take_gap[rows, step])
    level = np.where(stop[rows, step], sl[:, 0], tp[:, 0])
    price = np.where(hit, np.where(gap, open_[at], level), price)
    reason = np.where(hit, np.where(stop[rows, step], _STOP, _TAKE), reason)
    return Exits(index, price, reason)


def simulated_entries(
    evaluations: pd.DataFrame,
    rule: ExitRule,
    *,
    details: pd.DataFrame | None = None,
    candles: Mapping[int, pd.DataFrame] | None = None,
    fee_rate: float = 0.01,
    slippage: float = 0.0,
    size_usd: float = 100.0,
    include_open: bool = False,
    confirm: bool = False,
    client: Client | None = None,
) -> pd.DataFrame:
    """Simulated trades for evaluations that failed, with their criterion values, wide.

    Args:
        evaluations: evaluations (``load_evaluations``, typically ``evaluation_type=
            "TOKEN_BUY", passed=False``); rows that passed are skipped (they have trades).
        rule: how positions exit.
        details: the evaluations' details if loaded; by default ``load_eval_details`` (one
            request per evaluation not yet cached: subset the evaluations to save quota).
        candles: hourly candles by token id if loaded; by default ``load_ohlcv`` (one
            request per token, cached).
        fee_rate: fee paid on each side, a fraction of the amount (default 1 %).
        slippage: the entry price is the detection price times ``1 + slippage`` (default 0;
            the sandbox's quants pay 0.5 %). Exit levels are relative to the entry price.
        size_usd: the USD spent on each entry.
        include_open: keep positions still open at the last candle (marked to its close).
        confirm: spend more than the client's share of the quota left on the details (as
            ``trade_features``).
        client: the client to load with.

    Returns:
        The columns of ``trade_features`` (``simulated`` True, ``trade_id`` missing,
        ``opened_at`` the evaluation time, ``closed_at`` the start of the exit candle), then
        the criterion values, ``entry_price_usd``, ``exit_price_usd`` and ``exit_reason``.
        Evaluations outside the candles, or without a detection price, are left out.
    """
    if not 0 <= fee_rate < 1:
        raise ValueError(f"fee_rate must be in [0, 1), got {fee_rate}")
    if slippage <= -1:
        raise ValueError(f"slippage must be > -1, got {slippage}")
    rows = evaluations
    if "passed" in rows.columns:
        rows = rows[~rows["passed"].astype("boolean").fillna(False).to_numpy(dtype=bool)]
    rows = rows[rows["detection_price_usd"].notna() & rows["token_id"].notna()]
    rows = rows.reset_index(drop=True)
    if details is None:
        ids = [int(i) for i in rows["evaluation_id"]]
        details = load_eval_details(ids, confirm=confirm, client=client)
    wide = wide_details(details)
    exits = _exits(rows, rule, candles, slippage, client)
    entered = exits.dropna(subset=["exit_price_usd"])
    merged = entered.merge(
        wide.drop(columns=["token_id", "chain"], errors="ignore"),
        on="evaluation_id",
        how="inner",
        suffixes=("_evaluation", ""),
    )
    gross = (1 - fee_rate) ** 2 * merged["exit_price_usd"] / merged["entry_price_usd"]
    merged["buy_cost_usd"] = float(size_usd)
    merged["pnl_usd"] = size_usd * (gross - 1.0)
    merged["roi"] = gross - 1.0
    merged["result"] = np.where(
        merged["pnl_usd"] > 0, "Profit", np.where(merged["pnl_usd"] < 0, "Loss", "Breakeven")
    )
    merged["status"] = np.where(merged["exit_reason"] == "open", "Open", "Closed")
    if not include_open:
        merged = merged[merged["status"] == "Closed"].reset_index(drop=True)
    return _assemble(merged, wide)


def _exits(
    rows: pd.DataFrame,
    rule: ExitRule,
    candles: Mapping[int, pd.DataFrame] | None,
    slippage: float,
    client: Client | None,
) -> pd.DataFrame:
    """Entry and exit of every evaluation, token by token (NaN exit when outside the candles)."""
    n = len(rows)
    entry_price = rows["detection_price_usd"].to_numpy(dtype=np.float64) * (1 + slippage)
    exit_price = np.full(n, np.nan)
    reason = np.full(n, "", dtype=object)
    closed_at = pd.Series(pd.NaT, index=rows.index, dtype="datetime64[ms, UTC]")
    for token_id, where in rows.groupby("token_id", sort=True).indices.items():
        bars = candles[int(token_id)] if candles is not None else None
        if bars is None:
            bars = load_ohlcv(int(token_id), "1h", client=client)
        if bars.empty:
            continue
        stamps = bars.index.to_numpy(dtype="datetime64[ms]")
        at = rows["created_at"].iloc[where].to_numpy(dtype="datetime64[ms]")
        index = np.searchsorted(stamps, at, side="right") - 1
        ok = (index >= 0) & (at < stamps[-1] + np.timedelta64(1, "h"))
        where, index = where[ok], index[ok]
        found = simulate_exits(
            tuple(bars[c].to_numpy(dtype=np.float64) for c in ("open", "high", "low", "close")),
            index,
            entry_price[where],
            rule,
        )
        exit_price[where] = found.price
        reason[where] = _REASONS[found.reason]
        closed_at.iloc[where] = bars.index[found.candle]
    return rows.assign(
        entry_price_usd=entry_price,
        exit_price_usd=exit_price,
        exit_reason=reason,
        opened_at=rows["created_at"],
        closed_at=closed_at,
    )


def _assemble(merged: pd.DataFrame, wide: pd.DataFrame) -> pd.DataFrame:
    meta = backtest_attrs(wide)
    criteria = list(meta.get("criteria", ()))
    out = pd.DataFrame(index=merged.index)
    for col in TRADE_COLUMNS:
        if col in ("trade_id", "quant_name", "decision"):
            out[col] = pd.Series(pd.NA, index=merged.index, dtype="object")
        elif col == "profitable":
            out[col] = profitable(merged)
        elif col == "simulated":
            out[col] = pd.array(np.ones(len(merged), dtype=bool), dtype="boolean")
        else:
            out[col] = merged[col]
    for col in ("quant_id", "evaluation_id", "token_id"):
        out[col] = out[col].astype("Int64")
    for col in ("status", "result"):
        out[col] = out[col].astype("category")
    extra = merged[["entry_price_usd", "exit_price_usd", "exit_reason"]].astype(
        {"exit_reason": "category"}
    )
    frame = pd.concat([out, merged.reindex(columns=criteria).astype(np.float64), extra], axis=1)
    frame.attrs["backtest"] = meta
    return frame
