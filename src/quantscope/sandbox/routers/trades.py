"""Performance and trades: GET /api/trades/stats, GET /api/trades, GET /api/trades/{id}.

Filters, sorting, paging and the summary run in SQLite; only the page's rows are rendered
(trade_json.py). Every query sees the caller's plan chains only. The decisions behind the
parameters (defaults, accepted values, date bounds) are docs/service-contract.md, Trades.
"""

from __future__ import annotations

import math
import sqlite3
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query

from quantscope.sandbox.catalog import CHAINS, WORLD_NOW_MS
from quantscope.sandbox.deps import Caller, JSONRoute, StoreDep, inline_first, require
from quantscope.sandbox.errors import DATE_ORDER, invalid_parameter, not_found, unprocessable
from quantscope.sandbox.listing import Order
from quantscope.sandbox.models.trades import TradeDetailResponse, TradeList, TradeStats
from quantscope.sandbox.params import (
    DECIMAL,
    MAX_ID,
    Chain,
    Id,
    IsoText,
    OptionalId,
    PageSize,
    TokenSearch,
    Where,
    case_insensitive,
    parse_iso_ms,
)
from quantscope.sandbox.store import Store
from quantscope.sandbox.trade_json import (
    DURATION_SQL,
    SELECT_TRADES,
    fetch_trades,
    trade_detail,
    trade_items_by_id,
)

router = APIRouter(route_class=JSONRoute, tags=["Performance and trades"])

# The tables the list filters read (trade and token): enough for the count and the summary.
_FILTER_FROM = "FROM trades t JOIN tokens k ON k.id = t.token_id"
WEEK_MS = 7 * 24 * 3_600_000

_Status = Literal["executed", "delayed", "rejected", "recommended", "all"]
_Mode = Literal["live", "paper", "all"]
_Tri = Literal["true", "false", "all"]
_Filter = Literal["all", "Open", "Closed", "Profit", "Loss", "Breakeven"]
_Order = Literal["asc", "desc"]
TradingStatus = Annotated[_Status, case_insensitive(_Status)]
TradingMode = Annotated[_Mode, case_insensitive(_Mode)]
TriState = Annotated[_Tri, case_insensitive(_Tri)]
FilterStatus = Annotated[_Filter, case_insensitive(_Filter)]
SortOrder = Annotated[_Order, case_insensitive(_Order)]
SortBy = Literal[
    "open_date", "close_date", "pnl_usd", "roi", "buy_cost_usd", "duration", "token_symbol", "id"
]

# sortBy -> the SQL expression it orders by (fixed text: never user input).
_SORT_SQL: dict[str, str] = {
    "open_date": "t.open_ms",
    "close_date": "t.close_ms",  # NULL (open, shown as "") sorts first ascending, like ""
    "pnl_usd": "t.pnl",
    "roi": "t.roi",
    "buy_cost_usd": "t.buy_cost",
    "duration": DURATION_SQL,
    "token_symbol": "k.symbol",
    "id": "t.id",
}
_NULLABLE_SORTS = {"close_date"}

QuantId = Annotated[
    OptionalId, Query(description="Only this quant's trades; an unknown quant matches none.")
]


# --------------------------------------------------------------------------------------------
# GET /api/trades/stats (declared before /api/trades/{id} so "stats" is not taken for an id)
# --------------------------------------------------------------------------------------------


@router.get("/api/trades/stats", response_model=TradeStats)
def trade_stats(
    caller: Annotated[Caller, Depends(require("trades"))],
    store: StoreDep,
    quantId: QuantId = None,
) -> dict[str, Any]:
    """Activity of executed trades on the plan's chains, and its change week over week.

    The weekly changes compare trades opened in the 7 days before WORLD_NOW with the 7 days
    before those, in percent (0 when the earlier week has no trades).
    """
    where = Where()
    where.add("t.trading_status = 'executed'")
    where.one_of("t.chain", caller.chains)
    if quantId is not None:
        where.add("t.quant_id = ?", quantId)
    volume = "t.buy_cost + t.sell_revenue"
    week = "CASE WHEN t.open_ms >= ? THEN 'week' WHEN t.open_ms >= ? THEN 'prev' END"
    rows = store.listing.aggregate(
        store.connect(),
        f"SELECT {week} AS bucket, COUNT(*), TOTAL({volume}) "
        f"FROM trades t{where.sql()} GROUP BY bucket",
        (WORLD_NOW_MS - WEEK_MS, WORLD_NOW_MS - 2 * WEEK_MS, *where.params),
    )
    buckets = {row[0]: (row[1], row[2]) for row in rows}
    (n_week, v_week), (n_prev, v_prev) = (buckets.get(b, (0, 0.0)) for b in ("week", "prev"))
    return {
        "metrics": {
            "totalTrades": sum(n for n, _ in buckets.values()),
            "totalVolume": math.fsum(v for _, v in buckets.values()),
            "tradesWeeklyChange": _change(n_week, n_prev),
            "volumeWeeklyChange": _change(v_week, v_prev),
        }
    }


