"""The five single-object GET loaders (one trade, trade statistics, an evaluation count, one
signal, the dashboard) run the one recipe every loader runs (``loaders._base``): a warm repeat
is the frame cache's (no request, no stored answer looked up or decoded), ``qsc.estimate``
prices each without sending anything, and a client connected to a catalog refuses them in one
line (the catalog keeps none of them) instead of going to a service.

Against the shared sandbox over HTTP; the catalog is a one-request sync of quant 1's July.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _helpers.http import ApiSession
from _helpers.quota import quota_left

import quantscope as qs
import quantscope.loaders as L
from quantscope._http.cachestore import BodyFileCache
from quantscope._http.client import Client
from quantscope._http.framecache import FrameCache
from quantscope.loaders import _base
from quantscope.sandbox.serve import SandboxServer

QUANT = 1
WINDOW = {"start": "2026-07-01", "end": "2026-07-31T23:59:59"}


@dataclass(frozen=True)
class Ids:
    trade: int
    token: int  # a token with an alpha signal of QUANT


@pytest.fixture(scope="module")
def ids(sandbox: SandboxServer) -> Ids:
    with ApiSession(sandbox.url, sandbox.keys["enterprise"]) as s:
        trade = s.ok("/api/trades", quantId=QUANT, limit=1)["trades"][0]["id"]
        token = s.ok("/api/alpha-signals", quantId=QUANT, limit=1)["signals"][0]["tokenId"]
    return Ids(int(trade), int(token))


Load = Callable[[Ids, Client | None], Any]
#: A loader and its arguments: what a test calls, and what ``qs.estimate`` prices (it takes a
#: loader, whose plan it reads without running the load).
Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]

CALLS: dict[str, Callable[[Ids], Call]] = {
    "trade": lambda i: (L.load_trade, (i.trade,), {}),
    "trade_stats": lambda i: (L.load_trade_stats, (QUANT,), {}),
    "eval_count": lambda i: (L.load_eval_count, (QUANT,), WINDOW),
    "signal": lambda i: (L.load_signal, (i.token, QUANT), {}),
    "dashboard": lambda i: (L.load_dashboard, (QUANT,), {}),
}


def _load(name: str) -> Load:
    def load(i: Ids, c: Client | None) -> Any:
        loader, args, kwargs = CALLS[name](i)
        return loader(*args, **kwargs, client=c)

    return load


LOADS: dict[str, Load] = {name: _load(name) for name in CALLS}


def estimate_of(name: str, i: Ids, c: Client | None) -> qs.Estimate:
    loader, args, kwargs = CALLS[name](i)
    return qs.estimate(loader, *args, **kwargs, client=c)


ENDPOINTS = {
    "trade": "/api/trades/{id}",
    "trade_stats": "/api/trades/stats",
    "eval_count": "/api/eval-count",
    "signal": "/api/alpha-signals/{tokenId}",
    "dashboard": "/api/refine-eval/dashboard",
}

# What each loader's answer is, read by hand from the service: (path, query) of ``ids``.
WIRE: dict[str, Callable[[Ids], tuple[str, dict[str, Any]]]] = {
    "trade": lambda i: (f"/api/trades/{i.trade}", {}),
    "trade_stats": lambda i: ("/api/trades/stats", {"quantId": QUANT}),
    "eval_count": lambda i: (
        "/api/eval-count",
        {"quantId": QUANT, "timeFrom": "2026-07-01T00:00:00Z", "timeTo": "2026-07-31T23:59:59Z"},
    ),
    "signal": lambda i: (f"/api/alpha-signals/{i.token}", {"quantId": QUANT}),
    "dashboard": lambda i: ("/api/refine-eval/dashboard", {"quantId": QUANT}),
}


def parts(result: Any) -> list[pd.DataFrame | pd.Series]:
    """A loader's result as a list (a NamedTuple of frames, or one Series)."""
    return list(result) if isinstance(result, tuple) else [result]


def same(got: Any, want: Any) -> None:
    for g, w in zip(parts(got), parts(want), strict=True):
        if isinstance(w, pd.Series):
            pd.testing.assert_series_equal(g, w)
        else:
            pd.testing.assert_frame_equal(g, w)


def assert_as_served(name: str, got: Any, body: Any) -> None:
    """The values of ``got`` are the service's ``body`` (as the loader's columns say)."""
    if name == "trade":
        trade, txs = got
        raw = body["trade"]
        assert trade["trade_id"].tolist() == [int(raw["id"])]
        assert trade["pnl_usd"].tolist() == [pytest.approx(raw["pnl_usd_raw"])]
        assert txs["transaction_id"].tolist() == [int(t["id"]) for t in raw["transactions"]]
        assert set(txs["trade_id"]) <= {int(raw["id"])}
    elif name == "trade_stats":
        assert got["total_trades"] == body["metrics"]["totalTrades"]
        assert got["total_volume_usd"] == pytest.approx(body["metrics"]["totalVolume"])
    elif name == "eval_count":
        assert (got["total"], got["passed"], got["failed"]) == (
            body["total"],
            body["passed"],
            body["failed"],
        )
    elif name == "signal":
        signal, criteria = got
        assert signal["token_id"].tolist() == [int(body["tokenId"])]
        assert len(criteria) == len(body.get("evaluationDetails") or [])
        assert set(criteria["evaluation_id"]) <= {int(body["evaluationId"])}
    else:
        data = body["data"]
        assert got.performance["total_trades"] == data["overallPerformance"]["totalTrades"]
        assert len(got.recent) == len(data["recentRecommendations"])
        assert len(got.applied) == len(data["appliedRecommendations"])
        assert len(got.weekly) == len(data["historicalTrends"]["weekly"])


