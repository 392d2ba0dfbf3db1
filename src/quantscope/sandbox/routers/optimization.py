"""Strategy optimisation: the dashboard, analysis runs, and applying a recommendation.

docs/service-contract.md ("Strategy optimisation") fixes the semantics; optimizer.py holds the
algorithm and the writes. Every write runs in one ``Store.transaction()`` and is stamped with the
world clock (``WORLD_NOW``), so the same calls on the same world give the same bodies.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query
from pydantic import BeforeValidator, Field, PlainValidator, Strict, WithJsonSchema

from quantscope.sandbox import optimizer
from quantscope.sandbox.catalog import HOUR_MS, WORLD_NOW_MS, WORLD_START_MS
from quantscope.sandbox.deps import Caller, JSONRoute, StoreDep, require
from quantscope.sandbox.errors import ErrorBody, not_found
from quantscope.sandbox.models.optimization import (
    AnalyzeRequest,
    AnalyzeResponse,
    AppliedRecommendation,
    ApplyResult,
    Dashboard,
)
from quantscope.sandbox.params import MAX_ID, Id, OptionalId
from quantscope.sandbox.timefmt import iso_ms

router = APIRouter(route_class=JSONRoute, tags=["optimization"])

Optimizer = Annotated[Caller, Depends(require("optimization"))]

RECENT_LIMIT = 20
WEEK_MS = 7 * 24 * HOUR_MS
MONDAY_MS = 4 * 24 * HOUR_MS  # 1970-01-05T00:00Z, the first Monday of the epoch
APPLIED_FIELDS = tuple(AppliedRecommendation.model_fields)


# ---------------------------------------------------------------------------------------------
# Request bodies


def _apply_flag(value: object) -> bool:
    """The analyze body's ``apply``: text ``true``/``false`` (any case), or a JSON boolean.

    ``null`` is refused: absent means false, but a present ``apply`` must say which.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError('must be the text "true" or "false" (JSON true/false are accepted too)')


ApplyFlag = Annotated[
    bool,
    PlainValidator(_apply_flag),
    WithJsonSchema({"anyOf": [{"type": "string", "enum": ["true", "false"]}, {"type": "boolean"}]}),
]


def _json_integer(value: object) -> object:
    """A JSON number without a fraction (``20.0``) is an integer, as JSON Schema says."""
    if type(value) is float and value.is_integer() and abs(value) < 2.0**63:
        return int(value)
    return value


# the bounds first, the validators after them: pydantic then shows minimum/maximum in the schema
BodyQuantId = Annotated[int, Field(ge=1, le=MAX_ID), Strict(), BeforeValidator(_json_integer)]
BodyCount = Annotated[int, Field(ge=0, le=MAX_ID), Strict(), BeforeValidator(_json_integer)]


class AnalyzeBody(AnalyzeRequest):
    """The analyze body as the sandbox reads it: ``apply`` also takes JSON booleans, integers
    may be written ``20.0``, and ids are bounded like every id (1 to 2^63-1).
    """

    quantId: BodyQuantId | None = Field(default=None, description="Absent or null: every quant.")
    apply: ApplyFlag = Field(  # type: ignore[assignment]  # widens the spec's 'true'/'false'
        default=False,
        description='"true" applies every generated recommendation in the same transaction; '
        "text as in the spec, any case, or a JSON boolean (never null). Absent: false.",
    )
    minCompletedTrades: BodyCount | None = Field(
        default=None,
        description="Closed trades a quant needs to be analysed (default 20); more than the "
        "quant has (without quantId: than every quant has) is 422 insufficient_trades.",
    )


# ---------------------------------------------------------------------------------------------
# Rows -> JSON

_REC_SQL = """
SELECT r.*, k.key AS criteria_key, k.name AS criteria_name
FROM recommendations AS r JOIN criteria AS k ON k.id = r.criteria_id
"""


