"""Trades as JSON: the columns the trade queries select and the rows turned into wire objects.

One SELECT (``SELECT_TRADES``) joins a trade with its token (current price, 24 h figures, market
cap, liquidity), its quant (name) and the ``TOKEN_BUY`` evaluation that opened it; ``trade_item``
renders a row as a list item of GET /api/trades and ``trade_detail`` adds the detail-only fields
of GET /api/trades/{id}. Display strings come from display.py and dates have timefmt.py's formats
(docs/service-contract.md, Trades). Rows are plain tuples (``TradeRow``) and a token's current
figures are formatted once per page, not once per trade (benchmarks/README.md, scale).

The validation model's reasoning and the evaluation summary are short texts made from the trade's
real figures (token, market cap, liquidity, scores, decision): deterministic, never invented.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from quantscope.sandbox import display, rendered
from quantscope.sandbox.catalog import WORLD_NOW_MS
from quantscope.sandbox.timefmt import iso_ms, trade_date

# Whole seconds a trade has lasted: to its close, or up to WORLD_NOW while it is open. The list
# sorts by this very expression, so the order agrees with the ``duration`` text it shows.
DURATION_SQL = f"((COALESCE(t.close_ms, {WORLD_NOW_MS}) - t.open_ms) / 1000)"

FROM_TRADES = (
    "FROM trades t JOIN tokens k ON k.id = t.token_id JOIN quants q ON q.id = t.quant_id "
    "JOIN evaluations e ON e.id = t.buy_eval_id"
)
"""The joins of a trade with its token, quant and buy evaluation (``t``, ``k``, ``q``, ``e``)."""


class TradeRow(NamedTuple):
    """One row of ``SELECT_TRADES``: the trade, its token now, its quant, its buy evaluation."""

    id: int
    token_id: int
    chain: str
    decision: str
    wait_until_ms: int | None
    validated_ms: int
    confidence: float
    open_ms: int
    close_ms: int | None
    status: str
    result: str
    buy_cost: float
    sell_revenue: float
    pnl: float
    roi: float
    native_spent: float
    native_received: float
    tokens_bought: float
    tokens_sold: float
    avg_buy_price_native: float
    duration_s: int
    token_name: str
    symbol: str
    address: str
    image: str
    token_price: float
    change_24h: float
    token_volume: float
    token_market_cap: float
    token_liquidity: float
    quant_name: str
    eval_id: int
    eval_type: str
    passed: int
    ai_score: float
    internal_score: float
    eval_ms: int
    detection_price: float
    eval_market_cap: float
    mc_class: str
    eval_liquidity: float
    eval_volume: float
    holders: int


# The SQL of each TradeRow field, in field order (fields without an entry are t.<field>).
_COLUMN_SQL = {
    "duration_s": DURATION_SQL,
    "token_name": "k.name",
    "symbol": "k.symbol",
    "address": "k.address",
    "image": "k.image",
    "token_price": "k.price",
    "change_24h": "k.change_24h",
    "token_volume": "k.volume_24h",
    "token_market_cap": "k.market_cap",
    "token_liquidity": "k.liquidity",
    "quant_name": "q.name",
    "eval_id": "e.id",
    "eval_type": "e.type",
    "passed": "e.passed",
    "ai_score": "e.ai_score",
    "internal_score": "e.internal_score",
    "eval_ms": "e.created_ms",
    "detection_price": "e.price",
    "eval_market_cap": "e.market_cap",
    "mc_class": "e.mc_class",
    "eval_liquidity": "e.liquidity",
    "eval_volume": "e.volume_24h",
    "holders": "e.holders",
}

SELECT_TRADES = (
    "SELECT "
    + ", ".join(_COLUMN_SQL.get(name, f"t.{name}") for name in TradeRow._fields)
    + " "
    + FROM_TRADES
)
"""The columns of a TradeRow; append ``WHERE ...`` and read rows with ``fetch_trades``."""


def fetch_trades(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[TradeRow]:
    """Run a ``SELECT_TRADES ...`` query and return its rows as TradeRow tuples."""
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: far cheaper than sqlite3.Row on a 1,000-row page
    make = TradeRow._make
    return [make(row) for row in cursor.execute(sql, params)]


def trade_items(rows: Iterable[TradeRow]) -> list[dict[str, Any]]:
    """Rows as list Trades; a token's current figures are formatted once per call."""
    by_token: dict[int, _TokenNow] = {}
    items = []
    for r in rows:
        token = by_token.get(r.token_id)
        if token is None:
            token = by_token[r.token_id] = _token_now(r)
        items.append(trade_item(r, token))
    return items