@dataclass
class Counts:
    lookups: int = 0  # stored answers read from the HTTP cache (by the client or its session)
    frame_hits: int = 0  # frames the frame cache served


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    seen = Counts()
    lookup, get = BodyFileCache.get_response, FrameCache.get

    def counting_lookup(self: BodyFileCache, *args: Any, **kwargs: Any) -> Any:
        seen.lookups += 1
        return lookup(self, *args, **kwargs)

    def counting_get(self: FrameCache, *args: Any, **kwargs: Any) -> Any:
        hit = get(self, *args, **kwargs)
        seen.frame_hits += hit is not None
        return hit

    monkeypatch.setattr(BodyFileCache, "get_response", counting_lookup)
    monkeypatch.setattr(FrameCache, "get", counting_get)
    return seen


def requests_of(result: Any) -> set[int]:
    return {p.attrs["quantscope"]["requests"] for p in parts(result)}


pytestmark = pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")


@pytest.mark.parametrize("name", LOADS)
def test_a_warm_repeat_is_the_frame_cache_s(
    name: str, ids: Ids, client: Client, sandbox: SandboxServer, counts: Counts
) -> None:
    path, query = WIRE[name](ids)
    with ApiSession(sandbox.url, sandbox.keys["enterprise"]) as s:
        body = s.ok(path, **query)
    cold = LOADS[name](ids, client)
    assert requests_of(cold) == {1}
    assert_as_served(name, cold, body)
    left = quota_left(sandbox, "enterprise")
    counts.lookups = counts.frame_hits = 0
    warm = LOADS[name](ids, client)
    assert quota_left(sandbox, "enterprise") == left
    assert counts.lookups == 0  # no stored answer read, none decoded
    assert counts.frame_hits == len(parts(warm))
    same(warm, cold)
    assert requests_of(warm) == {0}
    assert {p.attrs["quantscope"]["from_cache"] for p in parts(warm)} == {True}


@pytest.mark.parametrize("name", LOADS)
def test_estimate_prices_without_sending(
    name: str, ids: Ids, client: Client, sandbox: SandboxServer
) -> None:
    left = quota_left(sandbox, "enterprise")
    cold = estimate_of(name, ids, client)
    assert quota_left(sandbox, "enterprise") == left
    assert (cold.requests, cold.cached, cold.exact) == (1, 0, True)
    LOADS[name](ids, client)
    left = quota_left(sandbox, "enterprise")
    warm = estimate_of(name, ids, client)
    assert quota_left(sandbox, "enterprise") == left
    assert (warm.requests, warm.cached) == (0, 1)


@pytest.fixture(scope="module")
def catalog(module_client: Client, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("recipe-catalog") / "cat"
    qs.sync(path, quant_id=QUANT, resources=["trades"], **WINDOW, client=module_client)
    return path


@pytest.fixture
def on_catalog(catalog: Path) -> Iterator[Client]:
    try:
        yield qs.connect(catalog=catalog)
    finally:
        qs.set_default_client(None)


@pytest.mark.parametrize("name", LOADS)
def test_a_catalog_says_in_one_line_that_it_lacks_them(
    name: str, ids: Ids, on_catalog: Client, sandbox: SandboxServer
) -> None:
    left = quota_left(sandbox, "enterprise")
    with pytest.raises(qs.ConfigurationError, match="is not kept in a catalog") as caught:
        LOADS[name](ids, None)
    message = str(caught.value)
    assert "\n" not in message
    assert "qsc.connect() (without catalog=)" in message
    assert message.startswith(f"{ENDPOINTS[name]} (")
    with pytest.raises(qs.ConfigurationError, match="is not kept in a catalog"):
        estimate_of(name, ids, None)
    assert quota_left(sandbox, "enterprise") == left


def test_a_catalog_prices_what_it_answers_at_nothing(on_catalog: Client) -> None:
    priced = qs.estimate(qs.load_trades, QUANT, **WINDOW)
    assert (priced.requests, priced.cached, priced.exact) == (0, 0, True)
    assert len(qs.load_trades(QUANT, **WINDOW)) == 107  # July's trades, from the catalog


def test_a_catalog_answers_the_plan_s_python_values_with_no_wire_round_trip(
    on_catalog: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the catalog's query went through wire text")

    monkeypatch.setattr(_base, "wire_params", refuse)
    assert len(qs.load_trades(QUANT, **WINDOW)) == 107
    assert len(qs.load_trades(QUANT, start=date(2026, 7, 1), end="2026-07-31T23:59:59")) == 107


@pytest.mark.parametrize("name", ["trade_stats", "eval_count"])
def test_a_plan_s_chains_are_noted_cold_and_warm_at_the_caller_s_line(
    name: str, ids: Ids, sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    c = client_for(sandbox, "basic")
    for served in ("service", "frame cache"):
        with pytest.warns(
            qs.IncompleteDataWarning, match="the basic plan covers 1 chain"
        ) as caught:
            got = LOADS[name](ids, c)
        assert [Path(w.filename).name for w in caught] == [Path(__file__).name], served
        assert got.attrs["quantscope"]["plan_chains"]["chains_allowed"] == 1
    assert got.attrs["quantscope"]["requests"] == 0


def test_a_catalog_reads_position_closed_as_the_service_does(on_catalog: Client) -> None:
    closed = qs.load_trades(QUANT, position_closed=True, **WINDOW)
    still_open = qs.load_trades(QUANT, position_closed=False, **WINDOW)
    assert len(closed) + len(still_open) == 107
    for spelled, want in (("TRUE", closed), ("false", still_open)):
        got = qs.load_trades(QUANT, position_closed=spelled, **WINDOW)
        assert got["trade_id"].tolist() == want["trade_id"].tolist(), spelled
    assert len(qs.load_trades(QUANT, position_closed="All", **WINDOW)) == 107
