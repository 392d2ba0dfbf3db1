"""GET /api/alpha-signals and /api/alpha-signals/{tokenId} against the running sandbox.

The signals are checked against the rest of the world as other endpoints serve it: the stage of
every signal against the quant's executed trades (GET /api/trades), the evaluation behind it
against the newest evaluation of the token (GET /api/eval-results), and the detail's criterion
results against GET /api/eval-details. Lists are checked against one big unfiltered list: limits
cut it, filters select from it, stats count it. The basic and growth keys are used on a fresh
server, so they spend a quota of their own.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from _helpers import ApiSession, assert_error

from quantscope.sandbox.models import AlphaSignalDetail, AlphaSignalList, validate_response

WORLD_NOW = datetime(2026, 10, 1, tzinfo=UTC)
WINDOW_START = WORLD_NOW - timedelta(days=7)
SELL_SINCE = WORLD_NOW - timedelta(hours=48)
STAGE_ORDER = {"BUY": 0, "SELL": 1, "SCREENING": 2, "WATCH": 3}
PROGRESS = {"BUY": 100, "SELL": 100, "SCREENING": 50, "WATCH": 25}
CHAIN_KEYS = {"SOLANA": "solana", "BASE": "base", "BSC": "bsc"}
QUANTS = (1, 2, 3)
BIG = 500


class SignalsApi(ApiSession):
    """A keyed session on one server, with the signal list validated."""

    def signals(self, **params: Any) -> dict[str, Any]:
        body = self.ok("/api/alpha-signals", **params)
        validate_response(AlphaSignalList, body)
        return body


def _ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def _trade_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)


@pytest.fixture(scope="module")
def ent(sandbox: Any) -> Iterator[SignalsApi]:
    made = SignalsApi(sandbox.url, sandbox.keys["enterprise"])
    yield made
    made.close()


@pytest.fixture(scope="module")
def everything(ent: SignalsApi) -> dict[str, Any]:
    """Every signal of every quant (no limit reached), the oracle of the list tests."""
    body = ent.signals(limit=BIG)
    assert body["byChain"]["all"]["stats"]["total"] < BIG
    return body


@pytest.fixture(scope="module")
def executed(ent: SignalsApi) -> dict[int, list[dict[str, Any]]]:
    """Each quant's executed trades (GET /api/trades, every page)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for quant in QUANTS:
        trades: list[dict[str, Any]] = []
        page = 1
        while True:
            body = ent.ok(
                "/api/trades", quantId=quant, tradingStatus="executed", pageSize=1000, page=page
            )
            trades.extend(body["trades"])
            if page >= body["pagination"]["totalPages"]:
                break
            page += 1
        out[quant] = trades
    return out


@pytest.fixture(scope="module")
def newest_evaluations(ent: SignalsApi) -> dict[tuple[int, int], dict[str, Any]]:
    """The newest evaluation in the window of each (quant, token), from GET /api/eval-results."""
    body = ent.ok(
        "/api/eval-results",
        uniqueTokensOnly="true",
        timeFrom=WINDOW_START.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        limit=1000,
    )
    assert body["total"] <= 1000
    return {(r["userQuantId"], r["tokenId"]): r for r in body["results"]}


# --------------------------------------------------------------------------------------------
# The list: shape, counts, order
# --------------------------------------------------------------------------------------------


def test_list_shape_and_stats_count_the_lists(everything: dict[str, Any]) -> None:
    by_chain = everything["byChain"]
    assert everything["signals"] == by_chain["all"]["signals"]
    for key, group in by_chain.items():
        stats = group["stats"]
        stages = Counter(s["stage"] for s in group["signals"])
        assert stats == {
            "total": len(group["signals"]),
            "screening": stages["SCREENING"],
            "buy": stages["BUY"],
            "sell": stages["SELL"],
            "watch": stages["WATCH"],
        }, key
    for stat in ("total", "screening", "buy", "sell", "watch"):
        assert by_chain["all"]["stats"][stat] == sum(
            by_chain[k]["stats"][stat] for k in CHAIN_KEYS.values()
        )
    # every stage occurs in this world, and one signal per token
    assert all(by_chain["all"]["stats"][stage] > 0 for stage in ("buy", "sell", "watch"))
    token_ids = [s["tokenId"] for s in everything["signals"]]
    assert len(token_ids) == len(set(token_ids))


