"""GET /api/eval-ohlcv over HTTP: candle invariants, aggregation, limits, plans and bad input.

The longer timeframes are checked against the hourly candles: each 4h, 1d or 1w candle must be
the aggregation (first open, max high, min low, last close, summed volume) of the 1h candles
of its UTC-aligned span. The module runs its own server, so its quota is its own.
"""

from __future__ import annotations

import itertools
import math
from datetime import datetime
from typing import Any

import pytest
import requests
from _helpers import ApiSession, assert_error

from quantscope.sandbox.catalog import HISTORY_HOURS, WORLD_NOW_MS
from quantscope.sandbox.models import Ohlcv, validate_response
from quantscope.sandbox.serve import SandboxServer

HOUR_MS = 3_600_000
STEP_HOURS = {"1h": 1, "2h": 2, "4h": 4, "6h": 6, "12h": 12, "1d": 24, "1w": 168}
MONDAY_MS = 4 * 24 * HOUR_MS  # 1970-01-05, the first Monday after the epoch


class MarketApi(ApiSession):
    """A keyed session on one server, for GET /api/eval-ohlcv."""

    def ohlcv(self, **params: Any) -> requests.Response:
        return self.query("/api/eval-ohlcv", **params)

    def candles(self, **params: Any) -> list[dict[str, Any]]:
        body = self.ok("/api/eval-ohlcv", **params)
        validate_response(Ohlcv, body)
        return list(body["ohlcv"])


@pytest.fixture(scope="module")
def ent(own_sandbox: SandboxServer) -> MarketApi:
    return MarketApi(own_sandbox.url, own_sandbox.keys["enterprise"])


@pytest.mark.parametrize("token_id", [1, 2, 3, 47, 90])
def test_hourly_candles_are_well_formed_and_end_before_world_now(
    ent: MarketApi, token_id: int
) -> None:
    candles = ent.candles(tokenId=token_id, limit=5000)
    assert len(candles) == HISTORY_HOURS  # the whole history: 70 days of hours
    stamps = [c["timestamp"] for c in candles]
    assert all(isinstance(t, int) for t in stamps)
    assert stamps[-1] == WORLD_NOW_MS - HOUR_MS  # the newest candle before WORLD_NOW
    assert all(b - a == HOUR_MS for a, b in itertools.pairwise(stamps))
    for c in candles:
        assert c["low"] <= min(c["open"], c["close"]) <= max(c["open"], c["close"]) <= c["high"]
        assert c["low"] > 0
        assert c["volume"] >= 0


def test_default_and_limit_take_the_newest_candles_oldest_first(ent: MarketApi) -> None:
    everything = ent.candles(tokenId=5, limit=5000)
    assert ent.candles(tokenId=5) == everything[-500:]  # default: 1h, 500
    assert ent.candles(tokenId=5, limit=1) == everything[-1:]
    assert ent.candles(tokenId=5, limit=37, timeframe="1h") == everything[-37:]


