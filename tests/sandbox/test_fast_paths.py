"""The throughput shortcuts change no answer: fastsolve.py (arguments without FastAPI's
per-request look-ups) and inline.py (read-only pages answered on the event loop's thread).

Two servers over copies of the scale-1 world, one as served and one with both shortcuts off,
get the same requests in the same order (valid ones, and every kind of invalid value the
list routes refuse): status, headers and bytes must be equal. ``/openapi.json`` must be the
copy stored before the shortcuts existed (``data/openapi.json``): the reliability fuzz checks
the server against it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
import requests
from fastapi import FastAPI

from quantscope.sandbox import auth, fastsolve, inline, routers
from quantscope.sandbox.app import create_app
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer
from quantscope.sandbox.store import Store

STORED_OPENAPI = Path(__file__).parent / "data" / "openapi.json"


def test_openapi_is_the_stored_copy(sandbox: SandboxServer) -> None:
    served = requests.get(sandbox.url + "/openapi.json", timeout=60)
    assert served.status_code == 200
    assert served.json() == json.loads(STORED_OPENAPI.read_text(encoding="utf-8"))


def test_list_routes_take_the_fast_plan() -> None:
    plans = {
        route.path: fastsolve.plan_for(route.dependant)
        for router in routers.ROUTERS
        for route in router.routes
        if "GET" in getattr(route, "methods", ())
    }
    trades, evaluations = plans["/api/trades"], plans["/api/eval-results"]
    assert trades is not None
    assert evaluations is not None
    assert [q.alias for q in trades.queries][:3] == ["quantId", "page", "pageSize"]
    assert len(trades.queries) == 14
    assert len(evaluations.queries) == 11
    assert [name for name, _ in trades.dependencies] == ["caller", "store"]
    assert plans["/api/trades/{id}"] is None  # a path parameter: FastAPI solves it


def test_no_plan_without_fastapis_private_helpers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A FastAPI without the helpers ``fastsolve`` reads leaves every route to FastAPI."""
    import fastapi.dependencies.utils as fastapi_utils

    route = next(r for router in routers.ROUTERS for r in router.routes if r.path == "/api/trades")
    assert fastsolve.plan_for(route.dependant) is not None
    monkeypatch.delattr(fastapi_utils, "_is_json_field")
    assert fastsolve.plan_for(route.dependant) is None


@pytest.mark.parametrize("version", ["0.166.0", "1.0.0", "0.109.2", "dev"])
def test_no_plan_on_an_unverified_fastapi(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """On a FastAPI outside ``VERIFIED_FASTAPI`` every route takes FastAPI's own solving, the
    path ``test_same_answers_with_and_without_shortcuts`` checks byte for byte."""
    import fastapi

    gets = [r for router in routers.ROUTERS for r in router.routes if "GET" in r.methods]
    assert any(fastsolve.plan_for(r.dependant) is not None for r in gets)
    monkeypatch.setattr(fastapi, "__version__", version)
    assert [r.path for r in gets if fastsolve.plan_for(r.dependant) is not None] == []


def _served(info: WorldInfo, *, shortcuts: bool) -> SandboxServer:
    app: FastAPI = create_app(info)
    app.state.store.inline_first = shortcuts
    app.state.fast_solve = shortcuts
    return SandboxServer(info, app=app).start()


@pytest.fixture(scope="module")
def pair(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SandboxServer, SandboxServer]]:
    fast = _served(copy_world(sandbox_world, tmp_path_factory.mktemp("fast")), shortcuts=True)
    plain = _served(copy_world(sandbox_world, tmp_path_factory.mktemp("plain")), shortcuts=False)
    try:
        yield fast, plain
    finally:
        fast.stop()
        plain.stop()


def _same(pair: tuple[SandboxServer, SandboxServer], plan: str, path: str) -> requests.Response:
    """GET ``path`` (query included, sent as written) from both servers: the same answer."""
    answers = []
    for server in pair:
        answers.append(
            requests.get(server.url + path, headers={"X-API-Key": server.keys[plan]}, timeout=60)
        )
    a, b = answers
    assert (a.status_code, a.content) == (b.status_code, b.content), path
    skip = {"date", "server"}
    assert {k: v for k, v in a.headers.items() if k.lower() not in skip} == {
        k: v for k, v in b.headers.items() if k.lower() not in skip
    }, path
    return a


