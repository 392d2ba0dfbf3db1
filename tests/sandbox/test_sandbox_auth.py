"""Keys, plans and daily quotas of the sandbox, over HTTP against a real server."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import stat
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import UTC, datetime, timedelta
from typing import Annotated

import pytest
import requests
from fastapi import APIRouter, Depends, FastAPI

from quantscope.sandbox import auth
from quantscope.sandbox.datadir import KEYS_FILE, copy_world, read_keys
from quantscope.sandbox.deps import Caller, require
from quantscope.sandbox.store import SCHEMA_VERSION

RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
NOON = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
NEXT_MIDNIGHT = int(datetime(2026, 11, 22, tzinfo=UTC).timestamp())


class Clock:
    """A settable real-time clock for the quota's day boundary."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def rate(response: requests.Response) -> tuple[int, int, int]:
    return tuple(int(response.headers[name]) for name in RATE_HEADERS)  # type: ignore[return-value]


def quota_count(db_path: object, plan: str) -> int:
    with closing(sqlite3.connect(str(db_path))) as conn:
        row = conn.execute(
            "SELECT COALESCE(SUM(q.count), 0) FROM quota q JOIN api_keys k ON k.id = q.key_id "
            "WHERE k.plan = ?",
            (plan,),
        ).fetchone()
    return int(row[0])


# --- keys -----------------------------------------------------------------------------------


def test_keys_json_holds_one_key_per_plan_with_mode_0600(sandbox_world):
    path = sandbox_world.data_dir / KEYS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    keys = read_keys(sandbox_world.data_dir)
    assert keys == sandbox_world.keys == auth.derive_keys(7)
    assert list(keys) == ["basic", "growth", "enterprise"]
    for plan, key in keys.items():
        assert re.fullmatch(rf"qs_{plan}_[0-9a-f]{{32}}", key)


def test_keys_are_a_function_of_the_seed():
    assert auth.derive_keys(7) == auth.derive_keys(7)
    assert set(auth.derive_keys(7).values()).isdisjoint(auth.derive_keys(8).values())


def test_key_bytes_are_never_stored_in_the_database(sandbox_world):
    db_bytes = sandbox_world.db_path.read_bytes()
    with closing(sqlite3.connect(sandbox_world.db_path)) as conn:
        stored = dict(conn.execute("SELECT plan, key_hash FROM api_keys"))
    for plan, key in sandbox_world.keys.items():
        assert key.encode() not in db_bytes
        assert key.split("_")[-1].encode() not in db_bytes
        assert stored[plan] == hashlib.sha256(key.encode()).hexdigest()


def test_create_keys_is_idempotent(sandbox_world, tmp_path):
    info = copy_world(sandbox_world, tmp_path)
    with closing(sqlite3.connect(info.db_path)) as conn, conn:
        assert auth.create_keys(conn, 7) == info.keys
        assert conn.execute("SELECT COUNT(*) FROM api_keys").fetchone()[0] == 3


# --- authentication -------------------------------------------------------------------------


def test_missing_key_is_401_without_rate_headers(api):
    response = api(None).get("/api/trades")
    assert response.status_code == 401
    assert response.json() == {
        "error": {
            "status": 401,
            "code": "missing_api_key",
            "message": "send your API key in the X-API-Key header "
            "(`quantscope sandbox keys` prints the sandbox's keys)",
            "param": None,
        }
    }
    assert not any(name in response.headers for name in RATE_HEADERS)


def test_empty_key_counts_as_missing(api):
    response = api(None).get("/api/trades", headers={"X-API-Key": ""})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "missing_api_key"


def test_unknown_key_is_401_and_spends_nothing(fresh_sandbox, api):
    server = fresh_sandbox()
    fake = "qs_enterprise_" + "0" * 32
    response = api(None, server).get("/api/trades", headers={"X-API-Key": fake})
    assert response.status_code == 401
    body = response.json()["error"]
    assert body["code"] == "invalid_api_key"
    assert fake not in body["message"]  # a key is never echoed
    assert not any(name in response.headers for name in RATE_HEADERS)
    assert quota_count(server.info.db_path, "enterprise") == 0


