"""Evaluations: results (every page), time series, counts, criterion details and history."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

import pandas as pd

from quantscope import _schemas
from quantscope._client import Client, FetchedMany, OffsetPaging
from quantscope.loaders._base import Recipe, client_or_default, field, load, records, typed_frame

RESULTS = "/api/eval-results"
TIMESERIES = "/api/eval-timeseries"
COUNT = "/api/eval-count"
DETAILS = "/api/eval-details"
HISTORY = "/api/eval-history"

TimeArg = datetime | date | str


def load_evaluations(
    quant_id: int | None = None,
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
    client: Client | None = None,
) -> pd.DataFrame:
    """Every evaluation result matching the filters, newest first (docs/frames.md)."""
    params: dict[str, Any] = {
        "quantId": quant_id,
        "evaluationResultType": evaluation_type,
        "passed": passed,
        "chain": chain,
        "search": search,
        "uniqueTokensOnly": unique_tokens_only,
        "onlyScored": only_scored,
        "timeFrom": start,
        "timeTo": end,
    }
    recipe = Recipe(
        RESULTS,
        _schemas.EVALUATIONS,
        items="results",
        paging=OffsetPaging(page_size=page_size),
        desc="evaluations",
    )
    return load(recipe, params, client=client, max_pages=max_pages)


def _window(start: TimeArg, end: TimeArg, quant_id: int | None, all_quants: bool) -> dict[str, Any]:
    return {
        "timeFrom": start,
        "timeTo": end,
        "quantId": quant_id,
        "returnAllQuants": True if all_quants else None,
    }


def load_eval_timeseries(
    start: TimeArg,
    end: TimeArg,
    quant_id: int | None = None,
    *,
    all_quants: bool = False,
    client: Client | None = None,
) -> pd.DataFrame:
    """Evaluations, passes and failures per bucket (hourly, daily or weekly by span)."""
    recipe = Recipe(TIMESERIES, _schemas.EVAL_TIMESERIES, items="timeseries")
    return load(recipe, _window(start, end, quant_id, all_quants), client=client)


def load_eval_count(
    start: TimeArg,
    end: TimeArg,
    quant_id: int | None = None,
    *,
    all_quants: bool = False,
    client: Client | None = None,
) -> pd.Series:
    """Total, passed and failed evaluations in a window, and the pass rate (a fraction)."""
    fetched = client_or_default(client).get(COUNT, _window(start, end, quant_id, all_quants))
    body = fetched.data if isinstance(fetched.data, dict) else {}
    pct = body.get("percentPassed")
    count = pd.Series(
        {
            "total": body.get("total"),
            "passed": body.get("passed"),
            "failed": body.get("failed"),
            "pass_rate": None if pct is None else float(pct) / 100.0,
        },
        dtype="float64",
        name="eval_count",
    )
    count.attrs["quantscope"] = fetched.provenance.as_dict()
    return count


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


def load_eval_details(
    evaluation_ids: int | Iterable[int], *, client: Client | None = None
) -> pd.DataFrame:
    """The criterion results of one or many evaluations, one row per criterion result.

    Details never change, so they are cached forever: a second call spends no quota. Many ids
    are fetched quota-aware with a progress bar (one request each).
    """
    ids = (
        [int(evaluation_ids)]
        if isinstance(evaluation_ids, int)
        else [int(i) for i in evaluation_ids]
    )
    recipe = Recipe(
        DETAILS,
        _schemas.EVAL_DETAILS,
        items="evaluationResultDetails",
        keep=("evaluationResult", "token", "userQuant"),
        build=_details_frame,
        desc="evaluation details",
    )
    # One params dict per id would make attrs as big as the ids, and pandas deep-copies attrs
    # on every operation: keep the provenance compact.
    compact = {"evaluationId": f"{len(ids)} ids" if len(ids) > 1 else str(ids[0]) if ids else ""}
    return load(recipe, many=[{"evaluationId": i} for i in ids], shown=compact, client=client)


def _details_frame(recipe: Recipe, many: FetchedMany) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for fetched in many.results:
        if fetched is not None:
            params = fetched.provenance.params
            assert isinstance(params, dict)  # one request's parameters
            rows.extend(_detail_rows(int(params["evaluationId"]), fetched.data))
    return typed_frame(rows, recipe.spec, many.provenance)


def load_eval_history(
    evaluation_id: int,
    *,
    exclude_types: Sequence[str] | None = None,
    page_size: int = 1000,
    client: Client | None = None,
) -> pd.DataFrame:
    """Every evaluation of the same token by the same quant, newest first."""
    recipe = Recipe(
        HISTORY,
        _schemas.EVAL_HISTORY,
        items="results",
        paging=OffsetPaging(page_size=page_size, offset_param="skip", limit_param="take"),
        desc="evaluation history",
    )
    params = {"evaluationId": evaluation_id, "excludeTypes": exclude_types}
    return load(recipe, params, client=client)
