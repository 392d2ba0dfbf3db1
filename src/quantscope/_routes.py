"""The routes of the service as data: one frozen declaration per route, and nothing else
knows a path.

Each ``Endpoint`` says its method and path template, its parameters (Python keyword, wire name,
the ``_ids`` validator that checks it, the values the spec allows, how the command line takes
it), its paging and items key, the frame spec that types its answer (a ``_typed.schemas`` name, by
reference), how long a cached answer lives and which cached routes a write changes, the
``Catalog`` method that answers it offline, and the plan capability that opens it. The tables
that used to repeat this knowledge are derived from here: ``_http.cache.CACHE_RULES`` and
``INVALIDATIONS``, the loaders' wire dicts and write bodies (``_endpoints.query``/``body``),
``catalog.answer``'s keywords of a plan's parameters (``ANSWERS``), the CLI's ``fetch``
options, their ``--help`` and its pre-flight of enumerated values, the loaders' paging, and
``_plans.CAPABILITIES``.

Adding an endpoint is one declaration here plus its frame spec in ``_typed.schemas``; a test holds
``ROUTES`` equal to the sandbox's routes (the faithful implementation of the spec).

This module imports nothing of quantscope: ``_plans`` derives the plans' routes from it, and
``_errors`` reads ``_plans``, so the encoding that refuses a value with an ``_errors`` class
lives one layer up, in ``_endpoints`` (which re-exports everything here). Frame specs and
validators are named, not imported (``spec="TRADES"`` is ``_typed.schemas.TRADES``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ANALYZE",
    "API_PREFIX",
    "APPLY",
    "CHAIN_NAMES",
    "CONFIG",
    "CONFIG_WRITE",
    "COUNT",
    "DASHBOARD",
    "DETAILS",
    "EVALUATIONS",
    "EVALUATION_TYPES",
    "HISTORY",
    "KINDS",
    "NEVER",
    "OHLCV",
    "ROUTES",
    "SIGNAL",
    "SIGNALS",
    "SORT_ORDERS",
    "STATS",
    "TIMESERIES",
    "TRADE",
    "TRADES",
    "TRADING_MODES",
    "TRADING_STATUSES",
    "TRI_STATES",
    "TRUE_FALSE",
    "Endpoint",
    "Paging",
    "Param",
    "by_key",
    "listed",
    "route_at",
]

API_PREFIX = "/api/"
MINUTE = 60
NEVER = -1  # requests-cache's NEVER_EXPIRE: an answer that never changes

#: How the command line and the catalog read a parameter's text: ``id`` an integer id, ``int``
#: a count, ``bool`` true/false, ``switch`` true or absent (a flag without a value), ``time``
#: ISO-8601 text (kept as text), ``text`` as given.
KINDS = ("id", "int", "bool", "switch", "time", "text")

# The values the spec enumerates (api-spec.md, Endpoints and States and transitions), in its
# spelling and order. The service takes them in any ASCII case (docs/service-contract.md, Query
# values), so a value is refused only when no case of it is listed. Values the spec leaves open
# (``filterStatus``, ``sortBy``, ``timeframe``, the eval-results booleans) have no ``choices``:
# the service decides.
TRADING_STATUSES = ("executed", "delayed", "rejected", "recommended", "all")
TRADING_MODES = ("live", "paper", "all")
TRI_STATES = ("true", "false", "all")
TRUE_FALSE = ("true", "false")
SORT_ORDERS = ("asc", "desc")
CHAIN_NAMES = ("SOLANA", "BASE", "BSC")
EVALUATION_TYPES = ("TOKEN_STATUS", "TOKEN_BUY", "TOKEN_SELL")


def listed(choices: tuple[str, ...]) -> str:
    """``a, b or c``: the allowed values as the ``--help`` and the refusals write them."""
    return f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]


@dataclass(frozen=True)
class Param:
    """One parameter of a route.

    ``name`` is the loader's keyword, ``wire`` the service's name, ``check`` the name of the
    ``_ids`` validator a loader applies (``optional_id``, ``one_id``), ``where`` ``query``,
    ``path`` or ``body``, ``choices`` the values the spec allows (any case; empty: open).
    ``flag``/``help``/``nargs`` are the ``quantscope fetch`` option.
    """

    name: str
    wire: str
    kind: str = "text"
    check: str | None = None
    where: str = "query"
    flag: str | None = None
    help: str = ""
    nargs: str | None = None
    choices: tuple[str, ...] = ()


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
    ``_http.cache`` refiner that may change the lifetime once the answer is known; a write's
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


CHAIN = Param(
    "chain", "chain", flag="--chain", help=f"one chain: {listed(CHAIN_NAMES)}", choices=CHAIN_NAMES
)
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
            help=f"model validation: {listed(TRADING_STATUSES)} (default: executed)",
            choices=TRADING_STATUSES,
        ),
        Param(
            "trading_mode",
            "tradingMode",
            flag="--trading-mode",
            help=f"{listed(TRADING_MODES)} (default: both)",
            choices=TRADING_MODES,
        ),
        Param(
            "position_closed",
            "positionClosed",
            "bool",
            flag="--position-closed",
            help="true: closed positions only, false: open ones (default: both)",
            choices=TRI_STATES,
        ),
        Param(
            "tracking_enabled",
            "isTrackingEnabled",
            "bool",
            flag="--tracking-enabled",
            help="whether still tracked",
            choices=TRI_STATES,
        ),
        Param("status", "filterStatus", flag="--status", help="Open or Closed"),
        CHAIN,
        SEARCH,
        _start("startDate"),
        _end("endDate"),
        Param(
            "sort_by", "sortBy", flag="--sort-by", help="the service's sort field (e.g. openTime)"
        ),
        Param(
            "sort_order",
            "sortOrder",
            flag="--sort-order",
            help=listed(SORT_ORDERS),
            choices=SORT_ORDERS,
        ),
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
            help=f"{listed(EVALUATION_TYPES)} (several: --type A B)",
            nargs="+",
            choices=EVALUATION_TYPES,
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
            help=f"evaluation types to leave out: {listed(EVALUATION_TYPES)}",
            nargs="+",
            choices=EVALUATION_TYPES,
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
        Param("apply", "apply", "bool", where="body", choices=TRUE_FALSE),
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
_BY_PATH = {(e.method, e.path): e for e in ROUTES}


def by_key(key: str) -> Endpoint:
    """The route called ``key`` (``trades``, ``playbook``, ...)."""
    return _BY_KEY[key]


def route_at(path: str, method: str = "GET") -> Endpoint:
    """The route of ``method`` at ``path``, its template (``/api/trades/{id}``), as a loader's
    recipe names it.
    """
    return _BY_PATH[(method, path)]