def recommendation_json(row: sqlite3.Row) -> dict[str, Any]:
    """A recommendations row as Recommendation."""
    applied_ms = row["applied_ms"]
    return {
        "id": row["id"],
        "criteriaId": row["criteria_id"],
        "criteriaKey": row["criteria_key"],
        "criteriaName": row["criteria_name"],
        "oldThreshold": row["old_threshold"],
        "newThreshold": row["new_threshold"],
        "oldExtraInfo": json.loads(row["old_extra_info"]),
        "newExtraInfo": json.loads(row["new_extra_info"]),
        "confidence": row["confidence"],
        "reasoning": row["reasoning"],
        "applied": bool(row["applied"]),
        "appliedAt": None if applied_ms is None else iso_ms(applied_ms),
        "beforeWinRate": row["before_win_rate"],
        "afterWinRate": row["after_win_rate"],
        "tradeDifference": row["trade_difference"],
        "configType": row["config_type"],
        "isDegenConfig": row["market_cap"] == "DEGEN_CAP",
        "userQuantId": row["quant_id"],
        "profitableAccuracy": row["profitable_accuracy"],
        "unprofitableAccuracy": row["unprofitable_accuracy"],
        "f1Score": row["f1_score"],
        "sampleSize": row["sample_size"],
        "profitableAvg": row["profitable_avg"],
        "unprofitableAvg": row["unprofitable_avg"],
        "valueDifferenceRatio": row["value_difference_ratio"],
        "userFeedback": None,
        "actualImpact": row["actual_impact"],
        "createdAt": iso_ms(row["created_ms"]),
        "updatedAt": iso_ms(row["updated_ms"]),
        "configId": row["config_id"],
        "marketCap": row["market_cap"],
    }


def _check_quant(conn: sqlite3.Connection, quant_id: int | None) -> None:
    if (
        quant_id is not None
        and not conn.execute("SELECT 1 FROM quants WHERE id = ?", (quant_id,)).fetchone()
    ):
        raise not_found(f"no quant with id {quant_id}", "quantId")


def _recommendations(
    conn: sqlite3.Connection, quant_id: int | None, applied: bool
) -> list[dict[str, Any]]:
    """The newest 20 (un)applied recommendations; one run's by confidence, highest first."""
    newest = "r.applied_ms DESC, r.id DESC" if applied else "r.created_ms DESC, r.confidence DESC"
    rows = conn.execute(
        f"{_REC_SQL} WHERE r.applied = ? AND (? IS NULL OR r.quant_id = ?) "
        f"ORDER BY {newest}, r.id DESC LIMIT ?",  # only fixed SQL is formatted in
        (int(applied), quant_id, quant_id, RECENT_LIMIT),
    ).fetchall()
    return [recommendation_json(row) for row in rows]


_PERFORMANCE_SQL = """
SELECT COUNT(*) AS total,
       TOTAL(status = 'Closed') AS closed,
       TOTAL(status = 'Open') AS open,
       TOTAL(status = 'Closed' AND pnl > 0) AS won,
       TOTAL(status = 'Closed' AND pnl < 0) AS lost,
       AVG(CASE WHEN status = 'Closed' AND pnl > 0 THEN pnl END) AS avg_win,
       AVG(CASE WHEN status = 'Closed' AND pnl < 0 THEN pnl END) AS avg_loss,
       TOTAL(CASE WHEN status = 'Closed' THEN pnl END) AS pnl
FROM trades WHERE trading_status = 'executed' AND (:quant IS NULL OR quant_id = :quant)
"""


def overall_performance(conn: sqlite3.Connection, quant_id: int | None) -> dict[str, Any]:
    """OverallPerformance over executed trades (closed ones for the realised figures)."""
    r = conn.execute(_PERFORMANCE_SQL, {"quant": quant_id}).fetchone()
    closed, won = int(r["closed"]), int(r["won"])
    return {
        "totalTrades": int(r["total"]),
        "completedTrades": closed,
        "activeTrades": int(r["open"]),
        "winningTrades": won,
        "losingTrades": int(r["lost"]),
        "winRate": won / closed if closed else 0.0,
        "avgProfitWinningTrades": r["avg_win"] or 0.0,
        "avgLossLosingTrades": r["avg_loss"] or 0.0,
        "totalPnL": r["pnl"],
    }


_WEEKLY_SQL = """
WITH RECURSIVE
weeks(start) AS (
    SELECT :first UNION ALL SELECT start + :week FROM weeks WHERE start + :week < :now
),
executed AS (
    SELECT open_ms, close_ms, status, pnl FROM trades
    WHERE trading_status = 'executed' AND (:quant IS NULL OR quant_id = :quant)
),
opened AS (
    SELECT :monday + (open_ms - :monday) / :week * :week AS start, COUNT(*) AS n
    FROM executed GROUP BY 1
),
closed AS (
    SELECT :monday + (close_ms - :monday) / :week * :week AS start, COUNT(*) AS n,
           TOTAL(pnl > 0) AS won, TOTAL(pnl) AS pnl
    FROM executed WHERE status = 'Closed' GROUP BY 1
)
SELECT w.start, COALESCE(o.n, 0) AS opened, COALESCE(c.n, 0) AS closed,
       COALESCE(c.won, 0) AS won, COALESCE(c.pnl, 0.0) AS pnl
FROM weeks AS w LEFT JOIN opened AS o ON o.start = w.start LEFT JOIN closed AS c
    ON c.start = w.start
ORDER BY w.start
"""