def trade_items_by_id(conn: sqlite3.Connection, ids: Sequence[int]) -> list[Any]:
    """The list Trades of ``ids``, in that order, as JSON fragments (``rendered.ITEMS``: each
    trade is rendered once while the world is served).
    """

    def render(missing: list[int]) -> list[dict[str, Any]]:
        rows = fetch_trades(
            conn,
            f"{SELECT_TRADES} WHERE t.id IN (SELECT value FROM json_each(?))",
            (json.dumps(missing),),
        )
        by_id = {r.id: item for r, item in zip(rows, trade_items(rows), strict=True)}
        return [by_id[i] for i in missing]

    return rendered.ITEMS.fragments(rendered.world_of(conn), "trades", ids, render)


def trade_item(r: TradeRow, token: _TokenNow | None = None) -> dict[str, Any]:
    """A TradeRow as a Trade of the list (display strings, no numbers).

    Args:
        r: the row.
        token: ``_token_now(r)`` when the caller already has it (trade_items shares it).
    """
    chain = r.chain
    now = token or _token_now(r)
    market = _market_texts(r)
    buy_cost = display.usd(r.buy_cost)
    bought = display.plain(r.tokens_bought)
    return {
        "id": str(r.id),
        "token_id": str(r.token_id),
        "token_name": r.token_name,
        "token_symbol": r.symbol,
        "token_image": r.image,
        "token_chain": chain,
        "token_address": r.address,
        "open_date": trade_date(r.open_ms),
        "close_date": trade_date(r.close_ms),
        "duration": str(r.duration_s),
        "buy_cost_usd": buy_cost,
        "sell_revenue_usd": display.usd(r.sell_revenue),
        "pnl_usd": display.signed_usd(r.pnl),
        "roi": display.signed_pct(r.roi),
        "eth_sol_spent": display.native(r.native_spent, chain),
        "eth_sol_received": display.native(r.native_received, chain),
        "tokens_bought": bought,
        "tokens_sold": bought if r.tokens_sold == r.tokens_bought else display.plain(r.tokens_sold),
        "avg_buy_price_solOrEth": display.plain(r.avg_buy_price_native),
        "status": r.status,
        "result": r.result,
        "price": now.price,
        "price_change": now.price_change,
        "volume24h": now.volume,
        "quant_name": r.quant_name,
        "metadata": {"llmValidation": _llm_validation(r, market, buy_cost)},
        "latest_evaluation": _evaluation_summary(r, market),
    }


def trade_detail(r: TradeRow, transactions: list[sqlite3.Row]) -> dict[str, Any]:
    """A TradeRow as the detail Trade: the list item plus the ``_raw`` numbers and the swaps."""
    item = trade_item(r)
    item.update(
        {
            "duration_seconds": r.duration_s,
            "buy_cost_usd_raw": r.buy_cost,
            "sell_revenue_usd_raw": r.sell_revenue,
            "pnl_usd_raw": r.pnl,
            "roi_raw": r.roi,
            "eth_sol_spent_raw": r.native_spent,
            "eth_sol_received_raw": r.native_received,
            "tokens_bought_raw": r.tokens_bought,
            "tokens_sold_raw": r.tokens_sold,
            "avg_buy_price_solOrEth_raw": r.avg_buy_price_native,
            "price_raw": r.token_price,
            "price_change_raw": r.change_24h,
            "volume24h_raw": r.token_volume,
            "marketCap": display.compact_usd(r.token_market_cap),
            "marketCap_raw": r.token_market_cap,
            "liquidity": display.compact_usd(r.token_liquidity),
            "liquidity_raw": r.token_liquidity,
            "transactions": [transaction(x) for x in transactions],
        }
    )
    return item


