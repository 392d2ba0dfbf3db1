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

Loaded by the schemathesis subprocess through ``SCHEMATHESIS_HOOKS`` (test_fuzz_schema.py).
"""

from __future__ import annotations

import os
from typing import Any

import schemathesis

from quantscope.sandbox.errors import ApiError
from quantscope.sandbox.params import parse_iso_ms

PAIRS = (("startDate", "endDate"), ("timeFrom", "timeTo"))
WINDOWED = ("/api/eval-timeseries", "/api/eval-count")
HOUR_MS = 3_600_000
MAX_WINDOW_MS = 999 * 7 * 24 * HOUR_MS  # weekly buckets: 1,000 of them, start to end
PAGE_SIZES = ("pageSize", "limit", "take")
PAGE_CAP = int(os.environ.get("QS_FUZZ_PAGE_CAP", "0"))


def _ms(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_iso_ms("date", value)
    except ApiError:
        return None


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    query = case.query
    if not isinstance(query, dict):
        return case
    if PAGE_CAP:
        for name in PAGE_SIZES:
            value = query.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > PAGE_CAP:
                query[name] = PAGE_CAP
            elif (
                isinstance(value, str)
                and value.isascii()
                and value.isdigit()
                and PAGE_CAP < int(value) <= 5000
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
