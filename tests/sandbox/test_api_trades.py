"""GET /api/trades, /api/trades/{id} and /api/trades/stats against the running sandbox.

The list is checked against itself and against the detail endpoint: every filter is compared
with the subset computed from the unfiltered list, pages add up to one big page, sort orders
hold, the summary equals the sums of the rows, and the display strings agree with their ``_raw``
twins. Tests that use the basic and growth keys run on a fresh server, so they spend a quota of
their own rather than the session server's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from _helpers import ApiSession, assert_error

from quantscope.sandbox import timefmt, trade_json
from quantscope.sandbox.models import TradeDetailResponse, TradeList, TradeStats, validate_response

WORLD_NOW = datetime(2026, 10, 1, tzinfo=UTC)
PAGE_MAX = 1000


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


class TradesApi(ApiSession):
    """A keyed session on one server, with the list fetched whole page by page."""

    def all_trades(
        self, validate: bool = False, **params: Any
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Every trade matching ``params`` (pages of 1000) and the summary of the first page."""
        body = self.ok("/api/trades", pageSize=PAGE_MAX, **params)
        if validate:
            validate_response(TradeList, body)
        trades = body["trades"]
        for page in range(2, body["pagination"]["totalPages"] + 1):
            more = self.ok("/api/trades", pageSize=PAGE_MAX, page=page, **params)
            if validate:
                validate_response(TradeList, more)
            assert more["summary"] == body["summary"]
            trades.extend(more["trades"])
        assert len(trades) == body["pagination"]["total"]
        return trades, body["summary"]

    def ids(self, **params: Any) -> list[str]:
        return [t["id"] for t in self.all_trades(**params)[0]]


def money(text: str) -> float:
    """``$1,234.50`` or ``+$12.34`` / ``-$3.40`` as a number."""
    sign = -1.0 if text.startswith("-") else 1.0
    return sign * float(text.lstrip("+-")[1:].replace(",", ""))


def percent(text: str) -> float:
    return float(text[:-1])


def native(text: str) -> float:
    return float(text.split()[0])


def compact(text: str) -> float:
    scale = {"K": 1e3, "M": 1e6, "B": 1e9}.get(text[-1], 1.0)
    return float(text[1:].rstrip("KMB")) * scale


def ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def trading_status(trade: dict[str, Any]) -> str:
    """The tradingStatus a trade falls under, from its model validation (the contract's map)."""
    v = trade["metadata"]["llmValidation"]
    if v["decision"] == "DELAY":
        return "delayed" if ts(v["waitUntil"]) > WORLD_NOW else "executed"
    return {"APPROVE": "executed", "REJECT": "rejected", "RECOMMEND": "recommended"}[v["decision"]]


@pytest.fixture(scope="module")
def ent(sandbox: Any) -> Iterator[TradesApi]:
    client = TradesApi(sandbox.url, sandbox.keys["enterprise"])
    yield client
    client.close()


@pytest.fixture(scope="module")
def universe(ent: TradesApi) -> list[dict[str, Any]]:
    """Every trade of the world (tradingStatus=all, every chain), newest first."""
    trades, _ = ent.all_trades(validate=True, tradingStatus="all")
    return trades


@pytest.fixture(scope="module")
def by_id(universe: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in universe}


def ids_where(universe: list[dict[str, Any]], keep: Any) -> list[str]:
    return [t["id"] for t in universe if keep(t)]


# --------------------------------------------------------------------------------------------
# Shapes, determinism, defaults
# --------------------------------------------------------------------------------------------


