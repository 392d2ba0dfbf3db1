"""Decoding trades: cached JSON pages -> the typed trades frame, against the naive path and floor.

The input is what the cache holds after ``load_trades`` fetched 100k trades: 100 JSON bodies of
1,000 trades each. They are made from the sandbox's own trades (one scale-1 world, ~4k trades,
fetched with plain requests) replicated to the wanted count with *new* values: every copy gets
new ids, tokens, dates and amounts, formatted with the sandbox's display formatters
(``quantscope.sandbox.display``), so the display strings are as varied as real ones (57k
distinct ``pnl_usd`` texts in 100k trades: cents collide; 100k distinct ``tokens_bought``) and
no parser can win by caching repeated text.

Cases, each from the JSON bytes of every page to a frame:

* **ours**: what ``load_trades`` does after the cache: each page decoded by the trades page
  decoder (``loaders.trades.TRADES_DECODE``, as ``Client._decode`` with ``decode=``: msgspec
  straight into the spec's fields, orjson for a page of another shape), the pages' items
  joined, ``records`` checked and ``typed_frame`` (the ``TRADES`` frame from the decoded items,
  identical to ``build_frame`` on the plain JSON, plus ``attrs``);
* **naive**: ``json.loads``, ``pd.json_normalize``, then each column cast the way one writes it
  by hand: display strings parsed cell by cell (``Series.map`` of a regex function),
  ``pd.to_datetime`` with its default format inference, ``astype`` for the rest;
* **floor (DataFrame)**: ``orjson.loads`` (the fastest JSON parser installed) and
  ``pd.DataFrame(records)``: no flattening, no parsing, no dtypes;
* **floor (json_normalize)**: ``orjson.loads`` and ``pd.json_normalize(records)``: flattened,
  still untyped;
* **json only**: ``orjson.loads`` and the items joined (the part of every case above that is
  JSON decoding; reported so the rest can be attributed).

Run: ``python -m benchmarks.bench_decode [--trades N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import orjson
import pandas as pd
import requests

from benchmarks._common import (
    BenchResult,
    Case,
    bench_data_dir,
    measure,
    print_result,
    ratio,
)
from quantscope._typed.parse import parse_number
from quantscope._typed.schemas import TRADES
from quantscope.loaders._base import records, typed_frame
from quantscope.loaders.trades import TRADES_DECODE
from quantscope.sandbox import display
from quantscope.sandbox.datadir import copy_world, ensure_world
from quantscope.sandbox.serve import SandboxServer
from quantscope.sandbox.trade_json import iso_ms, trade_date

DEFAULT_TRADES = 100_000
DEFAULT_REPEAT = 5
PAGE_SIZE = 1000
ENDPOINT = "/api/trades"

OURS = "ours"
NAIVE = "naive"
FLOOR = "floor (DataFrame)"
FLOOR_NORMALIZE = "floor (json_normalize)"
JSON_ONLY = "json only"

# --- input: the sandbox's trades, replicated with new values -------------------------------


def fetch_base_trades(
    data_dir: Path | str | None = None, seed: int = 7, scale: int = 1
) -> list[dict[str, Any]]:
    """Every trade of a sandbox world (``tradingStatus=all``), fetched page by page over HTTP.

    The world is built in ``data_dir`` once and reused; it is served from a copy, so the quota
    this spends never accumulates in the kept world.
    """
    info = ensure_world(data_dir if data_dir is not None else bench_data_dir(), seed, scale)
    trades: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-") as tmp:
        served = copy_world(info, tmp)
        with SandboxServer(served) as server, requests.Session() as session:
            session.headers["X-API-Key"] = server.keys["enterprise"]
            page, pages = 1, 1
            while page <= pages:
                response = session.get(
                    server.url + ENDPOINT,
                    params={"tradingStatus": "all", "pageSize": str(PAGE_SIZE), "page": str(page)},
                    timeout=120,
                )
                response.raise_for_status()
                body = response.json()
                trades.extend(body["trades"])
                pages = body["pagination"]["totalPages"]
                page += 1
    return trades


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SUFFIX_DIGITS = "123456789abcdef"  # valid in base58 (Solana) and hex (EVM) addresses


def _ms(text: str) -> int | None:
    """Epoch ms of a trade date (``YYYY-MM-DD HH:MM:SS``) or ISO time; None for ``""``."""
    if not text:
        return None
    when = datetime.fromisoformat(text)
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return (when - _EPOCH) // timedelta(milliseconds=1)


def _suffix(copy: int) -> str:
    digits = ""
    for _ in range(4):
        copy, d = divmod(copy, len(_SUFFIX_DIGITS))
        digits += _SUFFIX_DIGITS[d]
    return digits


class _Base(NamedTuple):
    """A served trade and the numbers behind its display strings."""

    trade: dict[str, Any]
    open_ms: int
    closed: bool
    duration_s: float
    buy: float
    sell: float
    pnl: float
    native_spent: float
    native_received: float
    tokens_bought: float
    tokens_sold: float
    avg_price: float
    validated_ms: int
    wait_ms: int
    eval_ms: int


def _base(trade: dict[str, Any]) -> _Base:
    validation = trade["metadata"]["llmValidation"]
    evaluation = trade["latest_evaluation"]
    open_ms = _ms(trade["open_date"])
    validated_ms = _ms(validation["validatedAt"])
    wait_ms = _ms(validation["waitUntil"])
    eval_ms = _ms(evaluation["timestamp"])
    assert open_ms is not None
    assert validated_ms is not None
    assert wait_ms is not None
    assert eval_ms is not None
    return _Base(
        trade,
        open_ms,
        trade["close_date"] != "",
        float(trade["duration"]),
        parse_number(trade["buy_cost_usd"]),
        parse_number(trade["sell_revenue_usd"]),
        parse_number(trade["pnl_usd"]),
        parse_number(trade["eth_sol_spent"]),
        parse_number(trade["eth_sol_received"]),
        parse_number(trade["tokens_bought"]),
        parse_number(trade["tokens_sold"]),
        parse_number(trade["avg_buy_price_solOrEth"]),
        validated_ms,
        wait_ms,
        eval_ms,
    )


def _token_now(trade: Mapping[str, Any], rng: np.random.Generator) -> tuple[str, str, str]:
    """New current figures (price, 24 h change, 24 h volume) for a copy of a trade's token."""
    price = parse_number(trade["price"]) * math.exp(rng.normal(0.0, 0.4))
    change = parse_number(trade["price_change"]) + rng.normal(0.0, 8.0)
    volume = parse_number(trade["volume24h"]) * math.exp(rng.normal(0.0, 0.5))
    return display.price(price), display.signed_pct(change), display.compact_usd(volume)


