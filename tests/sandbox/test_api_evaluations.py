"""GET /api/eval-results, eval-timeseries, eval-count, eval-details, eval-history over HTTP.

The endpoints are checked against each other: pages add up to one big page, every filter's
rows match it and the complements add up, the time series sums to eval-count and to the
eval-results total of the same window, history agrees with eval-results, and the criterion
results of eval-details, replayed with the playbook under the contract's pass rule, reproduce
each evaluation's ``passed`` and ``internalScore``: the toolkit's replay depends on that.
The module runs its own server over a copy of the session world, so its quota is its own.
"""

from __future__ import annotations

import itertools
import operator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import requests
from _helpers import ApiSession, assert_error

from quantscope.sandbox.catalog import CONFIG_TYPE_OF_EVAL, CRITERIA, market_cap_class
from quantscope.sandbox.models import (
    EvaluationCount,
    EvaluationDetail,
    EvaluationHistoryList,
    EvaluationResultList,
    Timeseries,
    validate_response,
)
from quantscope.sandbox.serve import SandboxServer

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
TYPES = ("TOKEN_STATUS", "TOKEN_BUY", "TOKEN_SELL")
OPS = {"V_GTE_T": operator.ge, "V_GT_T": operator.gt, "V_LTE_T": operator.le, "V_LT_T": operator.lt}


class EvaluationsApi(ApiSession):
    """A keyed session on one server, with eval-results validated."""

    def results(self, **params: Any) -> dict[str, Any]:
        body = self.ok("/api/eval-results", **params)
        validate_response(EvaluationResultList, body)
        return body


@pytest.fixture(scope="module")
def ent(own_sandbox: SandboxServer) -> EvaluationsApi:
    return EvaluationsApi(own_sandbox.url, own_sandbox.keys["enterprise"])


@pytest.fixture(scope="module")
def growth(own_sandbox: SandboxServer) -> EvaluationsApi:
    return EvaluationsApi(own_sandbox.url, own_sandbox.keys["growth"])


@pytest.fixture(scope="module")
def basic(own_sandbox: SandboxServer) -> EvaluationsApi:
    return EvaluationsApi(own_sandbox.url, own_sandbox.keys["basic"])


def ms(iso: str) -> int:
    return int(datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000)


def iso(millis: int) -> str:
    moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def ids(body: dict[str, Any]) -> list[int]:
    return [r["id"] for r in body["results"]]


# A window of about a day: small enough for one page, big enough for every kind of row.
DAY_FROM, DAY_TO = "2026-09-10T00:00:00Z", "2026-09-10T23:59:59.999Z"


# --------------------------------------------------------------------------------------------
# eval-results: shape, values, order, paging
# --------------------------------------------------------------------------------------------


def test_results_rows_hold_consistent_values(ent: EvaluationsApi) -> None:
    body = ent.results(limit=1000, timeFrom=DAY_FROM, timeTo=DAY_TO)
    rows = body["results"]
    assert 300 < body["total"] == len(rows) < 1000
    assert {r["evaluationResultType"] for r in rows} == set(TYPES)
    keys = [(ms(r["createdAt"]), r["id"]) for r in rows]
    assert keys == sorted(keys, reverse=True)  # newest first, id breaks ties
    scored = 0
    for r in rows:
        token, perf = r["token"], r["performance"]
        assert r["tokenId"] == token["id"] == perf["tokenId"]
        assert token["detectionPrice"] == perf["entryPriceUsd"] > 0
        pools, aggregator = token["DataFetcherResponseSnapshots"]
        assert (pools["source"], aggregator["source"]) == ("dex_pools", "price_aggregator")
        assert pools["priceUsd"] == token["detectionPrice"]
        assert pools["marketCapUsd"] == r["marketCap"]
        assert abs(aggregator["priceUsd"] / pools["priceUsd"] - 1) <= 0.005 + 1e-12
        assert ms(aggregator["fetchedAt"]) < ms(pools["fetchedAt"]) < ms(r["createdAt"])
        assert ms(r["updatedAt"]) - ms(r["createdAt"]) in (
            range(2_000, 2_001) if r["aiAnalysis"] == "" else range(5_000, 14_000)
        )
        if r["aiAnalysis"]:
            scored += 1
            assert r["aiPrompt"]
            assert r["aiScore"] >= 0
            assert r["avgScore"] == pytest.approx(
                (r["internalScore"] + r["aiScore"]) / 2, abs=0.006
            )
            # the texts are made of the row's own figures
            assert token["symbol"] in r["aiAnalysis"]
            assert token["chainName"] in r["aiAnalysis"]
            assert f"AI score {r['aiScore']:.2f}/100" in r["aiAnalysis"]
            assert f"Playbook score {r['internalScore']:.2f}" in r["aiAnalysis"]
            assert ("The evaluation passes." in r["aiAnalysis"]) is r["passed"]
            assert token["symbol"] in r["aiPrompt"]
        else:  # unscored: no AI step, so no texts and no AI score
            assert r["aiPrompt"] == ""
            assert r["aiScore"] == 0
            assert r["avgScore"] == r["internalScore"]
            assert r["passed"] is False
    assert 0 < scored < len(rows)


