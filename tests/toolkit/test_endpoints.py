"""The endpoint registry (``_endpoints``): one declaration per route of the service, and the
tables derived from it say what the hand-written ones said.

The wire parameters and cache keys below were computed by the code before the registry (main
at c044274): a cache file filled by that code is hit by this one only while they hold.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import pytest
from requests import PreparedRequest

import quantscope.loaders as L
from quantscope import _endpoints, _ids
from quantscope._http import cache as _cache
from quantscope._http.cache import NEVER_EXPIRE, make_key_fn
from quantscope._typed import schemas as _schemas
from quantscope._wire import wire_params
from quantscope.catalog.answer import ANSWERS
from quantscope.catalog.read import Catalog
from quantscope.cli.fetch import RESOURCES
from quantscope.loaders import evaluations, market, optimization, playbook, signals, trades
from quantscope.loaders._base import Recipe
from quantscope.loaders._planned import LoadPlan
from quantscope.sandbox import routers

E = _endpoints
BASE = "http://127.0.0.1:8123/base"
SCOPE = "0123456789abcdef0123456789abcdef"


class _Stop(Exception):
    """Raised by the stand-in ``load``: the recipe and its parameters are all a test needs."""


class _NoCache:
    class cache:
        @staticmethod
        def invalidate(*args: Any) -> None:
            return None


# One call per loader built on ``load``, with every filter it takes where it has several.
CALLS: dict[str, Callable[[], Any]] = {
    "trades": lambda: L.load_trades(),
    "trades-filtered": lambda: L.load_trades(
        "7",
        trading_status="all",
        trading_mode="live",
        position_closed=True,
        tracking_enabled=False,
        status="Closed",
        chain="BASE",
        search="pepe",
        start=date(2026, 1, 2),
        end="2026-02-01",
        sort_by="openTime",
        sort_order="asc",
    ),
    "evaluations-filtered": lambda: L.load_evaluations(
        3,
        evaluation_type=["TOKEN_BUY", "TOKEN_SELL"],
        passed=False,
        chain="SOLANA",
        search="s",
        unique_tokens_only=True,
        only_scored=False,
        start=datetime(2026, 1, 1, 12),
        end="2026-03-01",
    ),
    "eval-timeseries": lambda: L.load_eval_timeseries(
        2, start="2026-01-01", end="2026-02-01", all_quants=True
    ),
    "eval-details": lambda: L.load_eval_details([5, 6]),
    "eval-history": lambda: L.load_eval_history(9, exclude_types=["TOKEN_STATUS"]),
    "ohlcv": lambda: L.load_ohlcv("12", "4h", limit=10),
    "signals": lambda: L.load_signals(1, chain="BSC", search="q", limit=3),
    "playbook": lambda: L.load_playbook(4, config_group_id="g", client=_NoCache()),  # type: ignore[arg-type]
    "recommendations": lambda: L.load_recommendations(2, client=_NoCache()),  # type: ignore[arg-type]
}

# What main's loaders sent (wire text, in order) and the cache key of that request.
EXPECTED: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    "eval-details": (
        "/api/eval-details",
        [("evaluationId", "5")],
        "4d129a63f715f795f300d8242d904e28",
    ),
    "eval-history": (
        "/api/eval-history",
        [("evaluationId", "9"), ("excludeTypes", "TOKEN_STATUS")],
        "83cb58002a35167f7e411c0421db70d2",
    ),
    "eval-timeseries": (
        "/api/eval-timeseries",
        [
            ("quantId", "2"),
            ("returnAllQuants", "true"),
            ("timeFrom", "2026-01-01"),
            ("timeTo", "2026-02-01"),
        ],
        "ffec07c790f5886bff3b6a0423599bdc",
    ),
    "evaluations-filtered": (
        "/api/eval-results",
        [
            ("chain", "SOLANA"),
            ("evaluationResultType", "TOKEN_BUY,TOKEN_SELL"),
            ("onlyScored", "false"),
            ("passed", "false"),
            ("quantId", "3"),
            ("search", "s"),
            ("timeFrom", "2026-01-01T12:00:00.000Z"),
            ("timeTo", "2026-03-01"),
            ("uniqueTokensOnly", "true"),
        ],
        "e4ad91b69daf8a87c853dffa808fafee",
    ),
    "ohlcv": (
        "/api/eval-ohlcv",
        [("limit", "10"), ("timeframe", "4h"), ("tokenId", "12")],
        "43bd5df2daaed313d3047377ddabc1a0",
    ),
    "playbook": (
        "/api/degen/config",
        [("configGroupId", "g"), ("quantId", "4")],
        "3e8624d4262db72267b064ace406a8f1",
    ),
    "recommendations": (
        "/api/refine-eval/dashboard",
        [("quantId", "2")],
        "489175c08de70aaeb60932bf5e6ba620",
    ),
    "signals": (
        "/api/alpha-signals",
        [("chain", "BSC"), ("limit", "3"), ("quantId", "1"), ("search", "q")],
        "efb983050c86bf896a87c040a1fbc292",
    ),
    "trades": (
        "/api/trades",
        [("tradingStatus", "executed")],
        "4c5043bf83eca768f4ff044f604adf1f",
    ),
    "trades-filtered": (
        "/api/trades",
        [
            ("chain", "BASE"),
            ("endDate", "2026-02-01"),
            ("filterStatus", "Closed"),
            ("isTrackingEnabled", "false"),
            ("positionClosed", "true"),
            ("quantId", "7"),
            ("search", "pepe"),
            ("sortBy", "openTime"),
            ("sortOrder", "asc"),
            ("startDate", "2026-01-02"),
            ("tradingMode", "live"),
            ("tradingStatus", "all"),
        ],
        "1675670a77b9730d84c1eaa1f218cdd0",
    ),
}


def _captured(monkeypatch: pytest.MonkeyPatch, call: Callable[[], Any]) -> tuple[str, Any]:
    seen: list[tuple[str, Any]] = []

    def stand_in(plan: LoadPlan[Any]) -> Any:
        many = plan.many
        seen.append((plan.recipe.endpoint, plan.params if many is None else many[0]))
        raise _Stop

    monkeypatch.setattr(LoadPlan, "run", stand_in)
    with pytest.raises(_Stop):
        call()
    return seen[0]


def _key(path: str, wire: dict[str, str]) -> str:
    prepared = PreparedRequest()
    prepared.prepare_method("GET")
    prepared.prepare_url(BASE + path, wire)
    prepared.prepare_headers(None)
    prepared.prepare_body(None, None)
    return str(make_key_fn(SCOPE, BASE)(prepared))


@pytest.mark.parametrize("name", sorted(CALLS))
def test_loaders_send_what_they_sent_before_the_registry(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, params = _captured(monkeypatch, CALLS[name])
    wire = dict(wire_params(params))
    assert (path, list(wire.items()), _key(path, wire)) == EXPECTED[name]


def test_every_route_of_the_service_has_exactly_one_declaration() -> None:
    """The sandbox implements the spec's routes; the registry declares each once."""
    served = sorted(
        (method, route.path)
        for router in routers.ROUTERS
        for route in router.routes
        for method in getattr(route, "methods", ())
        if route.path.startswith(E.API_PREFIX)
    )
    declared = sorted((e.method, e.path) for e in E.ROUTES)
    assert declared == served
    assert len({e.key for e in E.ROUTES}) == len(E.ROUTES)


