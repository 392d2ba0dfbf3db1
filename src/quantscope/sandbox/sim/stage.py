"""Stage a world's simulated rows, token by token, serially or in worker processes.

``staged(conn, seed, scale)`` simulates every token (``pair.simulate_pair`` for each quant) and
leaves its rows where ``build.py`` numbers them: ``stage_evals`` and ``stage_trades`` in the
connection's TEMP schema (and the token rows in ``tokens``). Memory stays flat in ``scale``:
rows go to SQLite one token at a time.

A staging id (``sid``) is ``token_id << SID_BITS | n``, n counting the token's rows in
simulation order (quant, then the pair's own order): ordering by sid is the simulation order,
so sids break ties in the time orders as the in-memory build's stable sort did, and a token's
sids do not depend on which process staged it. A large world is staged by worker processes
(``spawn``), each into its own SQLite file over its share of the tokens; the build's connection
attaches those files behind TEMP views of the same names, so the rows, and the world, are the
same bytes whichever way they were staged.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from quantscope.sandbox.sim import market
from quantscope.sandbox.sim.pair import EVAL_COLUMNS, TRADE_COLUMNS, simulate_pair
from quantscope.sandbox.sim.quants import QUANTS
from quantscope.sandbox.sim.tokens import TokenMeta, token_meta

TOKENS_PER_SCALE = 90
SID_BITS = 20  # rows per token stay far below 2**20 (three quants, ~140 scans each)
PARALLEL_MIN_SCALE = 8  # below, starting workers costs more than it saves
MAX_WORKERS = 2
_BLOCK = 32  # tokens handed out to the workers round-robin in blocks of this many

_TYPE_ORDER = {"TOKEN_STATUS": 0, "TOKEN_BUY": 1, "TOKEN_SELL": 2}
_EVAL_SELECT = ", ".join(EVAL_COLUMNS)
_TRADE_SELECT = ", ".join(TRADE_COLUMNS)
_TABLES = ("stage_tokens", "stage_evals", "stage_trades")


def _token_row(path: market.TokenPath, meta: TokenMeta) -> tuple[object, ...]:
    last = len(path.close) - 1
    price = float(path.close[last])
    change = (price / float(path.close[last - 24]) - 1.0) * 100.0
    volume = float(path.volume[last - 23 :].sum())
    mcap = price * path.supply
    if path.rug_hour is not None:
        status = "RUGGED"
    elif volume < 0.002 * mcap:
        status = "DORMANT"
    else:
        status = "ACTIVE"
    holders = int(meta.holders0 * (1 + meta.holder_growth))
    return (
        meta.id,
        meta.name,
        meta.symbol,
        meta.address,
        meta.chain,
        f"https://sandbox.quantscope.invalid/tokens/{meta.id}.png",
        meta.created_ms,
        status,
        path.supply,
        path.rug_hour,
        holders,
        price,
        change,
        volume,
        mcap,
        mcap * path.liquidity_share,
    )


def _create_tables(conn: sqlite3.Connection, schema: str) -> None:
    for table in _TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {schema}.{table}")
    conn.execute(f"CREATE TABLE {schema}.stage_tokens ({','.join(f'c{i}' for i in range(16))})")
    conn.execute(
        f"CREATE TABLE {schema}.stage_evals (sid INTEGER PRIMARY KEY, type_order, {_EVAL_SELECT})"
    )
    conn.execute(f"CREATE TABLE {schema}.stage_trades (sid INTEGER PRIMARY KEY, {_TRADE_SELECT})")


def stage_tokens(
    conn: sqlite3.Connection, seed: int, token_ids: Iterable[int], tokens_table: str
) -> None:
    """Simulate ``token_ids`` into ``stage_evals``/``stage_trades``, token rows into
    ``tokens_table``, one token at a time (the caller manages the transaction).
    """
    eval_sql = (
        f"INSERT INTO stage_evals (sid, type_order, {_EVAL_SELECT}) "
        f"VALUES ({','.join('?' * (len(EVAL_COLUMNS) + 2))})"
    )
    trade_sql = (
        f"INSERT INTO stage_trades (sid, {_TRADE_SELECT}) "
        f"VALUES ({','.join('?' * (len(TRADE_COLUMNS) + 1))})"
    )
    token_sql = f"INSERT INTO {tokens_table} VALUES ({','.join('?' * 16)})"
    type_col = EVAL_COLUMNS.index("type")
    for token_id in token_ids:
        path = market.token_path(seed, token_id)
        meta = token_meta(seed, token_id, path)
        conn.execute(token_sql, _token_row(path, meta))
        eval_rows: list[tuple[object, ...]] = []
        trade_rows: list[tuple[object, ...]] = []
        base = token_id << SID_BITS
        for quant in QUANTS:
            rows, trades, links = simulate_pair(seed, quant, path, meta)
            first = base + len(eval_rows)
            eval_rows.extend(
                (first + i, _TYPE_ORDER[str(r[type_col])], *r) for i, r in enumerate(rows)
            )
            for t in trades:
                t["buy_eval_id"] = first + int(t["buy_eval_id"])
            for ti, si in links:
                trades[ti]["sell_eval_id"] = first + si
            first_trade = base + len(trade_rows)
            trade_rows.extend(
                (first_trade + i, *(t[c] for c in TRADE_COLUMNS)) for i, t in enumerate(trades)
            )
        conn.executemany(eval_sql, eval_rows)
        conn.executemany(trade_sql, trade_rows)
        market.token_path.cache_clear()  # each path is used once here


def worker_count(scale: int, workers: int | None = None) -> int:
    """Processes that stage a world of ``scale``: ``workers`` if given, else 1 below
    ``PARALLEL_MIN_SCALE`` and up to ``MAX_WORKERS`` (the machine's cores) from there.
    """
    if workers is not None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        return workers
    if scale < PARALLEL_MIN_SCALE or os.name != "posix":  # staging files unlinked while open
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def _share(scale: int, part: int, parts: int) -> Iterator[int]:
    """The tokens of one worker: blocks of ``_BLOCK`` ids dealt round-robin."""
    n = TOKENS_PER_SCALE * scale
    for start in range(1 + part * _BLOCK, n + 1, parts * _BLOCK):
        yield from range(start, min(start + _BLOCK, n + 1))


def _stage_part(path: str, seed: int, scale: int, part: int, parts: int) -> None:
    """A worker: stage its share of the tokens into its own database file."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=OFF")  # a scratch file: a failed build deletes it
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("BEGIN")
        _create_tables(conn, "main")
        stage_tokens(conn, seed, _share(scale, part, parts), "stage_tokens")
        conn.execute("COMMIT")


