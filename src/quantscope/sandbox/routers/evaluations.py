"""Evaluation results: eval-results, eval-timeseries, eval-count, eval-details, eval-history.

Filters, ordering, paging, bucketing and counts run in SQLite; only a page's rows are rendered
(evaldetail.py recomputes their criterion values, narrative.py writes their texts). Every query
sees the caller's plan chains only, so eval-count, eval-timeseries and eval-results agree on any
window. The decisions behind the parameters are docs/service-contract.md, Evaluations.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from quantscope.sandbox import evaldetail
from quantscope.sandbox.catalog import CHAINS, EVAL_TYPES, HOUR_MS
from quantscope.sandbox.deps import Caller, JSONRoute, StoreDep, WorldDep, inline_first, require
from quantscope.sandbox.errors import DATE_ORDER, invalid_parameter, not_found, unprocessable
from quantscope.sandbox.listing import Order
from quantscope.sandbox.models.evaluations import (
    EvaluationCount,
    EvaluationDetail,
    EvaluationHistoryList,
    EvaluationResultList,
    Timeseries,
)
from quantscope.sandbox.params import (
    Chain,
    Id,
    IsoText,
    Offset,
    OptionalId,
    PageSize,
    QueryBool,
    RequiredIsoText,
    TokenSearch,
    Where,
    comma_list_pattern,
    parse_iso_ms,
    text_schema,
)
from quantscope.sandbox.timefmt import iso_ms

router = APIRouter(route_class=JSONRoute, tags=["Evaluation results"])

DAY_MS = 24 * HOUR_MS
WEEK_MS = 7 * DAY_MS
MONDAY_OFFSET_MS = 4 * DAY_MS  # 1970-01-05, the first Monday after the epoch
MAX_BUCKETS = 1000


QuantId = Annotated[
    OptionalId,
    Query(description="Only this quant's evaluations; an unknown quant matches none."),
]
EvaluationId = Annotated[Id, Query(description="The evaluation (an eval-results id).")]
_TYPES_HELP = "TOKEN_STATUS, TOKEN_BUY, TOKEN_SELL (any case)"
TypeList = Annotated[str | None, text_schema(comma_list_pattern(EVAL_TYPES), optional=True)]


def parse_types(param: str, text: str | None) -> list[str]:
    """A comma list of evaluation types (any case, blanks ignored); 422 for an unknown one."""
    types: list[str] = []
    for item in (text or "").split(","):
        name = item.strip()
        name = name.upper() if name.isascii() else name  # "ſ".upper() is "S": not a type
        if not name:
            continue
        if name not in EVAL_TYPES:
            raise invalid_parameter(
                param, f"{param} takes a comma list of {_TYPES_HELP}; got {item.strip()!r}"
            )
        if name not in types:
            types.append(name)
    return types


def _window(where: Where, time_from: str | None, time_to: str | None) -> tuple[int, int] | None:
    """Bound createdAt, both ends inclusive (to the millisecond); 422 when from is after to."""
    lower = None if time_from is None else parse_iso_ms("timeFrom", time_from)
    upper = None if time_to is None else parse_iso_ms("timeTo", time_to)
    if lower is not None:
        where.add("e.created_ms >= ?", lower)
    if upper is not None:
        where.add("e.created_ms <= ?", upper)
    if lower is not None and upper is not None:
        if lower > upper:
            raise invalid_parameter(
                "timeFrom", f"timeFrom ({time_from!r}) must not be after timeTo ({time_to!r})"
            )
        return lower, upper
    return None


# --------------------------------------------------------------------------------------------
# GET /api/eval-results
# --------------------------------------------------------------------------------------------

_FROM = "FROM evaluations e JOIN tokens k ON k.id = e.token_id"
_NEWEST_FIRST = Order("created_ms", "id", descending=True)


@router.get(
    "/api/eval-results",
    response_model=EvaluationResultList,
    responses=unprocessable(DATE_ORDER.format("timeFrom", "timeTo")),
)
@inline_first
def eval_results(
    caller: Annotated[Caller, Depends(require("evaluations"))],
    store: StoreDep,
    world: WorldDep,
    limit: Annotated[PageSize, Query(description="Results per page.")] = 50,
    offset: Annotated[Offset, Query(description="Results to skip.")] = 0,
    chain: Chain = None,
    search: TokenSearch = None,
    quantId: QuantId = None,
    passed: Annotated[QueryBool | None, Query(description="true or false (any case).")] = None,
    uniqueTokensOnly: Annotated[
        QueryBool,
        Query(description="true: only the newest matching evaluation of each (token, quant)."),
    ] = "false",
    onlyScored: Annotated[
        QueryBool, Query(description="true: only evaluations the AI step scored (aiScore set).")
    ] = "false",
    timeTo: Annotated[
        IsoText,
        Query(
            description="createdAt upper bound, inclusive: YYYY-MM-DD or "
            "YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM] (naive is UTC)."
        ),
    ] = None,
    timeFrom: Annotated[
        IsoText, Query(description="createdAt lower bound, inclusive; formats as timeTo.")
    ] = None,
    evaluationResultType: Annotated[
        TypeList, Query(description=f"One type or a comma list: {_TYPES_HELP}.")
    ] = None,
) -> dict[str, Any]:
    """Evaluations, newest first (createdAt, then id, descending), and how many match."""
    chains = caller.resolve_chains(chain)
    conn = store.connect()
    # every evaluation on a chain of the catalog with its token: then a filter on all the
    # chains is no filter and the tokens are needed only to search (the newest page is then
    # read from the createdAt index alone)
    plain = store.listing.every_row_joined(conn, "evaluations", CHAINS)
    where = Where()
    if not plain or set(chains) != set(CHAINS):
        where.one_of("e.chain", chains)
    if quantId is not None:
        where.add("e.quant_id = ?", quantId)
    if passed is not None:
        where.add("e.passed = ?", int(passed == "true"))
    if onlyScored == "true":
        where.add("e.scored = 1")
    types = parse_types("evaluationResultType", evaluationResultType)
    if types:
        where.one_of("e.type", types)
    where.token_search(search)
    _window(where, timeFrom, timeTo)

    source = _FROM if not plain or where.uses("k") else "FROM evaluations e"
    matching = f"SELECT e.id, e.created_ms {source}{where.sql()}"
    if uniqueTokensOnly == "true":
        # The newest matching evaluation of each (token, quant). Ids follow createdAt (the world
        # numbers evaluations in time order), so the newest is the largest id: a GROUP BY runs
        # in half the time of a ROW_NUMBER() window. test_api_evaluations guards the invariant.
        matching = (
            "SELECT id, created_ms FROM evaluations WHERE id IN (SELECT MAX(e.id) "
            f"{source}{where.sql()} GROUP BY e.token_id, e.quant_id)"
        )
    listing = store.listing  # the count once per filter, the page by a keyset seek
    (total,) = listing.aggregate(conn, f"SELECT COUNT(*) FROM ({matching})", where.params)[0]
    ids: list[int] = []
    if offset < total:
        ids = listing.page_ids(
            conn, f"FROM ({matching})", [], where.params, _NEWEST_FIRST, limit, offset
        )
    return {"results": evaldetail.result_items(conn, world.seed, ids), "total": total}


# --------------------------------------------------------------------------------------------
# GET /api/eval-timeseries and GET /api/eval-count
# --------------------------------------------------------------------------------------------


def _count_filter(
    caller: Annotated[Caller, Depends(require("evaluations"))],
    timeFrom: Annotated[
        RequiredIsoText,
        Query(
            description="Window start, inclusive: "
            "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]."
        ),
    ],
    timeTo: Annotated[
        RequiredIsoText, Query(description="Window end, inclusive; formats as timeFrom.")
    ],
    quantId: QuantId = None,
    returnAllQuants: Annotated[
        QueryBool, Query(description="true: count every quant even when quantId is given.")
    ] = "false",
) -> tuple[Where, tuple[int, int]]:
    """The parameters eval-timeseries and eval-count share, as a dependency: the filter on
    the plan's chains (and the quant) and the window (lower, upper) in epoch ms.
    """
    where = Where()
    where.one_of("e.chain", caller.chains)
    if quantId is not None and returnAllQuants != "true":
        where.add("e.quant_id = ?", quantId)
    window = _window(where, timeFrom, timeTo)
    assert window is not None  # both bounds are required parameters
    return where, window


CountFilter = Annotated[tuple[Where, tuple[int, int]], Depends(_count_filter)]


def _counts(evaluations: int, passed: int) -> dict[str, Any]:
    return {
        "evaluations": evaluations,
        "passed": passed,
        "failed": evaluations - passed,
        "percentPassed": round(100.0 * passed / evaluations, 2) if evaluations else 0.0,
    }


def bucket_size(lower: int, upper: int) -> tuple[int, int]:
    """(bucket length, alignment offset) in ms: hours up to 48 h, days up to 120 days, weeks."""
    span = upper - lower
    if span <= 48 * HOUR_MS:
        return HOUR_MS, 0
    if span <= 120 * DAY_MS:
        return DAY_MS, 0
    return WEEK_MS, MONDAY_OFFSET_MS


@router.get(
    "/api/eval-timeseries",
    response_model=Timeseries,
    responses=unprocessable(
        DATE_ORDER.format("timeFrom", "timeTo")
        + f" A window of more than {MAX_BUCKETS:,} buckets is 422 naming `timeTo`."
    ),
)
def eval_timeseries(counted: CountFilter, store: StoreDep) -> dict[str, Any]:
    """Evaluation counts per UTC-aligned bucket (1 h up to a 48 h window, 1 day up to 120 days,
    else 1 week from Monday), empty buckets included; buckets cover the window's start and end.
    """
    where, (lower, upper) = counted
    size, offset = bucket_size(lower, upper)
    first, last = (lower - offset) // size, (upper - offset) // size
    if last - first + 1 > MAX_BUCKETS:
        raise invalid_parameter(
            "timeTo", f"the window needs {last - first + 1} weekly buckets; at most {MAX_BUCKETS}"
        )
    rows = store.connect().execute(
        f"SELECT (e.created_ms - ?) / ? AS bucket, COUNT(*), TOTAL(e.passed) "
        f"FROM evaluations e{where.sql()} GROUP BY bucket",
        (offset, size, *where.params),
    )
    counts = {int(r[0]): (int(r[1]), int(r[2])) for r in rows}
    series = []
    for bucket in range(first, last + 1):
        n, passed = counts.get(bucket, (0, 0))
        series.append({"timestamp": iso_ms(bucket * size + offset), **_counts(n, passed)})
    return {"timeseries": series}


@router.get(
    "/api/eval-count",
    response_model=EvaluationCount,
    responses=unprocessable(DATE_ORDER.format("timeFrom", "timeTo")),
)
def eval_count(counted: CountFilter, store: StoreDep) -> dict[str, Any]:
    """Evaluations in the window (createdAt, inclusive) on the plan's chains; how many passed."""
    where, _ = counted
    n, passed = (
        store.connect()
        .execute(f"SELECT COUNT(*), TOTAL(e.passed) FROM evaluations e{where.sql()}", where.params)
        .fetchone()
    )
    counts = _counts(int(n), int(passed))
    counts["total"] = counts.pop("evaluations")
    return {k: counts[k] for k in ("total", "passed", "failed", "percentPassed")}


