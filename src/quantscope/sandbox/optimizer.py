"""Strategy optimisation runs: closed trades in, recommendations (and applied thresholds) out.

docs/service-contract.md ("Strategy optimisation") fixes the algorithm; optimizer_math.py does
the math of one criterion. Here: for each analysed quant and market-cap class, the quant's
executed, closed trades are joined to the criterion values of the ``TOKEN_BUY`` evaluation that
bought each (recomputed from the world's seed, batched per (quant, token), exactly as
eval-details serves them), every enabled numeric criterion of the live ``BUYING`` config is
searched for a stricter threshold, and the findings that raise the win rate by 2 points become
recommendations. Functions take a connection whose transaction the caller manages (the world
build's, or a router's ``Store.transaction()``).

Recommendation ids are never reused: an analysis deletes the unapplied recommendations it
supersedes, and the highest id ever issued is kept in ``meta`` (``last_recommendation_id``), so
an id a client still holds answers 404 instead of naming another recommendation.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from quantscope.sandbox import playbook_store
from quantscope.sandbox.catalog import MARKET_CAP_CLASSES, WORLD_NOW_MS
from quantscope.sandbox.errors import ApiError, not_found
from quantscope.sandbox.optimizer_math import Finding, evaluate_criterion, format_value, reasoning
from quantscope.sandbox.sim import criteria, market, tokens

DEFAULT_MIN_COMPLETED_TRADES = 20
LAST_ID_KEY = "last_recommendation_id"
_CLASS_ORDER = {name: i for i, (name, _) in enumerate(MARKET_CAP_CLASSES)}


# ---------------------------------------------------------------------------------------------
# Reading the trades


@dataclass(frozen=True)
class Sample:
    """The closed trades of one (quant, market-cap class) and their buy evaluations' values."""

    quant_id: int
    market_cap: str
    trade_ids: np.ndarray  # int64 (n,), ascending
    profitable: np.ndarray  # bool (n,)
    values: np.ndarray  # float64 (n, criteria), catalog order


def world_seed(conn: sqlite3.Connection) -> int:
    """The seed of the world in ``conn`` (meta key ``seed``)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
    if row is None:
        raise RuntimeError("the world database has no seed in its meta table")
    return int(row[0])


def closed_trade_counts(conn: sqlite3.Connection) -> dict[int, int]:
    """Executed, closed trades per quant (every quant, 0 included)."""
    rows = conn.execute(
        "SELECT q.id, COUNT(t.id) FROM quants q LEFT JOIN trades t ON t.quant_id = q.id "
        "AND t.trading_status = 'executed' AND t.status = 'Closed' GROUP BY q.id ORDER BY q.id"
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows}


def load_samples(conn: sqlite3.Connection, seed: int, quant_ids: list[int]) -> list[Sample]:
    """The samples of ``quant_ids`` by (quant, class); values batched per (quant, token)."""
    marks = ",".join("?" * len(quant_ids))
    rows = conn.execute(  # streamed pair by pair: no list of every closed trade in memory
        "SELECT t.quant_id, t.token_id, t.id, t.pnl > 0, e.hour, e.mc_class "
        "FROM trades t JOIN evaluations e ON e.id = t.buy_eval_id "
        "WHERE t.trading_status = 'executed' AND t.status = 'Closed' "
        f"AND t.quant_id IN ({marks}) ORDER BY t.quant_id, t.token_id, t.id",
        quant_ids,
    )
    parts: dict[tuple[int, str], list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = defaultdict(
        list
    )
    for (quant_id, token_id), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        trades = [(r[2], int(r[3]), r[4], r[5]) for r in group]
        path = market.token_path(seed, token_id)
        meta = tokens.token_meta(seed, token_id, path)
        hours = np.array([t[2] for t in trades], dtype=np.int64)
        values = criteria.criterion_values(seed, quant_id, path, meta, hours)
        ids = np.array([t[0] for t in trades], dtype=np.int64)
        won = np.array([t[1] for t in trades], dtype=bool)
        classes = np.array([t[3] for t in trades])
        for mc_class in np.unique(classes):
            rows_in = classes == mc_class
            parts[quant_id, str(mc_class)].append((ids[rows_in], won[rows_in], values[rows_in]))
    samples = []
    for (quant_id, mc_class), chunks in sorted(
        parts.items(), key=lambda kv: (kv[0][0], _CLASS_ORDER[kv[0][1]])
    ):
        ids = np.concatenate([c[0] for c in chunks])
        order = np.argsort(ids)
        samples.append(
            Sample(
                quant_id,
                mc_class,
                ids[order],
                np.concatenate([c[1] for c in chunks])[order],
                np.concatenate([c[2] for c in chunks])[order],
            )
        )
    return samples


# ---------------------------------------------------------------------------------------------
# Analysis runs and applying recommendations (the caller holds the transaction)


@dataclass(frozen=True)
class BuyingEntry:
    """One enabled numeric criterion of a live BUYING config slice."""

    config_id: str
    criteria_id: int
    name: str
    position: int
    threshold: float
    operator: str
    extra_info: str  # JSON, as stored


@dataclass(frozen=True)
class AnalysisSummary:
    """What an analysis run did."""

    trades_analyzed: int
    recommendations_generated: int
    recommendations_applied: int
    recommendation_ids: tuple[int, ...]


def buying_entries(conn: sqlite3.Connection, quant_id: int, market_cap: str) -> list[BuyingEntry]:
    """The enabled numeric criteria of a quant's live BUYING config of one class."""
    rows = conn.execute(
        "SELECT c.id, c.criteria_id, cr.name, cr.position, c.threshold, c.extra_info "
        "FROM config c JOIN criteria cr ON cr.id = c.criteria_id "
        "WHERE c.quant_id = ? AND c.market_cap = ? AND c.config_type = 'BUYING' "
        "AND c.disabled = 0 ORDER BY cr.position",
        (quant_id, market_cap),
    ).fetchall()
    entries = []
    for config_id, criteria_id, name, position, threshold, extra_info in rows:
        info = json.loads(extra_info)
        if "options" not in info:
            entries.append(
                BuyingEntry(
                    config_id, criteria_id, name, position, threshold, info["operator"], extra_info
                )
            )
    return entries


