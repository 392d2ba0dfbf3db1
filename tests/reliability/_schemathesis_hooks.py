"""Schemathesis hooks of the reliability fuzz: the cross-parameter rules a schema cannot say.

OpenAPI describes each parameter alone. Three rules of the contract join two of them:
``startDate`` ≤ ``endDate`` (trades), ``timeFrom`` ≤ ``timeTo`` (evaluations), and at most 1,000
buckets in a time-series window. A generated case breaking one of them is answered 422, which
``positive_data_acceptance`` would count as "valid data rejected". ``map_case`` repairs such a
case before it is sent: it swaps an inverted pair and shortens a too-long window to one
bucket. Nothing else is changed, and a case with an invalid date is left as it is (it stays the
negative case it was). The sandbox's own tests check the 422s of these rules.

With ``QS_FUZZ_PAGE_CAP=N`` in the environment, a valid page size above N (``pageSize``,
``limit``, ``take``) is lowered to N: the volume run sends tens of thousands of requests and a
page of 1,000 evaluations costs a second, so it fuzzes small pages; a second run without the
cap covers the full ranges with fewer cases.

Two more repairs, of the same kind. Schemathesis may render an integer query value as ``1.0``
(a JSON Schema integer, but not the decimal digits the contract's query integers are): it is
sent as ``1``. And analyze's ``minCompletedTrades`` above ``MIN_TRADES_CAP`` is lowered to it:
more closed trades than a quant has is 422 ``insufficient_trades``, a refusal that depends on
the data (like a 404) and that no schema can state.

Loaded by the schemathesis subprocess through ``SCHEMATHESIS_HOOKS`` (test_fuzz_schema.py).
"""

from __future__ import annotations

import os
from typing import Any, TypeGuard

import schemathesis

from quantscope.sandbox.errors import ApiError
from quantscope.sandbox.params import parse_iso_ms

MAX_ID = 2**63 - 1  # the schema's maximum of analyze's minCompletedTrades (sandbox.params)
MAX_PAGE = 1000  # the schema's maximum of a page size (sandbox.params.PageSize)
PAIRS = (("startDate", "endDate"), ("timeFrom", "timeTo"))
WINDOWED = ("/api/eval-timeseries", "/api/eval-count")
HOUR_MS = 3_600_000
MAX_WINDOW_MS = 999 * 7 * 24 * HOUR_MS  # weekly buckets: 1,000 of them, start to end
PAGE_SIZES = ("pageSize", "limit", "take")
INTEGERS = (
    "quantId",
    "page",
    "pageSize",
    "limit",
    "offset",
    "take",
    "skip",
    "tokenId",
    "id",
    "evaluationId",
)
MIN_TRADES_CAP = 20
PAGE_CAP = int(os.environ.get("QS_FUZZ_PAGE_CAP", "0"))


def _ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_iso_ms("date", value)
    except ApiError:
        return None


def _int(value: Any) -> TypeGuard[int]:
    """An ``int`` proper (``True`` is no count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _whole(value: Any) -> TypeGuard[int | float]:
    """A whole number: an ``int`` proper or a float without a fraction (``3.0``)."""
    return _int(value) or (isinstance(value, float) and value.is_integer())


def _integral(value: Any) -> Any:
    """``1.0`` (a float, or its text) as ``1``; anything else unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.endswith(".0") and value[:-2].lstrip("-").isdigit():
        return value[:-2]
    return value


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    for params in (case.query, case.path_parameters):
        if isinstance(params, dict):
            for name in INTEGERS:
                if name in params:
                    params[name] = _integral(params[name])
    body = case.body
    if case.operation.path == "/api/refine-eval/analyze" and isinstance(body, dict):
        minimum = body.get("minCompletedTrades")
        # only a valid count (a whole number up to the schema's maximum): a value past it, or a
        # fraction, is the negative case schemathesis meant, and lowering it would make it valid
        if _whole(minimum) and MIN_TRADES_CAP < minimum <= MAX_ID:
            body["minCompletedTrades"] = MIN_TRADES_CAP
    query = case.query
    if not isinstance(query, dict):
        return case
    if PAGE_CAP:
        for name in PAGE_SIZES:
            value = query.get(name)
            if _int(value) and PAGE_CAP < value <= MAX_PAGE:  # past the maximum: a negative case
                query[name] = PAGE_CAP
            elif (
                isinstance(value, str)
                and value.isascii()
                and value.isdigit()
                and PAGE_CAP < int(value) <= MAX_PAGE
            ):
                query[name] = str(PAGE_CAP)
    for low, high in PAIRS:
        lower, upper = _ms(query.get(low)), _ms(query.get(high))
        if lower is None or upper is None:
            continue
        if lower > upper:
            query[low], query[high] = query[high], query[low]
            lower, upper = upper, lower
        if case.operation.path in WINDOWED and upper - lower > MAX_WINDOW_MS:
            query[high] = query[low]
    return case
