"""Typed page decoding (``_typed.decode``): the same frames as ``build_frame`` on the plain JSON,
and the plain JSON (so the usual checks and errors) for any page the structs do not fit."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from _helpers import FakeService, Seen, fake_client, ok

import quantscope.loaders as L
from quantscope._errors import InvalidResponseError
from quantscope._typed import schemas as _schemas
from quantscope._typed.decode import Item, page_decoder
from quantscope._typed.frames import DataQualityWarning, build_frame
from quantscope.loaders._base import records
from quantscope.loaders.trades import TRADES_DECODE

SPEC = _schemas.TRADES


def decode(body: Any) -> Any:
    assert TRADES_DECODE is not None
    return TRADES_DECODE(body if isinstance(body, bytes) else orjson.dumps(body))


def plain_frame(pages: list[bytes]) -> pd.DataFrame:
    items = [t for p in pages for t in orjson.loads(p)["trades"]]
    return build_frame(items, SPEC, warn=False)


def typed(pages: list[bytes]) -> pd.DataFrame:
    items = [t for p in pages for t in decode(p)["trades"]]
    return build_frame(records(items, "/api/trades"), SPEC)


def trade(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": 7,
        "quant_name": "Atlas",
        "token_id": 3,
        "token_symbol": "BONK",
        "token_name": "Bonk",
        "token_chain": "SOLANA",
        "token_address": "So1111",
        "open_date": "2026-11-01 10:00:00",
        "close_date": "",
        "duration": "3600",
        "status": "Open",
        "result": "Profit",
        "buy_cost_usd": "$1,234.50",
        "sell_revenue_usd": "$0.00",
        "pnl_usd": "+$12.00",
        "roi": "+1.2%",
        "eth_sol_spent": "0.5 SOL",
        "eth_sol_received": "0",
        "tokens_bought": "1.2M",
        "tokens_sold": "0",
        "avg_buy_price_solOrEth": "0.00000041",
        "metadata": {
            "llmValidation": {
                "decision": "APPROVE",
                "waitUntil": None,
                "confidence": 0.8,
                "validatedAt": "2026-11-01T09:59:00.000Z",
            },
            "other": [1, 2, {"x": None}],
        },
        "latest_evaluation": {
            "id": 11,
            "type": "TOKEN_BUY",
            "passed": True,
            "ai_score": 71.5,
            "internal_score": 64,
            "timestamp": "2026-11-01T09:58:00.000Z",
            "detection_price": 0.0001,
        },
        "price": "$0.00012",
        "price_change": "-3.5%",
        "volume24h": "$1.2M",
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not DROP}


DROP = object()


def page(items: list[Any], **top: Any) -> bytes:
    return orjson.dumps({"trades": items, "pagination": {"total": len(items)}, **top})


ODD_TRADES = [
    trade(),
    trade(id=None, quant_name=None, metadata=None, latest_evaluation=None),  # nulls
    trade(metadata={"llmValidation": None}),  # nested null
    trade(metadata={}, latest_evaluation={}),  # nested parents without the fields
    trade(metadata=DROP, latest_evaluation=DROP, price=DROP, open_date=DROP),  # absent keys
    {},  # nothing at all
    trade(extra={"deep": [1, {"a": "b"}]}, more=[None, True], x="y"),  # unknown fields
    # wrong types: every leaf is Any, the converters judge (and count) them
    trade(id="12", token_id=3.0, quant_name=5, token_symbol=17, chain=True),
    trade(id=1.5, duration=90, buy_cost_usd=12.5, roi=None, price=[1, 2], volume24h={"a": 1}),
    trade(status=3, result=False, token_name={"n": 1}, close_date=7, open_date="not a date"),
    trade(
        latest_evaluation={
            "id": "x",
            "type": 4,
            "passed": "yes",
            "ai_score": "high",
            "internal_score": None,
            "timestamp": 12,
            "detection_price": True,
            "unknown": {"k": [1]},
        },
        metadata={"llmValidation": {"decision": 1, "confidence": "0.5", "validatedAt": ""}},
    ),
]


@pytest.mark.parametrize("i", range(len(ODD_TRADES)))
def test_each_odd_trade_gives_the_same_row(i: int) -> None:
    pages = [page([ODD_TRADES[i]])]
    assert isinstance(decode(pages[0])["trades"][0], Item)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        pd.testing.assert_frame_equal(typed(pages), plain_frame(pages))


def test_odd_trades_together_give_the_same_frame_and_the_same_warning() -> None:
    pages = [page(ODD_TRADES[:5]), page(ODD_TRADES[5:])]
    with pytest.warns(DataQualityWarning) as ours:
        got = typed(pages)
    items = [t for p in pages for t in orjson.loads(p)["trades"]]
    with pytest.warns(DataQualityWarning) as plain:
        want = build_frame(items, SPEC)
    pd.testing.assert_frame_equal(got, want)
    assert [str(w.message) for w in ours] == [str(w.message) for w in plain]


def test_the_body_keeps_the_total_and_summary_only_when_present() -> None:
    body = decode(page([trade()], summary={"totalTrades": 1}, other={"big": [1] * 10}))
    assert set(body) == {"trades", "pagination", "summary"}
    assert body["pagination"] == {"total": 1}
    assert body["summary"] == {"totalTrades": 1}
    bare = decode(orjson.dumps({"trades": []}))
    assert bare == {"trades": []}


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],  # not an object
        {"pagination": {"total": 1}},  # no item list
        {"trades": None, "pagination": {"total": 0}},
        {"trades": {"id": 1}},
        {"trades": [trade(), 5]},  # an item that is not an object
        {"trades": [trade(), None]},
        {"trades": [trade(metadata="text")]},  # a nested parent of another type
        {"trades": [trade(latest_evaluation=[1, 2])]},
        {"trades": [trade(metadata={"llmValidation": 3})]},
        "text",
        None,
    ],
)
def test_a_page_of_another_shape_is_the_plain_json(body: Any) -> None:
    content = orjson.dumps(body)
    assert decode(content) == orjson.loads(content)


def test_a_body_that_is_not_json_raises_the_orjson_error() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        decode(b"<html>login</html>")


def test_mixed_typed_and_plain_pages_give_the_same_frame() -> None:
    odd = page([trade(id=1), trade(metadata="text", id=2)])  # falls back to plain JSON
    pages = [page([trade(id=0)]), odd, page([trade(id=3), {}])]
    items = [t for p in pages for t in decode(p)["trades"]]
    assert [isinstance(t, Item) for t in items] == [True, False, False, True, True]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        pd.testing.assert_frame_equal(typed(pages), plain_frame(pages))


def test_empty_pages() -> None:
    pages = [page([])]
    pd.testing.assert_frame_equal(typed(pages), plain_frame(pages))


def test_records_still_rejects_non_objects() -> None:
    items = decode(page([trade()]))["trades"]
    assert records(items, "/api/trades") == items
    with pytest.raises(InvalidResponseError):
        records([*items, 5], "/api/trades")


def test_a_spec_with_a_path_that_is_column_and_parent_is_not_typed() -> None:
    assert page_decoder(_schemas.EVAL_DETAILS, "results") is None
    assert page_decoder(SPEC, "trades", ("pagination", "summary")) is not None


def test_real_sandbox_pages_give_the_same_frame(api: Callable[..., Any]) -> None:
    session = api()
    pages = []
    for n in (1, 2, 3):
        response = session.get(
            "/api/trades", params={"tradingStatus": "all", "page": n, "pageSize": 500}
        )
        assert response.status_code == 200
        pages.append(response.content)
    assert all(isinstance(t, Item) for p in pages for t in decode(p)["trades"])
    got = typed(pages)
    assert len(got) > 1000
    pd.testing.assert_frame_equal(got, plain_frame(pages))


def test_load_trades_equals_build_frame_on_the_pages_it_loaded(
    api: Callable[..., Any], sandbox: Any, tmp_path: Path
) -> None:
    from quantscope._http.client import Client

    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path)) as c:
        df = L.load_trades(1, trading_status="all", page_size=300, client=c)
    session = api()
    pages = []
    for n in range(1, df.attrs["quantscope"]["pages"] + 1):
        params = {"quantId": 1, "tradingStatus": "all", "page": n, "pageSize": 300}
        pages.append(session.get("/api/trades", params=params).content)
    want = plain_frame(pages)
    want.attrs = df.attrs
    pd.testing.assert_frame_equal(df, want)
    assert df.attrs["quantscope"]["summary"] == orjson.loads(pages[0])["summary"]


# --- through the client: a malformed page is the usual clear error, never msgspec's --------


def _trades_handler(items_of: Callable[[int], Any], total: int = 4) -> Callable[[Seen], Any]:
    def handler(seen: Seen) -> Any:
        n = int(seen.query.get("page", 1))
        return ok({"trades": items_of(n), "pagination": {"total": total}})

    return handler


def test_load_trades_with_a_non_object_item_raises_invalid_response(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(
        _trades_handler(lambda n: [trade(id=n), 5] if n == 2 else [trade(id=n), trade(id=9)])
    )
    with pytest.raises(InvalidResponseError, match="list of objects"):
        L.load_trades(page_size=2, client=fake_client(service, tmp_path))


# The fake service reports a Basic plan's daily limit: the frame says the plan's chains narrow it.
@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
def test_load_trades_with_odd_pages_through_the_client(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    def items(n: int) -> Any:
        return [trade(id=n, metadata="text"), trade(id=10 + n)] if n == 2 else [trade(id=n), {}]

    service = serve(_trades_handler(items))
    client = fake_client(service, tmp_path)
    with pytest.warns(DataQualityWarning, match="1 of 4 records hold none of its fields"):
        df = L.load_trades(page_size=2, client=client)  # {}: a row, but never a silent one
    want = build_frame([*items(1), *items(2)], SPEC, warn=False)
    want.attrs = df.attrs
    pd.testing.assert_frame_equal(df, want)
    assert df.attrs["quantscope"]["checks"]["missing"]["trade_id"] == 1  # the {}
    with pytest.warns(DataQualityWarning, match="1 of 4 records"):  # says it again
        again = L.load_trades(page_size=2, client=client)  # the HTTP cache
    pd.testing.assert_frame_equal(again, want)
    plain = client.get("/api/trades", {"page": 1, "pageSize": 2})  # decode is per get_pages call
    assert plain.data["trades"] == items(1)


# The fake service reports a Basic plan's daily limit: the frame says the plan's chains narrow it.
@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
def test_a_trades_page_without_the_item_list_is_an_error_not_an_empty_frame(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    # Until issue 14 this loaded as an empty frame: a silent wrong answer.
    service = serve(lambda s: ok({"pagination": {"total": 1}, "rows": [trade()]}))
    with pytest.raises(InvalidResponseError, match="/api/trades: expected 'trades' \\(a list\\)"):
        L.load_trades(client=fake_client(service, tmp_path))