def _vary(
    b: _Base,
    copy: int,
    spans: tuple[int, int, int],
    token: tuple[str, str, str],
    draws: Sequence[float],
) -> dict[str, Any]:
    """A new trade like ``b.trade``: new ids, token, dates and amounts, consistent with each
    other and formatted as the service formats them."""
    t = b.trade
    id_span, token_span, eval_span = spans
    size, outcome, price_factor, duration_factor, shift_s, confidence, score = draws
    chain = t["token_chain"]
    token_id = int(t["token_id"]) + copy * token_span
    shift_ms = int(shift_s) * 1000
    open_ms = b.open_ms + shift_ms
    duration = max(1, round(b.duration_s * duration_factor))
    buy = b.buy * size
    native_spent = b.native_spent * size
    tokens_bought = b.tokens_bought * size * price_factor
    avg_price = native_spent / tokens_bought if tokens_bought > 0 else b.avg_price
    if b.closed:
        sell = b.sell * size * outcome
        native_received = b.native_received * size * outcome
        tokens_sold = tokens_bought if b.tokens_sold > 0 else 0.0
        pnl = sell - buy
    else:
        sell, native_received = 0.0, 0.0
        tokens_sold = b.tokens_sold * size * price_factor
        pnl = b.pnl * size * outcome
    roi = 100.0 * pnl / buy if buy > 0 else 0.0
    result = "Profit" if pnl >= 0.005 else "Loss" if pnl <= -0.005 else "Breakeven"
    validation = t["metadata"]["llmValidation"]
    evaluation = t["latest_evaluation"]
    buy_text = display.usd(buy)
    return {
        **t,
        "id": str(int(t["id"]) + copy * id_span),
        "token_id": str(token_id),
        "token_image": t["token_image"].replace(f"/{t['token_id']}.", f"/{token_id}."),
        "token_address": t["token_address"][:-4] + _suffix(copy),
        "open_date": trade_date(open_ms),
        "close_date": trade_date(open_ms + duration * 1000) if b.closed else "",
        "duration": str(duration),
        "buy_cost_usd": buy_text,
        "sell_revenue_usd": display.usd(sell),
        "pnl_usd": display.signed_usd(pnl),
        "roi": display.signed_pct(roi),
        "eth_sol_spent": display.native(native_spent, chain),
        "eth_sol_received": display.native(native_received, chain),
        "tokens_bought": display.plain(tokens_bought),
        "tokens_sold": display.plain(tokens_sold),
        "avg_buy_price_solOrEth": display.plain(avg_price),
        "result": result,
        "price": token[0],
        "price_change": token[1],
        "volume24h": token[2],
        "metadata": {
            "llmValidation": {
                **validation,
                "waitUntil": iso_ms(b.wait_ms + shift_ms),
                "confidence": round(min(1.0, max(0.0, validation["confidence"] + confidence)), 3),
                "validatedAt": iso_ms(b.validated_ms + shift_ms),
            }
        },
        "latest_evaluation": {
            **evaluation,
            "id": evaluation["id"] + copy * eval_span,
            "ai_score": round(min(100.0, max(0.0, evaluation["ai_score"] + score)), 2),
            "internal_score": round(min(100.0, max(0.0, evaluation["internal_score"] - score)), 2),
            "timestamp": iso_ms(b.eval_ms + shift_ms),
            "detection_price": evaluation["detection_price"] * price_factor,
        },
    }