def transaction(x: sqlite3.Row) -> dict[str, Any]:
    """A row of the ``transactions`` table as a Transaction."""
    return {
        "id": x["id"],
        "action": x["action"],
        "txHash": x["tx_hash"],
        "timestamp": iso_ms(x["ts_ms"]),
        "inputToken": x["input_token"],
        "outputToken": x["output_token"],
        "inputAmount": x["input_amount"],
        "outputAmount": x["output_amount"],
        "inputValueUsd": x["input_value_usd"],
        "outputValueUsd": x["output_value_usd"],
        "pricePerTokenInUsd": x["price_usd"],
    }


class _TokenNow(NamedTuple):
    """The token's current figures (at WORLD_NOW) as display text."""

    price: str
    price_change: str
    volume: str


def _token_now(r: TradeRow) -> _TokenNow:
    return _TokenNow(
        display.price(r.token_price),
        display.signed_pct(r.change_24h),
        display.compact_usd(r.token_volume),
    )


class _Market(NamedTuple):
    """The buy evaluation's market figures as text, shared by the two narratives."""

    market_cap: str
    liquidity: str
    volume: str
    price: str


def _market_texts(r: TradeRow) -> _Market:
    # Whole dollars: as exact as prose needs, and cheaper than compact_usd on a 1,000-row page.
    return _Market(
        f"${r.eval_market_cap:,.0f}",
        f"${r.eval_liquidity:,.0f}",
        f"${r.eval_volume:,.0f}",
        display.price(r.detection_price),
    )


def _llm_validation(r: TradeRow, market: _Market, size: str) -> dict[str, Any]:
    """``metadata.llmValidation``: the decision, its timer and the reasons behind it.

    ``waitUntil`` is the end of the wait for a DELAY; the other decisions do not wait, so their
    timer ends when they were made (``waitUntil`` equals ``validatedAt``).
    """
    validated_at = iso_ms(r.validated_ms)
    wait_until = validated_at if r.wait_until_ms is None else iso_ms(r.wait_until_ms)
    return {
        "decision": r.decision,
        "waitUntil": wait_until,
        "confidence": r.confidence,
        "validatedAt": validated_at,
        "reasoning": _reasoning(r, market, size, wait_until),
    }


_RISK_VERDICT = {
    "APPROVE": "risk accepted for a {size} position",
    "DELAY": "entry of a {size} position held until {wait} to confirm the move",
    "REJECT": "risk too high for a {size} position; trade rejected",
    "RECOMMEND": "a {size} position left to a human to approve",
}


def _reasoning(r: TradeRow, market: _Market, size: str, wait_until: str) -> dict[str, str]:
    """Three short texts from the figures the validation saw at the buy evaluation."""
    depth = 100.0 * r.eval_liquidity / r.eval_market_cap if r.eval_market_cap > 0 else 0.0
    verdict = _RISK_VERDICT[r.decision].format(size=size, wait=wait_until)
    return {
        "marketAnalysis": (
            f"{r.token_name} ({r.symbol}) on {r.chain}: market cap {market.market_cap} "
            f"({r.mc_class}), liquidity {market.liquidity}, 24 h volume {market.volume}, "
            f"price {market.price}."
        ),
        "riskAssessment": (
            f"Liquidity is {depth:.1f}% of market cap across {r.holders} holders; {verdict}."
        ),
        "technicalEvaluation": (
            f"Playbook score {r.internal_score:.2f}/100 and AI score {r.ai_score:.2f}/100; "
            f"decision {r.decision} with confidence {r.confidence:.2f}."
        ),
    }


def _evaluation_summary(r: TradeRow, market: _Market) -> dict[str, Any]:
    """``latest_evaluation``: the TOKEN_BUY evaluation that opened the trade."""
    passed = bool(r.passed)
    return {
        "id": r.eval_id,
        "type": r.eval_type,
        "passed": passed,
        "ai_score": r.ai_score,
        "internal_score": r.internal_score,
        "timestamp": iso_ms(r.eval_ms),
        "summary": (
            f"{r.eval_type} {'passed' if passed else 'failed'} for {r.symbol}: playbook score "
            f"{r.internal_score:.2f}, AI score {r.ai_score:.2f} at {market.price}, market cap "
            f"{market.market_cap} ({r.mc_class}), liquidity {market.liquidity}."
        ),
        "detection_price": r.detection_price,
        "token_image": r.image,
    }