def test_every_route_is_used_by_a_loader_or_says_why_not() -> None:
    modules = (trades, evaluations, market, signals, playbook, optimization)
    paths = {e.path for e in E.ROUTES}
    used = {v for m in modules for v in vars(m).values() if isinstance(v, str) and v in paths}
    for endpoint in E.ROUTES:
        assert (endpoint.path in used) != bool(endpoint.unused), endpoint.key


def test_each_declaration_names_things_that_exist() -> None:
    for e in E.ROUTES:
        for p in e.params:
            assert p.kind in E.KINDS, (e.key, p)
            assert p.where in ("query", "path", "body"), (e.key, p)
            assert p.check is None or callable(getattr(_ids, p.check)), (e.key, p)
            assert p.where != "path" or "{" + p.wire + "}" in e.path, (e.key, p)
        assert e.spec is None or getattr(_schemas, e.spec).name, e.key
        assert e.catalog is None or callable(getattr(Catalog, e.catalog)), e.key
        assert e.refine is None or e.refine in _cache._REFINERS, e.key
        assert all(E.by_key(k).method == "GET" for k in e.invalidates), e.key
        assert (e.lifetime is not None) == (e.method == "GET"), e.key


def _keywords(function: Callable[..., Any], *besides: str) -> list[str]:
    skip = {"self", "client", "page_size", "max_pages", "confirm", "max_requests", "partial"}
    return [
        name
        for name, p in inspect.signature(function).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name not in skip | set(besides)
    ]


