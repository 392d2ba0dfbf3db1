"""Cache policy without a server: lifetimes, invalidation, key scoping, parameter text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from requests import Request
from requests_cache.policy.expiration import _url_match

from quantscope._http.cache import (
    CACHE_RULES,
    NEVER_EXPIRE,
    endpoint_matches,
    invalidated_by,
    key_scope,
    lifetime_for,
    make_key_fn,
    rule_for,
    urls_expire_after,
)
from quantscope._http.client import (
    _split_path,
    parse_reset,
    quota_from_headers,
    wire_params,
)
from quantscope._wire import _path_params

KEY_A = "key-basic-aaaaaaaaaaaaaaaa"
KEY_B = "key-enterprise-bbbbbbbbbbbb"
NOW = datetime(2026, 11, 21, 12, tzinfo=UTC)

# Every GET path of the spec, with the lifetime its rule must give before the body is seen.
SPEC_PATHS = {
    "/api/trades/stats": 300,
    "/api/trades": 600,
    "/api/trades/123": 300,
    "/api/eval-results": 600,
    "/api/eval-timeseries": 600,
    "/api/eval-count": 600,
    "/api/eval-details": NEVER_EXPIRE,
    "/api/eval-history": 600,
    "/api/eval-ohlcv": 300,
    "/api/alpha-signals": 60,
    "/api/alpha-signals/42": 60,
    "/api/degen/config": 600,
    "/api/refine-eval/dashboard": 300,
}


@pytest.mark.parametrize(("path", "seconds"), sorted(SPEC_PATHS.items()))
def test_each_spec_path_has_its_lifetime(path: str, seconds: int) -> None:
    assert lifetime_for(path, {}, now=NOW) == seconds


@pytest.mark.parametrize("path", sorted(SPEC_PATHS))
def test_requests_cache_url_patterns_agree_with_rule_for(path: str) -> None:
    """requests-cache applies the lifetime when it stores; it must pick the same rule."""
    patterns = urls_expire_after("http://127.0.0.1:8123/base")
    url = f"http://127.0.0.1:8123/base{path}?a=1"
    matched = next((life for pat, life in patterns.items() if _url_match(url, pat)), 300)
    assert matched == rule_for(path).expire_after


def test_the_registry_ends_with_a_catch_all() -> None:
    assert CACHE_RULES[-1].pattern == "*"
    assert rule_for("/api/something-new").pattern == "*"


def test_closed_trades_never_expire_open_ones_do() -> None:
    closed = {"trade": {"id": "1", "status": "Closed"}}
    open_ = {"trade": {"id": "2", "status": "Open"}}
    assert lifetime_for("/api/trades/1", {}, closed, NOW) == NEVER_EXPIRE
    assert lifetime_for("/api/trades/2", {}, open_, NOW) == 300
    assert lifetime_for("/api/trades/3", {}, {"unexpected": []}, NOW) == 300


def test_counts_of_a_past_window_never_expire() -> None:
    past = {"timeFrom": "2026-07-23T00:00:00Z", "timeTo": "2026-10-01T00:00:00.000Z"}
    recent = {"timeFrom": "2026-11-20", "timeTo": "2026-11-21T11:30:00Z"}
    assert lifetime_for("/api/eval-count", past, now=NOW) == NEVER_EXPIRE
    assert lifetime_for("/api/eval-timeseries", past, now=NOW) == NEVER_EXPIRE
    assert lifetime_for("/api/eval-count", recent, now=NOW) == 600
    assert lifetime_for("/api/eval-count", {"timeTo": "garbage"}, now=NOW) == 600


def test_candles_live_until_the_next_window_closes() -> None:
    last = int((NOW - timedelta(minutes=30)).timestamp() * 1000)
    body = {"ohlcv": [{"timestamp": last - 3_600_000}, {"timestamp": last}]}
    until = lifetime_for("/api/eval-ohlcv", {"timeframe": "1h"}, body, NOW)
    assert until == NOW + timedelta(minutes=90)
    daily = lifetime_for("/api/eval-ohlcv", {"timeframe": "1d"}, body, NOW)
    assert daily == NOW - timedelta(minutes=30) + timedelta(days=2)
    frozen = {"ohlcv": [{"timestamp": int(datetime(2026, 10, 1, tzinfo=UTC).timestamp() * 1000)}]}
    assert lifetime_for("/api/eval-ohlcv", {}, frozen, NOW) == 300
    assert lifetime_for("/api/eval-ohlcv", {}, {"ohlcv": []}, NOW) == 300


@pytest.mark.parametrize(
    ("url", "pattern", "expected"),
    [
        ("http://h:1/api/trades?page=2", "/api/trades", True),
        ("http://h:1/api/trades/5", "/api/trades", False),
        ("http://h:1/api/trades/5", "/api/trades/{id}", True),
        ("http://h:1/api/trades/5", "/api/trades*", True),
        ("http://h:1/v1/api/degen/config?quantId=1", "/api/degen/config", True),
        ("http://h:1/api/degen/config", "degen/config", True),
        ("http://h:1/api/refine-eval/dashboard", "/api/refine-eval/*", True),
        ("http://h:1/api/eval-details", "/api/eval-detail", False),
    ],
)
def test_endpoint_globs(url: str, pattern: str, expected: bool) -> None:
    assert endpoint_matches(url, pattern) is expected


def test_writes_name_what_they_invalidate() -> None:
    assert "/api/degen/config" in invalidated_by("PUT", "/api/degen/config")
    assert "/api/refine-eval/dashboard" in invalidated_by("PUT", "/api/degen/config")
    assert "/api/degen/config" in invalidated_by("POST", "/api/refine-eval/recs/17/apply")
    assert "/api/refine-eval/dashboard" in invalidated_by("post", "/api/refine-eval/analyze")
    assert invalidated_by("POST", "/api/unknown/write") == ("/api/unknown/write",)


def _key(fn: object, url: str, key: str) -> str:
    request = Request("GET", url, headers={"X-API-Key": key}).prepare()
    return fn(request=request, ignored_parameters=["X-API-Key"])  # type: ignore[operator]


def test_cache_keys_are_scoped_per_api_key_and_service_not_per_port() -> None:
    scope_a = key_scope("embedded-sandbox:seed=7:scale=1", KEY_A)
    scope_b = key_scope("embedded-sandbox:seed=7:scale=1", KEY_B)
    a1 = make_key_fn(scope_a, "http://127.0.0.1:5001")
    a2 = make_key_fn(scope_a, "http://127.0.0.1:6002")
    b1 = make_key_fn(scope_b, "http://127.0.0.1:5001")
    path = "/api/trades?quantId=1&page=2"
    k_a1 = _key(a1, "http://127.0.0.1:5001" + path, KEY_A)
    assert k_a1 == _key(a2, "http://127.0.0.1:6002" + path, KEY_A)  # new port, same entries
    assert k_a1 != _key(b1, "http://127.0.0.1:5001" + path, KEY_B)  # another key: separate
    assert k_a1 == _key(a1, "http://127.0.0.1:5001/api/trades?page=2&quantId=1", KEY_A)
    assert k_a1 != _key(a1, "http://127.0.0.1:5001/api/trades?page=3&quantId=1", KEY_A)
    other_service = make_key_fn(key_scope("https://api.example", KEY_A), "https://api.example")
    assert k_a1 != _key(other_service, "https://api.example" + path, KEY_A)


def test_the_key_is_not_recoverable_from_scope_or_cache_key() -> None:
    scope = key_scope("https://api.example", KEY_A)
    assert KEY_A not in scope
    key = _key(make_key_fn(scope, "https://api.example"), "https://api.example/api/x", KEY_A)
    assert len(key) == 32
    assert KEY_A not in key


def test_wire_params_text() -> None:
    when = datetime(2026, 9, 1, 12, 30, tzinfo=UTC)
    assert wire_params(
        {
            "b": True,
            "a": 3,
            "none": None,
            "t": when,
            "types": ["TOKEN_BUY", "TOKEN_SELL"],
            "naive": datetime(2026, 9, 1),
        }
    ) == {
        "a": "3",
        "b": "true",
        "naive": "2026-09-01T00:00:00.000Z",
        "t": "2026-09-01T12:30:00.000Z",
        "types": "TOKEN_BUY,TOKEN_SELL",
    }


def test_path_parameters_fill_the_template() -> None:
    assert _split_path("/api/trades/{id}", {"id": "5", "x": "1"}) == ("/api/trades/5", {"x": "1"})
    assert _split_path("/api/a/{id}", {"id": "x/y"}) == ("/api/a/x%2Fy", {})
    with pytest.raises(ValueError, match="path parameter 'id'"):
        _split_path("/api/trades/{id}", {})
    assert _path_params("/api/trades/{id}", "/api/trades/5") == {"id": "5"}
    assert _path_params("/api/a/{id}/b", "/api/a/x%2Fy/b") == {"id": "x/y"}
    assert _path_params("/api/trades", "/api/trades") == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1795305600", datetime(2026, 11, 22, tzinfo=UTC)),
        ("1795305600000", datetime(2026, 11, 22, tzinfo=UTC)),
        ("1795305600.0", datetime(2026, 11, 22, tzinfo=UTC)),
        ("2026-11-22T00:00:00Z", datetime(2026, 11, 22, tzinfo=UTC)),
        ("2026-11-22T01:00:00+01:00", datetime(2026, 11, 22, tzinfo=UTC)),
        ("2026-11-22T00:00:00", datetime(2026, 11, 22, tzinfo=UTC)),
        ("Sun, 22 Nov 2026 00:00:00 GMT", datetime(2026, 11, 22, tzinfo=UTC)),
        ("3600", NOW + timedelta(hours=1)),
        ("soon", None),
        ("", None),
        (None, None),
        ("-5", None),
    ],
)
def test_reset_header_in_any_unit(text: str | None, expected: datetime | None) -> None:
    assert parse_reset(text, NOW) == expected


def test_quota_from_headers() -> None:
    headers = {
        "X-RateLimit-Limit": "100",
        "X-RateLimit-Remaining": "37",
        "X-RateLimit-Reset": "1795305600",
    }
    quota = quota_from_headers(headers, NOW)
    assert quota is not None
    assert (quota.limit, quota.remaining, quota.reset, quota.updated_at) == (
        100,
        37,
        datetime(2026, 11, 22, tzinfo=UTC),
        NOW,
    )
    assert quota.plan == "basic"
    assert repr(quota).startswith("Quota(37 of 100 requests left, resets 2026-11-22T00:00:00Z")
    assert quota_from_headers({"Content-Type": "application/json"}, NOW) is None