def test_results_pages_add_up_to_one_big_page(ent: EvaluationsApi) -> None:
    params = {"timeFrom": DAY_FROM, "timeTo": DAY_TO}
    big = ent.results(limit=1000, **params)
    pages, offset = [], 0
    while offset < big["total"] + 40:
        page = ent.results(limit=37, offset=offset, **params)
        assert page["total"] == big["total"]
        pages.extend(page["results"])
        offset += 37
    assert pages == big["results"]
    # offset past the end: empty, same total
    assert ent.results(offset=10**6, **params) == {"results": [], "total": big["total"]}


def test_results_default_page_and_total(ent: EvaluationsApi, own_sandbox: SandboxServer) -> None:
    body = ent.results()
    assert len(body["results"]) == 50
    everything = ent.ok("/api/eval-count", timeFrom="2000-01-01", timeTo="2100-01-01")
    assert body["total"] == everything["total"] > 40_000


def test_same_request_twice_gives_identical_bytes(ent: EvaluationsApi) -> None:
    params = {"limit": 200, "offset": 1234, "passed": "true"}
    first = ent.query("/api/eval-results", **params)
    assert first.content == ent.query("/api/eval-results", **params).content
    detail = ent.query("/api/eval-details", evaluationId=4321)
    assert detail.content == ent.query("/api/eval-details", evaluationId=4321).content


# --------------------------------------------------------------------------------------------
# eval-results: filters
# --------------------------------------------------------------------------------------------


def _total(client: EvaluationsApi, **params: Any) -> int:
    return int(client.results(limit=1, **params)["total"])


def test_filter_chain_quant_type_passed_partition_the_total(ent: EvaluationsApi) -> None:
    total = _total(ent)
    assert sum(_total(ent, chain=c) for c in ("SOLANA", "base", "Bsc")) == total
    assert sum(_total(ent, quantId=q) for q in (1, 2, 3)) == total
    assert _total(ent, quantId=99) == 0  # an unknown quant matches none
    by_type = {t: _total(ent, evaluationResultType=t) for t in TYPES}
    assert sum(by_type.values()) == total
    assert _total(ent, evaluationResultType="token_buy, TOKEN_SELL") == (
        by_type["TOKEN_BUY"] + by_type["TOKEN_SELL"]
    )
    assert _total(ent, passed="TRUE") + _total(ent, passed="false") == total


def test_filters_hold_on_every_row(ent: EvaluationsApi) -> None:
    params = {"timeFrom": DAY_FROM, "timeTo": DAY_TO, "limit": 1000}
    everything = ent.results(**params)["results"]
    cases: list[tuple[dict[str, Any], Any]] = [
        ({"chain": "BASE"}, lambda r: r["token"]["chainName"] == "BASE"),
        ({"quantId": 2}, lambda r: r["userQuantId"] == 2),
        ({"passed": "true"}, lambda r: r["passed"]),
        ({"passed": "false"}, lambda r: not r["passed"]),
        (
            {"evaluationResultType": "TOKEN_SELL"},
            lambda r: r["evaluationResultType"] == "TOKEN_SELL",
        ),
        ({"onlyScored": "true"}, lambda r: r["aiAnalysis"] != ""),
        (
            {"evaluationResultType": "TOKEN_BUY", "passed": "true", "chain": "SOLANA"},
            lambda r: (
                r["evaluationResultType"] == "TOKEN_BUY"
                and r["passed"]
                and r["token"]["chainName"] == "SOLANA"
            ),
        ),
    ]
    for extra, keep in cases:
        body = ent.results(**params, **extra)
        expected = [r for r in everything if keep(r)]
        assert body["results"] == expected, extra
        assert body["total"] == len(expected) > 0, extra
    scored = ent.results(**params, onlyScored="true")["results"]
    assert all(r["aiScore"] > 0 and r["aiPrompt"] for r in scored)