def test_open_paths_need_no_key_and_spend_nothing(fresh_sandbox, api):
    server = fresh_sandbox()
    anonymous = api(None, server)
    assert anonymous.get("/health").json() == {
        "status": "ok",
        "seed": 7,
        "scale": 1,
        "schemaVersion": SCHEMA_VERSION,
    }
    assert anonymous.get("/docs").status_code == 200
    schema = anonymous.get("/openapi.json").json()
    assert schema["components"]["securitySchemes"]["ApiKey"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
    }
    keyed = api("basic", server)
    assert keyed.get("/health").status_code == 200
    assert "X-RateLimit-Remaining" not in keyed.get("/health").headers
    assert quota_count(server.info.db_path, "basic") == 0
    assert rate(keyed.get("/api/nothing-here"))[:2] == (100, 99)


# --- quota ----------------------------------------------------------------------------------


def test_rate_headers_decrement_exactly_and_errors_count(fresh_sandbox, api):
    server = fresh_sandbox(clock=Clock(NOON))
    growth = api("growth", server)
    seen = [rate(growth.get(f"/api/unknown-{i}")) for i in range(3)]
    assert seen == [(500, 499, NEXT_MIDNIGHT), (500, 498, NEXT_MIDNIGHT), (500, 497, NEXT_MIDNIGHT)]
    assert rate(api("enterprise", server).get("/api/unknown")) == (5000, 4999, NEXT_MIDNIGHT)
    assert quota_count(server.info.db_path, "growth") == 3


def test_basic_key_is_refused_after_100_requests(fresh_sandbox, api):
    clock = Clock(NOON)
    server = fresh_sandbox(clock=clock)
    basic = api("basic", server)
    last = [basic.get("/api/unknown") for _ in range(100)][-1]
    assert last.status_code == 404
    assert rate(last) == (100, 0, NEXT_MIDNIGHT)

    refused = basic.get("/api/unknown")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == str(12 * 3600)
    assert rate(refused) == (100, 0, NEXT_MIDNIGHT)
    assert refused.json() == {
        "error": {
            "status": 429,
            "code": "rate_limited",
            "message": "the basic plan's daily limit of 100 requests is spent; "
            "it resets at 2026-11-22T00:00:00Z (in 43200 s)",
            "param": None,
        }
    }
    assert basic.get("/api/unknown").status_code == 429
    assert quota_count(server.info.db_path, "basic") == 100  # 429s do not count
    # other keys have their own counters
    assert api("growth", server).get("/api/unknown").status_code == 404


def test_concurrent_requests_never_overspend(fresh_sandbox, api):
    server = fresh_sandbox()
    key = server.keys["basic"]

    def one(_: int) -> int:
        response = requests.get(f"{server.url}/api/unknown", headers={"X-API-Key": key}, timeout=60)
        return response.status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(one, range(120)))
    assert statuses.count(404) == 100
    assert statuses.count(429) == 20
    assert quota_count(server.info.db_path, "basic") == 100


