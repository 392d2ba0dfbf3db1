"""The streaming world build (TEMP staging tables, ids renumbered in SQL) at scale 2."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from quantscope.sandbox import store
from quantscope.sandbox.sim import build

pytestmark = pytest.mark.slow  # builds a scale-2 world: ~6 s


@pytest.fixture(scope="module")
def world2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    path = tmp_path_factory.mktemp("world_scale") / "world.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=OFF")
        store.create_schema(conn)
        cache_size = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute("BEGIN")
        build.build_world(conn, 7, 2)
        conn.execute("COMMIT")
        # the build's larger page cache is given back
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == cache_size
        # staging tables are gone: nothing left in the connection's temp schema
        assert conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchone()[0] == 0
    with contextlib.closing(sqlite3.connect(Path(path))) as ro:
        yield ro


def _dense(conn: sqlite3.Connection, table: str) -> int:
    n, lo, hi = conn.execute(f"SELECT count(*), min(id), max(id) FROM {table}").fetchone()
    assert n > 0
    assert (lo, hi) == (1, n)
    return int(n)


def test_tokens_and_dense_ids(world2: sqlite3.Connection) -> None:
    assert world2.execute("SELECT count(*) FROM tokens").fetchone()[0] == 2 * build.TOKENS_PER_SCALE
    for table in ("evaluations", "trades", "transactions"):
        _dense(world2, table)


def test_evaluation_ids_follow_time(world2: sqlite3.Connection) -> None:
    order = "CASE type WHEN 'TOKEN_STATUS' THEN 0 WHEN 'TOKEN_BUY' THEN 1 ELSE 2 END"
    (bad,) = world2.execute(
        "SELECT count(*) FROM (SELECT id, row_number() OVER "
        f"(ORDER BY created_ms, quant_id, token_id, {order}, id) AS rn FROM evaluations) "
        "WHERE rn != id"
    ).fetchone()
    assert bad == 0


def test_trade_ids_follow_open_time(world2: sqlite3.Connection) -> None:
    (bad,) = world2.execute(
        "SELECT count(*) FROM (SELECT id, row_number() OVER "
        "(ORDER BY open_ms, quant_id, token_id, id) AS rn FROM trades) WHERE rn != id"
    ).fetchone()
    assert bad == 0


def test_trades_point_at_their_evaluations(world2: sqlite3.Connection) -> None:
    n = _dense(world2, "trades")
    (buys,) = world2.execute(
        "SELECT count(*) FROM trades t JOIN evaluations e ON e.id = t.buy_eval_id "
        "WHERE e.type = 'TOKEN_BUY' AND e.passed = 1 AND e.quant_id = t.quant_id "
        "AND e.token_id = t.token_id AND e.created_ms < t.validated_ms"
    ).fetchone()
    assert buys == n
    # one buy evaluation per trade
    (distinct,) = world2.execute("SELECT count(DISTINCT buy_eval_id) FROM trades").fetchone()
    assert distinct == n
    # executed, closed trades (and only those) have a TOKEN_SELL evaluation after the close
    closed, with_sell, sells_ok = world2.execute(
        "SELECT sum(trading_status = 'executed' AND close_ms IS NOT NULL), "
        "count(sell_eval_id), "
        "(SELECT count(*) FROM trades t JOIN evaluations e ON e.id = t.sell_eval_id "
        " WHERE e.type = 'TOKEN_SELL' AND e.quant_id = t.quant_id AND e.token_id = t.token_id "
        " AND e.created_ms = t.close_ms + 30000 AND t.trading_status = 'executed') "
        "FROM trades"
    ).fetchone()
    assert closed == with_sell == sells_ok > 0
    (sell_evals,) = world2.execute(
        "SELECT count(*) FROM evaluations WHERE type = 'TOKEN_SELL'"
    ).fetchone()
    assert sell_evals == closed


def test_transactions(world2: sqlite3.Connection) -> None:
    executed, closed = world2.execute(
        "SELECT count(*), count(close_ms) FROM trades WHERE trading_status = 'executed'"
    ).fetchone()
    assert _dense(world2, "transactions") == executed + closed
    counts = dict(world2.execute("SELECT action, count(*) FROM transactions GROUP BY action"))
    assert counts == {"BUY": executed, "SELL": closed}
    # ids follow trade ids, a trade's BUY before its SELL, at the trade's open/close time
    (bad,) = world2.execute(
        "SELECT count(*) FROM (SELECT id, row_number() OVER (ORDER BY trade_id, action) AS rn "
        "FROM transactions) WHERE rn != id"
    ).fetchone()
    assert bad == 0
    (mismatched,) = world2.execute(
        "SELECT count(*) FROM transactions x JOIN trades t ON t.id = x.trade_id "
        "WHERE t.trading_status != 'executed' "
        "OR x.ts_ms != CASE x.action WHEN 'BUY' THEN t.open_ms ELSE t.close_ms END"
    ).fetchone()
    assert mismatched == 0
