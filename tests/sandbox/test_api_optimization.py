"""Strategy optimisation over HTTP: dashboard, analysis runs and applying recommendations.

The figures of a recommendation are recomputed here from what any client can read
(``/api/trades``, ``/api/eval-results``, ``/api/eval-details``), the dashboard from
``/api/trades``, and every write is checked against ``GET /api/degen/config``. Tests that write
run on their own server (``fresh_sandbox``).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from quantscope.sandbox.catalog import (
    CRITERIA_BY_KEY,
    OPERATORS,
    WORLD_NOW,
    WORLD_START_MS,
    market_cap_class,
)
from quantscope.sandbox.models import (
    AnalyzeResponse,
    ApplyResult,
    Dashboard,
    ErrorBody,
    validate_response,
)

DASHBOARD = "/api/refine-eval/dashboard"
ANALYZE = "/api/refine-eval/analyze"
WORLD_NOW_ISO = "2026-10-01T00:00:00.000Z"
# the planted truth (catalog.predictive): the strongly predictive numeric criteria
PREDICTIVE = {k for k, c in CRITERIA_BY_KEY.items() if c.predictive >= 0.45 and not c.options}


# --- helpers ------------------------------------------------------------------------------------


def ok(response: Any, model: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    validate_response(model, body)
    return body


def error(response: Any, status: int, code: str, param: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    validate_response(ErrorBody, body)
    assert body["error"]["code"] == code
    if param is not None:
        assert body["error"]["param"] == param
    return body["error"]


def dashboard(session: Any, **params: Any) -> dict[str, Any]:
    return ok(session.get(DASHBOARD, params=params), Dashboard)["data"]


def analyze(session: Any, body: Any = None) -> dict[str, Any]:
    return ok(session.post(ANALYZE, json=body), AnalyzeResponse)["data"]


def apply(session: Any, rec_id: object) -> Any:
    return session.post(f"/api/refine-eval/recs/{rec_id}/apply")


def without_ids(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in rec.items() if k != "id"} for rec in recs]


def all_trades(session: Any, **params: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        body = session.get("/api/trades", params={**params, "page": page, "pageSize": 1000})
        assert body.status_code == 200, body.text
        data = body.json()
        rows += data["trades"]
        if page >= data["pagination"]["totalPages"]:
            return rows
        page += 1


def buy_market_caps(session: Any, quant_id: int) -> dict[int, float]:
    """Market cap of every TOKEN_BUY evaluation of a quant, by evaluation id."""
    caps: dict[int, float] = {}
    offset = 0
    while True:
        params = {
            "quantId": quant_id,
            "evaluationResultType": "TOKEN_BUY",
            "limit": 1000,
            "offset": offset,
        }
        data = session.get("/api/eval-results", params=params).json()
        caps.update({r["id"]: r["marketCap"] for r in data["results"]})
        offset += 1000
        if offset >= data["total"]:
            return caps


def buying_threshold(session: Any, quant_id: int, config_id: str) -> float:
    """The live BUYING threshold of one config entry, as GET /api/degen/config serves it."""
    config = session.get("/api/degen/config", params={"quantId": quant_id}).json()
    for element in config:
        for criteria in element["categories"].values():
            for criterion in criteria:
                maps = criterion["configTypes"]["BUYING"]
                if maps["configIdsByInterval"]["noTime"] == config_id:
                    return float(maps["thresholds"]["noTime"])
    raise AssertionError(f"config entry {config_id} not in quant {quant_id}'s playbook")


def put_threshold(session: Any, quant_id: int, config_id: str, value: float) -> None:
    change = {"configId": config_id, "field": "threshold", "newValue": value}
    response = session.put("/api/degen/config", json={"quantId": quant_id, "newConfigs": [change]})
    assert response.status_code == 200, response.text


def parse_usd(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def brute_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


# --- the initial analysis, recomputed by a client ------------------------------------------------


def test_a_recommendation_recomputed_from_trades_and_eval_details(fresh_sandbox, api):
    session = api("enterprise", fresh_sandbox())
    recs = [r for q in (1, 2, 3) for r in dashboard(session, quantId=q)["recentRecommendations"]]
    rec = min(recs, key=lambda r: (r["sampleSize"], r["id"]))  # the cheapest to recompute
    quant, key = rec["userQuantId"], rec["criteriaKey"]
    caps = buy_market_caps(session, quant)
    closed = all_trades(session, quantId=quant, positionClosed="true")
    sample = [
        t
        for t in closed
        if market_cap_class(caps[t["latest_evaluation"]["id"]]) == rec["marketCap"]
    ]
    values, won = [], []
    for trade in sample:
        details = session.get(
            "/api/eval-details", params={"evaluationId": trade["latest_evaluation"]["id"]}
        ).json()["evaluationResultDetails"]
        (result,) = [d for d in details if d["criteria"]["key"] == key]
        values.append(float(result["value"]))
        won.append(trade["result"] == "Profit")
    v, w = np.array(values), np.array(won)
    n, n_won = len(v), int(w.sum())
    op = OPERATORS[rec["oldExtraInfo"]["operator"]]
    kept = op(v, rec["newThreshold"])
    assert rec["sampleSize"] == n
    assert rec["beforeWinRate"] == pytest.approx(n_won / n, abs=1e-12)
    assert rec["afterWinRate"] == pytest.approx((kept & w).sum() / kept.sum(), abs=1e-12)
    assert rec["tradeDifference"] == kept.sum() - n
    assert rec["actualImpact"] == pytest.approx(rec["afterWinRate"] - rec["beforeWinRate"])
    assert rec["actualImpact"] >= 0.02 - 1e-12
    assert rec["profitableAccuracy"] == pytest.approx((kept & w).sum() / n_won)
    assert rec["unprofitableAccuracy"] == pytest.approx((~kept & ~w).sum() / (n - n_won))
    f1 = 2 * (kept & w).sum() / (kept.sum() + n_won)
    assert rec["f1Score"] == pytest.approx(f1)
    assert rec["profitableAvg"] == pytest.approx(v[w].mean())
    assert rec["unprofitableAvg"] == pytest.approx(v[~w].mean())
    ratio = (v[w].mean() - v[~w].mean()) / abs(v[~w].mean())
    assert rec["valueDifferenceRatio"] == pytest.approx(ratio)
    auc = brute_auc(v[w], v[~w])
    if not op(1.0, 0.0):  # lower is better: a winner "beats" a loser with a smaller value
        auc = 1 - auc
    assert rec["confidence"] == pytest.approx(n / (n + 50) * abs(2 * auc - 1))
    # the candidate search: the best F1 among stricter percentiles keeping >= 30 %
    stricter = [
        t
        for t in np.unique([float(f"{q:.6g}") for q in np.percentile(v, range(5, 100, 5))])
        if op(t, rec["oldThreshold"]) and t != rec["oldThreshold"]
    ]
    allowed = [t for t in stricter if op(v, t).sum() * 10 >= 3 * n]
    best = max(2 * (op(v, t) & w).sum() / (op(v, t).sum() + n_won) for t in allowed)
    assert rec["f1Score"] == pytest.approx(best)
    assert rec["newThreshold"] in allowed
    for part in (f"{kept.sum()} of {n}", f"{100 * n_won / n:.1f}%", rec["marketCap"]):
        assert part in rec["reasoning"]


def test_recommendation_fields_and_planted_truth(sandbox, api):
    session = api("enterprise")
    everyone = dashboard(session)
    recs = everyone["recentRecommendations"]
    assert len(recs) == 20
    assert everyone["appliedRecommendations"] == []
    for rec in recs:
        assert rec["configType"] == "BUY"
        assert rec["applied"] is False
        assert rec["appliedAt"] is None
        assert rec["userFeedback"] is None
        assert rec["isDegenConfig"] == (rec["marketCap"] == "DEGEN_CAP")
        assert rec["createdAt"] == rec["updatedAt"] == WORLD_NOW_ISO
        assert rec["oldExtraInfo"] == rec["newExtraInfo"]
        assert "options" not in rec["oldExtraInfo"]
        assert CRITERIA_BY_KEY[rec["criteriaKey"]].id == rec["criteriaId"]
        assert op_is_stricter(rec)
        assert -rec["tradeDifference"] <= 0.7 * rec["sampleSize"]
    # one run's recommendations are listed most confident first
    assert [r["confidence"] for r in recs] == sorted((r["confidence"] for r in recs), reverse=True)
    # the planted truth: the most confident recommendations name the predictive criteria
    assert {r["criteriaKey"] for r in recs[:8]} <= PREDICTIVE
    # (held for seeds 7, 11 and 23: the 8 most confident, and one of each quant's top two)
    for quant in (1, 2, 3):
        top = dashboard(session, quantId=quant)["recentRecommendations"][:2]
        assert {r["userQuantId"] for r in top} == {quant}
        assert {r["criteriaKey"] for r in top} & PREDICTIVE


def op_is_stricter(rec: dict[str, Any]) -> bool:
    op = OPERATORS[rec["oldExtraInfo"]["operator"]]
    return bool(op(rec["newThreshold"], rec["oldThreshold"])) and (
        rec["newThreshold"] != rec["oldThreshold"]
    )


# --- the dashboard against /api/trades -----------------------------------------------------------


def test_dashboard_performance_and_trends_equal_trades(sandbox, api):
    session = api("enterprise")
    data = dashboard(session, quantId=1)
    perf = data["overallPerformance"]
    trades = all_trades(session, quantId=1)  # executed trades (the default tradingStatus)
    closed = [t for t in trades if t["status"] == "Closed"]
    won = [t for t in closed if t["result"] == "Profit"]
    lost = [t for t in closed if t["result"] == "Loss"]
    pnl = {t["id"]: parse_usd(t["pnl_usd"]) for t in trades}
    assert perf["totalTrades"] == len(trades)
    assert perf["completedTrades"] == len(closed)
    assert perf["activeTrades"] == len(trades) - len(closed)
    assert (perf["winningTrades"], perf["losingTrades"]) == (len(won), len(lost))
    assert perf["winRate"] == pytest.approx(len(won) / len(closed))
    assert perf["totalPnL"] == pytest.approx(
        sum(pnl[t["id"]] for t in closed), abs=0.01 * len(trades)
    )
    avg_win = sum(pnl[t["id"]] for t in won) / len(won)
    avg_loss = sum(pnl[t["id"]] for t in lost) / len(lost)
    assert perf["avgProfitWinningTrades"] == pytest.approx(avg_win, abs=0.01)
    assert perf["avgLossLosingTrades"] == pytest.approx(avg_loss, abs=0.01)
    assert perf["avgLossLosingTrades"] < 0

    weeks = data["historicalTrends"]["weekly"]
    starts = [datetime.fromisoformat(w["weekStart"]) for w in weeks]
    assert all(s.weekday() == 0 and s.time().hour == 0 for s in starts)
    assert all(b - a == timedelta(days=7) for a, b in itertools.pairwise(starts))
    first_day = datetime.fromtimestamp(WORLD_START_MS / 1000, tz=UTC)
    assert starts[0] <= first_day < starts[0] + timedelta(days=7)
    assert starts[-1] < WORLD_NOW <= starts[-1] + timedelta(days=7)

    def week_of(date: str) -> str:
        day = datetime.fromisoformat(date).replace(tzinfo=UTC)
        monday = (day - timedelta(days=day.weekday())).replace(hour=0, minute=0, second=0)
        return monday.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    opened = Counter(week_of(t["open_date"]) for t in trades)
    closed_in = Counter(week_of(t["close_date"]) for t in closed)
    won_in = Counter(week_of(t["close_date"]) for t in won)
    for week in weeks:
        start = week["weekStart"]
        assert (week["trades"], week["closedTrades"]) == (opened[start], closed_in[start])
        expected = won_in[start] / closed_in[start] if closed_in[start] else 0.0
        assert week["winRate"] == pytest.approx(expected)
    assert sum(w["trades"] for w in weeks) == perf["totalTrades"]
    assert sum(w["closedTrades"] for w in weeks) == perf["completedTrades"]
    assert sum(w["pnl"] for w in weeks) == pytest.approx(perf["totalPnL"])


def test_dashboard_of_all_quants_adds_up_and_is_byte_stable(sandbox, api):
    session = api("enterprise")
    first = session.get(DASHBOARD)
    assert session.get(DASHBOARD).content == first.content
    total = first.json()["data"]["overallPerformance"]
    per_quant = [dashboard(session, quantId=q)["overallPerformance"] for q in (1, 2, 3)]
    for field in ("totalTrades", "completedTrades", "activeTrades", "winningTrades"):
        assert total[field] == sum(p[field] for p in per_quant)
    assert total["totalPnL"] == pytest.approx(sum(p["totalPnL"] for p in per_quant))


# --- writes ---------------------------------------------------------------------------------------


def test_analyze_is_deterministic_and_supersedes(fresh_sandbox, api):
    session = api("enterprise", fresh_sandbox())
    before = {q: dashboard(session, quantId=q)["recentRecommendations"] for q in (1, 2, 3)}
    first = analyze(session)
    second = session.post(ANALYZE, json={})
    assert second.json()["data"] == first
    assert first["tradesAnalyzed"] == sum(
        dashboard(session, quantId=q)["overallPerformance"]["completedTrades"] for q in (1, 2, 3)
    )
    after = {q: dashboard(session, quantId=q)["recentRecommendations"] for q in (1, 2, 3)}
    old_ids = {r["id"] for recs in before.values() for r in recs}
    new_ids = {r["id"] for recs in after.values() for r in recs}
    for q in (1, 2, 3):  # the build's analysis is the same analysis
        assert without_ids(after[q]) == without_ids(before[q])
    assert min(new_ids) > max(old_ids)  # superseded ids are never reused...
    error(apply(session, min(old_ids)), 404, "not_found", "id")  # ...they are gone
    # an analysis of one quant leaves the others' recommendations alone
    assert analyze(session, {"quantId": 2, "apply": "false"})["recommendationsApplied"] == 0
    assert dashboard(session, quantId=1)["recentRecommendations"] == after[1]
    again = dashboard(session, quantId=2)["recentRecommendations"]
    assert without_ids(again) == without_ids(after[2])


def test_apply_moves_the_threshold_once_and_refuses_stale(fresh_sandbox, api):
    session = api("enterprise", fresh_sandbox())
    recs = dashboard(session, quantId=1)["recentRecommendations"]
    rec, other = recs[0], recs[1]
    assert buying_threshold(session, 1, rec["configId"]) == rec["oldThreshold"]
    body = ok(apply(session, rec["id"]), ApplyResult)
    expected = {k: rec[k] for k in body["data"] if k not in ("applied", "appliedAt")}
    assert {k: v for k, v in body["data"].items() if k not in ("applied", "appliedAt")} == expected
    assert body["data"]["applied"] is True
    assert body["data"]["appliedAt"] == WORLD_NOW_ISO
    assert buying_threshold(session, 1, rec["configId"]) == rec["newThreshold"]
    error(apply(session, rec["id"]), 409, "already_applied")
    assert buying_threshold(session, 1, rec["configId"]) == rec["newThreshold"]

    data = dashboard(session, quantId=1)
    (shown,) = data["appliedRecommendations"]
    assert shown["id"] == rec["id"]
    assert shown["applied"]
    assert shown["appliedAt"] == WORLD_NOW_ISO
    assert rec["id"] not in {r["id"] for r in data["recentRecommendations"]}

    # the playbook moved the other entry's threshold: its recommendation is stale
    put_threshold(session, 1, other["configId"], other["newThreshold"])
    error(apply(session, other["id"]), 409, "stale_recommendation")
    # and it becomes applicable again once the threshold is back where it was
    put_threshold(session, 1, other["configId"], other["oldThreshold"])
    ok(apply(session, other["id"]), ApplyResult)
    assert buying_threshold(session, 1, other["configId"]) == other["newThreshold"]


def test_analyze_with_apply_true_applies_everything(fresh_sandbox, api):
    session = api("enterprise", fresh_sandbox())
    result = analyze(session, {"quantId": 3, "apply": "true", "minCompletedTrades": 5})
    assert result["recommendationsGenerated"] > 0
    assert result["recommendationsApplied"] == result["recommendationsGenerated"]
    data = dashboard(session, quantId=3)
    assert data["recentRecommendations"] == []
    applied = data["appliedRecommendations"]
    assert len(applied) == min(20, result["recommendationsGenerated"])
    for rec in applied:
        assert rec["applied"]
        assert rec["appliedAt"] == WORLD_NOW_ISO
        assert buying_threshold(session, 3, rec["configId"]) == rec["newThreshold"]
    # a JSON boolean is read as the text; the next run starts from the new thresholds
    rerun = analyze(session, {"quantId": 3, "apply": False})
    assert rerun["recommendationsApplied"] == 0
    for rec in dashboard(session, quantId=3)["recentRecommendations"]:
        assert rec["oldThreshold"] == buying_threshold(session, 3, rec["configId"])


# --- refusals -------------------------------------------------------------------------------------


def test_insufficient_trades(sandbox, api):
    session = api("enterprise")
    err = error(
        session.post(ANALYZE, json={"minCompletedTrades": 100000}),
        422,
        "insufficient_trades",
        "minCompletedTrades",
    )
    assert "100000" in err["message"]
    body = {"quantId": 1, "minCompletedTrades": 100000}
    error(session.post(ANALYZE, json=body), 422, "insufficient_trades", "minCompletedTrades")


@pytest.mark.parametrize("plan", ["basic", "growth"])
def test_smaller_plans_are_refused(sandbox, api, plan):
    session = api(plan)
    for response in (
        session.get(DASHBOARD),
        session.post(ANALYZE, json={}),
        apply(session, 1),
    ):
        assert "enterprise" in error(response, 403, "plan_not_allowed")["message"]


@pytest.mark.parametrize(
    ("body", "status", "code", "param"),
    [
        ({"apply": "maybe"}, 422, "invalid_body", "apply"),
        ({"apply": 1}, 422, "invalid_body", "apply"),
        ({"quantId": 999}, 404, "not_found", "quantId"),
        ({"quantId": "1"}, 422, "invalid_body", "quantId"),
        ({"minCompletedTrades": -1}, 422, "invalid_body", "minCompletedTrades"),
        ({"minCompletedTrades": 2.5}, 422, "invalid_body", "minCompletedTrades"),
        ({"quantid": 1}, 422, "invalid_body", "quantid"),
        ([1], 422, "invalid_body", None),
    ],
)
def test_analyze_bad_bodies(sandbox, api, body, status, code, param):
    error(api("enterprise").post(ANALYZE, json=body), status, code, param)


def test_analyze_body_not_json(sandbox, api):
    session = api("enterprise")
    headers = {"Content-Type": "application/json"}
    error(session.post(ANALYZE, data=b"{apply: true", headers=headers), 422, "invalid_body")
    error(session.post(ANALYZE, data=b"apply=true", headers={}), 422, "invalid_body")


@pytest.mark.parametrize(
    ("rec_id", "status", "code"),
    [
        ("abc", 422, "invalid_parameter"),
        ("1.5", 422, "invalid_parameter"),
        (99999, 404, "not_found"),
    ],
)
def test_apply_bad_ids(sandbox, api, rec_id, status, code):
    error(apply(api("enterprise"), rec_id), status, code, "id")


@pytest.mark.parametrize(
    ("quant", "status", "code"),
    [
        ("abc", 422, "invalid_parameter"),
        ("0", 422, "invalid_parameter"),
        ("1.0", 422, "invalid_parameter"),
        ("+1", 422, "invalid_parameter"),
        (str(2**63), 422, "invalid_parameter"),  # was a 500: SQLite integer overflow
        ("999", 404, "not_found"),
    ],
)
def test_dashboard_bad_quant(sandbox, api, quant, status, code):
    error(api("enterprise").get(DASHBOARD, params={"quantId": quant}), status, code, "quantId")


def test_wrong_methods(sandbox, api):
    session = api("enterprise")
    error(session.get(ANALYZE), 405, "method_not_allowed")
    error(session.post(DASHBOARD), 405, "method_not_allowed")
    error(session.get("/api/refine-eval/recs/1/apply"), 405, "method_not_allowed")


def test_no_nan_or_infinity_in_recommendations(sandbox, api):
    for rec in dashboard(api("enterprise"))["recentRecommendations"]:
        numbers = [v for v in rec.values() if isinstance(v, float)]
        assert all(math.isfinite(v) for v in numbers)