def test_time_window_is_inclusive_to_the_millisecond(ent: EvaluationsApi) -> None:
    row = ent.results(limit=1, offset=500)["results"][0]
    at = ms(row["createdAt"])
    exact = ent.results(timeFrom=row["createdAt"], timeTo=row["createdAt"])
    assert row["id"] in ids(exact)
    assert all(r["createdAt"] == row["createdAt"] for r in exact["results"])
    assert row["id"] not in ids(ent.results(timeFrom=iso(at + 1), limit=1000, offset=0))
    assert row["id"] not in ids(ent.results(timeTo=iso(at - 1), limit=1000))
    # an offset form names the same instant
    plus_two = datetime.fromtimestamp(at / 1000, tz=timezone(timedelta(hours=2)))
    shifted = plus_two.isoformat(timespec="milliseconds")
    assert ent.results(timeFrom=shifted, timeTo=row["createdAt"])["total"] == exact["total"]
    body = ent.results(timeFrom=DAY_FROM, timeTo=DAY_TO, limit=1000)
    assert all(ms(DAY_FROM[:-1] + ".000Z") <= ms(r["createdAt"]) for r in body["results"])


def test_search_matches_symbol_name_or_exact_address(ent: EvaluationsApi) -> None:
    row = ent.results(limit=1, offset=77)["results"][0]
    token = row["token"]
    by_address = ent.results(search=token["address"], limit=1000)
    assert {r["tokenId"] for r in by_address["results"]} == {token["id"]}
    # equals the token's history summed over the quants that evaluated it
    histories = 0
    for quant in (1, 2, 3):
        newest = ent.results(search=token["address"], quantId=quant, limit=1)["results"]
        if newest:
            histories += ent.ok("/api/eval-history", evaluationId=newest[0]["id"])["total"]
    assert by_address["total"] == histories
    needle = token["symbol"][:3].lower()
    found = ent.results(search=f"  {needle} ", limit=1000)
    assert found["total"] >= by_address["total"]
    names: dict[int, str] = {}
    for r in found["results"]:
        if needle not in r["token"]["symbol"].lower():
            if r["tokenId"] not in names:
                detail = ent.ok("/api/eval-details", evaluationId=r["id"])
                names[r["tokenId"]] = detail["token"]["name"]
            assert needle in names[r["tokenId"]].lower()
    assert ent.results(search="no-such-token-zzz")["total"] == 0


def test_unique_tokens_only_gives_the_newest_row_of_each_token_and_quant(
    ent: EvaluationsApi,
) -> None:
    body = ent.results(uniqueTokensOnly="true", limit=1000)
    pairs = [(r["tokenId"], r["userQuantId"]) for r in body["results"]]
    assert len(pairs) == len(set(pairs)) == body["total"] == 270  # 90 tokens x 3 quants
    for r in body["results"][::45]:
        history = ent.ok("/api/eval-history", evaluationId=r["id"], take=1)
        assert history["results"][0]["id"] == r["id"]
    # with filters: the newest *matching* row of each pair, in the filtered order
    params = {"chain": "BASE", "evaluationResultType": "TOKEN_SELL", "passed": "true", "quantId": 1}
    full = ent.results(limit=1000, **params)
    assert full["total"] <= 1000
    first_of_pair: dict[tuple[int, int], dict[str, Any]] = {}
    for r in full["results"]:
        first_of_pair.setdefault((r["tokenId"], r["userQuantId"]), r)
    unique = ent.results(limit=1000, uniqueTokensOnly="true", **params)
    assert unique["results"] == list(first_of_pair.values())
    assert unique["total"] == len(first_of_pair)
    # ids follow createdAt (the unique query relies on it)
    assert ids(full) == sorted(ids(full), reverse=True)