def test_list_order_and_per_chain_lists(everything: dict[str, Any]) -> None:
    signals = everything["signals"]
    keys = [(STAGE_ORDER[s["stage"]], -_ts(s["updatedAt"]).timestamp()) for s in signals]
    assert keys == sorted(keys)
    for chain, key in CHAIN_KEYS.items():
        assert everything["byChain"][key]["signals"] == [
            s for s in signals if s["chainName"] == chain
        ]


def test_signal_fields_follow_the_stage(everything: dict[str, Any]) -> None:
    for s in everything["signals"]:
        assert s["analysisProgress"] == PROGRESS[s["stage"]]
        positioned = s["stage"] in ("BUY", "SELL")
        assert (s["entryPriceUsd"] is not None) == positioned, s
        assert (s["roi"] is not None) == positioned, s
        assert len(s["alert"]) <= 140
        assert s["alert"].startswith(s["symbol"] + " ")
        assert s["volume"] == s["volume24h"]
        assert _ts(s["updatedAt"]) >= WINDOW_START
        assert "tokenDetails" not in s
        if s["stage"] == "SCREENING":
            assert s["passed"]
        if s["stage"] == "WATCH":
            assert not s["passed"]


@pytest.mark.parametrize("quant", QUANTS)
def test_stages_agree_with_the_quants_trades(
    ent: SignalsApi,
    quant: int,
    executed: dict[int, list[dict[str, Any]]],
    newest_evaluations: dict[tuple[int, int], dict[str, Any]],
) -> None:
    body = ent.signals(quantId=quant, limit=BIG)
    signals = body["signals"]
    # one signal per token the quant evaluated in the window, on its newest evaluation
    mine = {token: r for (q, token), r in newest_evaluations.items() if q == quant}
    assert {s["tokenId"] for s in signals} == set(mine)
    trades_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for trade in executed[quant]:
        trades_of[trade["token_id"]].append(trade)
    for s in signals:
        evaluation = mine[s["tokenId"]]
        assert s["evaluationId"] == evaluation["id"]
        assert s["updatedAt"] == evaluation["createdAt"]
        assert s["passed"] == evaluation["passed"]
        assert s["evaluationResultType"] == evaluation["evaluationResultType"]
        trades = trades_of[str(s["tokenId"])]
        open_ = [t for t in trades if t["status"] == "Open"]
        recent = [
            t
            for t in trades
            if t["status"] == "Closed" and _trade_time(t["close_date"]) >= SELL_SINCE
        ]
        if open_:
            assert s["stage"] == "BUY", s
            assert len(open_) == 1
            assert f"{s['roi']:+.2f}%" == open_[0]["roi"]
        elif recent:
            assert s["stage"] == "SELL", s
            last = max(recent, key=lambda t: t["close_date"])
            assert f"{s['roi']:+.2f}%" == last["roi"]
        else:
            assert s["stage"] == ("SCREENING" if s["passed"] else "WATCH"), s


def test_without_quant_the_newest_evaluation_wins(
    everything: dict[str, Any], newest_evaluations: dict[tuple[int, int], dict[str, Any]]
) -> None:
    newest: dict[int, dict[str, Any]] = {}
    for (_, token), r in newest_evaluations.items():
        if token not in newest or r["id"] > newest[token]["id"]:
            newest[token] = r
    assert {s["tokenId"]: s["evaluationId"] for s in everything["signals"]} == {
        token: r["id"] for token, r in newest.items()
    }


def test_stage_matches_the_quant_of_the_signal(ent: SignalsApi, everything: dict[str, Any]) -> None:
    """Without quantId a token's signal is its newest evaluation's quant's signal."""
    per_quant = {q: ent.signals(quantId=q, limit=BIG)["signals"] for q in QUANTS}
    by_eval = {s["evaluationId"]: s for q in QUANTS for s in per_quant[q]}
    for s in everything["signals"]:
        assert by_eval[s["evaluationId"]] == s


# --------------------------------------------------------------------------------------------
# Parameters: limit, chain, search, includeTokenDetails, quantId
# --------------------------------------------------------------------------------------------


def test_limit_cuts_every_list_but_not_the_stats(
    ent: SignalsApi, everything: dict[str, Any]
) -> None:
    default = ent.signals()
    cut = ent.signals(limit=5)
    for body, n in ((default, 50), (cut, 5)):
        assert body["signals"] == everything["signals"][:n]
        for key, group in body["byChain"].items():
            assert group["signals"] == everything["byChain"][key]["signals"][:n]
            assert group["stats"] == everything["byChain"][key]["stats"]


