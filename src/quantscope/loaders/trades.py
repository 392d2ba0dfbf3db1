"""Trades: the list (every page), one trade with its transactions, and trade statistics."""

from __future__ import annotations

from datetime import date, datetime
from typing import NamedTuple

import pandas as pd

from quantscope import _endpoints as E
from quantscope._http.client import Client, Fetched, FetchedPages, PageNumberPaging
from quantscope._ids import IdArg
from quantscope._typed import schemas as _schemas
from quantscope._typed.decode import page_decoder
from quantscope.loaders._base import (
    Frames,
    Recipe,
    columns_of,
    field,
    record_frame,
    records,
    spend_of,
    typed_frame,
)
from quantscope.loaders._planned import LoadPlan, frame_plan, parts_plan, planned, series_plan

TRADES = E.TRADES.path
TRADE = E.TRADE.path
STATS = E.STATS.path

# The top-level keys of a trades page that the load reads besides the trades.
TRADES_KEEP = ("pagination", "summary")
# A decoded trade is ~2.7 kB (nested token, costs, exits): the default batch of 16,384 rows held
# ~44 MB of them at once, 8x the frame of a 32k-trade load. A page at a time (1,000 rows) paid
# each column's conversion once per page: 140 conversions for a 4-page load, ~20 % of its client
# CPU (benchmarks/README.md, loadpath). Four default pages (~11 MB waiting at most) convert a
# small load once and keep a large one's batches small.
TRADES_FOLD_ROWS = 4_096
# Pages decoded straight into the trades columns (msgspec), with the total and the summary:
# the decoder ``load_trades``' recipe uses (for benchmarks and tests of the decoder).
TRADES_DECODE = page_decoder(_schemas.TRADES, "trades", TRADES_KEEP)


@planned
def load_trades(
    quant_id: IdArg | None = None,
    *,
    trading_status: str | None = "executed",
    trading_mode: str | None = None,
    position_closed: bool | None = None,
    tracking_enabled: bool | None = None,
    status: str | None = None,
    chain: str | None = None,
    search: str | None = None,
    start: datetime | date | str | None = None,
    end: datetime | date | str | None = None,
    sort_by: str | None = None,
    sort_order: str | None = None,
    page_size: int = 1000,
    max_pages: int | None = None,
    confirm: bool = False,
    max_requests: int | None = None,
    partial: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """Every trade matching the filters, one row each (columns: docs/frames.md, ``trades``).

    Args:
        quant_id: one quant, or all.
        trading_status: model-validation filter: ``executed`` (the service's default),
            ``delayed``, ``rejected``, ``recommended`` or ``all``.
        trading_mode: ``live``, ``paper`` or None for both.
        position_closed: True for closed positions only, False for open ones, None for both.
        tracking_enabled: filter on whether the token is still tracked.
        status: the service's ``filterStatus`` (e.g. ``Closed``, ``Open``, ``Profit``, ``Loss``).
        chain: ``SOLANA``, ``BASE`` or ``BSC``.
        search: token name, symbol or address.
        start, end: bounds on the open date (UTC).
        sort_by, sort_order: the service's sort (default newest first).
        page_size: trades per request (the quota counts requests, so large pages are cheap).
        max_pages: stop after this many pages.
        confirm: spend more than the client's share of the quota left (README, "The cache
            and the quota"); without it such a load is refused with its cost.
        max_requests: a ceiling on the requests this load may send, instead of the share.
        partial: fetch what fits in the quota left and return an incomplete frame (attrs
            ``incomplete``, a warning) instead of refusing.

    The service's own summary of the same filters is in ``df.attrs["quantscope"]["summary"]``.
    """
    params = E.query(E.TRADES, locals())  # the filters above, by the registry's wire names
    recipe = Recipe(
        TRADES,
        _schemas.TRADES,
        rows=True,
        keep=TRADES_KEEP,
        paging=PageNumberPaging.of(E.TRADES, page_size),
        build=_trades_frame,
        desc="trades",
        by_chain=True,
        fold_rows=TRADES_FOLD_ROWS,
    )
    spend = spend_of(confirm, max_requests, partial)
    return frame_plan(recipe, params, client=client, max_pages=max_pages, spend=spend)


def _trades_frame(recipe: Recipe, pages: FetchedPages) -> pd.DataFrame:
    summary = pages.pages[0].get("summary") if pages.pages else None
    return typed_frame(columns_of(recipe, pages), recipe.spec, pages.provenance, summary=summary)


class TradeDetail(NamedTuple):
    """One trade (a one-row frame, exact ``_raw`` numbers) and its transactions."""

    trade: pd.DataFrame
    transactions: pd.DataFrame


@planned
def load_trade(trade_id: IdArg, *, client: Client | None = None) -> LoadPlan[TradeDetail]:
    """One trade with its detail fields and on-chain transactions."""
    recipe = Recipe(
        TRADE, _schemas.TRADE_DETAIL, build=_trade_frames, parts=(_schemas.TRANSACTIONS,)
    )
    return parts_plan(recipe, E.query(E.TRADE, locals()), _trade_detail, client=client)


def _trade_detail(frames: Frames, c: Client) -> TradeDetail:
    trade, transactions = frames
    return TradeDetail(trade, transactions)


def _trade_frames(recipe: Recipe, fetched: Fetched) -> tuple[pd.DataFrame, pd.DataFrame]:
    trade = field(fetched.data, TRADE, "trade")
    params = fetched.provenance.params
    assert isinstance(params, dict)  # one request's wire parameters
    trade_id = int(params["id"])
    txs = [dict(t, trade_id=trade_id) for t in records(trade.get("transactions", []), TRADE)]
    return (
        typed_frame([trade], recipe.spec, fetched.provenance),
        typed_frame(txs, _schemas.TRANSACTIONS, fetched.provenance),
    )


@planned
def load_trade_stats(
    quant_id: IdArg | None = None, *, client: Client | None = None
) -> LoadPlan[pd.Series]:
    """Executed-trade statistics: counts, volume and week-on-week changes (fractions)."""
    recipe = Recipe(STATS, _schemas.TRADE_STATS, build=_stats_frame, by_chain=True)
    return series_plan(recipe, E.query(E.STATS, locals()), client=client)


def _stats_frame(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    return record_frame(field(fetched.data, STATS, "metrics"), recipe.spec, fetched.provenance)