# --------------------------------------------------------------------------------------------
# eval-timeseries and eval-count
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("time_from", "time_to", "step"),
    [
        ("2026-09-20T05:30:00Z", "2026-09-22T05:30:00Z", HOUR_MS),  # 48 h: hourly
        ("2026-08-15", "2026-09-14T12:00:00+02:00", DAY_MS),  # 30 days: daily
        ("2026-07-01", "2026-10-05", DAY_MS),  # 96 days: daily
        ("2026-05-01", "2026-10-05", 7 * DAY_MS),  # > 120 days: weekly
    ],
)
def test_timeseries_sums_equal_count_and_results(
    ent: EvaluationsApi, time_from: str, time_to: str, step: int
) -> None:
    params = {"timeFrom": time_from, "timeTo": time_to}
    series = ent.ok("/api/eval-timeseries", **params)
    validate_response(Timeseries, series)
    count = ent.ok("/api/eval-count", **params)
    validate_response(EvaluationCount, count)
    points = series["timeseries"]
    starts = [ms(p["timestamp"]) for p in points]
    span = ms(iso_of(time_to)) - ms(iso_of(time_from))
    expected_step = HOUR_MS if span <= 48 * HOUR_MS else DAY_MS if span <= 120 * DAY_MS else step
    assert all(b - a == expected_step for a, b in itertools.pairwise(starts))
    offset = 4 * DAY_MS if expected_step == 7 * DAY_MS else 0  # weeks start on Monday
    assert all((s - offset) % expected_step == 0 for s in starts)
    assert starts[0] <= ms(iso_of(time_from)) < starts[0] + expected_step
    assert starts[-1] <= ms(iso_of(time_to)) < starts[-1] + expected_step
    for p in points:
        assert p["passed"] + p["failed"] == p["evaluations"]
        want = round(100 * p["passed"] / p["evaluations"], 2) if p["evaluations"] else 0
        assert p["percentPassed"] == want
    assert sum(p["evaluations"] for p in points) == count["total"] > 0
    assert sum(p["passed"] for p in points) == count["passed"]
    assert count["failed"] == count["total"] - count["passed"]
    assert count["total"] == _total(ent, **params)
    assert count["passed"] == _total(ent, passed="true", **params)


def iso_of(text: str) -> str:
    """A contract date or date-time as the ISO form with milliseconds and Z."""
    if len(text) == 10:
        return text + "T00:00:00.000Z"
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return iso(int(moment.timestamp() * 1000))


def test_one_bucket_equals_the_results_of_its_span(ent: EvaluationsApi) -> None:
    series = ent.ok("/api/eval-timeseries", timeFrom="2026-09-01", timeTo="2026-09-30")
    point = series["timeseries"][7]
    start = ms(point["timestamp"])
    window = {"timeFrom": point["timestamp"], "timeTo": iso(start + DAY_MS - 1)}
    assert point["evaluations"] == _total(ent, **window) > 0
    assert point["passed"] == _total(ent, passed="true", **window)


def test_timeseries_quant_filter_and_return_all_quants(ent: EvaluationsApi) -> None:
    params = {"timeFrom": "2026-09-01", "timeTo": "2026-09-08"}
    all_quants = ent.ok("/api/eval-count", **params)
    per_quant = [ent.ok("/api/eval-count", quantId=q, **params) for q in (1, 2, 3)]
    assert sum(c["total"] for c in per_quant) == all_quants["total"]
    assert per_quant[0]["total"] == _total(ent, quantId=1, **params)
    assert ent.ok("/api/eval-count", quantId=1, returnAllQuants="True", **params) == all_quants
    series = ent.ok("/api/eval-timeseries", quantId=2, **params)["timeseries"]
    assert sum(p["evaluations"] for p in series) == per_quant[1]["total"]
    assert ent.ok("/api/eval-count", quantId=99, **params)["total"] == 0


def test_empty_window_gives_zero_buckets(ent: EvaluationsApi) -> None:
    series = ent.ok("/api/eval-timeseries", timeFrom="2026-07-01", timeTo="2026-07-02")
    assert len(series["timeseries"]) == 25
    assert all(
        (p["evaluations"], p["passed"], p["failed"], p["percentPassed"]) == (0, 0, 0, 0)
        for p in series["timeseries"]
    )
    count = ent.ok("/api/eval-count", timeFrom="2026-07-01", timeTo="2026-07-02")
    assert count == {"total": 0, "passed": 0, "failed": 0, "percentPassed": 0}


