"""Strategy optimisation: the dashboard, recommendations, analysis runs and applying one."""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from quantscope import _schemas
from quantscope._client import Client, Fetched
from quantscope.loaders._base import Recipe, client_or_default, field, load, records, typed_frame

DASHBOARD = "/api/refine-eval/dashboard"
ANALYZE = "/api/refine-eval/analyze"
APPLY = "/api/refine-eval/recs/{id}/apply"

_PERFORMANCE = {
    "totalTrades": "total_trades",
    "completedTrades": "completed_trades",
    "activeTrades": "active_trades",
    "winningTrades": "winning_trades",
    "losingTrades": "losing_trades",
    "winRate": "win_rate",
    "avgProfitWinningTrades": "avg_profit_winning_usd",
    "avgLossLosingTrades": "avg_loss_losing_usd",
    "totalPnL": "total_pnl_usd",
}


class Dashboard(NamedTuple):
    """The optimizer's dashboard: performance, recommendations and weekly trends."""

    performance: pd.Series
    recent: pd.DataFrame
    applied: pd.DataFrame
    weekly: pd.DataFrame


def _dashboard(quant_id: int | None, client: Client | None) -> tuple[Fetched, dict[str, Any]]:
    fetched = client_or_default(client).get(DASHBOARD, {"quantId": quant_id})
    return fetched, field(fetched.data, DASHBOARD, "data")


def load_dashboard(quant_id: int | None = None, *, client: Client | None = None) -> Dashboard:
    """Overall performance (win rate a fraction), recent and applied recommendations, and the
    weekly trend of closed trades."""
    fetched, data = _dashboard(quant_id, client)
    perf = data.get("overallPerformance") or {}
    performance = pd.Series(
        {name: perf.get(key) for key, name in _PERFORMANCE.items()},
        dtype="float64",
        name="performance",
    )
    performance.attrs["quantscope"] = fetched.provenance.as_dict()
    trends = data.get("historicalTrends") or {}
    weekly = pd.DataFrame(records(trends.get("weekly") or [], DASHBOARD))
    if not weekly.empty and "weekStart" in weekly:
        weekly["weekStart"] = pd.to_datetime(weekly["weekStart"], utc=True).dt.as_unit("ms")
        weekly = weekly.set_index("weekStart").rename_axis("week_start")
        weekly.columns = [_snake(c) for c in weekly.columns]
    prov = fetched.provenance
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
    quant_id: int | None = None, *, applied: bool | None = None, client: Client | None = None
) -> pd.DataFrame:
    """The optimizer's recommendations (unapplied, applied, or both), newest first."""
    lists = {
        None: ("recentRecommendations", "appliedRecommendations"),
        False: ("recentRecommendations",),
        True: ("appliedRecommendations",),
    }[applied]
    recipe = Recipe(DASHBOARD, _schemas.RECOMMENDATIONS, keep=lists, build=_recommendations)
    return load(recipe, {"quantId": quant_id}, client=client)


def _recommendations(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    data = field(fetched.data, DASHBOARD, "data")
    rows: list[Any] = []
    for name in recipe.keep:
        rows += records(data.get(name) or [], DASHBOARD)
    return typed_frame(rows, recipe.spec, fetched.provenance)


def run_analysis(
    quant_id: int | None = None,
    *,
    apply: bool = False,
    min_completed_trades: int | None = None,
    client: Client | None = None,
) -> pd.Series:
    """Run the optimizer (new recommendations replace the unapplied ones); with ``apply`` the
    service applies them all at once. Returns trades analysed and recommendations made."""
    body: dict[str, Any] = {"apply": "true" if apply else "false"}
    if quant_id is not None:
        body["quantId"] = quant_id
    if min_completed_trades is not None:
        body["minCompletedTrades"] = min_completed_trades
    fetched = client_or_default(client).post(ANALYZE, body)
    data = field(fetched.data, ANALYZE, "data")
    return pd.Series(
        {
            "trades_analyzed": data.get("tradesAnalyzed"),
            "recommendations_generated": data.get("recommendationsGenerated"),
            "recommendations_applied": data.get("recommendationsApplied"),
        },
        dtype="Int64",
        name="analysis",
    )


def apply_recommendation(recommendation_id: int, *, client: Client | None = None) -> pd.Series:
    """Apply one recommendation: the playbook threshold becomes its new threshold."""
    fetched = client_or_default(client).post(APPLY, params={"id": recommendation_id})
    data = field(fetched.data, APPLY, "data")
    return pd.Series({_snake(k): v for k, v in data.items()}, name="applied", dtype=object)


def _snake(name: str) -> str:
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in name).lstrip("_")