LONG = "a" * 201
VALID = [
    "/api/trades?pageSize=100&page=1",
    "/api/trades?pageSize=100&page=1",  # warm: inline this time
    "/api/trades?page=2&page=3&pageSize=7",  # a repeated value: the last one counts
    "/api/trades?sortBy=roi&sortOrder=ASC&filterStatus=profit&chain=base&quantId=2",
    "/api/trades?startDate=2026-01-01&endDate=2026-12-31T10:00:00Z&search=%20a%20&unknown=1",
    "/api/trades?tradingStatus=ALL&tradingMode=Paper&positionClosed=TRUE&isTrackingEnabled=false",
    "/api/trades?search=",
    "/api/trades/stats?quantId=1",
    "/api/eval-results?limit=100&offset=0",
    "/api/eval-results?limit=100&offset=0",
    "/api/eval-results?limit=5&offset=17&passed=TRUE&uniqueTokensOnly=true&onlyScored=True",
    "/api/eval-results?evaluationResultType=TOKEN_BUY,token_sell&timeFrom=2026-01-01",
    "/api/alpha-signals?limit=3&includeTokenDetails=true",
    "/api/refine-eval/dashboard?quantId=1",
    "/api/degen/config?quantId=1",
    "/api/eval-history?evaluationId=5&take=3",
]
INVALID = [
    "/api/trades?pageSize=0",
    "/api/trades?pageSize=1001",
    "/api/trades?pageSize=1.0",
    "/api/trades?page=abc",
    "/api/trades?page=0&pageSize=x",  # two errors: both named, in FastAPI's order
    f"/api/trades?page={2**63}",
    "/api/trades?sortBy=price",
    "/api/trades?sortOrder=up",
    "/api/trades?filterStatus=maybe",
    "/api/trades?positionClosed=yes",
    "/api/trades?tradingStatus=done",
    "/api/trades?chain=DOGE",  # refused by the handler, not by a field
    "/api/trades?chain=",
    "/api/trades?startDate=2026-02-30",
    "/api/trades?startDate=2026-03-01&endDate=2026-02-01",
    f"/api/trades?search={LONG}",
    "/api/trades?quantId=0",
    "/api/trades/stats?quantId=-1",
    "/api/eval-results?limit=0",
    "/api/eval-results?offset=-1",
    "/api/eval-results?passed=maybe",
    "/api/eval-results?evaluationResultType=NOPE",
    "/api/eval-results?timeTo=yesterday",
    "/api/eval-details",  # a required value missing
    "/api/eval-details?evaluationId=",
    "/api/degen/config",
]


@pytest.mark.parametrize("path", [*VALID, *INVALID])
def test_same_answers_with_and_without_shortcuts(
    pair: tuple[SandboxServer, SandboxServer], path: str
) -> None:
    answer = _same(pair, "enterprise", path)
    assert (answer.status_code == 200) == (path in VALID), answer.text[:300]


@pytest.mark.parametrize(
    "path", ["/api/eval-details?evaluationId=1", "/api/trades?pageSize=0", "/api/trades?chain=BSC"]
)
def test_same_refusals_for_a_smaller_plan(
    pair: tuple[SandboxServer, SandboxServer], path: str
) -> None:
    assert _same(pair, "basic", path).status_code in (403, 422)


def test_a_page_too_dear_for_the_loop_moves_to_a_worker(
    pair: tuple[SandboxServer, SandboxServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = "/api/trades?pageSize=50&sortBy=duration&sortOrder=asc&tradingStatus=all"
    before = dict(inline.COUNTS)
    _same(pair, "enterprise", path)  # cold: its summary and items are not known yet
    assert inline.COUNTS["moved"] == before["moved"] + 1
    _same(pair, "enterprise", path)  # warm: answered on the loop
    assert inline.COUNTS["inline"] == before["inline"] + 1
    monkeypatch.setattr(inline, "BUDGET_S", 0.0)
    monkeypatch.setattr(inline, "CHECK_EVERY_OPS", 1)
    _same(pair, "enterprise", path)  # every statement over budget: interrupted, then moved
    assert inline.COUNTS["moved"] == before["moved"] + 2


def test_attempt_ends_on_budget_busy_or_a_transaction_and_keeps_real_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = sqlite3.connect(":memory:")
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    monkeypatch.setattr(inline, "BUDGET_S", 0.001)
    with pytest.raises(inline.RunElsewhere), inline.attempt(conn):
        conn.execute(endless).fetchall()
    assert not inline.active()
    assert conn.execute("SELECT count(*) FROM (SELECT 1 UNION SELECT 2)").fetchone() == (2,)
    with pytest.raises(sqlite3.OperationalError, match="syntax"), inline.attempt(conn):
        conn.execute("SELEKT 1")
    store = Store(tmp_path / "empty.sqlite")
    with inline.attempt(conn):
        assert store.connect() is store.connect_nowait()  # the loop's own connection
    refused = pytest.raises(inline.RunElsewhere, match="transaction")
    with refused, inline.attempt(conn), store.transaction():
        pass  # never reached: the transaction refuses to start inline
    assert store.connect() is not store.connect_nowait()
    inline.ensure_cheap("nothing: outside an attempt")
    store.close()
    conn.close()


def test_quota_still_counts_every_inline_answer(
    pair: tuple[SandboxServer, SandboxServer],
) -> None:
    fast, _ = pair
    key = fast.keys["growth"]
    limit = int(
        requests.get(fast.url + "/api/trades", headers={"X-API-Key": key}, timeout=60).headers[
            "X-RateLimit-Limit"
        ]
    )
    answers = [
        requests.get(fast.url + "/api/trades?pageSize=5", headers={"X-API-Key": key}, timeout=60)
        for _ in range(3)
    ]
    remaining = [int(a.headers["X-RateLimit-Remaining"]) for a in answers]
    assert remaining == [limit - 2, limit - 3, limit - 4]
    with closing(sqlite3.connect(fast.info.db_path)) as db:
        record = auth.load_key_records(db)[auth.hash_key(key)]
        (count,) = db.execute(
            "SELECT count FROM quota WHERE key_id = ?", (record.key_id,)
        ).fetchone()
    assert count == 4