def test_basic_plan_counts_its_chain_only(basic: EvaluationsApi, ent: EvaluationsApi) -> None:
    params = {"timeFrom": "2026-09-01", "timeTo": "2026-09-05"}
    count = basic.ok("/api/eval-count", **params)
    assert count["total"] == _total(ent, chain="SOLANA", **params)
    assert _total(basic, **params) == count["total"]
    series = basic.ok("/api/eval-timeseries", **params)["timeseries"]
    assert sum(p["evaluations"] for p in series) == count["total"]


# --------------------------------------------------------------------------------------------
# eval-details: the pass rule replayed from the served details and the playbook
# --------------------------------------------------------------------------------------------


def _playbooks(client: EvaluationsApi) -> dict[tuple[int, str, str], dict[str, Any]]:
    """(quant, class, config type) -> {criterion key: settings, "passMark": number}."""
    out: dict[tuple[int, str, str], dict[str, Any]] = {}
    for quant in (1, 2, 3):
        for element in client.ok("/api/degen/config", quantId=quant):
            for ctype in ("SCANNING", "BUYING"):
                mark = element["passMark"]
                slice_: dict[str, Any] = {
                    "passMark": mark[ctype] if isinstance(mark, dict) else mark
                }
                for criteria in element["categories"].values():
                    for c in criteria:
                        entry = c["configTypes"][ctype]
                        slice_[c["rootKey"]] = {
                            name: entry[name]["noTime"]
                            for name in ("thresholds", "weights", "requireds", "disableds")
                        }
                out[quant, element["marketCap"], ctype] = slice_
    return out


def replay(details: list[dict[str, Any]], playbook: dict[str, Any]) -> tuple[bool, float]:
    """The contract's pass rule over served criterion results: (passed, internalScore)."""
    score = weight = 0.0
    required_ok = True
    for d in details:
        settings = playbook[d["criteria"]["key"]]
        if settings["disableds"]:
            assert d["passed"] is d["score"] is d["criteriaScore"] is None
            continue
        ok = OPS[d["extraInfo"]["operator"]](float(d["value"]), d["threshold"])
        assert d["passed"] is ok
        assert d["score"] == (d["weight"] if ok else 0.0)
        weight += d["weight"]
        score += d["weight"] if ok else 0.0
        required_ok &= ok or not settings["requireds"]
    internal = round(100 * score / weight, 2) if weight else 0.0
    return required_ok and internal >= playbook["passMark"], internal


