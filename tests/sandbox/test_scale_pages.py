"""Keyset seeks and memoised aggregates (sandbox/listing.py) answer exactly the plain queries.

Two servers over copies of the scale-1 world: one as served (keyset seeks, memoised counts and
summaries, the chain filter and token join left out where every row passes them, with a small
ladder step so that jumps exercise the ladder), one with all of it switched off (plain
LIMIT/OFFSET, every aggregate computed anew; every page in a worker thread, its arguments
solved by FastAPI). Every page must be the same bytes,
walked in order and visited by jumps back and forth, for every sort of /api/trades and for
/api/eval-results' filters.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import requests
from fastapi import FastAPI

from quantscope.sandbox import evaldetail, rendered
from quantscope.sandbox.app import create_app
from quantscope.sandbox.catalog import CHAINS
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.listing import Listing, Order
from quantscope.sandbox.serve import SandboxServer
from quantscope.sandbox.store import Store
from quantscope.sandbox.trade_json import (
    SELECT_TRADES,
    fetch_trades,
    trade_items,
    trade_items_by_id,
)

FAST_SORTS = ("open_date", "close_date", "token_symbol")  # NULLs, text, the default
SLOW_SORTS = ("pnl_usd", "roi", "buy_cost_usd", "duration", "id")
SORTS = [*FAST_SORTS, *(pytest.param(s, marks=pytest.mark.slow) for s in SLOW_SORTS)]


def _served(info: WorldInfo, *, keyset: bool) -> SandboxServer:
    app: FastAPI = create_app(info)
    listing: Listing = app.state.store.listing
    listing.keyset = keyset
    listing.memoise = keyset
    listing.shortcuts = keyset
    listing.ladder_step = 150  # jumps past 150 rows climb a ladder even in a small world
    app.state.store.inline_first = keyset  # off: every page in a worker thread (inline.py)
    app.state.fast_solve = keyset  # off: FastAPI solves every request (fastsolve.py)
    return SandboxServer(info, app=app).start()


@pytest.fixture(scope="module")
def pair(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[requests.Session, str, str]]:
    fast = _served(copy_world(sandbox_world, tmp_path_factory.mktemp("keyset")), keyset=True)
    plain = _served(copy_world(sandbox_world, tmp_path_factory.mktemp("plain")), keyset=False)
    session = requests.Session()
    session.headers["X-API-Key"] = fast.keys["enterprise"]  # both copies hold the seed's keys
    try:
        yield session, fast.url, plain.url
    finally:
        session.close()
        fast.stop()
        plain.stop()


def _same(pair: tuple[requests.Session, str, str], path: str, params: dict[str, Any]) -> Any:
    session, fast, plain = pair
    a = session.get(fast + path, params=params, timeout=60)
    b = session.get(plain + path, params=params, timeout=60)
    assert a.status_code == b.status_code == 200, (params, a.text[:200])
    assert a.content == b.content, params
    return a.json()


def _pages(total: int, size: int, walk: int | None = None) -> list[int]:
    """The first ``walk`` pages in order (all by default), then jumps: last, first, middle,
    and a shuffled sample."""
    last = max(1, -(-total // size))
    order = list(range(1, last + 1))
    jumps = [last, 1, last // 2 + 1, last]
    sample = random.Random(7).sample(order, min(4, len(order)))
    return order[:walk] + jumps + sample + [last + 1]  # a page past the end: empty


@pytest.mark.parametrize("sort_by", SORTS)
@pytest.mark.parametrize("sort_order", ["desc", "asc"])
def test_trade_pages_identical(
    pair: tuple[requests.Session, str, str], sort_by: str, sort_order: str
) -> None:
    params: dict[str, Any] = {
        "sortBy": sort_by,
        "sortOrder": sort_order,
        "pageSize": 500,
        "tradingStatus": "all",
    }
    first = _same(pair, "/api/trades", {**params, "page": 1})
    total = first["pagination"]["total"]
    assert total > 3000
    seen: list[int] = []
    for page in _pages(total, 500):
        body = _same(pair, "/api/trades", {**params, "page": page})
        if page <= -(-total // 500) and len(seen) < total:
            seen.extend(t["id"] for t in body["trades"])
    assert sorted(seen) == sorted(set(seen))  # each trade once
    assert len(seen) == total


@pytest.mark.parametrize(
    "filters",
    [
        {"filterStatus": "Open", "sortBy": "close_date"},
        {"filterStatus": "Closed", "sortBy": "close_date", "sortOrder": "asc"},
        pytest.param({"quantId": 2, "chain": "solana", "sortBy": "roi"}, marks=pytest.mark.slow),
        {"search": "a", "sortBy": "token_symbol", "sortOrder": "asc"},
    ],
)
def test_filtered_trade_pages_identical(
    pair: tuple[requests.Session, str, str], filters: dict[str, Any]
) -> None:
    params = {"pageSize": 40, **filters}
    total = _same(pair, "/api/trades", params)["pagination"]["total"]
    assert total > 0
    for page in _pages(total, 40):
        _same(pair, "/api/trades", {**params, "page": page})


@pytest.mark.parametrize(
    "filters",
    [
        {},
        pytest.param({"passed": "true", "quantId": 1}, marks=pytest.mark.slow),
        {"uniqueTokensOnly": "true"},
        pytest.param(
            {"evaluationResultType": "TOKEN_BUY,TOKEN_SELL", "chain": "SOLANA"},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_evaluation_pages_identical(
    pair: tuple[requests.Session, str, str], filters: dict[str, Any]
) -> None:
    total = _same(pair, "/api/eval-results", {**filters, "limit": 1})["total"]
    assert total > 0
    size = 1000 if total > 20_000 else 200
    offsets = [(page - 1) * size for page in _pages(total, size, walk=6)]
    offsets += [total - 1, total - 7, 3 * size + 11, 1]  # offsets that are not page starts
    for offset in offsets:
        _same(pair, "/api/eval-results", {**filters, "limit": min(size, 100), "offset": offset})


@pytest.fixture(scope="module")
def own_world(sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory) -> WorldInfo:
    """A copy of the session's world: a ``Store`` switches its database to WAL, and the
    session's world must stay as built for the tests that check that switch."""
    return copy_world(sandbox_world, tmp_path_factory.mktemp("pages-db"))