# --------------------------------------------------------------------------------------------
# GET /api/eval-details and GET /api/eval-history
# --------------------------------------------------------------------------------------------


def _evaluation(store: StoreDep, caller: Caller, evaluation_id: int) -> Any:
    """The evaluation row; 404 naming evaluationId when unknown, 403 off the plan's chains."""
    row = (
        store.connect()
        .execute("SELECT * FROM evaluations WHERE id = ?", (evaluation_id,))
        .fetchone()
    )
    if row is None:
        raise not_found(f"no evaluation with id {evaluation_id}", "evaluationId")
    caller.check_chain(row["chain"])
    return row


@router.get("/api/eval-details", response_model=EvaluationDetail)
def eval_details(
    caller: Annotated[Caller, Depends(require("evaluation_details"))],
    store: StoreDep,
    world: WorldDep,
    evaluationId: EvaluationId,
) -> dict[str, Any]:
    """One evaluation with its token, quant and the result of every playbook criterion."""
    row = _evaluation(store, caller, evaluationId)
    return evaldetail.detail(store.connect(), world.seed, row)


@router.get("/api/eval-history", response_model=EvaluationHistoryList)
def eval_history(
    caller: Annotated[Caller, Depends(require("evaluation_details"))],
    store: StoreDep,
    evaluationId: EvaluationId,
    take: Annotated[PageSize, Query(description="Results per page.")] = 50,
    skip: Annotated[Offset, Query(description="Results to skip.")] = 0,
    excludeTypes: Annotated[
        TypeList, Query(description=f"Types to leave out, a comma list: {_TYPES_HELP}.")
    ] = None,
) -> dict[str, Any]:
    """The evaluations of the same token by the same quant (this one included), newest first."""
    excluded = parse_types("excludeTypes", excludeTypes)
    row = _evaluation(store, caller, evaluationId)
    where = Where()
    where.add("e.token_id = ? AND e.quant_id = ?", row["token_id"], row["quant_id"])
    if excluded:
        where.one_of("e.type", excluded, negate=True)
    conn = store.connect()
    total = conn.execute(f"SELECT COUNT(*) FROM evaluations e{where.sql()}", where.params)
    rows = conn.execute(
        "SELECT e.id, e.created_ms, e.market_cap, e.type, e.ai_score, e.internal_score, "
        f"e.price, e.passed FROM evaluations e{where.sql()} "
        "ORDER BY e.created_ms DESC, e.id DESC LIMIT ? OFFSET ?",
        (*where.params, take, skip),
    )
    return {
        "total": total.fetchone()[0],
        "results": [
            {
                "id": r["id"],
                "createdAt": iso_ms(r["created_ms"]),
                "marketCap": r["market_cap"],
                "evaluationResultType": r["type"],
                "aiScore": r["ai_score"],
                "internalScore": r["internal_score"],
                "price": r["price"],
                "passed": bool(r["passed"]),
            }
            for r in rows
        ],
    }
