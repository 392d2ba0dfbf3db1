"""Build the simulated world once: quants, playbooks, tokens, evaluations and trades.

``build_world(conn, seed, scale)`` fills an empty database (``store.SCHEMA``) deterministically.
The story it simulates (docs/service-contract.md, "The simulator"):

1. Each quant scans every tracked token every 12 hours (a ``TOKEN_STATUS`` evaluation decided by
   its ``SCANNING`` playbook).
2. A passed scan on a token the quant does not hold leads to a ``TOKEN_BUY`` evaluation
   (``BUYING`` playbook) a minute and a half later.
3. A passed buy goes to model validation: approved, delayed (entered when the wait ends),
   rejected or recommended to a human. Only approved and elapsed delays are executed; the others
   carry the shadow outcome of the same exit rule.
4. A position exits on the quant's take-profit, stop-loss or horizon, read off the candles;
   positions still open at ``WORLD_NOW`` are marked to the last close. An executed exit is
   followed by a ``TOKEN_SELL`` evaluation.

``pair.py`` tells that story for one quant on one token, deciding with the criterion values of
``criteria.py``; ``stage.py`` runs it token by token into staging tables (in worker processes for
a large world). This module writes the tables: it numbers evaluations and trades by time from
the staged rows, derives the transactions, creates the history tables' indexes once the rows
are in, and ends with the optimizer's first run (``optimizer.initial_analysis``), so a fresh
world already holds recommendations. Only ``datadir`` imports it; request-time code never does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

from quantscope.sandbox import optimizer
from quantscope.sandbox.catalog import (
    CATEGORY_IDS,
    CONFIG_TYPES,
    CRITERIA,
    INTERVAL,
    MARKET_CAP_CLASSES,
    WRAPPED_NATIVE_ADDRESS,
)
from quantscope.sandbox.sim import stage
from quantscope.sandbox.sim.pair import EVAL_COLUMNS, TRADE_COLUMNS
from quantscope.sandbox.sim.quants import DEFAULT_WEIGHT, QUANTS, threshold_for
from quantscope.sandbox.sim.tokens import base58

WORLD_VERSION = "1"
TOKENS_PER_SCALE = stage.TOKENS_PER_SCALE


def _stable_uuid(*parts: object) -> str:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=16).digest()
    return str(uuid.UUID(bytes=digest, version=4))


def _config_rows(seed: int) -> Iterator[tuple[object, ...]]:
    for quant in QUANTS:
        for mc_class, _ in MARKET_CAP_CLASSES:
            for config_type in CONFIG_TYPES:
                for c in CRITERIA:
                    cid = _stable_uuid(seed, quant.id, mc_class, config_type, c.key)
                    yield (
                        cid,
                        quant.id,
                        mc_class,
                        config_type,
                        INTERVAL,
                        c.id,
                        threshold_for(quant, mc_class, config_type, c),
                        quant.weights.get(c.key, DEFAULT_WEIGHT),
                        int(c.key in quant.required),
                        int(c.key in quant.disabled),
                        int(c.is_human),
                        json.dumps(c.extra_info()),
                        f"{mc_class}.{config_type}.{c.key}.{INTERVAL}",
                    )


def build_world(
    conn: sqlite3.Connection, seed: int, scale: int, *, workers: int | None = None
) -> None:
    """Fill an empty world database (schema created, transaction managed by the caller).

    ``workers``: processes that simulate the tokens (``stage.worker_count``: by default one
    below ``stage.PARALLEL_MIN_SCALE``, up to two from there); the world is the same bytes.
    """
    if scale < 1:
        raise ValueError("scale must be at least 1")
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("seed", str(seed)), ("scale", str(scale)), ("world_version", WORLD_VERSION)],
    )
    conn.executemany(
        "INSERT INTO quants VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                q.id,
                q.name,
                q.trading_mode,
                q.capital_usd,
                q.take_profit,
                q.stop_loss,
                q.horizon_h,
                _stable_uuid(seed, "group", q.id),
            )
            for q in QUANTS
        ],
    )
    conn.executemany(
        "INSERT INTO criteria VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                c.id,
                c.key,
                c.name,
                c.category,
                CATEGORY_IDS[c.category],
                c.short,
                c.long,
                int(c.is_human),
                i,
            )
            for i, c in enumerate(CRITERIA)
        ],
    )
    config = list(_config_rows(seed))
    conn.executemany(f"INSERT INTO config VALUES ({','.join('?' * 13)})", config)
    conn.execute("INSERT INTO config_original SELECT * FROM config")
    conn.executemany(
        "INSERT INTO pass_marks VALUES (?, ?, ?, ?)",
        [
            (q.id, mc, ct, q.pass_marks[ct])
            for q in QUANTS
            for mc, _ in MARKET_CAP_CLASSES
            for ct in CONFIG_TYPES
        ],
    )

    # A bounded page cache for the bulk inserts and sorts (main and temp): flat in scale.
    saved = [conn.execute(f"PRAGMA {db}.cache_size").fetchone()[0] for db in ("main", "temp")]
    try:
        for db in ("main", "temp"):
            conn.execute(f"PRAGMA {db}.cache_size = {_BUILD_CACHE_KIB}")
        with _indexes_deferred(conn):
            with stage.staged(conn, seed, scale, workers):
                _renumber(conn)
            _write_transactions(conn, seed)
    finally:
        for db, size in zip(("main", "temp"), saved, strict=True):
            conn.execute(f"PRAGMA {db}.cache_size = {int(size)}")
    optimizer.initial_analysis(conn)  # the first run: a fresh world holds recommendations


_EVAL_SELECT = ", ".join(EVAL_COLUMNS)
_TRADE_SELECT = ", ".join(TRADE_COLUMNS)
_BATCH = 5000  # trades per batch when building transactions
_BUILD_CACHE_KIB = -65536  # 64 MiB of page cache per database while building


def _renumber(conn: sqlite3.Connection) -> None:
    """Ids follow time: evaluations by (created, quant, token, type), trades by open time.

    Each table is written once, in id order, from one sort of its staged rows (SQLite's external
    merge sort: sequential temp-file passes, memory bounded by the page cache). Only buy and
    sell evaluations are pointed at by trades, so only their staging ids get a map to ids.
    """
    eval_order = "ORDER BY created_ms, quant_id, token_id, type_order, sid"
    conn.execute("DROP TABLE IF EXISTS temp.eval_ids")
    conn.execute("CREATE TEMP TABLE eval_ids (sid INTEGER PRIMARY KEY, id INTEGER NOT NULL)")
    conn.execute(
        "INSERT INTO eval_ids (sid, id) SELECT sid, id FROM (SELECT sid, type_order, "
        f"row_number() OVER ({eval_order}) AS id FROM stage_evals) "
        "WHERE type_order > 0 ORDER BY sid"
    )
    conn.execute(
        f"INSERT INTO evaluations (id, {_EVAL_SELECT}) "
        f"SELECT row_number() OVER ({eval_order}), {_EVAL_SELECT} FROM stage_evals"
    )
    remap = {"buy_eval_id": "b.id", "sell_eval_id": "x.id"}
    conn.execute(
        f"INSERT INTO trades (id, {_TRADE_SELECT}) "
        "SELECT row_number() OVER (ORDER BY t.open_ms, t.quant_id, t.token_id, t.sid), "
        f"{', '.join(remap.get(c, 't.' + c) for c in TRADE_COLUMNS)} "
        "FROM stage_trades AS t JOIN eval_ids AS b ON b.sid = t.buy_eval_id "
        "LEFT JOIN eval_ids AS x ON x.sid = t.sell_eval_id"
    )
    conn.execute("DROP TABLE temp.eval_ids")


_TX_SQL = (
    "INSERT INTO transactions (trade_id, action, tx_hash, ts_ms, input_token, output_token, "
    "input_amount, output_amount, input_value_usd, output_value_usd, price_usd) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _write_transactions(conn: sqlite3.Connection, seed: int) -> None:
    """A BUY transaction per executed trade and a SELL per closed one, in trade id order."""
    last_id = 0
    while True:  # keyset batches: a fresh read each time, never a cursor open across writes
        batch = conn.execute(
            "SELECT t.id, t.chain, k.address, t.open_ms, t.close_ms, t.native_spent, "
            "t.tokens_bought, t.buy_cost, t.entry_price, t.tokens_sold, t.native_received, "
            "t.exit_price, t.sell_revenue FROM trades AS t JOIN tokens AS k ON k.id = t.token_id "
            "WHERE t.id > ? AND t.trading_status = 'executed' ORDER BY t.id LIMIT ?",
            (last_id, _BATCH),
        ).fetchall()
        if not batch:
            break
        tx_rows: list[tuple[object, ...]] = []
        for row in batch:
            tx_rows.extend(_transactions(seed, row))
        conn.executemany(_TX_SQL, tx_rows)
        last_id = int(batch[-1][0])


@contextlib.contextmanager
def _indexes_deferred(conn: sqlite3.Connection) -> Iterator[None]:
    """Drop the history tables' indexes for the bulk load, then create them again by sorting.

    Inserting rows in id order into an index on time or token is a random write per row (most
    of a large build's I/O); a ``CREATE INDEX`` afterwards is one sort. Every index from the
    first deferred one on is dropped and created again in the same order with the same SQL, so
    the schema (and ``iterdump``, which lists indexes in ``sqlite_master`` order) is unchanged.
    """
    indexes = conn.execute(
        "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        "ORDER BY rowid"
    ).fetchall()
    first = next((i for i, (_, table, _) in enumerate(indexes) if table in _HISTORY), None)
    deferred = [] if first is None else indexes[first:]
    for name, _, _ in deferred:
        conn.execute(f'DROP INDEX "{name}"')
    yield  # a failed build is rolled back (or its file deleted): nothing to restore then
    for _, _, sql in deferred:
        conn.execute(sql)


_HISTORY = frozenset({"evaluations", "trades", "transactions"})


def _tx_hash(seed: int, trade_id: int, action: str, chain: str) -> str:
    digest = hashlib.blake2b(f"{seed}:tx:{trade_id}:{action}".encode(), digest_size=64).digest()
    if chain != "SOLANA":
        return "0x" + digest[:32].hex()
    return base58(digest, 88)


def _transactions(seed: int, trade: tuple[Any, ...]) -> list[tuple[object, ...]]:
    """The transactions of one executed trade (a row of ``_write_transactions``' query)."""
    (trade_id, chain, address, open_ms, close_ms, native_spent, tokens_bought, buy_cost) = trade[:8]
    entry_price, tokens_sold, native_received, exit_price, sell_revenue = trade[8:]
    native = WRAPPED_NATIVE_ADDRESS[chain]
    rows: list[tuple[object, ...]] = [
        (
            trade_id,
            "BUY",
            _tx_hash(seed, trade_id, "BUY", chain),
            open_ms,
            native,
            address,
            native_spent,
            tokens_bought,
            buy_cost,
            tokens_bought * entry_price,
            entry_price,
        )
    ]
    if close_ms is not None:
        rows.append(
            (
                trade_id,
                "SELL",
                _tx_hash(seed, trade_id, "SELL", chain),
                close_ms,
                address,
                native,
                tokens_sold,
                native_received,
                tokens_sold * exit_price,
                sell_revenue,
                exit_price,
            )
        )
    return rows
