"""The endpoint registry: one frozen declaration per route of the service, and nothing else
knows a path.

Each ``Endpoint`` says its method and path template, its parameters (Python keyword, wire name,
the ``_ids`` validator that checks it, how the command line takes it), its paging and items
key, the frame spec that types its answer (a ``_schemas`` name, by reference), how long a
cached answer lives and which cached routes a write changes, the ``Catalog`` method that
answers it offline, and the plan capability that opens it. The tables that used to repeat
this knowledge are derived from here: ``_cache.CACHE_RULES`` and ``INVALIDATIONS``, the
loaders' wire dicts and write bodies (``query``, ``body``), ``catalog.answer``'s parsing of a
recipe's wire parameters (``from_wire``), the CLI's ``fetch`` options and their ``--help``,
and ``_plans.CAPABILITIES``.

Adding an endpoint is one declaration here plus its frame spec in ``_schemas``; a test holds
``ROUTES`` equal to the sandbox's routes (the faithful implementation of the spec).

This module imports only ``_ids`` (a leaf): ``_plans`` and ``_errors`` sit below the frame
modules, so frame specs are named, not imported (``spec="TRADES"`` is ``_schemas.TRADES``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quantscope import _ids

__all__ = [
    "ANALYZE",
    "API_PREFIX",
    "APPLY",
    "CONFIG",
    "CONFIG_WRITE",
    "COUNT",
    "DASHBOARD",
    "DETAILS",
    "EVALUATIONS",
    "HISTORY",
    "KINDS",
    "NEVER",
    "OHLCV",
    "ROUTES",
    "SIGNAL",
    "SIGNALS",
    "STATS",
    "TIMESERIES",
    "TRADE",
    "TRADES",
    "Endpoint",
    "Paging",
    "Param",
    "body",
    "by_key",
    "from_wire",
    "query",
]

API_PREFIX = "/api/"
MINUTE = 60
NEVER = -1  # requests-cache's NEVER_EXPIRE: an answer that never changes

#: How the command line and the catalog read a parameter's text: ``id`` an integer id, ``int``
#: a count, ``bool`` true/false, ``switch`` true or absent (a flag without a value), ``time``
#: ISO-8601 text (kept as text), ``text`` as given.
KINDS = ("id", "int", "bool", "switch", "time", "text")


@dataclass(frozen=True)
class Param:
    """One parameter of a route.

    ``name`` is the loader's keyword, ``wire`` the service's name, ``check`` the name of the
    ``_ids`` validator a loader applies (``optional_id``, ``one_id``), ``where`` ``query``,
    ``path`` or ``body``. ``flag``/``help``/``nargs`` are the ``quantscope fetch`` option.
    """

    name: str
    wire: str
    kind: str = "text"
    check: str | None = None
    where: str = "query"
    flag: str | None = None
    help: str = ""
    nargs: str | None = None


@dataclass(frozen=True)
class Paging:
    """How a list route pages: ``page`` (page number and size) or ``offset`` (offset and
    limit, under the route's own names), and the key of the items in each answer.
    """

    style: str
    first: str
    size: str
    items: str


@dataclass(frozen=True)
class Endpoint:
    """One route of the service (see the module docstring).

    ``lifetime`` (seconds, ``NEVER``) and ``why`` are its cache rule, ``refine`` the name of a
    ``_cache`` refiner that may change the lifetime once the answer is known; a write's
    ``invalidates`` names the GET routes (by ``key``) whose cached answers it may change.
    ``unused`` says why the toolkit deliberately never calls a route.
    """

    key: str
    method: str
    path: str
    params: tuple[Param, ...] = ()
    items: str | None = None
    paging: Paging | None = None
    spec: str | None = None
    lifetime: int | None = None
    why: str = ""
    refine: str | None = None
    invalidates: tuple[str, ...] = ()
    catalog: str | None = None
    capability: str | None = None
    unused: str = ""

    @property
    def glob(self) -> str:
        """The path as a glob: each ``{name}`` segment becomes ``*``."""
        return "/".join("*" if part.startswith("{") else part for part in self.path.split("/"))

    @property
    def prefix(self) -> str:
        """The path up to its first ``{name}`` (the whole path when it has none)."""
        return self.path.split("{", 1)[0]

    def paged(self) -> Paging:
        """The route's paging; ValueError for a route that answers in one piece."""
        if self.paging is None:
            raise ValueError(f"{self.path} does not page")
        return self.paging

    def param(self, name: str) -> Param:
        """The parameter whose Python keyword is ``name``."""
        return next(p for p in self.params if p.name == name)


# --- shared parameters (one spelling of each filter and of its --help) ----------------------


def _quant() -> Param:
    return Param(
        "quant_id",
        "quantId",
        "id",
        "optional_id",
        flag="--quant",
        help="the quant's id (default: every quant)",
    )


def _start(wire: str) -> Param:
    return Param(
        "start",
        wire,
        "time",
        flag="--start",
        help="from this time (ISO 8601, UTC; e.g. 2026-09-01)",
    )


def _end(wire: str) -> Param:
    return Param("end", wire, "time", flag="--end", help="up to this time (ISO 8601, UTC)")


CHAIN = Param("chain", "chain", flag="--chain", help="one chain (SOLANA, BASE, ...)")
SEARCH = Param("search", "search", flag="--search", help="token name, symbol or address contains")
LIMIT = Param(
    "limit", "limit", "int", flag="--limit", help="items at most (the service caps the list)"
)
ALL_QUANTS = Param(
    "all_quants",
    "returnAllQuants",
    "switch",
    flag="--all-quants",
    help="every quant's, not the default quant's",
)


# --- the routes, in the spec's order ------------------------------------------------------

STATS = Endpoint(
    "trade_stats",
    "GET",
    "/api/trades/stats",
    (_quant(),),
    items="metrics",
    spec="TRADE_STATS",
    lifetime=5 * MINUTE,
    why="statistics move with every trade",
)
TRADES = Endpoint(
    "trades",
    "GET",
    "/api/trades",
    (
        _quant(),
        Param(
            "trading_status",
            "tradingStatus",
            flag="--trading-status",
            help="model validation: executed (default), all, REJECT, RECOMMEND, DELAY, ...",
        ),
        Param(
            "trading_mode",
            "tradingMode",
            flag="--trading-mode",
            help="live or paper (default: both)",
        ),
        Param(
            "position_closed",
            "positionClosed",
            "bool",
            flag="--position-closed",
            help="true: closed positions only",
        ),
        Param(
            "tracking_enabled",
            "isTrackingEnabled",
            "bool",
            flag="--tracking-enabled",
            help="whether still tracked",
        ),
        Param("status", "filterStatus", flag="--status", help="Open or Closed"),
        CHAIN,
        SEARCH,
        _start("startDate"),
        _end("endDate"),
        Param(
            "sort_by", "sortBy", flag="--sort-by", help="the service's sort field (e.g. openTime)"
        ),
        Param("sort_order", "sortOrder", flag="--sort-order", help="asc or desc"),
    ),
    items="trades",
    paging=Paging("page", "page", "pageSize", "trades"),
    spec="TRADES",
    lifetime=10 * MINUTE,
    why="trade lists grow; pages of one load stay coherent",
    catalog="trades",
)
TRADE = Endpoint(
    "trade",
    "GET",
    "/api/trades/{id}",
    (
        Param(
            "trade_id", "id", "id", "one_id", where="path", flag="trade_id", help="the trade's id"
        ),
    ),
    items="trade",
    spec="TRADE_DETAIL",
    lifetime=5 * MINUTE,
    why="an open trade changes; a closed one never does",
    refine="closed_trade",
)
EVALUATIONS = Endpoint(
    "evaluations",
    "GET",
    "/api/eval-results",
    (
        _quant(),
        Param(
            "evaluation_type",
            "evaluationResultType",
            flag="--type",
            help="TOKEN_STATUS, TOKEN_BUY or TOKEN_SELL (several: --type A B)",
            nargs="+",
        ),
        Param("passed", "passed", "bool", flag="--passed", help="true or false"),
        CHAIN,
        SEARCH,
        Param(
            "unique_tokens_only",
            "uniqueTokensOnly",
            "bool",
            flag="--unique-tokens-only",
            help="one per token",
        ),
        Param(
            "only_scored",
            "onlyScored",
            "bool",
            flag="--only-scored",
            help="only evaluations with a score",
        ),
        _start("timeFrom"),
        _end("timeTo"),
    ),
    items="results",
    paging=Paging("offset", "offset", "limit", "results"),
    spec="EVALUATIONS",
    lifetime=10 * MINUTE,
    why="new evaluations arrive",
    catalog="evaluations",
)
_WINDOW = (_start("timeFrom"), _end("timeTo"), _quant(), ALL_QUANTS)
TIMESERIES = Endpoint(
    "eval_timeseries",
    "GET",
    "/api/eval-timeseries",
    _WINDOW,
    items="timeseries",
    spec="EVAL_TIMESERIES",
    lifetime=10 * MINUTE,
    why="counts of a past window are final",
    refine="closed_window",
)
COUNT = Endpoint(
    "eval_count",
    "GET",
    "/api/eval-count",
    _WINDOW,
    spec="EVAL_COUNT",
    lifetime=10 * MINUTE,
    why="counts of a past window are final",
    refine="closed_window",
)
DETAILS = Endpoint(
    "eval_details",
    "GET",
    "/api/eval-details",
    (
        Param(
            "evaluation_ids",
            "evaluationId",
            "id",
            "many_ids",
            flag="evaluation_ids",
            help="evaluation ids",
            nargs="+",
        ),
    ),
    items="evaluationResultDetails",
    spec="EVAL_DETAILS",
    lifetime=NEVER,
    why="an evaluation is immutable once made",
    catalog="eval_details",
    capability="eval_details",
)
HISTORY = Endpoint(
    "eval_history",
    "GET",
    "/api/eval-history",
    (
        Param(
            "evaluation_id",
            "evaluationId",
            "id",
            "one_id",
            flag="evaluation_id",
            help="an evaluation id",
        ),
        Param(
            "exclude_types",
            "excludeTypes",
            flag="--exclude-type",
            help="evaluation types to leave out",
            nargs="+",
        ),
    ),
    items="results",
    paging=Paging("offset", "skip", "take", "results"),
    spec="EVAL_HISTORY",
    lifetime=10 * MINUTE,
    why="new evaluations of the token arrive",
    capability="eval_details",
)
OHLCV = Endpoint(
    "ohlcv",
    "GET",
    "/api/eval-ohlcv",
    (
        Param("token_id", "tokenId", "id", "one_id", flag="token_id", help="the token's id"),
        Param("timeframe", "timeframe", flag="--timeframe", help="candle width (default 1h)"),
        Param("limit", "limit", "int", flag="--limit", help="candles at most (default 5000)"),
    ),
    items="ohlcv",
    spec="OHLCV",
    lifetime=5 * MINUTE,
    why="valid until the next candle closes",
    refine="next_candle",
    catalog="ohlcv",
)
SIGNALS = Endpoint(
    "signals",
    "GET",
    "/api/alpha-signals",
    (_quant(), CHAIN, SEARCH, LIMIT),
    items="signals",
    spec="SIGNALS",
    lifetime=1 * MINUTE,
    why="realtime signals",
    catalog="signals",
    capability="alpha_signals",
)
SIGNAL = Endpoint(
    "signal",
    "GET",
    "/api/alpha-signals/{tokenId}",
    (
        Param(
            "token_id",
            "tokenId",
            "id",
            "one_id",
            where="path",
            flag="token_id",
            help="the token's id",
        ),
        _quant(),
    ),
    spec="SIGNALS",
    lifetime=1 * MINUTE,
    why="realtime signals",
    capability="alpha_signals",
)
CONFIG = Endpoint(
    "playbook",
    "GET",
    "/api/degen/config",
    (
        Param("quant_id", "quantId", "id", "one_id", flag="quant_id", help="the quant's id"),
        Param(
            "config_group_id",
            "configGroupId",
            flag="--config-group",
            help="a config group id (default: the active)",
        ),
    ),
    spec="PLAYBOOK",
    lifetime=10 * MINUTE,
    why="changed by writes (invalidated) or elsewhere",
    catalog="playbook",
    capability="read_playbook",
)
CONFIG_WRITE = Endpoint(
    "playbook_write",
    "PUT",
    "/api/degen/config",
    (
        Param("quant_id", "quantId", "id", "one_id", where="body"),
        Param("changes", "newConfigs", where="body"),
    ),
    items="updatedConfigs",
    spec="PLAYBOOK_UPDATE",
    invalidates=("playbook", "dashboard"),
    capability="write_playbook",
)
DASHBOARD = Endpoint(
    "dashboard",
    "GET",
    "/api/refine-eval/dashboard",
    (_quant(),),
    items="data",
    spec="RECOMMENDATIONS",
    lifetime=5 * MINUTE,
    why="changed by analyses and applies",
    catalog="recommendations",
    capability="optimizer",
)
ANALYZE = Endpoint(
    "analyze",
    "POST",
    "/api/refine-eval/analyze",
    (  # in the order the body has always been sent
        Param("apply", "apply", "bool", where="body"),
        Param("quant_id", "quantId", "id", "one_id", where="body"),
        Param("min_completed_trades", "minCompletedTrades", "int", where="body"),
    ),
    items="data",
    invalidates=("dashboard", "playbook"),
    capability="optimizer",
)
APPLY = Endpoint(
    "apply",
    "POST",
    "/api/refine-eval/recs/{id}/apply",
    (Param("recommendation_id", "id", "id", "one_id", where="path"),),
    items="data",
    invalidates=("dashboard", "playbook"),
    capability="optimizer",
)

#: Every route of the service, in the spec's order.
ROUTES: tuple[Endpoint, ...] = (
    STATS,
    TRADES,
    TRADE,
    EVALUATIONS,
    TIMESERIES,
    COUNT,
    DETAILS,
    HISTORY,
    OHLCV,
    SIGNALS,
    SIGNAL,
    CONFIG,
    CONFIG_WRITE,
    DASHBOARD,
    ANALYZE,
    APPLY,
)

_BY_KEY = {e.key: e for e in ROUTES}


def by_key(key: str) -> Endpoint:
    """The route called ``key`` (``trades``, ``playbook``, ...)."""
    return _BY_KEY[key]


def _checker(param: Param) -> Callable[[Any, str], Any] | None:
    if param.check is None:
        return None
    check: Callable[[Any, str], Any] = getattr(_ids, param.check)
    return check


def _wire(
    endpoint: Endpoint, values: Mapping[str, Any], where: tuple[str, ...], keep_none: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param in endpoint.params:
        if param.where not in where or param.name not in values:
            continue
        value = values[param.name]
        if value is None and not keep_none:
            continue
        check = _checker(param)
        out[param.wire] = check(value, param.name) if check is not None else value
    return out


def query(endpoint: Endpoint, values: Mapping[str, Any]) -> dict[str, Any]:
    """The request parameters of ``endpoint`` from a loader's keywords (``values``, e.g. its
    ``locals()``): the wire name of each query or path parameter present in ``values`` (a
    path parameter fills its ``{name}`` in the template), in declaration order, its value
    checked by the parameter's validator. None stays (the client leaves it out).
    """
    return _wire(endpoint, values, ("query", "path"), keep_none=True)


def body(endpoint: Endpoint, values: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body of a write from the caller's keywords: the wire name of each body
    parameter given in ``values`` and not None, in declaration order, checked as ``query``.
    """
    return _wire(endpoint, values, ("body",), keep_none=False)


def _decoded(kind: str, text: str | None) -> Any:
    if text is None:
        return None
    if kind in ("bool", "switch"):
        return text == "true"
    if kind in ("id", "int"):
        return int(text)
    return text


def from_wire(endpoint: Endpoint, wire: Mapping[str, str]) -> dict[str, Any]:
    """A recipe's wire parameters back as the loader's keywords (None where absent): what the
    catalog answers a query from.
    """
    return {
        p.name: _decoded(p.kind, wire.get(p.wire)) for p in endpoint.params if p.where == "query"
    }
