"""A list load whose filters matched nothing says so: one ``EmptyResultWarning``.

``load_trades(quant_id=99)`` used to return 0 rows with no word; a quant id the service does
not know, a chain with no trades, a window with nothing in it all look the same. A paged list
load (trades, evaluations, an evaluation history) that returns no row warns once, naming the
parameters it sent (never the key), the plan (from the quota headers) and the service, on a
fresh load as on a frame-cache hit. A caller for which nothing is an ordinary answer (a sync
walking months) loads inside ``expect_empty()``: no warning there, in this thread or task
only (a context variable, not the process-wide warnings filter).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

import pandas as pd

from quantscope._errors import EmptyResultWarning

__all__ = ["empty_message", "expect_empty", "warn_empty"]

_EXPECTED: ContextVar[bool] = ContextVar("quantscope_expect_empty", default=False)


@contextmanager
def expect_empty() -> Iterator[None]:
    """Loads inside it may return no row without a warning (this context only)."""
    token = _EXPECTED.set(True)
    try:
        yield
    finally:
        _EXPECTED.reset(token)


def empty_message(endpoint: str, filters: Mapping[str, str], plan: str | None, service: str) -> str:
    """The warning's one line: which load, its filters, the plan and the service."""
    asked = ", ".join(f"{k}={v}" for k, v in filters.items()) or "no filter"
    where = f"{plan} plan" if plan else "plan not known yet"
    return (
        f"quantscope: {endpoint}: no rows match {asked} ({where}, {service}); check the "
        "values: an id the service does not know, or a window with nothing in it, matches "
        "nothing"
    )


def warn_empty(
    frame: pd.DataFrame,
    endpoint: str,
    filters: Mapping[str, str],
    plan: str | None,
    service: str,
    *,
    stacklevel: int = 4,
) -> pd.DataFrame:
    """``frame``, after one ``EmptyResultWarning`` when it has no row (unless expected)."""
    if len(frame) or _EXPECTED.get():
        return frame
    warnings.warn(
        EmptyResultWarning(
            empty_message(endpoint, filters, plan, service), endpoint, filters, plan
        ),
        stacklevel=stacklevel,
    )
    return frame