def _change(now: float, before: float) -> float:
    """Percent change from ``before`` to ``now``; 0 when ``before`` is 0."""
    return 100.0 * (now - before) / before if before else 0.0


# --------------------------------------------------------------------------------------------
# GET /api/trades
# --------------------------------------------------------------------------------------------


@router.get(
    "/api/trades",
    response_model=TradeList,
    responses=unprocessable(DATE_ORDER.format("startDate", "endDate")),
)
@inline_first
def list_trades(
    caller: Annotated[Caller, Depends(require("trades"))],
    store: StoreDep,
    quantId: QuantId = None,
    page: Annotated[
        Id, Query(description="Page number, from 1; a page past the end is empty.")
    ] = 1,
    pageSize: Annotated[PageSize, Query(description="Trades per page.")] = 20,
    sortBy: Annotated[
        SortBy, Query(description="Field to sort by; ties are broken by id in the same order.")
    ] = "open_date",
    sortOrder: Annotated[SortOrder, Query(description="asc or desc (any case).")] = "desc",
    filterStatus: Annotated[
        FilterStatus,
        Query(description="Open/Closed (status) or Profit/Loss/Breakeven (result), any case."),
    ] = "all",
    search: TokenSearch = None,
    startDate: Annotated[
        IsoText,
        Query(
            description="Lower bound of open_date, inclusive: YYYY-MM-DD or "
            "YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM] (naive is UTC), compared to the second."
        ),
    ] = None,
    endDate: Annotated[
        IsoText,
        Query(description="Upper bound of open_date, inclusive; formats as startDate."),
    ] = None,
    chain: Chain = None,
    positionClosed: Annotated[
        TriState, Query(description="true: closed positions, false: open ones, all.")
    ] = "all",
    isTrackingEnabled: Annotated[
        TriState, Query(description="true: tokens the quant still tracks (not rugged), false, all.")
    ] = "all",
    tradingMode: Annotated[TradingMode, Query(description="live, paper or all.")] = "all",
    tradingStatus: Annotated[
        TradingStatus,
        Query(description="Model validation status; executed when absent."),
    ] = "executed",
) -> dict[str, Any]:
    """One page of trades, the summary over every matching trade, and where the page sits."""
    chains = caller.resolve_chains(chain)
    conn = store.connect()
    # every trade on a chain of the catalog with its token: then a filter on all the chains is
    # no filter, and the page's seek needs the tokens only to search or sort by symbol
    plain = store.listing.every_row_joined(conn, "trades", CHAINS)
    where = Where()
    if not plain or set(chains) != set(CHAINS):
        where.one_of("t.chain", chains)
    if quantId is not None:
        where.add("t.quant_id = ?", quantId)
    if tradingStatus != "all":
        where.add("t.trading_status = ?", tradingStatus)
    if tradingMode != "all":
        where.add("t.mode = ?", tradingMode)
    if positionClosed != "all":
        where.add("t.status = ?", "Closed" if positionClosed == "true" else "Open")
    if isTrackingEnabled != "all":
        where.add("t.tracking = ?", int(isTrackingEnabled == "true"))
    if filterStatus in ("Open", "Closed"):
        where.add("t.status = ?", filterStatus)
    elif filterStatus != "all":
        where.add("t.result = ?", filterStatus)
    where.token_search(search)
    _date_range(where, startDate, endDate)

    summary = _summary(store, conn, where, quantId)
    total = summary["totalTrades"]
    offset = (page - 1) * pageSize
    trades: list[dict[str, Any]] = []
    if offset < total:
        order = Order(
            _SORT_SQL[sortBy], "t.id", sortOrder == "desc", nullable=sortBy in _NULLABLE_SORTS
        )
        # Sort and cut the page on the narrow filter join (a keyset seek), then fetch the
        # page's full rows.
        tokens = not plain or where.uses("k") or sortBy == "token_symbol"
        source = _FILTER_FROM if tokens else "FROM trades t"
        ids = store.listing.page_ids(
            conn, source, where.clauses, where.params, order, pageSize, offset
        )
        trades = trade_items_by_id(conn, ids)
    return {
        "trades": trades,
        "summary": summary,
        "pagination": {
            "total": total,
            "page": page,
            "pageSize": pageSize,
            "totalPages": math.ceil(total / pageSize),
        },
    }