@pytest.mark.parametrize(
    ("endpoint", "loader", "resource"),
    [(E.TRADES, L.load_trades, "trades"), (E.EVALUATIONS, L.load_evaluations, "evaluations")],
)
def test_one_list_of_filters_for_loader_catalog_cli_and_answers(
    endpoint: E.Endpoint, loader: Callable[..., Any], resource: str
) -> None:
    """The filters are declared once: the loader, ``Catalog``'s method and ``quantscope fetch``
    all take exactly the registry's list, in order."""
    names = [p.name for p in endpoint.params]
    assert endpoint.catalog is not None
    assert _keywords(loader) == names
    assert _keywords(getattr(Catalog, endpoint.catalog)) == names
    assert [o.kwarg for o in RESOURCES[resource].options] == names


# What a catalog method may take beyond its route's parameters, and the keywords it requires
# where the loader does not (a catalog snapshot is one quant's: it cannot answer "every quant").
CATALOG_EXTRAS = {
    "signals": ("as_of",),
    "playbook": ("as_of",),
    "recommendations": ("applied", "as_of"),
}
CATALOG_REQUIRES = {"signals": {"quant_id"}, "recommendations": {"quant_id"}}
CATALOGED = [e for e in E.ROUTES if e.catalog is not None]


def _defaults(function: Callable[..., Any], names: list[str]) -> dict[str, Any]:
    parameters = inspect.signature(function).parameters
    return {name: parameters[name].default for name in names}


@pytest.mark.parametrize("endpoint", CATALOGED, ids=[e.key for e in CATALOGED])
def test_every_catalog_method_takes_the_registrys_keywords_with_the_loaders_defaults(
    endpoint: E.Endpoint,
) -> None:
    """``Catalog``'s methods copy their loader's keyword list (a signature a reader and mypy
    can see): the registry holds the copy equal, names, order and defaults, for every route a
    catalog answers, not only trades and evaluations."""
    assert endpoint.catalog is not None
    method = getattr(Catalog, endpoint.catalog)
    loader = getattr(L, f"load_{endpoint.catalog}")
    names = [p.name for p in endpoint.params if p.where in ("query", "path")]
    extras = list(CATALOG_EXTRAS.get(endpoint.catalog, ()))
    assert _keywords(method, "_ignored") == names + extras
    required = CATALOG_REQUIRES.get(endpoint.catalog, set())
    want = {
        name: inspect.Parameter.empty if name in required else default
        for name, default in _defaults(loader, names).items()
    }
    assert _defaults(method, names) == want


def test_the_catalog_answers_the_registry_s_routes() -> None:
    assert ("/api/trades", "trades") in ANSWERS
    assert ("/api/eval-details", "eval_details") not in ANSWERS  # one request per id


def test_the_cache_rules_keep_their_order_and_lifetimes() -> None:
    patterns = [rule.pattern for rule in _cache.CACHE_RULES]
    assert patterns.index("/api/trades/stats") < patterns.index("/api/trades/*")
    assert patterns.index("/api/trades/*") < patterns.index("/api/trades")
    assert patterns[-1] == "*"
    assert E.NEVER == NEVER_EXPIRE
    assert _cache.INVALIDATIONS["POST /api/refine-eval/recs/*/apply"] == (
        "/api/refine-eval/dashboard",
        "/api/degen/config",
    )


def test_a_query_checks_ids_with_the_declared_validator() -> None:
    with pytest.raises(TypeError, match="quant_id must be an id"):
        E.query(E.TRADES, {"quant_id": "seven"})


