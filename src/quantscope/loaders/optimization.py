"""Strategy optimisation: the dashboard, recommendations, analysis runs and applying one."""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from quantscope import _schemas
from quantscope._client import Client, Fetched
from quantscope._ids import IdArg, one_id, optional_id
from quantscope.loaders._base import (
    Recipe,
    client_or_default,
    field,
    load,
    records,
    typed_frame,
    typed_series,
)

DASHBOARD = "/api/refine-eval/dashboard"
ANALYZE = "/api/refine-eval/analyze"
APPLY = "/api/refine-eval/recs/{id}/apply"


class Dashboard(NamedTuple):
    """The optimizer's dashboard: performance, recommendations and weekly trends."""

    performance: pd.Series
    recent: pd.DataFrame
    applied: pd.DataFrame
    weekly: pd.DataFrame


def _dashboard(quant_id: IdArg | None, client: Client | None) -> tuple[Fetched, dict[str, Any]]:
    fetched = client_or_default(client).get(
        DASHBOARD, {"quantId": optional_id(quant_id, "quant_id")}
    )
    return fetched, field(fetched.data, DASHBOARD, "data")


def load_dashboard(quant_id: IdArg | None = None, *, client: Client | None = None) -> Dashboard:
    """Overall performance (win rate a fraction), recent and applied recommendations, and the
    weekly trend of closed trades."""
    fetched, data = _dashboard(quant_id, client)
    prov = fetched.provenance
    performance = typed_series(data.get("overallPerformance") or {}, _schemas.PERFORMANCE, prov)
    trends = data.get("historicalTrends") or {}
    weekly = typed_frame(
        records(trends.get("weekly") or [], DASHBOARD), _schemas.WEEKLY_TRENDS, prov
    )
    return Dashboard(
        performance,
        typed_frame(
            records(data.get("recentRecommendations") or [], DASHBOARD),
            _schemas.RECOMMENDATIONS,
            prov,
        ),
        typed_frame(
            records(data.get("appliedRecommendations") or [], DASHBOARD),
            _schemas.RECOMMENDATIONS,
            prov,
        ),
        weekly,
    )


def load_recommendations(
    quant_id: IdArg | None = None, *, applied: bool | None = None, client: Client | None = None
) -> pd.DataFrame:
    """The optimizer's recommendations (unapplied, applied, or both), newest first."""
    lists = {
        None: ("recentRecommendations", "appliedRecommendations"),
        False: ("recentRecommendations",),
        True: ("appliedRecommendations",),
    }[applied]
    recipe = Recipe(DASHBOARD, _schemas.RECOMMENDATIONS, keep=lists, build=_recommendations)
    return load(recipe, {"quantId": optional_id(quant_id, "quant_id")}, client=client)


def _recommendations(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    data = field(fetched.data, DASHBOARD, "data")
    rows: list[Any] = []
    for name in recipe.keep:
        rows += records(data.get(name) or [], DASHBOARD)
    return typed_frame(rows, recipe.spec, fetched.provenance)


def run_analysis(
    quant_id: IdArg | None = None,
    *,
    apply: bool = False,
    min_completed_trades: int | None = None,
    client: Client | None = None,
) -> pd.Series:
    """Run the optimizer (new recommendations replace the unapplied ones); with ``apply`` the
    service applies them all at once. Returns trades analysed and recommendations made."""
    body: dict[str, Any] = {"apply": "true" if apply else "false"}
    if quant_id is not None:
        body["quantId"] = one_id(quant_id, "quant_id")
    if min_completed_trades is not None:
        body["minCompletedTrades"] = min_completed_trades
    fetched = client_or_default(client).post(ANALYZE, body)
    data = field(fetched.data, ANALYZE, "data")
    return typed_series(data, _schemas.ANALYSIS, fetched.provenance)


def apply_recommendation(recommendation_id: IdArg, *, client: Client | None = None) -> pd.Series:
    """Apply one recommendation: the playbook threshold becomes its new threshold. Returns
    the applied recommendation's fields as served (``_schemas.APPLIED``)."""
    fetched = client_or_default(client).post(
        APPLY, params={"id": one_id(recommendation_id, "recommendation_id")}
    )
    data = field(fetched.data, APPLY, "data")
    return typed_series(data, _schemas.APPLIED, fetched.provenance)