def _date_range(where: Where, start: str | None, end: str | None) -> None:
    """Bound open_date to the second, both ends inclusive, as the trade's open_date shows it.

    A trade is in range when its open_date (whole seconds) lies in [startDate, endDate]; a
    startDate after endDate is 422.
    """
    start_ms = None if start is None else parse_iso_ms("startDate", start)
    end_ms = None if end is None else parse_iso_ms("endDate", end)
    if start_ms is not None and end_ms is not None and start_ms > end_ms:
        raise invalid_parameter(
            "startDate", f"startDate ({start!r}) must not be after endDate ({end!r})"
        )
    if start_ms is not None:
        where.add("t.open_ms >= ?", -(-start_ms // 1000) * 1000)  # up to a whole second
    if end_ms is not None:
        where.add("t.open_ms < ?", (end_ms // 1000 + 1) * 1000)  # past the end's second


def _summary(
    store: Store, conn: sqlite3.Connection, where: Where, quant_id: int | None
) -> dict[str, Any]:
    """The Trade summary over every trade the filter matches (aggregates in SQL, computed
    once per filter: trades never change while a world is served).
    """
    rows = store.listing.aggregate(
        conn,
        f"""SELECT t.status, COUNT(*), TOTAL(t.buy_cost + t.sell_revenue),
                   COUNT(CASE WHEN t.pnl > 0 THEN 1 END), COUNT(CASE WHEN t.pnl < 0 THEN 1 END),
                   TOTAL(CASE WHEN t.pnl > 0 THEN t.pnl END),
                   TOTAL(CASE WHEN t.pnl < 0 THEN t.pnl END),
                   TOTAL(t.pnl), TOTAL(t.buy_cost), TOTAL(t.roi)
            {_FILTER_FROM}{where.sql()} GROUP BY t.status""",
        where.params,
    )
    groups = {row[0]: tuple(row)[1:] for row in rows}
    empty = (0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
    closed, opened = groups.get("Closed", empty), groups.get("Open", empty)
    n, volume, wins, losses, profit, loss, pnl, _, _ = (
        a + b for a, b in zip(closed, opened, strict=True)
    )
    if quant_id is None:  # memoised too: quants never change while a world is served
        capital_rows = store.listing.aggregate(conn, "SELECT TOTAL(capital_usd) FROM quants", ())
    else:
        capital_rows = store.listing.aggregate(
            conn, "SELECT TOTAL(capital_usd) FROM quants WHERE id = ?", (quant_id,)
        )
    capital = capital_rows[0][0]
    return {
        "totalTrades": n,
        "totalVolume": volume,
        "profitableTrades": wins,
        "lossTrades": losses,
        "totalProfit": profit,
        "totalLoss": loss,
        "winRate": 100.0 * wins / n if n else 0.0,
        "accountValue": capital + pnl,
        "realized": _group(closed),
        "unrealized": _group(opened),
    }


def _group(g: tuple[Any, ...]) -> dict[str, Any]:
    """A Trade group from (count, volume, wins, losses, profit, loss, pnl, cost, roi sum)."""
    n, volume, wins, losses, profit, loss, pnl, cost, roi_sum = g
    return {
        "trades": n,
        "volume": volume,
        "profitableTrades": wins,
        "lossTrades": losses,
        "profit": profit,
        "loss": loss,
        "pnl": pnl,
        "roi": 100.0 * pnl / cost if cost else 0.0,
        "winRate": 100.0 * wins / n if n else 0.0,
        "avgReturn": roi_sum / n if n else 0.0,
    }


# --------------------------------------------------------------------------------------------
# GET /api/trades/{id}
# --------------------------------------------------------------------------------------------


@router.get("/api/trades/{id}", response_model=TradeDetailResponse)
def get_trade(
    id: Annotated[
        int,
        Path(ge=1, le=MAX_ID, description="The trade id (1 to 2^63-1); an unknown one is 404."),
        DECIMAL,
    ],
    caller: Annotated[Caller, Depends(require("trades"))],
    store: StoreDep,
) -> dict[str, Any]:
    """One trade with its detail fields: the ``_raw`` numbers and its transactions."""
    conn = store.connect()
    rows = fetch_trades(conn, f"{SELECT_TRADES} WHERE t.id = ?", (id,))
    if not rows:
        raise not_found(f"no trade with id {id}", "id")
    row = rows[0]
    caller.check_chain(row.chain)
    transactions = conn.execute(
        "SELECT * FROM transactions WHERE trade_id = ? ORDER BY ts_ms, id", (id,)
    ).fetchall()
    return {"trade": trade_detail(row, transactions)}