def _insufficient(message: str) -> ApiError:
    return ApiError(422, "insufficient_trades", message, "minCompletedTrades")


def analyze(
    conn: sqlite3.Connection,
    *,
    quant_id: int | None = None,
    min_completed_trades: int = DEFAULT_MIN_COMPLETED_TRADES,
    apply: bool = False,
    now_ms: int = WORLD_NOW_MS,
) -> AnalysisSummary:
    """Run an analysis: supersede unapplied recommendations, write new ones, maybe apply them.

    A quant (and each of its market-cap classes) needs ``min_completed_trades`` closed trades.

    Raises:
        ApiError: 404 ``not_found`` for an unknown ``quant_id``; 422 ``insufficient_trades``
            when the named quant, or (without ``quant_id``) every quant, has too few trades.
    """
    counts = closed_trade_counts(conn)
    if quant_id is not None:
        if quant_id not in counts:
            raise not_found(f"no quant with id {quant_id}", "quantId")
        if counts[quant_id] < min_completed_trades:
            raise _insufficient(
                f"quant {quant_id} has {counts[quant_id]} closed trades; the analysis needs at "
                f"least minCompletedTrades={min_completed_trades}"
            )
        quant_ids = [quant_id]
    else:
        quant_ids = [q for q, n in counts.items() if n >= min_completed_trades]
        if not quant_ids:
            raise _insufficient(
                f"no quant has the minCompletedTrades={min_completed_trades} closed trades an "
                f"analysis needs (the most any quant has is {max(counts.values(), default=0)})"
            )
    floor = max(min_completed_trades, 1)
    seed = world_seed(conn)
    marks = ",".join("?" * len(quant_ids))
    conn.execute(
        f"DELETE FROM recommendations WHERE applied = 0 AND quant_id IN ({marks})", quant_ids
    )
    ids: list[int] = []
    last_id = _last_id(conn)
    analyzed = 0
    for one in quant_ids:  # one quant's samples in memory at a time (a 1M-trade world's build)
        for s in load_samples(conn, seed, [one]):
            if len(s.trade_ids) < floor:
                continue
            analyzed += len(s.trade_ids)
            for entry in buying_entries(conn, s.quant_id, s.market_cap):
                found = evaluate_criterion(
                    s.values[:, entry.position], s.profitable, entry.threshold, entry.operator
                )
                if found is not None and found.recommended:
                    last_id += 1
                    ids.append(_insert(conn, last_id, s, entry, found, now_ms))
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (LAST_ID_KEY, str(last_id)),
    )
    for rec_id in ids if apply else ():
        apply_recommendation(conn, rec_id, now_ms)
    return AnalysisSummary(
        trades_analyzed=analyzed,
        recommendations_generated=len(ids),
        recommendations_applied=len(ids) if apply else 0,
        recommendation_ids=tuple(ids),
    )