def aggregate(hourly: list[dict[str, Any]], hours: int) -> list[dict[str, Any]]:
    """The test's own aggregation of hourly candles into UTC-aligned buckets."""
    span = hours * HOUR_MS
    offset = MONDAY_MS if hours == 168 else 0
    buckets: dict[int, list[dict[str, Any]]] = {}
    for c in hourly:
        buckets.setdefault((c["timestamp"] - offset) // span * span + offset, []).append(c)
    return [
        {
            "timestamp": start,
            "open": group[0]["open"],
            "high": max(c["high"] for c in group),
            "low": min(c["low"] for c in group),
            "close": group[-1]["close"],
            "volume": math.fsum(c["volume"] for c in group),
        }
        for start, group in buckets.items()
    ]


@pytest.mark.parametrize("timeframe", ["2h", "4h", "6h", "12h", "1d", "1w"])
def test_longer_timeframes_aggregate_the_hourly_candles(ent: MarketApi, timeframe: str) -> None:
    hourly = ent.candles(tokenId=8, limit=5000)
    candles = ent.candles(tokenId=8, timeframe=timeframe, limit=5000)
    expected = aggregate(hourly, STEP_HOURS[timeframe])
    assert [c["timestamp"] for c in candles] == [e["timestamp"] for e in expected]
    for got, want in zip(candles, expected, strict=True):
        for field in ("open", "high", "low", "close"):
            assert got[field] == want[field], (timeframe, got["timestamp"], field)
        assert got["volume"] == pytest.approx(want["volume"], rel=1e-12)
    if timeframe == "1w":  # the history starts and ends on a Thursday: partial first/last week
        assert len(candles) == 11
        assert all((c["timestamp"] - MONDAY_MS) % (168 * HOUR_MS) == 0 for c in candles)
    else:
        assert len(candles) == HISTORY_HOURS // STEP_HOURS[timeframe]
    # limit takes the newest of them
    assert ent.candles(tokenId=8, timeframe=timeframe, limit=3) == candles[-3:]


def test_timeframe_is_case_insensitive_and_responses_are_deterministic(ent: MarketApi) -> None:
    assert ent.candles(tokenId=9, timeframe="1D") == ent.candles(tokenId=9, timeframe="1d")
    first = ent.ohlcv(tokenId=9, timeframe="4h", limit=100)
    assert first.content == ent.ohlcv(tokenId=9, timeframe="4h", limit=100).content


def test_candles_agree_with_evaluation_detection_prices(ent: MarketApi) -> None:
    body = ent.ok("/api/eval-results", evaluationResultType="TOKEN_STATUS", limit=20, offset=3000)
    by_token: dict[int, dict[int, float]] = {}
    for row in body["results"]:
        token = row["tokenId"]
        if token not in by_token:
            by_token[token] = {
                c["timestamp"]: c["open"] for c in ent.candles(tokenId=token, limit=5000)
            }
        created = _ms(row["createdAt"])
        hour_start = created - created % HOUR_MS
        assert by_token[token][hour_start] == row["token"]["detectionPrice"]


def _ms(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000)


BAD_INPUT: list[tuple[dict[str, Any], int, str, str | None]] = [
    ({}, 422, "invalid_parameter", "tokenId"),
    ({"tokenId": "abc"}, 422, "invalid_parameter", "tokenId"),
    ({"tokenId": "0"}, 422, "invalid_parameter", "tokenId"),
    ({"tokenId": "1.0"}, 422, "invalid_parameter", "tokenId"),
    ({"tokenId": str(2**64)}, 422, "invalid_parameter", "tokenId"),
    ({"tokenId": "100000"}, 404, "not_found", "tokenId"),
    ({"tokenId": "1", "timeframe": "3h"}, 422, "invalid_parameter", "timeframe"),
    ({"tokenId": "1", "timeframe": "1m"}, 422, "invalid_parameter", "timeframe"),
    ({"tokenId": "1", "timeframe": ""}, 422, "invalid_parameter", "timeframe"),
    ({"tokenId": "1", "limit": "0"}, 422, "invalid_parameter", "limit"),
    ({"tokenId": "1", "limit": "5001"}, 422, "invalid_parameter", "limit"),
    ({"tokenId": "1", "limit": "many"}, 422, "invalid_parameter", "limit"),
]


@pytest.mark.parametrize(("params", "status", "code", "param"), BAD_INPUT)
def test_bad_input_is_refused_with_the_contract_body(
    ent: MarketApi, params: dict[str, Any], status: int, code: str, param: str | None
) -> None:
    assert_error(ent.ohlcv(**params), status, code, param)


def test_plans_see_their_chains_only(own_sandbox: SandboxServer) -> None:
    basic = MarketApi(own_sandbox.url, own_sandbox.keys["basic"])
    growth = MarketApi(own_sandbox.url, own_sandbox.keys["growth"])
    # token ids cycle through SOLANA, BASE, BSC
    assert len(basic.candles(tokenId=1, limit=10)) == 10
    assert_error(basic.ohlcv(tokenId=2), 403, "chain_not_allowed", None)
    assert len(growth.candles(tokenId=2, limit=10)) == 10
    assert_error(growth.ohlcv(tokenId=3), 403, "chain_not_allowed", None)
    no_key = requests.get(own_sandbox.url + "/api/eval-ohlcv", params={"tokenId": 1}, timeout=60)
    assert_error(no_key, 401, "missing_api_key", None)


def test_openapi_documents_the_endpoint(own_sandbox: SandboxServer) -> None:
    schema = requests.get(own_sandbox.url + "/openapi.json", timeout=60).json()
    operation = schema["paths"]["/api/eval-ohlcv"]["get"]
    ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/Ohlcv"}
    params = {p["name"]: p["schema"] for p in operation["parameters"]}
    assert params["timeframe"]["enum"] == list(STEP_HOURS)
    assert (params["limit"]["minimum"], params["limit"]["maximum"]) == (1, 5000)
    assert params["limit"]["default"] == 500