def test_shapes_of_all_three(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    validate_response(TradeList, ent.ok("/api/trades"))
    validate_response(TradeStats, ent.ok("/api/trades/stats"))
    validate_response(TradeStats, ent.ok("/api/trades/stats", quantId=2))
    for sample in _samples(universe):
        validate_response(TradeDetailResponse, ent.ok(f"/api/trades/{sample['id']}"))


def _samples(universe: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One trade of each (tradingStatus, status) pair and of each chain."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for t in universe:
        seen.setdefault((trading_status(t), t["status"]), t)
        seen.setdefault((t["token_chain"], ""), t)
    return list(seen.values())


def test_defaults_and_determinism(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    first = ent.query("/api/trades")
    again = ent.query("/api/trades")
    assert first.content == again.content
    body = first.json()
    assert body["pagination"]["page"] == 1
    assert body["pagination"]["pageSize"] == 20
    executed = [t for t in universe if trading_status(t) == "executed"]
    assert [t["id"] for t in body["trades"]] == [t["id"] for t in executed[:20]]
    assert body["pagination"]["total"] == len(executed)
    # newest first by open_date, ties by id descending
    keys = [(t["open_date"], int(t["id"])) for t in universe]
    assert keys == sorted(keys, reverse=True)
    detail = ent.query("/api/trades/1")
    assert detail.content == ent.query("/api/trades/1").content


def test_every_trade_has_its_validation_and_evaluation(universe: list[dict[str, Any]]) -> None:
    decisions = {t["metadata"]["llmValidation"]["decision"] for t in universe}
    assert decisions == {"APPROVE", "DELAY", "REJECT", "RECOMMEND"}
    for t in universe:
        v = t["metadata"]["llmValidation"]
        if v["decision"] != "DELAY":
            assert v["waitUntil"] == v["validatedAt"]
        else:
            assert v["waitUntil"] > v["validatedAt"]
        assert t["token_symbol"] in v["reasoning"]["marketAnalysis"]
        assert v["decision"] in v["reasoning"]["technicalEvaluation"]
        e = t["latest_evaluation"]
        assert e["type"] == "TOKEN_BUY"
        assert e["passed"] is True
        assert e["timestamp"] <= v["validatedAt"]
        assert t["token_symbol"] in e["summary"]
        assert f"{e['internal_score']:.2f}" in e["summary"]
        assert e["token_image"] == t["token_image"]
        if t["status"] == "Open":
            assert t["close_date"] == ""
            assert t["tokens_sold"] == "0"
            assert t["sell_revenue_usd"] == "$0.00"
        # the sign of the pnl decides the result (a pnl that rounds to 0 shows "+$0.00")
        sign = {"Profit": "+", "Loss": "-", "Breakeven": "+$0.00"}[t["result"]]
        assert t["pnl_usd"].startswith(sign) or t["pnl_usd"] == "+$0.00", t


# --------------------------------------------------------------------------------------------
# Pagination and sorting
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sort_by", "size"), [("open_date", 50), ("token_symbol", 37)])
def test_pages_add_up(ent: TradesApi, sort_by: str, size: int) -> None:
    params = {
        "tradingStatus": "all",
        "chain": "BASE",
        "quantId": 2,
        "sortBy": sort_by,
        "sortOrder": "asc",
    }
    big = ent.ok("/api/trades", pageSize=PAGE_MAX, **params)
    total = big["pagination"]["total"]
    assert 2 * size < total <= PAGE_MAX
    pages = math.ceil(total / size)
    collected: list[str] = []
    for page in range(1, pages + 1):
        body = ent.ok("/api/trades", page=page, pageSize=size, **params)
        assert body["pagination"] == {
            "total": total,
            "page": page,
            "pageSize": size,
            "totalPages": pages,
        }
        assert body["summary"] == big["summary"]
        assert len(body["trades"]) == (size if page < pages else total - size * (pages - 1))
        collected.extend(t["id"] for t in body["trades"])
    assert collected == [t["id"] for t in big["trades"]]
    assert len(set(collected)) == total
    past = ent.ok("/api/trades", page=pages + 1, pageSize=size, **params)
    assert past["trades"] == []
    assert past["pagination"]["total"] == total
    far = ent.ok("/api/trades", page=10**12, pageSize=size, **params)
    assert far["trades"] == []
    assert far["summary"] == big["summary"]


_SORT_KEYS: dict[str, Any] = {
    "open_date": lambda t: t["open_date"],
    "close_date": lambda t: t["close_date"],
    "pnl_usd": lambda t: money(t["pnl_usd"]),
    "roi": lambda t: percent(t["roi"]),
    "buy_cost_usd": lambda t: money(t["buy_cost_usd"]),
    "duration": lambda t: int(t["duration"]),
    "token_symbol": lambda t: t["token_symbol"],
    "id": lambda t: int(t["id"]),
}
# Fields whose display is the exact sort key: equal keys must be ordered by id.
_EXACT_KEYS = {"duration", "token_symbol", "id"}


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("sort_by", list(_SORT_KEYS))
def test_sort_orders(ent: TradesApi, sort_by: str, order: str) -> None:
    body = ent.ok(
        "/api/trades",
        tradingStatus="all",
        chain="BSC",
        quantId=1,
        sortBy=sort_by,
        sortOrder=order,
        pageSize=PAGE_MAX,
    )
    trades = body["trades"]
    assert len(trades) == body["pagination"]["total"] > 100
    key = _SORT_KEYS[sort_by]
    keys = [key(t) for t in trades]
    assert keys == sorted(keys, reverse=order == "desc")
    if sort_by in _EXACT_KEYS:
        pairs = [(key(t), int(t["id"])) for t in trades]
        assert pairs == sorted(pairs, reverse=order == "desc")
    if sort_by == "close_date":  # open positions ("") come first ascending, last descending
        assert any(k == "" for k in keys)


# --------------------------------------------------------------------------------------------
# Filters: each against the subset of the unfiltered list
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["executed", "delayed", "rejected", "recommended", "all"])
def test_trading_status(ent: TradesApi, universe: list[dict[str, Any]], status: str) -> None:
    got = ent.ids(tradingStatus=status)
    expected = ids_where(universe, lambda t: status in ("all", trading_status(t)))
    assert got == expected
    assert got
    if status == "executed":
        assert ent.ids() == expected  # the default


def test_trading_mode(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    live = ent.ids(tradingStatus="all", tradingMode="live")
    paper = ent.ids(tradingStatus="all", tradingMode="PAPER")
    assert live
    assert paper
    assert not set(live) & set(paper)
    assert sorted(live + paper, key=int) == sorted((t["id"] for t in universe), key=int)
    names = {
        mode: {t["quant_name"] for t in universe if t["id"] in set(ids)}
        for mode, ids in (("live", live), ("paper", paper))
    }
    assert not names["live"] & names["paper"]  # a quant trades in one mode
    assert ent.ids(tradingStatus="all", tradingMode="all") == [t["id"] for t in universe]


def test_quant_id(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    union: list[str] = []
    names = set()
    for quant in (1, 2, 3):
        trades, summary = ent.all_trades(tradingStatus="all", quantId=quant)
        assert len({t["quant_name"] for t in trades}) == 1
        names |= {t["quant_name"] for t in trades}
        assert summary["accountValue"] == pytest.approx(
            10_000 + _pnl(trades), abs=0.01 * len(trades)
        )
        union.extend(t["id"] for t in trades)
    assert len(names) == 3
    assert sorted(union, key=int) == sorted((t["id"] for t in universe), key=int)


def _pnl(trades: list[dict[str, Any]]) -> float:
    return sum(money(t["pnl_usd"]) for t in trades)


def test_unknown_quant_is_empty(ent: TradesApi) -> None:
    body = ent.ok("/api/trades", quantId=99)
    assert body["trades"] == []
    assert body["pagination"]["total"] == 0
    assert body["pagination"]["totalPages"] == 0
    assert body["summary"]["accountValue"] == 0
    assert body["summary"]["winRate"] == 0
    stats = ent.ok("/api/trades/stats", quantId=99)["metrics"]
    assert stats == {
        "totalTrades": 0,
        "totalVolume": 0,
        "tradesWeeklyChange": 0,
        "volumeWeeklyChange": 0,
    }


@pytest.mark.parametrize(
    ("value", "keep"),
    [
        ("true", lambda t: t["status"] == "Closed"),
        ("false", lambda t: t["status"] == "Open"),
        ("ALL", lambda t: True),
    ],
)
def test_position_closed(
    ent: TradesApi, universe: list[dict[str, Any]], value: str, keep: Any
) -> None:
    assert ent.ids(tradingStatus="all", positionClosed=value) == ids_where(universe, keep)


def test_tracking(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    tracked = ent.ids(tradingStatus="all", isTrackingEnabled="true")
    untracked = ent.ids(tradingStatus="all", isTrackingEnabled="False")
    assert tracked
    assert untracked
    assert not set(tracked) & set(untracked)
    assert sorted(tracked + untracked, key=int) == sorted((t["id"] for t in universe), key=int)
    by_id = {t["id"]: t for t in universe}
    # tracking is a property of the token (rugged tokens are untracked)
    assert not {by_id[i]["token_id"] for i in tracked} & {by_id[i]["token_id"] for i in untracked}


@pytest.mark.parametrize(
    ("value", "keep"),
    [
        ("Open", lambda t: t["status"] == "Open"),
        ("closed", lambda t: t["status"] == "Closed"),
        ("Profit", lambda t: t["result"] == "Profit"),
        ("LOSS", lambda t: t["result"] == "Loss"),
        ("Breakeven", lambda t: t["result"] == "Breakeven"),
        ("all", lambda t: True),
    ],
)
def test_filter_status(
    ent: TradesApi, universe: list[dict[str, Any]], value: str, keep: Any
) -> None:
    assert ent.ids(tradingStatus="all", filterStatus=value) == ids_where(universe, keep)


@pytest.mark.parametrize("chain", ["SOLANA", "base", "Bsc"])
def test_chain(ent: TradesApi, universe: list[dict[str, Any]], chain: str) -> None:
    got = ent.ids(tradingStatus="all", chain=chain)
    assert got == ids_where(universe, lambda t: t["token_chain"] == chain.upper())
    assert got


def test_search(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    sample = universe[len(universe) // 2]
    needle = sample["token_name"][1:4].lower()
    got = ent.ids(tradingStatus="all", search=f" {needle.upper()} ")
    expected = ids_where(
        universe,
        lambda t: needle in t["token_name"].lower() or needle in t["token_symbol"].lower(),
    )
    assert got == expected
    assert sample["id"] in got
    address = sample["token_address"]
    by_address = ent.ids(tradingStatus="all", search=address)
    assert by_address == ids_where(universe, lambda t: t["token_address"] == address)
    # a part of an address is no match; LIKE wildcards and quotes are plain characters
    assert ent.ok("/api/trades", tradingStatus="all", search=address[:-1])["trades"] == []
    for literal in ("%", "_", "'; DROP TABLE trades; --"):
        assert (
            ent.ok("/api/trades", tradingStatus="all", search=literal)["pagination"]["total"] == 0
        )


def test_date_range(ent: TradesApi, universe: list[dict[str, Any]]) -> None:
    sample = universe[len(universe) // 3]["open_date"]  # "YYYY-MM-DD HH:MM:SS"
    start, end = sample, universe[len(universe) // 4]["open_date"]
    assert start < end
    got = ent.ids(
        tradingStatus="all",
        startDate=start.replace(" ", "T") + "Z",
        endDate=end.replace(" ", "T"),
    )
    assert got == ids_where(universe, lambda t: start <= t["open_date"] <= end)
    assert universe[len(universe) // 3]["id"] in got
    assert universe[len(universe) // 4]["id"] in got
    # a date is its midnight UTC; an offset moves the bound
    day = ent.ids(tradingStatus="all", startDate="2026-09-10", endDate="2026-09-10T23:59:59.999")
    assert day == ids_where(universe, lambda t: t["open_date"].startswith("2026-09-10"))
    shifted = ent.ids(tradingStatus="all", startDate="2026-09-10T02:00:00+02:00")
    assert shifted == ids_where(universe, lambda t: t["open_date"] >= "2026-09-10 00:00:00")
    only_end = ent.ids(tradingStatus="all", endDate="2026-08-01")
    assert only_end == ids_where(universe, lambda t: t["open_date"] <= "2026-08-01 00:00:00")


# --------------------------------------------------------------------------------------------
# Summary and stats
# --------------------------------------------------------------------------------------------


def _expected_summary(details: list[dict[str, Any]], capital: float) -> dict[str, Any]:
    def group(ts: list[dict[str, Any]]) -> dict[str, Any]:
        pnl = [t["pnl_usd_raw"] for t in ts]
        cost = sum(t["buy_cost_usd_raw"] for t in ts)
        wins = [p for p in pnl if p > 0]
        losses = [p for p in pnl if p < 0]
        return {
            "trades": len(ts),
            "volume": sum(t["buy_cost_usd_raw"] + t["sell_revenue_usd_raw"] for t in ts),
            "profitableTrades": len(wins),
            "lossTrades": len(losses),
            "profit": sum(wins),
            "loss": sum(losses),
            "pnl": sum(pnl),
            "roi": 100 * sum(pnl) / cost if cost else 0.0,
            "winRate": 100 * len(wins) / len(ts) if ts else 0.0,
            "avgReturn": sum(t["roi_raw"] for t in ts) / len(ts) if ts else 0.0,
        }

    closed = group([t for t in details if t["status"] == "Closed"])
    opened = group([t for t in details if t["status"] == "Open"])
    everything = group(details)
    return {
        "totalTrades": everything["trades"],
        "totalVolume": everything["volume"],
        "profitableTrades": everything["profitableTrades"],
        "lossTrades": everything["lossTrades"],
        "totalProfit": everything["profit"],
        "totalLoss": everything["loss"],
        "winRate": everything["winRate"],
        "accountValue": capital + everything["pnl"],
        "realized": closed,
        "unrealized": opened,
    }


def _approx(expected: Any) -> Any:
    if isinstance(expected, dict):
        return {k: _approx(v) for k, v in expected.items()}
    return pytest.approx(expected, rel=1e-9, abs=1e-6)


def test_summary_equals_sums_of_details(ent: TradesApi) -> None:
    # a small set with open and closed, winning and losing trades: one quant's last two weeks
    params: dict[str, Any] = {"quantId": 2, "chain": "SOLANA", "startDate": "2026-09-17"}
    trades, summary = ent.all_trades(tradingStatus="all", **params)
    assert 10 <= len(trades) <= 80
    details = [ent.ok(f"/api/trades/{t['id']}")["trade"] for t in trades]
    assert {d["status"] for d in details} == {"Open", "Closed"}
    assert summary == _approx(_expected_summary(details, 10_000.0))


def test_summary_equals_sums_of_display_strings(
    ent: TradesApi, universe: list[dict[str, Any]]
) -> None:
    _, summary = ent.all_trades(tradingStatus="all")
    n = len(universe)
    cents = 0.005 * n + 1e-6
    wins = [t for t in universe if money(t["pnl_usd"]) > 0]
    assert summary["totalTrades"] == n
    assert summary["profitableTrades"] == len(wins)
    assert summary["lossTrades"] == sum(money(t["pnl_usd"]) < 0 for t in universe)
    volume = sum(money(t["buy_cost_usd"]) + money(t["sell_revenue_usd"]) for t in universe)
    assert summary["totalVolume"] == pytest.approx(volume, abs=2 * cents)
    assert summary["totalProfit"] == pytest.approx(
        sum(money(t["pnl_usd"]) for t in wins), abs=cents
    )
    assert summary["totalLoss"] < 0
    assert summary["winRate"] == pytest.approx(100 * len(wins) / n)
    assert summary["accountValue"] == pytest.approx(30_000 + _pnl(universe), abs=cents)
    realized, unrealized = summary["realized"], summary["unrealized"]
    closed = [t for t in universe if t["status"] == "Closed"]
    assert realized["trades"] == len(closed)
    assert unrealized["trades"] == n - len(closed)
    assert realized["pnl"] + unrealized["pnl"] == pytest.approx(
        summary["totalProfit"] + summary["totalLoss"]
    )
    assert realized["avgReturn"] == pytest.approx(
        sum(percent(t["roi"]) for t in closed) / len(closed), abs=0.005
    )


def test_stats_agree_with_the_list(ent: TradesApi) -> None:
    for quant in (None, 1, 3):
        params = {} if quant is None else {"quantId": quant}
        metrics = ent.ok("/api/trades/stats", **params)["metrics"]
        listed = ent.ok("/api/trades", pageSize=1, **params)
        assert metrics["totalTrades"] == listed["pagination"]["total"]
        assert metrics["totalVolume"] == pytest.approx(listed["summary"]["totalVolume"])
    metrics = ent.ok("/api/trades/stats")["metrics"]
    week = ent.ok("/api/trades", pageSize=1, startDate="2026-09-24", endDate="2026-09-30T23:59:59")
    prev = ent.ok("/api/trades", pageSize=1, startDate="2026-09-17", endDate="2026-09-23T23:59:59")
    n_week, n_prev = week["pagination"]["total"], prev["pagination"]["total"]
    v_week, v_prev = week["summary"]["totalVolume"], prev["summary"]["totalVolume"]
    assert n_prev > 0
    assert metrics["tradesWeeklyChange"] == pytest.approx(100 * (n_week - n_prev) / n_prev)
    assert metrics["volumeWeeklyChange"] == pytest.approx(100 * (v_week - v_prev) / v_prev)


# --------------------------------------------------------------------------------------------
# Detail: raw twins and transactions
# --------------------------------------------------------------------------------------------

_DETAIL_ONLY = {
    "duration_seconds",
    "buy_cost_usd_raw",
    "sell_revenue_usd_raw",
    "pnl_usd_raw",
    "roi_raw",
    "eth_sol_spent_raw",
    "eth_sol_received_raw",
    "tokens_bought_raw",
    "tokens_sold_raw",
    "avg_buy_price_solOrEth_raw",
    "price_raw",
    "price_change_raw",
    "volume24h_raw",
    "marketCap",
    "marketCap_raw",
    "liquidity",
    "liquidity_raw",
    "transactions",
}


def _check_raw_twins(d: dict[str, Any]) -> None:
    assert d["duration"] == str(d["duration_seconds"])
    for name in ("buy_cost_usd", "sell_revenue_usd", "pnl_usd"):
        assert money(d[name]) == pytest.approx(d[f"{name}_raw"], abs=0.005 + 1e-9), name
    for name in ("roi", "price_change"):
        assert percent(d[name]) == pytest.approx(d[f"{name}_raw"], abs=0.005 + 1e-9), name
    for name in ("eth_sol_spent", "eth_sol_received"):
        assert native(d[name]) == pytest.approx(d[f"{name}_raw"], abs=5e-7 + 1e-12), name
    for name in ("tokens_bought", "tokens_sold", "avg_buy_price_solOrEth"):
        assert float(d[name]) == pytest.approx(d[f"{name}_raw"], rel=1e-12), name
    assert money(d["price"]) == pytest.approx(d["price_raw"], rel=5e-4)
    for name, raw in (
        ("volume24h", "volume24h_raw"),
        ("marketCap", "marketCap_raw"),
        ("liquidity", "liquidity_raw"),
    ):
        value = d[raw]
        step = 0.005 * (
            1e9 if value >= 1e9 else 1e6 if value >= 1e6 else 1e3 if value >= 1e3 else 1
        )
        assert compact(d[name]) == pytest.approx(value, abs=step + 1e-9), name
    unit = {"SOLANA": "SOL", "BASE": "ETH", "BSC": "BNB"}[d["token_chain"]]
    assert d["eth_sol_spent"].endswith(" " + unit)
    assert d["roi_raw"] == pytest.approx(100 * d["pnl_usd_raw"] / d["buy_cost_usd_raw"])
    opened = datetime.strptime(d["open_date"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    closed = (
        WORLD_NOW
        if d["close_date"] == ""
        else datetime.strptime(d["close_date"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    )
    assert abs((closed - opened).total_seconds() - d["duration_seconds"]) <= 1


def _check_transactions(d: dict[str, Any], status: str) -> None:
    txs = d["transactions"]
    if status != "executed":
        assert txs == []
        return
    buy = txs[0]
    assert buy["action"] == "BUY"
    assert buy["outputToken"] == d["token_address"]
    assert buy["inputValueUsd"] == d["buy_cost_usd_raw"]
    assert buy["inputAmount"] == d["eth_sol_spent_raw"]
    assert buy["outputAmount"] == d["tokens_bought_raw"]
    assert buy["timestamp"][:19] == d["open_date"].replace(" ", "T")
    if d["status"] == "Open":
        assert len(txs) == 1
        return
    sell = txs[1]
    assert len(txs) == 2
    assert sell["action"] == "SELL"
    assert sell["inputToken"] == d["token_address"]
    assert sell["outputToken"] == buy["inputToken"]
    assert sell["outputValueUsd"] == d["sell_revenue_usd_raw"]
    assert sell["outputAmount"] == d["eth_sol_received_raw"]
    assert sell["inputAmount"] == d["tokens_sold_raw"]
    assert sell["timestamp"][:19] == d["close_date"].replace(" ", "T")
    assert sell["outputValueUsd"] - buy["inputValueUsd"] == pytest.approx(d["pnl_usd_raw"])
    assert buy["txHash"] != sell["txHash"]


def test_detail_twins_and_transactions(
    ent: TradesApi, universe: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    samples = _samples(universe) + universe[:: len(universe) // 12]
    for sample in samples:
        body = ent.ok(f"/api/trades/{sample['id']}")
        validate_response(TradeDetailResponse, body)
        d = body["trade"]
        listed = {k: v for k, v in d.items() if k not in _DETAIL_ONLY}
        assert listed == by_id[sample["id"]]  # the detail is the list item plus its extras
        _check_raw_twins(d)
        _check_transactions(d, trading_status(sample))


# --------------------------------------------------------------------------------------------
# Plans and chains
# --------------------------------------------------------------------------------------------


def test_plan_chain_limits(fresh_sandbox: Any, universe: list[dict[str, Any]]) -> None:
    server = fresh_sandbox()
    basic = TradesApi(server.url, server.keys["basic"])
    growth = TradesApi(server.url, server.keys["growth"])
    try:
        body = basic.ok("/api/trades", tradingStatus="all", pageSize=PAGE_MAX)
        solana = ids_where(universe, lambda t: t["token_chain"] == "SOLANA")
        assert body["pagination"]["total"] == len(solana)
        assert {t["token_chain"] for t in body["trades"]} == {"SOLANA"}
        assert [t["id"] for t in body["trades"]] == solana[:PAGE_MAX]
        assert (
            basic.ok("/api/trades", chain="solana")["pagination"]["total"]
            == basic.ok("/api/trades")["pagination"]["total"]
        )
        stats = basic.ok("/api/trades/stats")["metrics"]
        executed = [t for t in universe if trading_status(t) == "executed"]
        assert stats["totalTrades"] == sum(t["token_chain"] == "SOLANA" for t in executed)
        for client, chain in ((basic, "BSC"), (basic, "base"), (growth, "BSC")):
            assert_error(
                client.query("/api/trades", chain=chain), 403, "chain_not_allowed", "chain"
            )
        bsc = next(t for t in universe if t["token_chain"] == "BSC")
        assert_error(basic.query(f"/api/trades/{bsc['id']}"), 403, "chain_not_allowed", None)
        assert_error(growth.query(f"/api/trades/{bsc['id']}"), 403, "chain_not_allowed", None)
        base = next(t for t in universe if t["token_chain"] == "BASE")
        assert growth.ok(f"/api/trades/{base['id']}")["trade"]["id"] == base["id"]
        growth_total = growth.ok("/api/trades", tradingStatus="all")["pagination"]["total"]
        assert growth_total == sum(t["token_chain"] != "BSC" for t in universe)
    finally:
        basic.close()
        growth.close()


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------


_BAD = [
    ("/api/trades", {"pageSize": "0"}, 422, "invalid_parameter", "pageSize"),
    ("/api/trades", {"pageSize": "1001"}, 422, "invalid_parameter", "pageSize"),
    ("/api/trades", {"pageSize": "ten"}, 422, "invalid_parameter", "pageSize"),
    ("/api/trades", {"page": "-1"}, 422, "invalid_parameter", "page"),
    ("/api/trades", {"page": "0"}, 422, "invalid_parameter", "page"),
    ("/api/trades", {"page": "1.5"}, 422, "invalid_parameter", "page"),
    ("/api/trades", {"page": "1.0"}, 422, "invalid_parameter", "page"),
    ("/api/trades", {"page": str(2**64)}, 422, "invalid_parameter", "page"),
    ("/api/trades", {"sortBy": "nope"}, 422, "invalid_parameter", "sortBy"),
    ("/api/trades", {"sortOrder": "up"}, 422, "invalid_parameter", "sortOrder"),
    ("/api/trades", {"tradingStatus": "maybe"}, 422, "invalid_parameter", "tradingStatus"),
    ("/api/trades", {"tradingMode": "demo"}, 422, "invalid_parameter", "tradingMode"),
    ("/api/trades", {"filterStatus": "won"}, 422, "invalid_parameter", "filterStatus"),
    ("/api/trades", {"positionClosed": "perhaps"}, 422, "invalid_parameter", "positionClosed"),
    ("/api/trades", {"isTrackingEnabled": "yes"}, 422, "invalid_parameter", "isTrackingEnabled"),
    ("/api/trades", {"startDate": "yesterday"}, 422, "invalid_parameter", "startDate"),
    ("/api/trades", {"endDate": "2026-02-30"}, 422, "invalid_parameter", "endDate"),
    ("/api/trades", {"endDate": "2026-09-01T25:00:00"}, 422, "invalid_parameter", "endDate"),
    (
        "/api/trades",
        {"startDate": "2026-09-02", "endDate": "2026-09-01"},
        422,
        "invalid_parameter",
        "startDate",
    ),
    ("/api/trades", {"chain": "ETH"}, 422, "invalid_parameter", "chain"),
    ("/api/trades", {"quantId": "abc"}, 422, "invalid_parameter", "quantId"),
    ("/api/trades", {"quantId": "0"}, 422, "invalid_parameter", "quantId"),
    ("/api/trades", {"quantId": str(2**64)}, 422, "invalid_parameter", "quantId"),
    ("/api/trades/stats", {"quantId": "x"}, 422, "invalid_parameter", "quantId"),
    ("/api/trades/abc", {}, 422, "invalid_parameter", "id"),
    ("/api/trades/1.0", {}, 422, "invalid_parameter", "id"),
    ("/api/trades/999999", {}, 404, "not_found", "id"),
    ("/api/trades/0", {}, 422, "invalid_parameter", "id"),
    ("/api/trades/-3", {}, 422, "invalid_parameter", "id"),
    ("/api/trades/" + "9" * 30, {}, 422, "invalid_parameter", "id"),
]


@pytest.mark.parametrize(("path", "params", "status", "code", "param"), _BAD)
def test_bad_input(
    ent: TradesApi, path: str, params: dict[str, str], status: int, code: str, param: str
) -> None:
    assert_error(ent.query(path, **params), status, code, param)


def test_plan_without_key_and_unknown_parameters(ent: TradesApi, sandbox: Any) -> None:
    assert requests.get(sandbox.url + "/api/trades", timeout=60).status_code == 401
    plain = ent.query("/api/trades", pageSize=5)
    assert ent.query("/api/trades", pageSize=5, colour="blue").content == plain.content


def test_world_now_bounds(universe: list[dict[str, Any]]) -> None:
    """Every trade opened before WORLD_NOW, and every open one's duration counts up to it."""
    for t in universe:
        opened = datetime.strptime(t["open_date"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        assert opened < WORLD_NOW
        if t["status"] == "Open":
            assert abs((WORLD_NOW - opened) - timedelta(seconds=int(t["duration"]))) <= timedelta(
                seconds=1
            )


def test_fast_time_formats_equal_strftime() -> None:
    """timefmt formats dates without strftime; it must agree with strftime to the character."""
    step = 7_919_993  # ms: walks hours, days, month and year ends over 2025-2028
    for ms in range(1_735_689_600_000, 1_830_000_000_000, step * 97):
        for probe in (ms, ms + 999, ms - ms % 86_400_000, ms - ms % 86_400_000 - 1):
            moment = datetime.fromtimestamp(probe // 1000, tz=UTC)
            assert timefmt.trade_date(probe) == moment.strftime("%Y-%m-%d %H:%M:%S")
            assert timefmt.iso_ms(probe) == moment.strftime("%Y-%m-%dT%H:%M:%S.") + (
                f"{probe % 1000:03d}Z"
            )
    assert timefmt.trade_date(None) == ""
    assert trade_json.iso_ms is timefmt.iso_ms
    assert trade_json.trade_date is timefmt.trade_date


def test_openapi_documents_every_parameter(sandbox: Any) -> None:
    spec = requests.get(sandbox.url + "/openapi.json", timeout=60).json()
    listing = spec["paths"]["/api/trades"]["get"]
    params = {p["name"]: p["schema"] for p in listing["parameters"]}
    assert set(params) == {
        "quantId",
        "page",
        "pageSize",
        "sortBy",
        "sortOrder",
        "filterStatus",
        "search",
        "startDate",
        "endDate",
        "chain",
        "positionClosed",
        "isTrackingEnabled",
        "tradingMode",
        "tradingStatus",
    }
    assert (params["pageSize"]["minimum"], params["pageSize"]["maximum"]) == (1, 1000)
    assert params["page"]["minimum"] == 1
    assert params["tradingStatus"]["default"] == "executed"
    assert set(params["sortBy"]["enum"]) == set(_SORT_KEYS)
    ref = listing["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert ref.endswith("/TradeList")
    detail = spec["paths"]["/api/trades/{id}"]["get"]
    assert [p["name"] for p in detail["parameters"]] == ["id"]
    assert {"404", "403", "422"} <= set(detail["responses"])
    stats = spec["paths"]["/api/trades/stats"]["get"]
    assert [p["name"] for p in stats["parameters"]] == ["quantId"]