def weekly_trends(conn: sqlite3.Connection, quant_id: int | None) -> list[dict[str, Any]]:
    """Every week (Monday 00:00 UTC) of the history, oldest first, empty weeks included."""
    first = MONDAY_MS + (WORLD_START_MS - MONDAY_MS) // WEEK_MS * WEEK_MS
    params = {
        "first": first,
        "week": WEEK_MS,
        "now": WORLD_NOW_MS,
        "monday": MONDAY_MS,
        "quant": quant_id,
    }
    return [
        {
            "weekStart": iso_ms(r["start"]),
            "trades": r["opened"],
            "closedTrades": r["closed"],
            "winRate": r["won"] / r["closed"] if r["closed"] else 0.0,
            "pnl": r["pnl"],
        }
        for r in conn.execute(_WEEKLY_SQL, params).fetchall()
    ]


# ---------------------------------------------------------------------------------------------
# Endpoints


@router.get("/api/refine-eval/dashboard", response_model=Dashboard)
def dashboard(
    caller: Optimizer,
    store: StoreDep,
    quantId: Annotated[OptionalId, Query(description="One quant; absent: every quant.")] = None,
) -> dict[str, Any]:
    """Performance of executed trades, the newest recommendations and week-by-week results."""
    conn = store.connect()
    _check_quant(conn, quantId)
    data = {
        "overallPerformance": overall_performance(conn, quantId),
        "recentRecommendations": _recommendations(conn, quantId, applied=False),
        "appliedRecommendations": _recommendations(conn, quantId, applied=True),
        "historicalTrends": {"weekly": weekly_trends(conn, quantId)},
    }
    return {"success": True, "data": data}


@router.post(
    "/api/refine-eval/analyze",
    response_model=AnalyzeResponse,
    responses={
        404: {"model": ErrorBody, "description": "`not_found`: unknown `quantId`"},
        422: {
            "model": ErrorBody,
            "description": "`invalid_body` (`param` names the field), or `insufficient_trades` "
            "(`param` is `minCompletedTrades`): the quant (or, without `quantId`, every quant) "
            "has fewer closed trades than `minCompletedTrades` (default 20). The rule depends on "
            "the data, so any schema-valid value above a quant's closed trades is refused.",
        },
    },
)
def analyze(
    caller: Optimizer,
    store: StoreDep,
    body: Annotated[AnalyzeBody | None, Body()] = None,
) -> dict[str, Any]:
    """Analyse closed trades; replace unapplied recommendations; optionally apply the new ones."""
    request = body or AnalyzeBody()
    minimum = request.minCompletedTrades
    with store.transaction() as conn:
        summary = optimizer.analyze(
            conn,
            quant_id=request.quantId,
            min_completed_trades=(
                optimizer.DEFAULT_MIN_COMPLETED_TRADES if minimum is None else minimum
            ),
            apply=bool(request.apply),
        )
    return {
        "success": True,
        "data": {
            "tradesAnalyzed": summary.trades_analyzed,
            "recommendationsGenerated": summary.recommendations_generated,
            "recommendationsApplied": summary.recommendations_applied,
        },
    }


@router.post(
    "/api/refine-eval/recs/{id}/apply",
    response_model=ApplyResult,
    responses={
        404: {"model": ErrorBody, "description": "`not_found`: unknown recommendation id"},
        409: {
            "model": ErrorBody,
            "description": "`already_applied`, or `stale_recommendation`: the config entry's "
            "threshold (or extraInfo) changed since the recommendation was made",
        },
    },
)
def apply(
    caller: Optimizer,
    store: StoreDep,
    rec_id: Annotated[
        Id, Path(alias="id", description="The recommendation's id (1 to 2^63-1); unknown: 404.")
    ],
) -> dict[str, Any]:
    """Set the config entry's threshold to the recommendation's ``newThreshold``."""
    with store.transaction() as conn:
        optimizer.apply_recommendation(conn, rec_id)
        row = conn.execute(f"{_REC_SQL} WHERE r.id = ?", (rec_id,)).fetchone()
    rec = recommendation_json(row)
    return {"success": True, "data": {key: rec[key] for key in APPLIED_FIELDS}}