@pytest.mark.slow
def test_replaying_the_pass_rule_reproduces_every_sampled_evaluation(ent: EvaluationsApi) -> None:
    playbooks = _playbooks(ent)
    sample: list[dict[str, Any]] = []
    for etype in TYPES:
        total = _total(ent, evaluationResultType=etype)
        for offset in range(0, total, total // 12 + 1):  # 12 spots spread over the history
            sample.extend(
                ent.results(evaluationResultType=etype, limit=10, offset=offset)["results"]
            )
    assert len(sample) == 360
    seen = set()
    for row in sample:
        body = ent.ok("/api/eval-details", evaluationId=row["id"])
        validate_response(EvaluationDetail, body)
        result, details = body["evaluationResult"], body["evaluationResultDetails"]
        assert result["id"] == row["id"]
        assert result["passed"] is row["passed"]
        assert result["internalScore"] == row["internalScore"]
        assert result["aiAnalysis"] == row["aiAnalysis"]
        ctype = CONFIG_TYPE_OF_EVAL[row["evaluationResultType"]]
        playbook = playbooks[row["userQuantId"], market_cap_class(row["marketCap"]), ctype]
        assert [d["criteria"]["key"] for d in details] == [c.key for c in CRITERIA]
        for d in details:  # thresholds and weights are the playbook's
            settings = playbook[d["criteria"]["key"]]
            assert (d["threshold"], d["weight"]) == (settings["thresholds"], settings["weights"])
        passed, internal = replay(details, playbook)
        assert (passed, internal) == (row["passed"], row["internalScore"]), row["id"]
        seen.add((row["evaluationResultType"], row["userQuantId"], row["passed"]))
    assert len(seen) >= 12  # every type and quant, passes and failures


def test_details_describe_the_evaluation(ent: EvaluationsApi) -> None:
    row = ent.results(evaluationResultType="TOKEN_BUY", onlyScored="true", limit=1)["results"][0]
    body = ent.ok("/api/eval-details", evaluationId=row["id"])
    token, quant = body["token"], body["userQuant"]
    assert (token["id"], token["symbol"], token["address"], token["chainName"]) == (
        row["tokenId"],
        row["token"]["symbol"],
        row["token"]["address"],
        row["token"]["chainName"],
    )
    assert token["priceSnapshot"] == row["token"]["detectionPrice"]
    assert token["mc"] == row["marketCap"]
    assert quant["id"] == row["userQuantId"]
    assert quant["name"] in row["aiAnalysis"]
    result = body["evaluationResult"]
    for field in ("passed", "avgScore", "aiScore", "internalScore", "createdAt"):
        assert result[field] == row[field]
    assert result["evaluationResultType"] == "TOKEN_BUY"
    for i, d in enumerate(body["evaluationResultDetails"]):
        criterion = CRITERIA[i]
        assert d["id"] == row["id"] * 100 + criterion.id
        assert d["criteriaId"] == criterion.id
        assert d["criteria"]["name"] == criterion.name
        assert d["category"]["name"] == criterion.category
        assert d["extraInfo"] == criterion.extra_info()
        assert d["createdAt"] == row["createdAt"]
        if d["criteriaScore"] is not None:
            assert 0 <= d["criteriaScore"] <= 100


def test_details_errors_and_plans(
    ent: EvaluationsApi, growth: EvaluationsApi, basic: EvaluationsApi
) -> None:
    assert_error(
        ent.query("/api/eval-details", evaluationId=10**9), 404, "not_found", "evaluationId"
    )
    assert_error(basic.query("/api/eval-details", evaluationId=1), 403, "plan_not_allowed", None)
    bsc = ent.results(chain="BSC", limit=1)["results"][0]
    assert_error(
        growth.query("/api/eval-details", evaluationId=bsc["id"]), 403, "chain_not_allowed"
    )
    assert_error(
        growth.query("/api/eval-history", evaluationId=bsc["id"]), 403, "chain_not_allowed"
    )
    base = ent.results(chain="BASE", limit=1)["results"][0]
    validate_response(EvaluationDetail, growth.ok("/api/eval-details", evaluationId=base["id"]))


# --------------------------------------------------------------------------------------------
# eval-history
# --------------------------------------------------------------------------------------------


def test_history_is_the_same_token_and_quant_newest_first(ent: EvaluationsApi) -> None:
    row = ent.results(evaluationResultType="TOKEN_SELL", limit=1, offset=20)["results"][0]
    body = ent.ok("/api/eval-history", evaluationId=row["id"], take=1000)
    validate_response(EvaluationHistoryList, body)
    items = body["results"]
    assert body["total"] == len(items) > 10
    assert row["id"] in [h["id"] for h in items]
    keys = [(ms(h["createdAt"]), h["id"]) for h in items]
    assert keys == sorted(keys, reverse=True)
    # the same rows as eval-results of that token and quant
    listed = ent.results(search=row["token"]["address"], quantId=row["userQuantId"], limit=1000)
    assert [h["id"] for h in items] == ids(listed)
    by_id = {r["id"]: r for r in listed["results"]}
    for h in items:
        r = by_id[h["id"]]
        assert (h["price"], h["marketCap"], h["passed"]) == (
            r["token"]["detectionPrice"],
            r["marketCap"],
            r["passed"],
        )
        assert (h["aiScore"], h["internalScore"], h["evaluationResultType"]) == (
            r["aiScore"],
            r["internalScore"],
            r["evaluationResultType"],
        )
    # paging adds up
    pages = []
    for skip in range(0, body["total"], 7):
        page = ent.ok("/api/eval-history", evaluationId=row["id"], take=7, skip=skip)
        assert page["total"] == body["total"]
        pages.extend(page["results"])
    assert pages == items
    # excludeTypes: the complement adds up
    for excluded in ("TOKEN_STATUS", "token_buy,TOKEN_SELL"):
        names = {t.strip().upper() for t in excluded.split(",")}
        kept = ent.ok("/api/eval-history", evaluationId=row["id"], take=1000, excludeTypes=excluded)
        assert kept["results"] == [h for h in items if h["evaluationResultType"] not in names]
        assert kept["total"] == len(kept["results"]) > 0
    none = ent.ok("/api/eval-history", evaluationId=row["id"], excludeTypes=",".join(TYPES))
    assert none == {"total": 0, "results": []}


# --------------------------------------------------------------------------------------------
# Bad input, every parameter of every endpoint
# --------------------------------------------------------------------------------------------


WINDOW = {"timeFrom": "2026-09-01", "timeTo": "2026-09-02"}
BAD_INPUT: list[tuple[str, dict[str, Any], int, str, str]] = [
    ("/api/eval-results", {"limit": "0"}, 422, "invalid_parameter", "limit"),
    ("/api/eval-results", {"limit": "1001"}, 422, "invalid_parameter", "limit"),
    ("/api/eval-results", {"limit": "ten"}, 422, "invalid_parameter", "limit"),
    ("/api/eval-results", {"limit": "1_0"}, 422, "invalid_parameter", "limit"),
    ("/api/eval-results", {"offset": "-1"}, 422, "invalid_parameter", "offset"),
    ("/api/eval-results", {"offset": "1.5"}, 422, "invalid_parameter", "offset"),
    ("/api/eval-results", {"offset": str(2**64)}, 422, "invalid_parameter", "offset"),
    ("/api/eval-results", {"chain": "ETH"}, 422, "invalid_parameter", "chain"),
    ("/api/eval-results", {"quantId": "abc"}, 422, "invalid_parameter", "quantId"),
    ("/api/eval-results", {"quantId": "0"}, 422, "invalid_parameter", "quantId"),
    ("/api/eval-results", {"passed": "yes"}, 422, "invalid_parameter", "passed"),
    ("/api/eval-results", {"uniqueTokensOnly": "1"}, 422, "invalid_parameter", "uniqueTokensOnly"),
    ("/api/eval-results", {"onlyScored": "on"}, 422, "invalid_parameter", "onlyScored"),
    ("/api/eval-results", {"timeTo": "2026-13-01"}, 422, "invalid_parameter", "timeTo"),
    ("/api/eval-results", {"timeFrom": "yesterday"}, 422, "invalid_parameter", "timeFrom"),
    (
        "/api/eval-results",
        {"timeFrom": "2026-09-02", "timeTo": "2026-09-01"},
        422,
        "invalid_parameter",
        "timeFrom",
    ),
    (
        "/api/eval-results",
        {"evaluationResultType": "TOKEN_HOLD"},
        422,
        "invalid_parameter",
        "evaluationResultType",
    ),
    (
        "/api/eval-results",
        {"evaluationResultType": "TOKEN_BUY,BUY"},
        422,
        "invalid_parameter",
        "evaluationResultType",
    ),
    ("/api/eval-timeseries", {"timeTo": "2026-09-02"}, 422, "invalid_parameter", "timeFrom"),
    ("/api/eval-timeseries", {"timeFrom": "2026-09-02"}, 422, "invalid_parameter", "timeTo"),
    ("/api/eval-timeseries", {}, 422, "invalid_parameter", "timeFrom"),
    (
        "/api/eval-timeseries",
        {"timeFrom": "2026-09-03", "timeTo": "2026-09-02"},
        422,
        "invalid_parameter",
        "timeFrom",
    ),
    (
        "/api/eval-timeseries",
        {"timeFrom": "0001-01-01", "timeTo": "2026-09-02"},
        422,
        "invalid_parameter",
        "timeTo",
    ),
    (
        "/api/eval-timeseries",
        {**WINDOW, "timeFrom": "2026/09/01"},
        422,
        "invalid_parameter",
        "timeFrom",
    ),
    ("/api/eval-timeseries", {**WINDOW, "quantId": "-3"}, 422, "invalid_parameter", "quantId"),
    (
        "/api/eval-timeseries",
        {**WINDOW, "returnAllQuants": "yes"},
        422,
        "invalid_parameter",
        "returnAllQuants",
    ),
    ("/api/eval-count", {"timeFrom": "2026-09-02"}, 422, "invalid_parameter", "timeTo"),
    ("/api/eval-count", {"timeTo": "2026-09-02"}, 422, "invalid_parameter", "timeFrom"),
    (
        "/api/eval-count",
        {"timeFrom": "2026-09-03", "timeTo": "2026-09-02"},
        422,
        "invalid_parameter",
        "timeFrom",
    ),
    (
        "/api/eval-count",
        {**WINDOW, "timeTo": "2026-09-02T25:00:00"},
        422,
        "invalid_parameter",
        "timeTo",
    ),
    ("/api/eval-count", {**WINDOW, "quantId": "x"}, 422, "invalid_parameter", "quantId"),
    (
        "/api/eval-count",
        {**WINDOW, "returnAllQuants": "0"},
        422,
        "invalid_parameter",
        "returnAllQuants",
    ),
    ("/api/eval-details", {}, 422, "invalid_parameter", "evaluationId"),
    ("/api/eval-details", {"evaluationId": "abc"}, 422, "invalid_parameter", "evaluationId"),
    ("/api/eval-details", {"evaluationId": "0"}, 422, "invalid_parameter", "evaluationId"),
    ("/api/eval-details", {"evaluationId": str(2**70)}, 422, "invalid_parameter", "evaluationId"),
    ("/api/eval-details", {"evaluationId": "99999999"}, 404, "not_found", "evaluationId"),
    ("/api/eval-history", {}, 422, "invalid_parameter", "evaluationId"),
    ("/api/eval-history", {"evaluationId": "x1"}, 422, "invalid_parameter", "evaluationId"),
    ("/api/eval-history", {"evaluationId": "99999999"}, 404, "not_found", "evaluationId"),
    ("/api/eval-history", {"evaluationId": "1", "take": "0"}, 422, "invalid_parameter", "take"),
    ("/api/eval-history", {"evaluationId": "1", "take": "1001"}, 422, "invalid_parameter", "take"),
    ("/api/eval-history", {"evaluationId": "1", "skip": "-1"}, 422, "invalid_parameter", "skip"),
    ("/api/eval-history", {"evaluationId": "1", "skip": "a"}, 422, "invalid_parameter", "skip"),
    (
        "/api/eval-history",
        {"evaluationId": "1", "excludeTypes": "TOKEN_SWAP"},
        422,
        "invalid_parameter",
        "excludeTypes",
    ),
]


@pytest.mark.parametrize(("path", "params", "status", "code", "param"), BAD_INPUT)
def test_bad_input_is_refused_with_the_contract_body(
    ent: EvaluationsApi, path: str, params: dict[str, Any], status: int, code: str, param: str
) -> None:
    assert_error(ent.query(path, **params), status, code, param)


def test_plans_and_chains(basic: EvaluationsApi, growth: EvaluationsApi) -> None:
    assert_error(basic.query("/api/eval-results", chain="BASE"), 403, "chain_not_allowed", "chain")
    assert_error(growth.query("/api/eval-results", chain="bsc"), 403, "chain_not_allowed", "chain")
    assert_error(basic.query("/api/eval-history", evaluationId=1), 403, "plan_not_allowed", None)
    rows = basic.results(limit=1000)["results"]
    assert {r["token"]["chainName"] for r in rows} == {"SOLANA"}
    rows = growth.results(limit=1000)["results"]
    assert {r["token"]["chainName"] for r in rows} == {"SOLANA", "BASE"}


def test_openapi_documents_the_endpoints_and_their_ranges(own_sandbox: SandboxServer) -> None:
    schema = requests.get(own_sandbox.url + "/openapi.json", timeout=60).json()
    expected = {
        "/api/eval-results": ("EvaluationResultList", {"limit": (1, 1000), "offset": (0, None)}),
        "/api/eval-timeseries": ("Timeseries", {}),
        "/api/eval-count": ("EvaluationCount", {}),
        "/api/eval-details": ("EvaluationDetail", {"evaluationId": (1, None)}),
        "/api/eval-history": ("EvaluationHistoryList", {"take": (1, 1000), "skip": (0, None)}),
    }
    for path, (model, ranges) in expected.items():
        operation = schema["paths"][path]["get"]
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{model}"}
        params = {p["name"]: p for p in operation["parameters"]}
        for name, (low, high) in ranges.items():
            assert params[name]["schema"]["minimum"] == low
            if high is not None:
                assert params[name]["schema"]["maximum"] == high
    for path in ("/api/eval-timeseries", "/api/eval-count"):
        params = {p["name"]: p for p in schema["paths"][path]["get"]["parameters"]}
        assert params["timeFrom"]["required"]
        assert params["timeTo"]["required"]