def replicate(base: Sequence[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` trades: ``base`` as served, then copies of it with new values (see module doc).

    Deterministic for a given ``base``, ``n`` and ``seed``.
    """
    if not base:
        raise ValueError("no trades to replicate")
    out = list(base[:n])
    bases = [_base(t) for t in base]
    spans = (
        max(int(t["id"]) for t in base) + 1,
        max(int(t["token_id"]) for t in base) + 1,
        max(int(t["latest_evaluation"]["id"]) for t in base) + 1,
    )
    rng = np.random.default_rng(seed)
    copy = 0
    while len(out) < n:
        copy += 1
        count = min(len(bases), n - len(out))
        draws = np.column_stack(
            [
                np.exp(rng.normal(0.0, 0.5, count)),  # position size
                np.exp(rng.normal(0.0, 0.15, count)),  # outcome
                np.exp(rng.normal(0.0, 0.3, count)),  # token price at entry
                np.exp(rng.normal(0.0, 0.4, count)),  # holding time
                rng.integers(-30 * 86_400, 30 * 86_400, count),  # dates shifted, seconds
                rng.normal(0.0, 0.05, count),  # validation confidence
                rng.normal(0.0, 5.0, count),  # scores
            ]
        ).tolist()
        tokens: dict[str, tuple[str, str, str]] = {}
        for b, d in zip(bases[:count], draws, strict=True):
            token = tokens.get(b.trade["token_id"])
            if token is None:
                token = tokens[b.trade["token_id"]] = _token_now(b.trade, rng)
            out.append(_vary(b, copy, spans, token, d))
    return out


def to_pages(trades: Sequence[dict[str, Any]], page_size: int = PAGE_SIZE) -> list[bytes]:
    """The trades as the JSON bodies of ``/api/trades`` pages (``trades`` and ``pagination``)."""
    total = len(trades)
    count = max(1, math.ceil(total / page_size))
    return [
        orjson.dumps(
            {
                "trades": trades[i * page_size : (i + 1) * page_size],
                "pagination": {
                    "total": total,
                    "page": i + 1,
                    "pageSize": page_size,
                    "totalPages": count,
                },
            }
        )
        for i in range(count)
    ]


def make_pages(
    n_trades: int = DEFAULT_TRADES, *, data_dir: Path | str | None = None, seed: int = 0
) -> tuple[list[bytes], dict[str, Any]]:
    """The benchmark's input pages and facts about them (counts, sizes, distinct texts)."""
    base = fetch_base_trades(data_dir)
    trades = replicate(base, n_trades, seed)
    pages = to_pages(trades)
    facts = {
        "trades": len(trades),
        "sandbox trades replicated": len(base),
        "pages": len(pages),
        "JSON MB": round(sum(len(p) for p in pages) / 1e6, 1),
        "distinct pnl_usd texts": len({t["pnl_usd"] for t in trades}),
        "distinct buy_cost_usd texts": len({t["buy_cost_usd"] for t in trades}),
        "distinct tokens_bought texts": len({t["tokens_bought"] for t in trades}),
        "distinct open_date texts": len({t["open_date"] for t in trades}),
        "distinct price texts": len({t["price"] for t in trades}),
    }
    return pages, facts


# --- the cases -------------------------------------------------------------------------------


def _items(bodies: Sequence[Any]) -> list[Any]:
    # As _http.paging._pages_result / PageNumberPaging.items_of: every page's list, joined.
    return [item for body in bodies for item in body["trades"]]


def json_only(pages: Sequence[bytes]) -> list[Any]:
    """The JSON part of every case: orjson per page, items joined."""
    return _items([orjson.loads(p) for p in pages])


def decode_ours(pages: Sequence[bytes]) -> pd.DataFrame:
    """What ``load_trades`` does with the pages the cache returns (``Client._decode`` with the
    loader's ``decode``, then ``_trades_frame``)."""
    assert TRADES_DECODE is not None
    items = _items([TRADES_DECODE(p) for p in pages])
    return typed_frame(records(items, ENDPOINT), TRADES, None)


def floor_dataframe(pages: Sequence[bytes]) -> pd.DataFrame:
    """The floor: the fastest JSON parser and an untyped DataFrame of the records."""
    return pd.DataFrame(json_only(pages))


def floor_normalize(pages: Sequence[bytes]) -> pd.DataFrame:
    """A second floor: the fastest JSON parser and ``pd.json_normalize`` (flat, untyped)."""
    return pd.json_normalize(json_only(pages))


_NAIVE_NUMBER = re.compile(r"([+-]?)\$?([+-]?)([\d,]*\.?\d*)\s*([KMB%]|SOL|ETH|BNB)?")
_NAIVE_MULTIPLIER = {"K": 1e3, "M": 1e6, "B": 1e9}


def naive_number(text: object) -> float:
    """Display string -> float the way one writes it by hand: a regex, per cell."""
    if not isinstance(text, str):
        return math.nan
    match = _NAIVE_NUMBER.fullmatch(text.strip())
    if match is None:
        return math.nan
    sign, sign2, digits, suffix = match.groups()
    try:
        value = float(digits.replace(",", ""))
    except ValueError:
        return math.nan
    if "-" in (sign, sign2):
        value = -value
    return value * _NAIVE_MULTIPLIER.get(suffix or "", 1.0)


def decode_naive(pages: Sequence[bytes]) -> pd.DataFrame:
    """The naive path: stdlib json, json_normalize, then column casts with per-cell parsing."""
    flat = pd.json_normalize([item for p in pages for item in json.loads(p)["trades"]])
    columns: dict[str, Any] = {}
    for col in TRADES.columns:
        raw = flat[col.source]
        if col.kind == "number_text":
            columns[col.name] = raw.map(naive_number) * col.scale
        elif col.kind in ("iso", "trade_date"):
            columns[col.name] = pd.to_datetime(raw, utc=True).dt.as_unit("ms")
        elif col.kind == "int":
            columns[col.name] = pd.to_numeric(raw).astype("Int64")
        elif col.kind == "float":
            columns[col.name] = raw.astype("float64") * col.scale
        elif col.kind == "bool":
            columns[col.name] = raw.astype("boolean")
        else:  # category, string
            columns[col.name] = raw.astype(col.dtype)
    return pd.DataFrame(columns)


def check_same_frame(ours: pd.DataFrame, naive: pd.DataFrame) -> None:
    """Assert that the naive path computed what ours did (so the comparison is fair)."""
    assert list(ours.columns) == TRADES.names
    assert {c: str(t) for c, t in ours.dtypes.items()} == TRADES.dtypes()
    assert list(naive.columns) == TRADES.names
    assert len(naive) == len(ours)
    for col in TRADES.columns:
        a, b = ours[col.name], naive[col.name]
        if col.dtype == "float64":
            np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=1e-12, equal_nan=True)
        elif col.kind in ("iso", "trade_date"):
            assert a.equals(b.astype(a.dtype)), col.name
        else:
            assert a.astype(object).equals(b.astype(a.dtype).astype(object)), col.name


def _check(results: Mapping[str, object]) -> None:
    ours = results[OURS]
    assert isinstance(ours, pd.DataFrame)
    naive = results[NAIVE]
    assert isinstance(naive, pd.DataFrame)
    check_same_frame(ours, naive)
    for floor in (FLOOR, FLOOR_NORMALIZE):
        frame = results[floor]
        assert isinstance(frame, pd.DataFrame)
        assert len(frame) == len(ours)
    assert len(results[JSON_ONLY]) == len(ours)  # type: ignore[arg-type]


def run(
    n_trades: int = DEFAULT_TRADES,
    repeat: int = DEFAULT_REPEAT,
    *,
    data_dir: Path | str | None = None,
    seed: int = 0,
) -> BenchResult:
    """Measure the decode cases on ``n_trades`` trades, ``repeat`` timed runs each."""
    pages, facts = make_pages(n_trades, data_dir=data_dir, seed=seed)
    cases: list[Case[None]] = [
        Case(OURS, lambda _: decode_ours(pages)),
        Case(NAIVE, lambda _: decode_naive(pages)),
        Case(FLOOR, lambda _: floor_dataframe(pages)),
        Case(FLOOR_NORMALIZE, lambda _: floor_normalize(pages)),
        Case(JSON_ONLY, lambda _: json_only(pages)),
    ]
    timings = measure(cases, repeat, check=_check)
    facts["json only (orjson) / ours"] = f"{timings[JSON_ONLY].best / timings[OURS].best:.0%}"
    ratios = [
        ratio(timings, NAIVE, OURS, 3.0, at_least=True),
        ratio(timings, OURS, FLOOR, 1.5, at_least=False),
        ratio(timings, OURS, FLOOR_NORMALIZE, None),
    ]
    return BenchResult(
        "decode",
        {"trades": n_trades, "repeat": repeat, "page size": PAGE_SIZE},
        timings,
        ratios,
        facts,
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_decode")
    parser.add_argument("--trades", type=int, default=DEFAULT_TRADES)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args(argv)
    result = run(args.trades, args.repeat)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
