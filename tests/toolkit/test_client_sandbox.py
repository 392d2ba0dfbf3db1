"""The client against the real sandbox over HTTP: cache, quota, errors, writes, the key on disk.

Quota is measured server-side: ``X-RateLimit-Remaining`` of the next real answer shows how many
requests the sandbox counted in between. Tests that spend quota or write use ``fresh_sandbox``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests

from quantscope._config import RetryPolicy
from quantscope._errors import (
    AuthenticationError,
    ChainNotAllowedError,
    InvalidParameterError,
    NotFoundError,
    OfflineCacheMissError,
    PlanNotAllowedError,
    QuotaWouldBeExceededError,
    RateLimitError,
    StaleDataWarning,
)
from quantscope._http.client import Client, OffsetPaging, PageNumberPaging
from quantscope._http.quota import Spend
from quantscope.sandbox.serve import SandboxServer

FAST = RetryPolicy(max_retries=1, backoff_base_s=0.001)


def make_client(server: SandboxServer, plan: str, cache_dir: Path, **kwargs: Any) -> Client:
    kwargs.setdefault("progress", False)
    kwargs.setdefault("retry", FAST)
    return Client(server.url, server.keys[plan], cache_dir=str(cache_dir), **kwargs)


def spend(server: SandboxServer, plan: str, n: int) -> None:
    """Spend ``n`` requests of ``plan``'s quota (unknown paths answer 404 and count)."""
    with requests.Session() as session:
        session.headers["X-API-Key"] = server.keys[plan]
        for _ in range(n):
            assert session.get(server.url + "/api/no-such-endpoint", timeout=30).status_code == 404


def next_midnight() -> datetime:
    today = datetime.now(UTC).date()
    return datetime(today.year, today.month, today.day, tzinfo=UTC) + timedelta(days=1)