def _last_id(conn: sqlite3.Connection) -> int:
    """The highest recommendation id ever issued (0 before the first)."""
    row = conn.execute(
        "SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0), "
        "COALESCE((SELECT MAX(id) FROM recommendations), 0))",
        (LAST_ID_KEY,),
    ).fetchone()
    return int(row[0])


def _insert(
    conn: sqlite3.Connection, rec_id: int, s: Sample, entry: BuyingEntry, f: Finding, now_ms: int
) -> int:
    row = {
        "id": rec_id,
        "quant_id": s.quant_id,
        "config_id": entry.config_id,
        "criteria_id": entry.criteria_id,
        "market_cap": s.market_cap,
        "config_type": "BUY",
        "old_threshold": entry.threshold,
        "new_threshold": f.new_threshold,
        "old_extra_info": entry.extra_info,
        "new_extra_info": entry.extra_info,
        "confidence": f.confidence,
        "reasoning": reasoning(entry.name, entry.operator, entry.threshold, f, s.market_cap),
        "applied": 0,
        "applied_ms": None,
        "before_win_rate": f.before_win_rate,
        "after_win_rate": f.after_win_rate,
        "trade_difference": f.trade_difference,
        "profitable_accuracy": f.profitable_accuracy,
        "unprofitable_accuracy": f.unprofitable_accuracy,
        "f1_score": f.f1_score,
        "sample_size": f.sample_size,
        "profitable_avg": f.profitable_avg,
        "unprofitable_avg": f.unprofitable_avg,
        "value_difference_ratio": f.value_difference_ratio,
        "actual_impact": f.actual_impact,
        "created_ms": now_ms,
        "updated_ms": now_ms,
    }
    columns = ", ".join(row)  # fixed names above, never input
    marks = ", ".join("?" * len(row))
    sql = f"INSERT INTO recommendations ({columns}) VALUES ({marks})"
    conn.execute(sql, tuple(row.values()))
    return rec_id


def apply_recommendation(conn: sqlite3.Connection, rec_id: int, now_ms: int = WORLD_NOW_MS) -> None:
    """Set the config entry's threshold to the recommendation's and mark it applied.

    The threshold is written by ``playbook_store.apply_threshold`` (validated like a PUT), which
    reads rows by name: ``conn`` must have ``row_factory = sqlite3.Row`` (Store connections do).

    Raises:
        ApiError: 404 ``not_found`` (unknown id); 409 ``already_applied``; 409
            ``stale_recommendation`` when the entry's threshold or extraInfo changed since.
    """
    row = conn.execute(
        "SELECT r.applied, r.config_id, r.old_threshold, r.new_threshold, r.old_extra_info, "
        "c.threshold, c.extra_info FROM recommendations r JOIN config c ON c.id = r.config_id "
        "WHERE r.id = ?",
        (rec_id,),
    ).fetchone()
    if row is None:
        raise not_found(f"no recommendation with id {rec_id}", "id")
    applied, config_id, old, new, old_info, threshold, info = row
    if applied:
        raise ApiError(409, "already_applied", f"recommendation {rec_id} is already applied")
    if threshold != old:
        change = f"its threshold is now {format_value(threshold)}, not {format_value(old)}"
    elif json.loads(info) != json.loads(old_info):
        change = "its extraInfo changed"
    else:
        change = ""
    if change:
        raise ApiError(
            409,
            "stale_recommendation",
            f"recommendation {rec_id} no longer fits config entry {config_id}: {change}; "
            "run POST /api/refine-eval/analyze for fresh recommendations",
        )
    playbook_store.apply_threshold(conn, config_id, new)
    conn.execute(
        "UPDATE recommendations SET applied = 1, applied_ms = ?, updated_ms = ? WHERE id = ?",
        (now_ms, now_ms, rec_id),
    )


def initial_analysis(conn: sqlite3.Connection) -> None:
    """The world's first recommendations (unapplied), made at the end of a build."""
    try:
        analyze(conn)
    except ApiError as exc:  # a world too small for any analysis simply starts without any
        if exc.code != "insufficient_trades":
            raise