class _Writes:
    """A stand-in client for the writes: records what would be sent, sends nothing."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any, Any]] = []

    def post(self, path: str, json: Any = None, params: Any = None) -> Any:
        self.sent.append((path, json, params))
        raise _Stop

    put = post


# The recipe loaders with one answer and the writes: what main's code built (path template,
# parameters in order with None kept, JSON body), before they took it from the registry.
ONE_ANSWER: dict[str, tuple[Callable[[_Writes], Any], tuple[str, Any, Any]]] = {
    "trade": (lambda c: L.load_trade("3"), ("/api/trades/{id}", [("id", 3)], None)),
    "trade-stats": (
        lambda c: L.load_trade_stats(),
        ("/api/trades/stats", [("quantId", None)], None),
    ),
    "trade-stats-quant": (
        lambda c: L.load_trade_stats(4),
        ("/api/trades/stats", [("quantId", 4)], None),
    ),
    "signal": (
        lambda c: L.load_signal("5", 6),
        ("/api/alpha-signals/{tokenId}", [("tokenId", 5), ("quantId", 6)], None),
    ),
    "signal-any-quant": (
        lambda c: L.load_signal(5),
        ("/api/alpha-signals/{tokenId}", [("tokenId", 5), ("quantId", None)], None),
    ),
    "dashboard": (
        lambda c: L.load_dashboard(2, client=c),  # type: ignore[arg-type]
        ("/api/refine-eval/dashboard", [("quantId", 2)], None),
    ),
    "eval-count": (
        lambda c: L.load_eval_count(1, start="2026-01-01", end="2026-01-02"),
        (
            "/api/eval-count",
            [
                ("timeFrom", "2026-01-01"),
                ("timeTo", "2026-01-02"),
                ("quantId", 1),
                ("returnAllQuants", None),
            ],
            None,
        ),
    ),
    "analyze": (
        lambda c: L.run_analysis(client=c),  # type: ignore[arg-type]
        ("/api/refine-eval/analyze", {"apply": "false"}, None),
    ),
    "analyze-all": (
        lambda c: L.run_analysis("3", apply=True, min_completed_trades=5, client=c),  # type: ignore[arg-type]
        (
            "/api/refine-eval/analyze",
            {"apply": "true", "quantId": 3, "minCompletedTrades": 5},
            None,
        ),
    ),
    "apply": (
        lambda c: L.apply_recommendation(8, client=c),  # type: ignore[arg-type]
        ("/api/refine-eval/recs/{id}/apply", None, {"id": 8}),
    ),
    "playbook-write": (
        lambda c: L.update_playbook(4, [{"configId": 9, "newValue": 1.5}], force=True, client=c),  # type: ignore[arg-type]
        (
            "/api/degen/config",
            {
                "quantId": 4,
                "newConfigs": [{"configId": "9", "field": "threshold", "newValue": 1.5}],
            },
            None,
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(ONE_ANSWER))
def test_one_answer_loaders_and_writes_send_what_they_sent(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Their parameters and bodies now come from ``query``/``body``: the same dicts, in the
    same order (the body's JSON text and the cache key follow from them)."""
    seen: list[tuple[str, Any, Any]] = []

    def stand_in(plan: LoadPlan[Any]) -> Any:
        assert plan.params is not None
        seen.append((plan.recipe.endpoint, list(plan.params.items()), None))
        raise _Stop

    monkeypatch.setattr(LoadPlan, "run", stand_in)
    monkeypatch.setattr(playbook, "playbook_lock", lambda client, quant: contextlib.nullcontext())
    call, expected = ONE_ANSWER[name]
    client = _Writes()
    with pytest.raises(_Stop):
        call(client)
    assert (seen or client.sent) == [expected]
    if isinstance(expected[1], dict):  # a write's JSON text, byte for byte
        assert json.dumps(client.sent[0][1]) == json.dumps(expected[1])


def _every_recipe() -> dict[str, Any]:
    """Each GET loader's recipe, of a plan made with literal ids (making one sends nothing)."""
    window = {"start": "2026-07-01", "end": "2026-07-31"}
    recipes: dict[str, Any] = {}
    for name in sorted(n for n in L.__all__ if n.startswith("load_")):
        loader = getattr(L, name)
        parameters = inspect.signature(loader).parameters.values()
        required = [
            p.name
            for p in parameters
            if p.default is inspect.Parameter.empty and p.kind is not p.VAR_POSITIONAL
        ]
        args = [[1] if r.endswith("_ids") else 1 for r in required]
        given = {k: v for k, v in window.items() if k in inspect.signature(loader).parameters}
        recipes[name] = loader.plan(*args, **given).recipe
    return recipes


def test_every_recipe_reads_the_items_key_its_route_declares() -> None:
    """A recipe says only whether its frame's rows are the answer's items (``rows``); the
    key is its route's (``_routes``), declared once."""
    assert "items" not in inspect.signature(Recipe).parameters
    recipes = _every_recipe()
    assert len(recipes) == 15
    for name, recipe in recipes.items():
        route = E.route_at(recipe.endpoint)
        assert recipe.items == (route.items if recipe.rows else ""), name
    rows = sorted(n for n, r in recipes.items() if r.rows)
    assert rows == [
        "load_eval_details",
        "load_eval_history",
        "load_eval_timeseries",
        "load_evaluations",
        "load_ohlcv",
        "load_signals",
        "load_trades",
    ]
    assert recipes["load_trades"].items == "trades"