def _main_file(conn: sqlite3.Connection) -> Path | None:
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return Path(file) if file else None
    return None


@contextlib.contextmanager
def staged(
    conn: sqlite3.Connection, seed: int, scale: int, workers: int | None = None
) -> Iterator[None]:
    """Stage the world of ``seed`` and ``scale``; inside, ``stage_evals`` and ``stage_trades``
    answer in the TEMP schema and ``tokens`` is filled. Everything staged is gone afterwards.

    Worker processes need a file-backed ``conn``: their files go next to it, named after it
    (``<its name>.stage<n>-<hex>``); an in-memory database is staged serially.
    """
    parts = worker_count(scale, workers)
    home = _main_file(conn)
    if parts == 1 or home is None:
        _create_tables(conn, "temp")
        conn.execute("DROP TABLE temp.stage_tokens")
        stage_tokens(conn, seed, range(1, TOKENS_PER_SCALE * scale + 1), "tokens")
        try:
            yield
        finally:
            for table in _TABLES[1:]:
                conn.execute(f"DROP TABLE IF EXISTS temp.{table}")
        return
    tag = uuid.uuid4().hex
    files = [home.with_name(f"{home.name}.stage{p}-{tag}") for p in range(parts)]
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(parts, mp_context=context) as pool:
            jobs = [
                pool.submit(_stage_part, str(f), seed, scale, p, parts) for p, f in enumerate(files)
            ]
            for job in jobs:
                job.result()  # a worker's exception is raised here
        for p, f in enumerate(files):
            conn.execute("ATTACH DATABASE ? AS ?", (str(f), f"stage{p}"))
        for table in _TABLES:
            union = " UNION ALL ".join(f"SELECT * FROM stage{p}.{table}" for p in range(parts))
            conn.execute(f"CREATE TEMP VIEW {table} AS {union}")
        conn.execute("INSERT INTO tokens SELECT * FROM stage_tokens ORDER BY c0")
        yield
    finally:
        for table in _TABLES:
            conn.execute(f"DROP VIEW IF EXISTS temp.{table}")
        attached = {name for _, name, _ in conn.execute("PRAGMA database_list")}
        for p in range(parts):
            if f"stage{p}" in attached:
                # refused while the caller's transaction holds it: then it stays attached, its
                # file already unlinked, until the connection closes (POSIX frees it then)
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute(f"DETACH DATABASE stage{p}")
        for f in files:
            f.unlink(missing_ok=True)
