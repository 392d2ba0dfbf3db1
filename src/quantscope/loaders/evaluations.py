"""Evaluations: results (every page), time series, counts, criterion details and history."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

import pandas as pd

from quantscope import _endpoints as E
from quantscope._http.client import Client, Fetched, FetchedMany, OffsetPaging
from quantscope._ids import IdArg, many_ids
from quantscope._typed import schemas as _schemas
from quantscope.loaders._base import (
    Recipe,
    field,
    record_frame,
    records,
    spend_of,
    typed_frame,
)
from quantscope.loaders._planned import LoadPlan, frame_plan, planned, series_plan

RESULTS = E.EVALUATIONS.path
TIMESERIES = E.TIMESERIES.path
COUNT = E.COUNT.path
DETAILS = E.DETAILS.path
HISTORY = E.HISTORY.path
_EVALUATION_ID = E.DETAILS.param("evaluation_ids").wire

TimeArg = datetime | date | str


@planned
def load_evaluations(
    quant_id: IdArg | None = None,
    *,
    evaluation_type: str | Sequence[str] | None = None,
    passed: bool | None = None,
    chain: str | None = None,
    search: str | None = None,
    unique_tokens_only: bool | None = None,
    only_scored: bool | None = None,
    start: TimeArg | None = None,
    end: TimeArg | None = None,
    page_size: int = 1000,
    max_pages: int | None = None,
    confirm: bool = False,
    max_requests: int | None = None,
    partial: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """Every evaluation result matching the filters, newest first (docs/frames.md).

    Quota (README, "The cache and the quota"): a load that does not fit in the quota left, or
    needs more than the client's share of it, sends nothing and says what it needs;
    ``confirm=True`` lifts the share rule, ``max_requests`` sets a ceiling instead, and
    ``partial=True`` fetches what fits (the frame then says what is missing).
    """
    params = E.query(E.EVALUATIONS, locals())  # the filters above, by the registry's names
    recipe = Recipe(
        RESULTS,
        _schemas.EVALUATIONS,
        rows=True,
        paging=OffsetPaging.of(E.EVALUATIONS, page_size),
        desc="evaluations",
        by_chain=True,
    )
    spend = spend_of(confirm, max_requests, partial)
    return frame_plan(recipe, params, client=client, max_pages=max_pages, spend=spend)


def _window(
    name: str,
    quant_id: IdArg | TimeArg | None,
    old: tuple[Any, ...],
    start: TimeArg | None,
    end: TimeArg | None,
    all_quants: bool,
) -> dict[str, Any]:
    """The window's parameters, from ``name(quant_id, start=..., end=...)`` or, deprecated
    for one release, the old order ``name(start, end[, quant_id])``.
    """
    if isinstance(quant_id, date | datetime) or (
        isinstance(quant_id, str) and not quant_id.strip().isdigit()
    ):  # the old order: the window first
        if not 1 <= len(old) <= 2 or start is not None or end is not None:
            raise TypeError(f"{name}(quant_id, *, start, end, ...): got {(quant_id, *old)!r}")
        warnings.warn(
            f"{name}(start, end, quant_id) is deprecated and goes in the next release: call "
            f"{name}(quant_id, start=..., end=...)",
            DeprecationWarning,
            stacklevel=4,  # _window < the loader's plan < the loader or estimate < caller
        )
        start, end = quant_id, old[0]
        quant_id = old[1] if len(old) == 2 else None
    elif old:
        raise TypeError(f"{name}() takes the window as keywords: start=..., end=...")
    if start is None or end is None:
        raise TypeError(f"{name}() needs the window: start=... and end=...")
    window = {"start": start, "end": end, "quant_id": quant_id}
    return E.query(E.TIMESERIES, {**window, "all_quants": True if all_quants else None})


@planned
def load_eval_timeseries(
    quant_id: IdArg | None = None,
    *old: Any,
    start: TimeArg | None = None,
    end: TimeArg | None = None,
    all_quants: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """Evaluations, passes and failures per bucket (hourly, daily or weekly by span) between
    ``start`` and ``end`` (required), of one quant or all.

    The old order ``load_eval_timeseries(start, end, quant_id)`` still works for this release,
    with a DeprecationWarning.
    """
    params = _window("load_eval_timeseries", quant_id, old, start, end, all_quants)
    recipe = Recipe(TIMESERIES, _schemas.EVAL_TIMESERIES, rows=True, by_chain=True)
    return frame_plan(recipe, params, client=client)


@planned
def load_eval_count(
    quant_id: IdArg | None = None,
    *old: Any,
    start: TimeArg | None = None,
    end: TimeArg | None = None,
    all_quants: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.Series]:
    """Total, passed and failed evaluations between ``start`` and ``end`` (required), and the
    pass rate (a fraction), of one quant or all.

    The old order ``load_eval_count(start, end, quant_id)`` still works for this release, with
    a DeprecationWarning.
    """
    params = _window("load_eval_count", quant_id, old, start, end, all_quants)
    recipe = Recipe(COUNT, _schemas.EVAL_COUNT, build=_count_frame, by_chain=True)
    return series_plan(recipe, params, client=client)


def _count_frame(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    return record_frame(fetched.data, recipe.spec, fetched.provenance)


def _detail_rows(evaluation_id: int, body: Any) -> list[dict[str, Any]]:
    result = field(body, DETAILS, "evaluationResult")
    token = body.get("token") or {}
    quant = body.get("userQuant") or {}
    shared = {
        "evaluation_id": evaluation_id,
        "quant_id": quant.get("id"),
        "token_id": token.get("id"),
        "chain": token.get("chainName"),
        "evaluation_type": result.get("evaluationResultType"),
        "evaluation_passed": result.get("passed"),
        "internal_score": result.get("internalScore"),
        "market_cap_usd": token.get("mc"),
    }
    details = records(field(body, DETAILS, "evaluationResultDetails", list), DETAILS)
    return [{**d, **shared} for d in details]


@planned
def load_eval_details(
    evaluation_ids: IdArg | Iterable[IdArg],
    *,
    confirm: bool = False,
    max_requests: int | None = None,
    partial: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """The criterion results of one or many evaluations, one row per criterion result.

    ``evaluation_ids`` is one id or one iterable of ids (``_ids``: a string is one id).
    Details never change, so they are cached forever: a second call spends no quota. Many ids
    are fetched quota-aware with a progress bar (one request each).

    Quota (README, "The cache and the quota"): a load that does not fit in the quota left, or
    needs more than the client's share of it, sends nothing and says what it needs;
    ``confirm=True`` lifts the share rule, ``max_requests`` sets a ceiling instead, and
    ``partial=True`` fetches what fits (the frame then says what is missing).
    """
    ids = many_ids(evaluation_ids, "evaluation_ids")
    recipe = Recipe(
        DETAILS,
        _schemas.EVAL_DETAILS,
        rows=True,
        keep=("evaluationResult", "token", "userQuant"),
        build=_details_frame,
        desc="evaluation details",
    )
    # One params dict per id would make attrs as big as the ids, and pandas deep-copies attrs
    # on every operation: keep the provenance compact.
    shown = f"{len(ids)} ids" if len(ids) > 1 else str(ids[0]) if ids else ""
    compact = {_EVALUATION_ID: shown}
    return frame_plan(
        recipe,
        many=[{_EVALUATION_ID: i} for i in ids],
        shown=compact,
        client=client,
        spend=spend_of(confirm, max_requests, partial),
    )


def _details_frame(recipe: Recipe, many: FetchedMany) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for fetched in many.results:
        if fetched is not None:
            params = fetched.provenance.params
            assert isinstance(params, dict)  # one request's parameters
            rows.extend(_detail_rows(int(params[_EVALUATION_ID]), fetched.data))
    return typed_frame(rows, recipe.spec, many.provenance)


@planned
def load_eval_history(
    evaluation_id: IdArg,
    *,
    exclude_types: Sequence[str] | None = None,
    page_size: int = 1000,
    confirm: bool = False,
    max_requests: int | None = None,
    partial: bool = False,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """Every evaluation of the same token by the same quant, newest first.

    Quota (README, "The cache and the quota"): a load that does not fit in the quota left, or
    needs more than the client's share of it, sends nothing and says what it needs;
    ``confirm=True`` lifts the share rule, ``max_requests`` sets a ceiling instead, and
    ``partial=True`` fetches what fits (the frame then says what is missing).
    """
    recipe = Recipe(
        HISTORY,
        _schemas.EVAL_HISTORY,
        rows=True,
        paging=OffsetPaging.of(E.HISTORY, page_size),  # skip and take
        desc="evaluation history",
    )
    params = E.query(E.HISTORY, locals())
    return frame_plan(recipe, params, client=client, spend=spend_of(confirm, max_requests, partial))
