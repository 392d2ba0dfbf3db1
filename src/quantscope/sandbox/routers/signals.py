"""Alpha signals: GET /api/alpha-signals and /api/alpha-signals/{tokenId} (spec "Alpha signals").

A signal is one token's newest evaluation (by one quant, or by any quant when ``quantId`` is
absent) with a stage read off the trades of the quant that made it (docs/service-contract.md,
Alpha signals): ``BUY`` while that quant holds an open executed position in the token, ``SELL``
when one closed in the 48 hours before ``WORLD_NOW``, ``SCREENING`` when the evaluation passed,
``WATCH`` otherwise. The list covers tokens evaluated in the 7 days before ``WORLD_NOW``; the
detail serves any evaluated token from its newest evaluation. Selection, stages, sorting, the
per-chain limit and the stage counts run in SQLite; alerts and criterion results come from
narrative.py and evaldetail.py.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BeforeValidator, Field

from quantscope.sandbox import evaldetail
from quantscope.sandbox.catalog import CHAINS, HOUR_MS, WORLD_NOW_MS
from quantscope.sandbox.deps import Caller, JSONRoute, StoreDep, WorldDep, require
from quantscope.sandbox.errors import not_found
from quantscope.sandbox.models.signals import AlphaSignalDetail, AlphaSignalList
from quantscope.sandbox.params import DECIMAL, Chain, Id, OptionalId, true_or_false
from quantscope.sandbox.sim import narrative
from quantscope.sandbox.timefmt import iso_ms

router = APIRouter(route_class=JSONRoute, tags=["alpha signals"])

WINDOW_MS = 7 * 24 * HOUR_MS  # tokens evaluated this long before WORLD_NOW are listed
SELL_WINDOW_MS = 48 * HOUR_MS  # a position closed this recently makes a SELL signal
STAGES: tuple[str, ...] = ("BUY", "SELL", "SCREENING", "WATCH")  # sort order (stage_rank)
PROGRESS = {"BUY": 100.0, "SELL": 100.0, "SCREENING": 50.0, "WATCH": 25.0}


QuantParam = Annotated[
    OptionalId, Query(description="Only this quant's evaluations; absent: all quants.")
]

# The signals, best first, cut to :limit overall and per chain. A signal is a token's newest
# evaluation in the window by the quant(s) asked for (found per (token, quant) through the
# evaluations_token index, then the newest of those), the position of that evaluation's quant
# in the token, and the stage they make. Every row also carries the stage counts of its chain
# (before the limit): each chain with signals has at least its first row returned. Named
# parameters: chains (JSON list), search (lower case or NULL), address (raw search or NULL),
# token (id or NULL), quant (id or NULL), since and sell_since (epoch ms), limit.
_SIGNALS_SQL = """
WITH toks AS (
    SELECT t.* FROM tokens AS t
    WHERE t.chain IN (SELECT value FROM json_each(:chains))
      AND (:token IS NULL OR t.id = :token)
      AND (:search IS NULL OR instr(lower(t.name), :search) > 0
           OR instr(lower(t.symbol), :search) > 0 OR t.address = :address)
),
newest AS (
    SELECT e.*, ROW_NUMBER() OVER (
        PARTITION BY e.token_id ORDER BY e.created_ms DESC, e.id DESC) AS rn
    FROM toks JOIN quants AS q ON :quant IS NULL OR q.id = :quant
    JOIN evaluations AS e ON e.id = (
        SELECT x.id FROM evaluations AS x
        WHERE x.token_id = toks.id AND x.quant_id = q.id AND x.created_ms >= :since
        ORDER BY x.created_ms DESC, x.id DESC LIMIT 1)
),
held AS (
    SELECT tr.quant_id, tr.token_id, tr.status AS pos_status, tr.entry_price, tr.roi AS pos_roi,
           ROW_NUMBER() OVER (
               PARTITION BY tr.quant_id, tr.token_id
               ORDER BY tr.status = 'Open' DESC, COALESCE(tr.close_ms, tr.open_ms) DESC, tr.id DESC
           ) AS rn
    FROM trades AS tr JOIN toks ON toks.id = tr.token_id
    WHERE tr.trading_status = 'executed' AND (:quant IS NULL OR tr.quant_id = :quant)
      AND (tr.status = 'Open' OR tr.close_ms >= :sell_since)
),
signals AS (
    SELECT n.id, n.quant_id, n.token_id, n.chain, n.type, n.created_ms, n.hour,
           n.market_cap AS eval_market_cap, n.mc_class, n.price AS eval_price,
           n.liquidity AS eval_liquidity, n.volume_24h AS eval_volume_24h, n.passed, n.scored,
           n.internal_score, n.ai_score, n.holders AS eval_holders,
           k.name AS token_name, k.symbol, k.image, k.address, k.price AS token_price,
           k.change_24h, k.volume_24h AS token_volume_24h, k.market_cap AS token_market_cap,
           k.liquidity AS token_liquidity, k.created_ms AS token_created_ms,
           k.status AS token_status, k.holders AS token_holders,
           h.entry_price, h.pos_roi,
           CASE WHEN h.pos_status = 'Open' THEN 'BUY' WHEN h.pos_status = 'Closed' THEN 'SELL'
                WHEN n.passed THEN 'SCREENING' ELSE 'WATCH' END AS stage
    FROM newest AS n
    JOIN toks AS k ON k.id = n.token_id
    LEFT JOIN held AS h ON h.quant_id = n.quant_id AND h.token_id = n.token_id AND h.rn = 1
    WHERE n.rn = 1
),
ranked AS (
    SELECT s.*,
           ROW_NUMBER() OVER best AS all_rank,
           ROW_NUMBER() OVER (PARTITION BY chain ORDER BY stage_rank, created_ms DESC, id DESC)
               AS chain_rank,
           SUM(stage = 'BUY') OVER per_chain AS n_buy,
           SUM(stage = 'SELL') OVER per_chain AS n_sell,
           SUM(stage = 'SCREENING') OVER per_chain AS n_screening,
           SUM(stage = 'WATCH') OVER per_chain AS n_watch
    FROM (
        SELECT *, CASE stage WHEN 'BUY' THEN 0 WHEN 'SELL' THEN 1 WHEN 'SCREENING' THEN 2
                  ELSE 3 END AS stage_rank
        FROM signals
    ) AS s
    WINDOW best AS (ORDER BY stage_rank, created_ms DESC, id DESC),
           per_chain AS (PARTITION BY chain)
)
SELECT * FROM ranked
WHERE all_rank <= :limit OR chain_rank <= :limit
ORDER BY all_rank
"""


def _params(
    chains: tuple[str, ...],
    quant_id: int | None,
    *,
    search: str | None = None,
    token_id: int | None = None,
    since: int = WORLD_NOW_MS - WINDOW_MS,
    limit: int,
) -> dict[str, Any]:
    text = search.strip() if search is not None else ""
    return {
        "chains": json.dumps(list(chains)),
        "search": text.lower() or None,
        "address": text or None,
        "token": token_id,
        "quant": quant_id,
        "limit": limit,
        "since": since,
        "sell_since": WORLD_NOW_MS - SELL_WINDOW_MS,
    }


def _check_quant(conn: sqlite3.Connection, quant_id: int | None) -> None:
    if (
        quant_id is not None
        and conn.execute("SELECT 1 FROM quants WHERE id = ?", (quant_id,)).fetchone() is None
    ):
        raise not_found(f"no quant {quant_id}", "quantId")


def _signal_fields(row: sqlite3.Row, alert: str) -> dict[str, Any]:
    """The fields a listed signal and the detail share (models.signals._SignalFields)."""
    stage = str(row["stage"])
    positioned = stage in ("BUY", "SELL")
    return {
        "tokenId": row["token_id"],
        "evaluationId": row["id"],
        "token": row["token_name"],
        "symbol": row["symbol"],
        "image": row["image"],
        "address": row["address"],
        "chainName": row["chain"],
        "price": row["token_price"],
        "change": row["change_24h"],
        "volume": row["token_volume_24h"],
        "marketCap": row["token_market_cap"],
        "liquidity": row["token_liquidity"],
        "stage": stage,
        "alert": alert,
        "updatedAt": iso_ms(row["created_ms"]),
        "entryPriceUsd": row["entry_price"] if positioned else None,
        "roi": row["pos_roi"] if positioned else None,
        "passed": bool(row["passed"]),
        "evaluationResultType": row["type"],
    }


def _token_details(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "name": row["token_name"],
        "createdAt": iso_ms(row["token_created_ms"]),
        "status": row["token_status"],
        "holders": row["token_holders"],
        "ageHours": (WORLD_NOW_MS - row["token_created_ms"]) / HOUR_MS,
    }


def _empty_stats() -> dict[str, int]:
    return {"total": 0, **{stage.lower(): 0 for stage in STAGES}}


def _add_stats(row: sqlite3.Row, *targets: dict[str, int]) -> None:
    """Add the stage counts a row carries (``n_buy``, ...) to each stats object given."""
    for stage in STAGES:
        count = int(row[f"n_{stage.lower()}"])
        for stats in targets:
            stats[stage.lower()] += count
            stats["total"] += count


def _eval_row(row: sqlite3.Row) -> dict[str, Any]:
    """The columns of the evaluation behind a signal, named as in ``evaluations``."""
    return {
        "id": row["id"],
        "quant_id": row["quant_id"],
        "token_id": row["token_id"],
        "chain": row["chain"],
        "type": row["type"],
        "created_ms": row["created_ms"],
        "hour": row["hour"],
        "market_cap": row["eval_market_cap"],
        "mc_class": row["mc_class"],
        "price": row["eval_price"],
        "liquidity": row["eval_liquidity"],
        "volume_24h": row["eval_volume_24h"],
        "passed": row["passed"],
        "scored": row["scored"],
        "internal_score": row["internal_score"],
        "ai_score": row["ai_score"],
        "holders": row["eval_holders"],
    }


@router.get("/api/alpha-signals", response_model=AlphaSignalList)
def list_signals(
    caller: Annotated[Caller, Depends(require("signals"))],
    store: StoreDep,
    world: WorldDep,
    quantId: QuantParam = None,
    limit: Annotated[
        int,
        Field(ge=1, le=500),
        DECIMAL,
        Query(description="Maximum signals in `signals` and in each byChain list."),
    ] = 50,
    chain: Chain = None,
    includeTokenDetails: Annotated[
        bool,
        BeforeValidator(true_or_false),
        Query(description="true or false (any case); true adds `tokenDetails` to every signal."),
    ] = False,
    search: Annotated[
        str | None,
        Query(
            max_length=200,
            description="Case-insensitive substring of token name or symbol, or the exact "
            "token address; blank means no filter.",
        ),
    ] = None,
) -> Any:
    """One signal per token evaluated in the 7 days before WORLD_NOW, best stage first.

    Sorted by stage (BUY, SELL, SCREENING, WATCH), then newest evaluation first. `signals` equals
    `byChain.all.signals`; `limit` applies to it and to each chain's list, `stats` count every
    matching signal before the limit. Chains outside the plan or the `chain` filter are empty.
    """
    chains = caller.resolve_chains(chain)
    conn = store.connect()
    _check_quant(conn, quantId)
    params = _params(chains, quantId, search=search, limit=limit)
    rows = conn.execute(_SIGNALS_SQL, params).fetchall()
    facts = evaldetail.eval_facts_many(conn, world.seed, [_eval_row(r) for r in rows])
    by_chain: dict[str, dict[str, Any]] = {
        key: {"signals": [], "stats": _empty_stats()} for key in ("all", *map(str.lower, CHAINS))
    }
    for row, fact in zip(rows, facts, strict=True):
        group = by_chain[str(row["chain"]).lower()]
        if row["chain_rank"] == 1:  # every row carries its chain's counts: take the first's
            _add_stats(row, group["stats"], by_chain["all"]["stats"])
        signal = _signal_fields(row, narrative.alert(fact))
        signal["analysisProgress"] = PROGRESS[signal["stage"]]
        signal["volume24h"] = row["token_volume_24h"]
        if includeTokenDetails:
            signal["tokenDetails"] = _token_details(row)
        if row["all_rank"] <= limit:
            by_chain["all"]["signals"].append(signal)
        if row["chain_rank"] <= limit:
            group["signals"].append(signal)
    return {"signals": by_chain["all"]["signals"], "byChain": by_chain}


@router.get("/api/alpha-signals/{tokenId}", response_model=AlphaSignalDetail)
def signal_detail(
    caller: Annotated[Caller, Depends(require("signals"))],
    store: StoreDep,
    world: WorldDep,
    tokenId: Annotated[Id, Path(description="The token's id.")],
    quantId: QuantParam = None,
) -> Any:
    """The signal of one token with the scores, analysis and criterion results behind it.

    Served from the token's newest evaluation (by `quantId`, or by any quant), however old;
    stage rules as in the list. 404 when the token is unknown or was never evaluated by the
    quant; 403 when it is on a chain outside the plan.
    """
    conn = store.connect()
    token = conn.execute("SELECT chain FROM tokens WHERE id = ?", (tokenId,)).fetchone()
    if token is None:
        raise not_found(f"no token {tokenId}", "tokenId")
    caller.check_chain(str(token["chain"]))
    _check_quant(conn, quantId)
    params = _params((str(token["chain"]),), quantId, token_id=tokenId, since=-1, limit=1)
    row = conn.execute(_SIGNALS_SQL, params).fetchone()
    if row is None:
        who = "no quant" if quantId is None else f"quant {quantId}"
        raise not_found(f"{who} evaluated token {tokenId}", "tokenId")
    eval_row = _eval_row(row)
    fact = evaldetail.eval_facts(conn, world.seed, eval_row)
    return {
        **_signal_fields(row, narrative.alert(fact)),
        "aiScore": row["ai_score"],
        "internalScore": row["internal_score"],
        "aiAnalysis": narrative.ai_analysis(fact),
        "evaluationDetails": evaldetail.criterion_results(conn, world.seed, eval_row),
    }
