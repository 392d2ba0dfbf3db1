"""Faults the sandbox cannot produce, against a tiny scripted HTTP server on loopback, or
answered in-process (``quantscope.testing``) where a scripted reply says it all.

Retries (503 always, Retry-After, 429 burst vs daily), dropped connections and timeouts,
writes that must not be resent, stale fallback, non-JSON bodies, and quota planning with an
exact remaining count. Every count is taken server-side.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _helpers import CUT, DROP, FAST, HANG, KEY, FakeService, Seen, fake_client, ok, script_client

from quantscope._config import RetryPolicy
from quantscope._errors import (
    APIConnectionError,
    APITimeoutError,
    InvalidResponseError,
    OfflineCacheMissError,
    QuotaWouldBeExceededError,
    RateLimitError,
    ServerError,
    StaleDataWarning,
)
from quantscope._http.client import Client, OffsetPaging, PageNumberPaging
from quantscope._http.quota import Spend
from quantscope.testing import Reply, Script


def trades_pages(total: int) -> Callable[[Seen], Any]:
    def handler(seen: Seen) -> Any:
        page, size = int(seen.query.get("page", 1)), int(seen.query.get("pageSize", 20))
        ids = range((page - 1) * size, min(page * size, total))
        return ok({"trades": [{"id": i} for i in ids], "pagination": {"total": total}})

    return handler


# --- retries ------------------------------------------------------------------------------


def test_503_is_retried_a_bounded_number_of_times(tmp_path: Path) -> None:
    script = Script(Reply(503, json={"error": {"code": "unavailable"}}))
    client = script_client(script, tmp_path)
    with pytest.raises(ServerError, match="after 4 attempts") as info:
        client.get("/api/trades/stats")
    assert script.count() == 4  # 1 + max_retries
    assert info.value.status_code == 503


def test_retry_after_is_honoured_and_a_long_one_is_not_waited_for(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    answers = iter([(503, {"Retry-After": "0.2"}, {}), ok()])
    service = serve(lambda s: next(answers))
    client = fake_client(service, tmp_path)
    started = time.monotonic()
    assert client.get("/api/trades/stats").data == {"ok": True}
    assert time.monotonic() - started >= 0.2
    assert service.count() == 2

    long_wait = serve(lambda s: (503, {"Retry-After": "3600"}, {}))
    with pytest.raises(ServerError):
        fake_client(long_wait, tmp_path / "2").get("/api/trades/stats")
    assert long_wait.count() == 1


def test_4xx_is_never_retried(tmp_path: Path) -> None:
    script = Script(Reply(404, json={"error": {"code": "not_found", "param": "id"}}))
    with pytest.raises(Exception, match="404"):
        script_client(script, tmp_path).get("/api/trades/{id}", {"id": 7})
    assert script.count() == 1


def test_a_burst_429_is_retried_once_a_daily_429_never(tmp_path: Path) -> None:
    limited = {"error": {"code": "rate_limited"}}
    burst = Script(Reply(429, json=limited, headers={"Retry-After": "0.05"}))
    with pytest.raises(RateLimitError):
        script_client(burst, tmp_path).get("/api/trades")
    assert burst.count() == 2

    daily = Script(Reply(429, json=limited, headers={"Retry-After": "36000"}))
    with pytest.raises(RateLimitError, match="resets at") as info:
        script_client(daily, tmp_path / "2").get("/api/trades")
    assert daily.count() == 1
    assert info.value.retry_after == 36000


def test_dropped_connections_are_retried_then_reported(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: DROP)
    with pytest.raises(APIConnectionError, match="could not be reached after 4 attempts"):
        fake_client(service, tmp_path).get("/api/trades")
    assert service.count() == 4


def test_a_body_cut_half_way_is_retried_then_reported_and_never_cached(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    # Bodies are read in one call (_cache.WholeBodyAdapter): urllib3's failure mid-body must
    # still become the client's connection error, not a raw urllib3 traceback.
    service = serve(lambda s: CUT)
    client = fake_client(service, tmp_path)
    with pytest.raises(APIConnectionError, match="could not be reached after 4 attempts"):
        client.get("/api/trades")
    assert service.count() == 4
    assert client.cache.info().entries == 0


def test_a_refused_connection_says_what_to_check(tmp_path: Path) -> None:
    client = Client("http://127.0.0.1:9", KEY, cache_dir=str(tmp_path), retry=FAST)
    with pytest.raises(APIConnectionError, match="check QUANTSCOPE_URL") as info:
        client.get("/api/trades")
    assert info.value.attempts == 4


def test_timeouts_raise_api_timeout_error(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    # timeout_s is the deadline of the whole call: an attempt that used it up leaves no time
    # for a retry (tests/toolkit/test_deadline.py has the drips).
    service = serve(lambda s: HANG)
    client = fake_client(
        service, tmp_path, timeout_s=0.1, retry=RetryPolicy(max_retries=1, backoff_base_s=0)
    )
    with pytest.raises(APITimeoutError, match=r"did not answer in time .*timeout_s=0\.1"):
        client.get("/api/trades")
    assert service.count() == 1


def test_writes_are_not_resent_after_the_request_left(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: DROP)
    with pytest.raises(APIConnectionError, match="may or may not have been applied"):
        fake_client(service, tmp_path).post("/api/refine-eval/analyze", {"quantId": 1})
    assert service.count() == 1

    failing = serve(lambda s: (503, {}, {}))
    with pytest.raises(ServerError):
        fake_client(failing, tmp_path / "2").put("/api/degen/config", {"quantId": 1})
    assert failing.count() == 1


def test_writes_are_resent_when_the_connection_was_refused(tmp_path: Path) -> None:
    client = Client("http://127.0.0.1:9", KEY, cache_dir=str(tmp_path), retry=FAST)
    with pytest.raises(APIConnectionError) as info:
        client.post("/api/refine-eval/analyze")
    assert info.value.attempts == 4


# --- the key, stale copies, offline, bodies -------------------------------------------------


def test_the_key_goes_only_in_the_x_api_key_header(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok())
    fake_client(service, tmp_path).get("/api/trades", {"quantId": 1})
    (seen,) = service.seen
    assert seen.headers["X-API-Key"] == KEY
    assert [name for name, value in seen.headers.items() if KEY in value] == ["X-API-Key"]
    assert KEY not in json.dumps(seen.query)


def test_stale_copy_is_used_with_one_warning_when_the_service_fails(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    healthy = {"up": True}
    service = serve(lambda s: ok({"v": 1}) if healthy["up"] else (503, {}, {}))
    client = fake_client(service, tmp_path)
    with pytest.raises(InvalidResponseError, match="expected 'trades' \\(a list\\)"):
        client.get_pages("/api/trades", paging=PageNumberPaging(10))  # a page without its list
    first = client.get("/api/eval-results", {"limit": 5})
    client._session.cache.reset_expiration(timedelta(seconds=-1))  # all expired now
    healthy["up"] = False
    with pytest.warns(StaleDataWarning) as caught:
        again = client.get("/api/eval-results", {"limit": 5})
    assert len(caught) == 1
    assert str(caught[0].message) == (
        "quantscope: the service failed for /api/eval-results; using an expired cached copy "
        "(see provenance fetched_at)"
    )
    assert again.data == first.data == {"v": 1}
    assert again.provenance.from_cache
    assert again.provenance.requests == 0


def test_offline_serves_cached_copies_and_names_what_is_missing(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"q": s.query}))
    fake_client(service, tmp_path).get("/api/trades/stats", {"quantId": 1})
    offline = Client(service.url, KEY, cache_dir=str(tmp_path), offline=True)
    assert offline.get("/api/trades/stats", {"quantId": 1}).data == {"q": {"quantId": "1"}}
    with pytest.raises(OfflineCacheMissError) as info:
        offline.get("/api/trades/stats", {"quantId": 2})
    assert str(info.value).startswith(
        "offline, and the cache has no copy of /api/trades/stats with quantId=2"
    )
    assert info.value.params == {"quantId": "2"}
    assert service.count() == 1
    with pytest.raises(Exception, match="needs it: connect without offline=True"):
        offline.put("/api/degen/config", {})


def test_a_2xx_body_that_is_not_json_is_reported(tmp_path: Path) -> None:
    script = Script(Reply(body=b"<html>login</html>", headers={"Content-Type": "text/html"}))
    with pytest.raises(InvalidResponseError, match="not JSON"):
        script_client(script, tmp_path).get("/api/trades")
    assert script.count() == 1


# --- pages and quota planning -------------------------------------------------------------


def test_pages_serve_the_cache_first_and_count_requests(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(trades_pages(95))
    client = fake_client(service, tmp_path)
    loaded = client.get_pages("/api/trades", {"quantId": 1}, paging=PageNumberPaging(10))
    assert [t["id"] for t in loaded.items] == list(range(95))
    assert (loaded.total, loaded.provenance.pages, loaded.provenance.requests) == (95, 10, 10)
    assert loaded.provenance.params == {"quantId": "1"}
    again = client.get_pages("/api/trades", {"quantId": 1}, paging=PageNumberPaging(10))
    assert again.items == loaded.items
    assert again.provenance.from_cache
    assert again.provenance.requests == 0
    assert service.count() == 10
    info = client.cache.info()
    assert (info.entries, info.hits, info.misses) == (10, 10, 10)


def test_offset_paging_and_max_pages(serve: Callable[..., FakeService], tmp_path: Path) -> None:
    def handler(seen: Seen) -> Any:
        off, lim = int(seen.query["offset"]), int(seen.query["limit"])
        return ok({"results": list(range(off, min(off + lim, 42))), "total": 42})

    service = serve(handler)
    client = fake_client(service, tmp_path)
    loaded = client.get_pages("/api/eval-results", paging=OffsetPaging(page_size=10))
    assert loaded.items == list(range(42))
    assert loaded.provenance.pages == 5
    capped = client.get_pages("/api/eval-results", paging=OffsetPaging(5), max_pages=2)
    assert capped.items == list(range(10))


def test_pages_without_a_total_stop_at_the_first_short_page(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    def handler(seen: Seen) -> Any:
        page = int(seen.query["page"])
        return ok({"trades": [page] * (10 if page < 3 else 4)})

    service = serve(handler)
    loaded = fake_client(service, tmp_path).get_pages("/api/trades", paging=PageNumberPaging(10))
    assert loaded.total is None
    assert len(loaded.items) == 24
    assert service.count() == 3


@pytest.mark.slow
def test_a_load_that_does_not_fit_sends_nothing_unless_partial_then_resumes(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(trades_pages(200), remaining=8, reset_at=int(time.time()) + 2)
    client = fake_client(service, tmp_path, quota_reserve=2)
    with pytest.raises(QuotaWouldBeExceededError) as info:
        client.get_pages("/api/trades", paging=PageNumberPaging(10))
    error = info.value
    # page 1 (7 left) showed 19 more pages needed; only 5 fit above the reserve of 2: the
    # load sends none of them by default
    assert (error.needed, error.fetched, error.remaining, error.reserve) == (19, 1, 7, 2)
    assert service.count() == 1
    assert "needed 19 requests for pages not in the cache" in str(error)
    assert "fetches the 5 that fit now" in str(error)
    assert "fetches only the other 14" in str(error)
    assert len(error.partial.pages) == 1
    assert error.partial.missing == tuple(range(1, 20))

    partial = client.get_pages(
        "/api/trades", paging=PageNumberPaging(10), spend=Spend(partial=True, confirm=True)
    )
    assert service.count() == 6  # page 1 from the cache, then the 5 that fit
    assert not partial.complete
    assert len(partial.pages) == 6
    assert partial.missing == tuple(range(6, 20))

    while time.time() < service.reset_at + 0.05:  # the quota resets
        time.sleep(0.05)
    service.remaining, service.reset_at = 100, time.time() + 86400
    resumed = client.get_pages("/api/trades", paging=PageNumberPaging(10))
    assert [t["id"] for t in resumed.items] == list(range(200))
    assert service.count() == 6 + 14  # page 1 cached too: only the 14 missing pages
    assert resumed.provenance.requests == 14


def test_a_batch_with_an_unknown_quota_learns_it_from_its_first_answer(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"id": s.path}), remaining=4)
    client = fake_client(service, tmp_path)
    with pytest.raises(QuotaWouldBeExceededError) as info:
        client.get_many("/api/trades/{id}", [{"id": i} for i in range(10)])
    # the first request told the quota (3 left): the other 9 do not fit, none is sent
    assert (info.value.needed, info.value.fetched, info.value.remaining) == (9, 1, 3)
    assert info.value.partial.missing == tuple(range(1, 10))
    assert service.count() == 1
    many = client.get_many(
        "/api/trades/{id}", [{"id": i} for i in range(10)], spend=Spend(partial=True, confirm=True)
    )
    assert many.missing == tuple(range(4, 10))
    assert [r.data for r in many.results[:4]] == [{"id": f"/api/trades/{i}"} for i in range(4)]
    assert service.count() == 4


def test_writes_invalidate_the_gets_they_change(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"n": len(service.seen)}))
    client = fake_client(service, tmp_path)
    client.get("/api/degen/config", {"quantId": 1})
    client.get("/api/refine-eval/dashboard")
    client.get("/api/trades/stats")
    client.put("/api/degen/config", {"quantId": 1, "newConfigs": []})
    assert client.get("/api/trades/stats").provenance.from_cache
    assert not client.get("/api/degen/config", {"quantId": 1}).provenance.from_cache
    assert not client.get("/api/refine-eval/dashboard").provenance.from_cache
    assert [s.method for s in service.seen] == ["GET", "GET", "GET", "PUT", "GET", "GET"]


def test_progress_bars_show_on_multi_request_loads_unless_disabled(
    serve: Callable[..., FakeService],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service = serve(trades_pages(50))
    fake_client(service, tmp_path / "a", progress=True).get_pages(
        "/api/trades", paging=PageNumberPaging(10), desc="trades of quant 1"
    )
    assert "trades of quant 1" in capsys.readouterr().err
    monkeypatch.setenv("QUANTSCOPE_PROGRESS", "0")
    quiet = Client(service.url, KEY, cache_dir=str(tmp_path / "b"), retry=FAST)
    assert quiet.settings.progress is False
    quiet.get_pages("/api/trades", paging=PageNumberPaging(10), desc="trades of quant 1")
    assert capsys.readouterr().err == ""


def test_clear_by_endpoint_and_cache_info_of_the_default_client(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    from quantscope._http.client import cache_info, set_default_client

    service = serve(lambda s: ok({"path": s.path}))
    client = fake_client(service, tmp_path)
    for trade_id in (1, 2, 3):
        client.get("/api/trades/{id}", {"id": trade_id})
    client.get("/api/trades/stats")
    client.get("/api/eval-results")
    assert client.cache.clear("/api/trades/{id}") == 4  # {id} is a glob: stats too
    assert client.cache.info().entries == 1
    set_default_client(client)
    try:
        info = cache_info()
        assert (info.entries, info.misses, info.hits) == (1, 5, 0)
        assert info.size_bytes > 0
        assert info.path == tmp_path / "http_cache.sqlite"
    finally:
        set_default_client(None)
    assert client.cache.clear() == 1
    assert client.cache.info().entries == 0
    assert KEY not in repr(client)
    assert KEY not in repr(client.settings)


def test_a_vary_on_the_key_header_does_not_disable_the_cache(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: (200, {"Vary": "Accept-Encoding, X-API-Key"}, {"ok": True}))
    client = fake_client(service, tmp_path)
    answers = [client.get("/api/trades/stats").provenance.from_cache for _ in range(3)]
    assert answers == [False, True, True]
    assert service.count() == 1


def test_a_429_in_the_middle_of_a_load_keeps_the_fetched_pages_for_the_resume(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    pages = trades_pages(50)
    answers = {"n": 0}

    def handler(seen: Seen) -> Any:
        answers["n"] += 1
        if answers["n"] == 4:  # another notebook spent the quota meanwhile
            return 429, {"Retry-After": "30000"}, {"error": {"code": "rate_limited"}}
        return pages(seen)

    service = serve(handler)
    client = fake_client(service, tmp_path)
    with pytest.raises(RateLimitError):
        client.get_pages("/api/trades", paging=PageNumberPaging(10))
    expires = {
        r.request.url.split("page=")[1][0]: r.expires for r in client._session.cache.filter()
    }
    assert sorted(expires) == ["1", "2", "3"]
    # page 1 keeps its list lifetime (the resume refetches it for a fresh total); the pages
    # after it are kept until a day after the reset
    assert expires["1"] < datetime.now(UTC) + timedelta(minutes=11)
    assert all(expires[p] > datetime.now(UTC) + timedelta(hours=20) for p in "23")
    resumed = client.get_pages("/api/trades", paging=PageNumberPaging(10))
    assert resumed.provenance.requests == 2
    assert len(resumed.items) == 50