def test_a_cache_hit_spends_no_quota(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    client = make_client(server, "basic", tmp_path)
    first = client.get("/api/eval-results", {"limit": 3})
    counted = client.quota
    assert (counted.limit, counted.remaining) == (100, 99)
    again = client.get("/api/eval-results", {"limit": 3})
    assert again.data == first.data
    assert again.provenance.from_cache
    assert again.provenance.requests == 0
    assert client.quota == counted  # no answer from the service in between
    client.get("/api/eval-results", {"limit": 4})
    assert client.quota.remaining == 98  # the sandbox counted exactly one request since
    info = client.cache.info()
    assert (info.entries, info.hits, info.misses) == (2, 1, 2)


def test_the_key_never_reaches_the_disk(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    key = server.keys["enterprise"]
    client = make_client(server, "enterprise", tmp_path)
    client.get_pages(
        "/api/eval-results", {"chain": "BASE"}, paging=OffsetPaging(page_size=1000), max_pages=3
    )
    client.get("/api/degen/config", {"quantId": 1})
    with pytest.raises(NotFoundError):
        client.get("/api/trades/{id}", {"id": 99_999_999})
    client.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files, "the cache wrote nothing"
    blob = b"".join(p.read_bytes() for p in files)
    assert b"evaluationResultType" in blob  # bodies are there...
    assert b"REDACTED" in blob  # ...and the stored request header was redacted
    assert key.encode() not in blob


def test_offline_hit_and_miss(fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path) -> None:
    server = fresh_sandbox()
    online = make_client(server, "growth", tmp_path)
    fetched = online.get("/api/eval-details", {"evaluationId": 1})
    before = online.quota.remaining
    offline = Client(server.url, server.keys["growth"], cache_dir=str(tmp_path), offline=True)
    hit = offline.get("/api/eval-details", {"evaluationId": 1})
    assert hit.data == fetched.data
    assert hit.provenance.from_cache
    with pytest.raises(OfflineCacheMissError) as info:
        offline.get("/api/eval-details", {"evaluationId": 2})
    assert info.value.endpoint == "/api/eval-details"
    assert info.value.params == {"evaluationId": "2"}
    assert "/api/eval-details with evaluationId=2" in str(info.value)
    online.get("/api/eval-details", {"evaluationId": 3})
    assert online.quota.remaining == before - 1  # offline calls reached no server


def test_stale_copy_with_one_warning_when_the_sandbox_is_down(
    fresh_sandbox: Callable[..., SandboxServer],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = fresh_sandbox()
    client = make_client(server, "enterprise", tmp_path)
    live = client.get("/api/refine-eval/dashboard", {"quantId": 1})
    client._session.cache.reset_expiration(timedelta(seconds=-1))
    server.stop()
    with caplog.at_level(logging.WARNING), pytest.warns(StaleDataWarning) as caught:
        stale = client.get("/api/refine-eval/dashboard", {"quantId": 1})
    assert len(caught) == 1
    assert "the service failed for /api/refine-eval/dashboard" in str(caught[0].message)
    assert stale.data == live.data
    assert stale.provenance.from_cache
    age = stale.provenance.fetched_at - live.provenance.fetched_at
    assert abs(age) < timedelta(seconds=1)  # the time of the original fetch, not of now
    assert not [r for r in caplog.records if r.name.startswith("requests_cache")]


def test_plans_do_not_share_cache_entries(sandbox: SandboxServer, tmp_path: Path) -> None:
    basic = make_client(sandbox, "basic", tmp_path)
    enterprise = make_client(sandbox, "enterprise", tmp_path)
    seen_by_basic = basic.get("/api/eval-results", {"limit": 1})
    seen_by_enterprise = enterprise.get("/api/eval-results", {"limit": 1})
    assert not seen_by_enterprise.provenance.from_cache
    assert seen_by_basic.data["total"] < seen_by_enterprise.data["total"]  # basic: SOLANA only
    assert basic.get("/api/eval-results", {"limit": 1}).provenance.from_cache


@pytest.mark.slow
def test_quota_stop_then_resume_from_the_cache(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    shift = {"days": 0}
    server = fresh_sandbox(clock=lambda: datetime.now(UTC) + timedelta(days=shift["days"]))
    client = make_client(server, "basic", tmp_path)
    total = client.get("/api/eval-results", {"limit": 1}).data["total"]
    spend(server, "basic", 80)  # 19 left
    paging = OffsetPaging(page_size=math.ceil(total / 40))
    assert paging.page_count(total) == 40
    with pytest.raises(QuotaWouldBeExceededError) as info:
        client.get_pages("/api/eval-results", paging=paging)
    stop = info.value
    # page 1 cost one (18 left); the other 39 pages do not fit: none is sent
    assert (stop.needed, stop.fetched, stop.remaining, stop.limit) == (39, 1, 18, 100)
    assert stop.reset == next_midnight()
    assert f"resets at {next_midnight():%Y-%m-%dT%H:%M:%SZ}" not in str(stop)  # own wording:
    assert f"after the reset at {next_midnight():%Y-%m-%dT%H:%M:%SZ}" in str(stop)
    assert "needed 39 requests" in str(stop)
    assert "only the other 21" in str(stop)
    assert len(stop.partial.pages) == 1
    assert len(stop.partial.missing) == 39
    assert client.get("/api/eval-results", {"limit": 1}).provenance.from_cache
    assert client.quota.remaining == 18  # nothing was sent after page 1

    fitted = client.get_pages(
        "/api/eval-results", paging=paging, spend=Spend(partial=True, confirm=True)
    )
    assert client.quota.remaining == 0  # the 18 that fitted, explicitly
    assert len(fitted.pages) == 19
    assert len(fitted.missing) == 21

    with pytest.raises(RateLimitError) as limited:  # the quota is spent: a 429, not retried
        client.get("/api/eval-results", {"limit": 2})
    assert (limited.value.reset, limited.value.limit) == (next_midnight(), 100)
    assert "resets at" in str(limited.value)
    assert server.keys["basic"] not in str(limited.value)

    shift["days"] = 1  # the sandbox's next day: a fresh quota
    tomorrow = make_client(server, "basic", tmp_path)  # a new session, the same cache
    resumed = tomorrow.get_pages("/api/eval-results", paging=paging)
    assert resumed.complete
    assert resumed.provenance.requests == 21
    assert len(resumed.items) == total
    assert len({item["id"] for item in resumed.items}) == total
    assert tomorrow.quota.remaining == 100 - 21


def test_error_classes_from_real_answers(sandbox: SandboxServer, tmp_path: Path) -> None:
    wrong = Client(sandbox.url, "not-a-key-of-this-world", cache_dir=str(tmp_path), retry=FAST)
    with pytest.raises(AuthenticationError) as auth:
        wrong.get("/api/eval-results", {"limit": 1})
    assert auth.value.code == "invalid_api_key"
    assert "not-a-key-of-this-world" not in str(auth.value)

    basic = make_client(sandbox, "basic", tmp_path)
    with pytest.raises(PlanNotAllowedError) as plan:
        basic.get("/api/eval-details", {"evaluationId": 1})
    assert "Your plan (basic) does not include /api/eval-details; Growth or higher does" in str(
        plan.value
    )
    with pytest.raises(ChainNotAllowedError) as chain:
        basic.get("/api/eval-results", {"chain": "BSC"})
    assert chain.value.param == "chain"
    assert "does not include chain BSC" in str(chain.value)
    with pytest.raises(NotFoundError) as missing:
        basic.get("/api/trades/{id}", {"id": 99_999_999})
    assert missing.value.param == "id"
    assert "No id=99999999" in str(missing.value)
    with pytest.raises(InvalidParameterError) as bad:
        basic.get("/api/eval-results", {"limit": "abc"})
    assert bad.value.param == "limit"
    assert "Fix the value of limit='abc'" in str(bad.value)
    for error in (auth, plan, chain, missing, bad):
        assert sandbox.keys["basic"] not in str(error.value)
        assert (
            error.value.status_code
            == {
                AuthenticationError: 401,
                PlanNotAllowedError: 403,
                ChainNotAllowedError: 403,
                NotFoundError: 404,
                InvalidParameterError: 422,
            }[type(error.value)]
        )


def _liquidity_entry(config: list[dict[str, Any]]) -> tuple[str, float]:
    crit = next(c for c in config[0]["categories"]["Market"] if c["rootKey"] == "liquidity_usd")
    scanning = crit["configTypes"]["SCANNING"]
    return scanning["configIdsByInterval"]["noTime"], scanning["thresholds"]["noTime"]


def test_a_put_invalidates_the_cached_playbook(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    client = make_client(server, "enterprise", tmp_path)
    before = client.get("/api/degen/config", {"quantId": 1})
    assert client.get("/api/degen/config", {"quantId": 1}).provenance.from_cache
    config_id, threshold = _liquidity_entry(before.data)
    change = {"configId": config_id, "field": "threshold", "newValue": threshold + 1000}
    written = client.put("/api/degen/config", {"quantId": 1, "newConfigs": [change]})
    assert written.data["success"] is True
    assert written.provenance.requests == 1
    after = client.get("/api/degen/config", {"quantId": 1})
    assert not after.provenance.from_cache
    assert _liquidity_entry(after.data) == (config_id, threshold + 1000)


def test_trade_pages_and_details_closed_ones_never_expire(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    client = make_client(sandbox, "enterprise", tmp_path)
    closed = client.get_pages(
        "/api/trades",
        {"quantId": 1, "filterStatus": "Closed", "tradingStatus": "all"},
        paging=PageNumberPaging(page_size=100),
        max_pages=2,
    )
    assert len(closed.items) == 200
    assert closed.provenance.pages == 2
    assert closed.total is not None
    assert closed.total > 200
    open_ = client.get_pages(
        "/api/trades", {"filterStatus": "Open"}, paging=PageNumberPaging(5), max_pages=1
    )
    details = client.get_many(
        "/api/trades/{id}", [{"id": closed.items[0]["id"]}, {"id": open_.items[0]["id"]}]
    )
    assert [r.data["trade"]["status"] for r in details.results if r] == ["Closed", "Open"]
    expiry = {
        r.request.url.rsplit("/", 1)[-1]: r.expires
        for r in client._session.cache.filter()
        if "/api/trades/" in r.request.url
    }
    assert expiry[closed.items[0]["id"]] is None  # stored for good
    open_expires = expiry[open_.items[0]["id"]]
    assert open_expires is not None
    assert timedelta(minutes=4) < open_expires - datetime.now(UTC) <= timedelta(minutes=5)