@pytest.mark.parametrize("chain", ["SOLANA", "base", "Bsc"])
def test_chain_filters_everything(ent: SignalsApi, everything: dict[str, Any], chain: str) -> None:
    body = ent.signals(chain=chain, limit=BIG)
    name = chain.upper()
    wanted = [s for s in everything["signals"] if s["chainName"] == name]
    assert wanted
    assert body["signals"] == wanted
    for key, group in body["byChain"].items():
        if key in ("all", CHAIN_KEYS[name]):
            assert group == everything["byChain"][CHAIN_KEYS[name]]
        else:
            assert group["signals"] == []
            assert set(group["stats"].values()) == {0}


def test_search_selects_by_name_symbol_or_address(
    ent: SignalsApi, everything: dict[str, Any]
) -> None:
    sample = everything["signals"][3]
    term = sample["token"].split()[-1][1:4].upper()  # a substring of a name, in another case
    body = ent.signals(search=term, limit=BIG)
    needle = term.lower()
    wanted = [
        s
        for s in everything["signals"]
        if needle in s["token"].lower() or needle in s["symbol"].lower()
    ]
    assert wanted
    assert body["signals"] == wanted
    assert body["byChain"]["all"]["stats"]["total"] == len(wanted)
    by_address = ent.signals(search=sample["address"])
    assert by_address["signals"] == [sample]
    assert ent.signals(search="   ", limit=BIG) == everything
    nothing = ent.signals(search="no such token at all")
    assert nothing["signals"] == []
    assert nothing["byChain"]["all"]["stats"]["total"] == 0


def test_include_token_details_adds_the_field(ent: SignalsApi, everything: dict[str, Any]) -> None:
    body = ent.signals(includeTokenDetails="TRUE", limit=BIG)
    assert ent.signals(includeTokenDetails="false", limit=BIG) == everything
    stripped = []
    for s in body["signals"]:
        details = s.pop("tokenDetails")
        stripped.append(s)
        assert details["name"] == s["token"]
        age = (WORLD_NOW - _ts(details["createdAt"])).total_seconds() / 3600
        assert details["ageHours"] == pytest.approx(age)
        assert details["holders"] > 0
    assert stripped == everything["signals"]


def test_same_request_gives_identical_bytes(ent: SignalsApi) -> None:
    params = {"quantId": 2, "limit": 20, "includeTokenDetails": "true"}
    first = ent.query("/api/alpha-signals", **params)
    assert first.content == ent.query("/api/alpha-signals", **params).content
    detail = ent.query("/api/alpha-signals/7")
    assert detail.content == ent.query("/api/alpha-signals/7").content


@pytest.mark.parametrize(
    ("params", "status", "code", "param"),
    [
        ({"limit": "0"}, 422, "invalid_parameter", "limit"),
        ({"limit": "501"}, 422, "invalid_parameter", "limit"),
        ({"limit": "ten"}, 422, "invalid_parameter", "limit"),
        ({"limit": "1.5"}, 422, "invalid_parameter", "limit"),
        ({"quantId": "one"}, 422, "invalid_parameter", "quantId"),
        ({"quantId": "1.0"}, 422, "invalid_parameter", "quantId"),
        ({"quantId": str(2**70)}, 422, "invalid_parameter", "quantId"),
        ({"quantId": "9"}, 404, "not_found", "quantId"),
        ({"quantId": "0"}, 422, "invalid_parameter", "quantId"),
        ({"chain": "ETHEREUM"}, 422, "invalid_parameter", "chain"),
        ({"includeTokenDetails": "yes"}, 422, "invalid_parameter", "includeTokenDetails"),
        ({"includeTokenDetails": "1"}, 422, "invalid_parameter", "includeTokenDetails"),
        ({"search": "x" * 201}, 422, "invalid_parameter", "search"),
    ],
)
def test_bad_list_input(
    ent: SignalsApi, params: dict[str, str], status: int, code: str, param: str
) -> None:
    assert_error(ent.query("/api/alpha-signals", **params), status, code, param)


# --------------------------------------------------------------------------------------------
# The detail
# --------------------------------------------------------------------------------------------