def test_a_request_counted_while_another_writer_holds_the_database_waits_for_it(fresh_sandbox, api):
    # The gate counts on the event loop through a connection that never waits; when another
    # connection holds the write lock, the count is made again in a worker thread, which waits.
    server = fresh_sandbox(clock=Clock(NOON))
    growth = api("growth", server)
    assert rate(growth.get("/api/unknown"))[:2] == (500, 499)  # the loop's connection is open
    holder = sqlite3.connect(server.info.db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(growth.get, "/api/unknown")
        for _ in range(50):  # the request is in, waiting for the lock: /health still answers
            assert api(None, server).get("/health").status_code == 200
        assert not pending.done()
        holder.execute("COMMIT")
        answered = pending.result(timeout=30)
    holder.close()
    assert answered.status_code == 404
    assert rate(answered)[:2] == (500, 498)
    assert quota_count(server.info.db_path, "growth") == 2


def test_counter_survives_a_restart(fresh_sandbox, api):
    from quantscope.sandbox.serve import SandboxServer

    clock = Clock(NOON)
    server = fresh_sandbox(clock=clock)
    for _ in range(5):
        api("basic", server).get("/api/unknown")
    server.stop()
    with SandboxServer(server.info, clock=clock) as restarted:
        response = api("basic", restarted).get("/api/unknown")
    assert rate(response) == (100, 94, NEXT_MIDNIGHT)


def test_quota_resets_at_utc_midnight_of_the_real_clock(fresh_sandbox, api):
    clock = Clock(datetime(2026, 11, 21, 23, 59, 59, 500_000, tzinfo=UTC))
    server = fresh_sandbox(clock=clock)
    basic = api("basic", server)
    for _ in range(100):
        basic.get("/api/unknown")
    refused = basic.get("/api/unknown")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"  # half a second, rounded up

    clock.now = datetime(2026, 11, 22, 0, 0, tzinfo=UTC)
    response = basic.get("/api/unknown")
    assert response.status_code == 404
    assert rate(response) == (100, 99, int((clock.now + timedelta(days=1)).timestamp()))


# --- plans: capabilities and chains -----------------------------------------------------------


def _plan_probe(app: FastAPI) -> None:
    """Test-only routes that exercise require(), resolve_chains() and check_chain()."""
    router = APIRouter()

    @router.get("/api/probe/signals")
    def signals(caller: Annotated[Caller, Depends(require("signals"))]) -> dict[str, str]:
        return {"plan": caller.plan.name}

    @router.get("/api/probe/optimization")
    def optimization(caller: Annotated[Caller, Depends(require("optimization"))]) -> dict:
        return {"plan": caller.plan.name}

    @router.get("/api/probe/chains")
    def chains(
        caller: Annotated[Caller, Depends(require("trades"))], chain: str | None = None
    ) -> dict[str, list[str]]:
        return {"chains": list(caller.resolve_chains(chain))}

    @router.get("/api/probe/resource/{chain}")
    def resource(chain: str, caller: Annotated[Caller, Depends(require("trades"))]) -> dict:
        caller.check_chain(chain)
        return {"chain": chain}

    app.include_router(router)


@pytest.fixture
def probe(fresh_sandbox):
    return fresh_sandbox(setup_app=_plan_probe)


def test_plan_without_the_capability_is_403_naming_the_plan_needed(probe, api):
    response = api("basic", probe).get("/api/probe/signals")
    assert response.status_code == 403
    assert response.json()["error"] == {
        "status": 403,
        "code": "plan_not_allowed",
        "message": "GET /api/probe/signals needs the growth plan or above; "
        "this key is on the basic plan",
        "param": None,
    }
    assert rate(response)[:2] == (100, 99)  # refusals by plan still count
    assert api("growth", probe).get("/api/probe/signals").json() == {"plan": "growth"}
    growth_refused = api("growth", probe).get("/api/probe/optimization")
    assert growth_refused.status_code == 403
    assert "needs the enterprise plan" in growth_refused.json()["error"]["message"]
    assert api("enterprise", probe).get("/api/probe/optimization").status_code == 200


@pytest.mark.parametrize(
    ("plan", "chain", "expected"),
    [
        ("basic", None, ["SOLANA"]),
        ("basic", "solana", ["SOLANA"]),
        ("growth", None, ["SOLANA", "BASE"]),
        ("growth", "Base", ["BASE"]),
        ("enterprise", None, ["SOLANA", "BASE", "BSC"]),
        ("enterprise", "bsc", ["BSC"]),
    ],
)
def test_resolve_chains_within_the_plan(probe, api, plan, chain, expected):
    params = {} if chain is None else {"chain": chain}
    assert api(plan, probe).get("/api/probe/chains", params=params).json() == {"chains": expected}


def test_chain_outside_the_plan_is_403_and_unknown_chain_422(probe, api):
    outside = api("basic", probe).get("/api/probe/chains", params={"chain": "BSC"})
    assert outside.status_code == 403
    assert outside.json()["error"] == {
        "status": 403,
        "code": "chain_not_allowed",
        "message": "chain=BSC is outside the basic plan, which covers SOLANA; "
        "BSC needs the enterprise plan or above",
        "param": "chain",
    }
    growth = api("growth", probe).get("/api/probe/chains", params={"chain": "bsc"})
    assert growth.json()["error"]["code"] == "chain_not_allowed"

    unknown = api("enterprise", probe).get("/api/probe/chains", params={"chain": "ETH"})
    assert unknown.status_code == 422
    assert unknown.json()["error"] == {
        "status": 422,
        "code": "invalid_parameter",
        "message": "chain must be one of SOLANA, BASE, BSC (any case), got 'ETH'",
        "param": "chain",
    }


def test_resource_on_a_chain_outside_the_plan_is_403(probe, api):
    refused = api("basic", probe).get("/api/probe/resource/BASE")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "chain_not_allowed"
    assert refused.json()["error"]["message"] == (
        "this resource is on BASE, outside the basic plan, which covers SOLANA; "
        "BASE needs the growth plan or above"
    )
    assert api("growth", probe).get("/api/probe/resource/BASE").json() == {"chain": "BASE"}


def test_require_rejects_an_unknown_capability_at_once():
    with pytest.raises(ValueError, match="unknown capability 'signal'"):
        require("signal")