def test_order_after_matches_sqlite_order(own_world: WorldInfo) -> None:
    """Rows after any row's key are exactly the rows that follow it, NULLs included."""
    store = Store(own_world.db_path)  # kept: its connections close with it
    conn = store.connect()
    for descending in (True, False):
        order = Order("t.close_ms", "t.id", descending, nullable=True)
        rows = conn.execute(f"SELECT t.close_ms, t.id FROM trades t {order.sql()}").fetchall()
        assert any(r[0] is None for r in rows)
        assert any(r[0] is not None for r in rows)
        for at in random.Random(3).sample(range(len(rows)), 25):
            cond, args = order.after((rows[at][0], rows[at][1]))
            after = conn.execute(
                f"SELECT t.close_ms, t.id FROM trades t WHERE {cond} {order.sql()}", args
            ).fetchall()
            assert [tuple(r) for r in after] == [tuple(r) for r in rows[at + 1 :]]


def test_ladder_marks_and_memo(own_world: WorldInfo) -> None:
    """A cold jump leaves ladder marks; an aggregate is computed once per (sql, params)."""
    store = Store(own_world.db_path)  # kept: its connections close with it
    conn = store.connect()
    listing = Listing(ladder_step=100)
    order = Order("t.open_ms", "t.id", descending=True)
    plain = Listing()
    plain.keyset = False
    (n,) = conn.execute("SELECT count(*) FROM trades").fetchone()
    deep = listing.page_ids(conn, "FROM trades t", [], [], order, 10, n - 10)
    assert deep == plain.page_ids(conn, "FROM trades t", [], [], order, 10, n - 10)
    marks = next(iter(listing._marks.values()))
    assert marks.positions[:3] == [0, 100, 200]
    assert len(marks.positions) >= (n - 10) // 100
    middle = listing.page_ids(conn, "FROM trades t", [], [], order, 25, n // 2 + 3)
    assert middle == plain.page_ids(conn, "FROM trades t", [], [], order, 25, n // 2 + 3)
    sql = "SELECT count(*) FROM trades WHERE quant_id = ?"
    assert listing.aggregate(conn, sql, [1]) == [tuple(conn.execute(sql, [1]).fetchone())]
    assert listing.aggregate(conn, sql, [1]) is listing.aggregate(conn, sql, [1])


def test_rendered_items_are_the_fresh_bytes(own_world: WorldInfo) -> None:
    """Items spliced from rendered.ITEMS are byte for byte the items rendered anew."""
    store = Store(own_world.db_path)  # kept: its connections close with it
    conn = store.connect()
    ids = [5, 17_000, 3, 40_001, 5]  # out of order, one twice
    rows = conn.execute(
        "SELECT e.*, k.symbol, k.address, k.image, k.name FROM evaluations e "
        "JOIN tokens k ON k.id = e.token_id WHERE e.id IN (5, 17000, 3, 40001)"
    ).fetchall()
    by_id = {r["id"]: r for r in rows}
    rows = [by_id[i] for i in ids]
    fresh = orjson.dumps(evaldetail.result_dicts(conn, 7, rows), option=rendered.OPTIONS)
    for _ in range(2):  # rendered, then from the cache
        assert orjson.dumps(evaldetail.result_items(conn, 7, ids)) == fresh
    trade_ids = [9, 1, 300]
    made = fetch_trades(conn, f"{SELECT_TRADES} WHERE t.id IN (9, 1, 300)", ())
    by_id = {r.id: item for r, item in zip(made, trade_items(made), strict=True)}
    fresh = orjson.dumps([by_id[i] for i in trade_ids], option=rendered.OPTIONS)
    for _ in range(2):
        assert orjson.dumps(trade_items_by_id(conn, trade_ids)) == fresh


def test_rows_off_the_catalog_keep_the_chain_filter_and_token_join(
    pair: tuple[requests.Session, str, str],
    sandbox_world: WorldInfo,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The newest trade copied onto an unknown chain and the newest evaluation onto a token that
    # does not exist: every_row_joined sees them, so the pages still leave them out.
    info = copy_world(sandbox_world, tmp_path_factory.mktemp("broken"))
    store = Store(info.db_path)
    with store.transaction() as conn:
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute(
            "INSERT INTO trades SELECT (SELECT MAX(id) + 1 FROM trades), quant_id, token_id, "
            "'TRON', buy_eval_id, sell_eval_id, decision, trading_status, wait_until_ms, "
            "validated_ms, confidence, mode, tracking, open_ms + 1, close_ms, status, result, "
            "exit_reason, entry_price, exit_price, buy_cost, sell_revenue, pnl, roi, "
            "native_spent, native_received, tokens_bought, tokens_sold, avg_buy_price_native "
            "FROM trades ORDER BY open_ms DESC LIMIT 1"
        )
        conn.execute(
            "INSERT INTO evaluations SELECT (SELECT MAX(id) + 1 FROM evaluations), quant_id, "
            "1000000000, chain, type, created_ms + 1, hour, market_cap, mc_class, price, "
            "liquidity, volume_24h, passed, scored, internal_score, ai_score, avg_score, "
            "perf_roi, holders FROM evaluations ORDER BY created_ms DESC LIMIT 1"
        )
    assert not Listing().every_row_joined(store.connect(), "trades", CHAINS)
    assert not Listing().every_row_joined(store.connect(), "evaluations", CHAINS)
    broken = _served(info, keyset=True)
    session, fast, _ = pair
    try:
        for path, params in (
            ("/api/trades", {"pageSize": 5, "tradingStatus": "all"}),
            ("/api/trades", {"pageSize": 5, "sortBy": "token_symbol"}),
            ("/api/eval-results", {"limit": 5}),
            ("/api/eval-results", {"limit": 5, "uniqueTokensOnly": "true"}),
        ):
            got = session.get(broken.url + path, params=params, timeout=60)
            want = session.get(fast + path, params=params, timeout=60)
            assert got.status_code == want.status_code == 200
            assert got.content == want.content, (path, params)
    finally:
        broken.stop()