def _one_per_stage(signals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for s in signals:
        seen.setdefault(s["stage"], s)
    return list(seen.values())


@pytest.mark.parametrize("quant", [None, 1, 3])
def test_detail_agrees_with_list_and_eval_details(ent: SignalsApi, quant: int | None) -> None:
    params = {} if quant is None else {"quantId": quant}
    signals = ent.signals(limit=BIG, **params)["signals"]
    for s in _one_per_stage(signals):
        detail = ent.ok(f"/api/alpha-signals/{s['tokenId']}", **params)
        validate_response(AlphaSignalDetail, detail)
        shared = {k: v for k, v in s.items() if k not in ("analysisProgress", "volume24h")}
        assert {k: detail[k] for k in shared} == shared
        explained = ent.ok("/api/eval-details", evaluationId=s["evaluationId"])
        result = explained["evaluationResult"]
        assert detail["evaluationDetails"] == explained["evaluationResultDetails"]
        assert len(detail["evaluationDetails"]) == 18
        assert (detail["aiScore"], detail["internalScore"], detail["aiAnalysis"]) == (
            result["aiScore"],
            result["internalScore"],
            result["aiAnalysis"],
        )
        assert detail["passed"] == result["passed"]


def test_detail_of_a_token_not_evaluated_in_the_window(
    ent: SignalsApi, everything: dict[str, Any]
) -> None:
    """Tokens left out of the list (no evaluation in 7 days) are served from their newest one."""
    listed = {s["tokenId"] for s in everything["signals"]}
    stale = next(t for t in range(1, 91) if t not in listed)
    detail = ent.ok(f"/api/alpha-signals/{stale}")
    validate_response(AlphaSignalDetail, detail)
    assert _ts(detail["updatedAt"]) < WINDOW_START
    history = ent.ok("/api/eval-results", search=detail["address"], limit=1)["results"]
    assert detail["evaluationId"] == history[0]["id"]


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "param"),
    [
        ("/api/alpha-signals/100000", {}, 404, "not_found", "tokenId"),
        ("/api/alpha-signals/0", {}, 422, "invalid_parameter", "tokenId"),
        ("/api/alpha-signals/-3", {}, 422, "invalid_parameter", "tokenId"),
        ("/api/alpha-signals/abc", {}, 422, "invalid_parameter", "tokenId"),
        ("/api/alpha-signals/1.0", {}, 422, "invalid_parameter", "tokenId"),
        (f"/api/alpha-signals/{2**70}", {}, 422, "invalid_parameter", "tokenId"),
        ("/api/alpha-signals/1", {"quantId": "4"}, 404, "not_found", "quantId"),
        ("/api/alpha-signals/1", {"quantId": "x"}, 422, "invalid_parameter", "quantId"),
    ],
)
def test_bad_detail_input(
    ent: SignalsApi, path: str, params: dict[str, str], status: int, code: str, param: str
) -> None:
    assert_error(ent.query(path, **params), status, code, param)


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------


def test_plans_and_chains(fresh_sandbox: Any, everything: dict[str, Any]) -> None:
    server = fresh_sandbox()
    basic = SignalsApi(server.url, server.keys["basic"])
    growth = SignalsApi(server.url, server.keys["growth"])
    assert_error(basic.query("/api/alpha-signals"), 403, "plan_not_allowed", None)
    assert_error(basic.query("/api/alpha-signals/1"), 403, "plan_not_allowed", None)
    body = growth.signals(limit=BIG)
    allowed = ("SOLANA", "BASE")
    assert body["signals"] == [s for s in everything["signals"] if s["chainName"] in allowed]
    assert body["byChain"]["bsc"]["signals"] == []
    assert set(body["byChain"]["bsc"]["stats"].values()) == {0}
    for key in ("solana", "base"):
        assert body["byChain"][key] == everything["byChain"][key]
    assert_error(growth.query("/api/alpha-signals", chain="bsc"), 403, "chain_not_allowed", "chain")
    bsc_token = next(s["tokenId"] for s in everything["signals"] if s["chainName"] == "BSC")
    assert_error(growth.query(f"/api/alpha-signals/{bsc_token}"), 403, "chain_not_allowed", None)
    base_token = next(s["tokenId"] for s in everything["signals"] if s["chainName"] == "BASE")
    assert growth.ok(f"/api/alpha-signals/{base_token}")["chainName"] == "BASE"


def test_openapi_documents_the_parameters(ent: SignalsApi) -> None:
    doc = ent.get("/openapi.json").json()
    listed = doc["paths"]["/api/alpha-signals"]["get"]
    params = {p["name"]: p["schema"] for p in listed["parameters"]}
    assert params["limit"] == {
        **params["limit"],
        "type": "integer",
        "minimum": 1,
        "maximum": 500,
        "default": 50,
    }
    assert params["includeTokenDetails"]["type"] == "boolean"
    assert set(params) == {"quantId", "limit", "chain", "includeTokenDetails", "search"}
    for path, model in (
        ("/api/alpha-signals", "AlphaSignalList"),
        ("/api/alpha-signals/{tokenId}", "AlphaSignalDetail"),
    ):
        ok = doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
        assert ok["schema"]["$ref"].endswith(model)
