"""Answers are checked, not trusted (issue 20, item 3): real sandbox data through a proxy that
breaks it on purpose, and scripted answers for what has no real data to break.

Each observation of the issue is a test: a service that ignores ``page`` gave 1,000 rows of
which 950 were duplicates, silently; overlapping pages and ids seen twice were kept twice; a
total the pages disagree with (more rows, fewer rows, a total that changes) said nothing;
``{"metrics": {"totalTrades": 1}}`` or nulls gave NaN silently; ``Retry-After: inf`` or a huge
integer raised a raw ``OverflowError``. The rules are in docs/service-contract.md, "How answers
are checked".
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _helpers import FakeService, Seen, fake_client, ok
from _helpers.proxy import (
    items_key,
    page_index,
    pages_ignored,
    rewriting,
    set_total,
    total_of,
)

from quantscope import loaders as L
from quantscope._errors import (
    DataQualityWarning,
    InconsistentAnswerWarning,
    InvalidResponseError,
    QuantscopeError,
    RateLimitError,
    ServerError,
)
from quantscope._http.client import Client
from quantscope._http.quota import _retry_after_s, parse_reset, quota_from_headers
from quantscope._typed import schemas as _schemas
from quantscope.sandbox.serve import SandboxServer

QUANT = 2
SIZE = 20  # small pages: a load of this quant's trades (618) is 31 of them


def trades_of(c: Client) -> pd.DataFrame:
    return L.load_trades(QUANT, page_size=SIZE, confirm=True, client=c)


@pytest.fixture
def clean(sandbox: SandboxServer, client: Client) -> pd.DataFrame:
    """The quant's trades, straight from the sandbox (what every rewrite is compared with)."""
    return trades_of(client)


def through(serve: Callable[..., FakeService], sandbox: SandboxServer, rewrite: Any) -> FakeService:
    return serve(rewriting(sandbox.url, rewrite), limit=100_000, remaining=100_000)


def proxied(service: FakeService, tmp_path: Path, sandbox: SandboxServer) -> Client:
    return Client(
        service.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path / "proxy"), progress=False
    )


def checks(frame: pd.DataFrame | pd.Series) -> dict[str, Any]:
    return dict(frame.attrs["quantscope"].get("checks") or {})


# --- pages that repeat: the service ignores paging --------------------------------------------


def test_a_service_ignoring_page_is_stopped_at_page_two(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    assert len(clean) > 10 * SIZE  # the load needs many pages
    service = serve(pages_ignored(sandbox.url), limit=100_000, remaining=100_000)
    with pytest.raises(InvalidResponseError, match=r"page 2 \(page=2.*\) repeats page 1"):
        trades_of(proxied(service, tmp_path, sandbox))
    assert service.count("/api/trades") == 2  # not the 40 pages the total asked for


def test_an_offset_ignored_is_stopped_at_the_second_page_too(
    serve: Callable[..., FakeService], sandbox: SandboxServer, tmp_path: Path
) -> None:
    service = serve(pages_ignored(sandbox.url), limit=100_000, remaining=100_000)
    c = proxied(service, tmp_path, sandbox)
    with pytest.raises(InvalidResponseError, match=r"page 2 \(offset=500.*\) repeats page 1"):
        L.load_evaluations(QUANT, page_size=500, max_pages=20, confirm=True, client=c)
    assert service.count("/api/eval-results") == 2
    # the repeating page is not kept: the same load asks for it again (and fails the same way)
    with pytest.raises(InvalidResponseError):
        L.load_evaluations(QUANT, page_size=500, max_pages=20, confirm=True, client=c)
    assert service.count("/api/eval-results") == 3


# --- ids seen twice: kept once, counted --------------------------------------------------------


def test_ids_seen_twice_are_kept_once_with_a_warning_and_a_count(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    def twice(seen: Seen, body: Any) -> Any:
        items = body[items_key(body)]
        body[items_key(body)] = [*items, items[0]]  # every page ends with its first item again
        return body

    service = through(serve, sandbox, twice)
    pages = -(-len(clean) // SIZE)
    with pytest.warns(InconsistentAnswerWarning, match=rf"{pages} items came twice .*kept once"):
        got = trades_of(proxied(service, tmp_path, sandbox))
    pd.testing.assert_frame_equal(got, clean)
    assert checks(got) == {"duplicates": pages}


def test_overlapping_pages_are_kept_once(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    def overlap(seen: Seen, body: Any) -> Any:  # each page repeats the previous one's last 3
        index = page_index(seen)
        if index:
            earlier = forward_page(sandbox, seen, index - 1)
            body["trades"] = [*earlier["trades"][-3:], *body["trades"]]
        return body

    service = through(serve, sandbox, overlap)
    twice = 3 * (-(-len(clean) // SIZE) - 1)
    with pytest.warns(InconsistentAnswerWarning, match=rf"^quantscope: /api/trades: {twice} items"):
        got = trades_of(proxied(service, tmp_path, sandbox))
    pd.testing.assert_frame_equal(got, clean)
    assert checks(got) == {"duplicates": twice}


def test_a_shifted_page_is_kept_once_and_the_total_says_what_did_not_arrive(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    def shifted(seen: Seen, body: Any) -> Any:  # from page 2 on, the list starts 3 items early
        index = page_index(seen)
        if index:
            earlier = forward_page(sandbox, seen, index - 1)
            body["trades"] = [*earlier["trades"][-3:], *body["trades"][:-3]]
        return body

    service = through(serve, sandbox, shifted)
    with pytest.warns(InconsistentAnswerWarning) as caught:
        got = trades_of(proxied(service, tmp_path, sandbox))
    assert len(caught) == 1  # one warning for the load
    text = str(caught[0].message)
    assert "3 items came twice" in text
    assert f"said {len(clean)} items" in text
    assert checks(got) == {
        "duplicates": 3,
        "total": {"said": len(clean), "received": len(clean) - 3},
    }
    assert got["trade_id"].is_unique
    assert set(got["trade_id"]) == set(clean["trade_id"]) - set(clean["trade_id"].iloc[-3:])


def forward_page(sandbox: SandboxServer, seen: Seen, index: int) -> Any:
    from _helpers.proxy import forward

    query = {**seen.query, "page": str(index + 1)}
    return forward(sandbox.url, seen, query).json()


# --- totals that disagree with the pages -------------------------------------------------------


def test_a_total_below_what_arrived_warns_and_the_rows_are_kept(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    service = through(serve, sandbox, lambda s, b: set_total(b, total_of(b) - 5))
    with pytest.warns(
        InconsistentAnswerWarning, match=rf"said {len(clean) - 5} items.*{len(clean)} arrived"
    ):
        got = trades_of(proxied(service, tmp_path, sandbox))
    pd.testing.assert_frame_equal(got, clean)
    assert checks(got) == {"total": {"said": len(clean) - 5, "received": len(clean)}}


def test_pages_capped_below_the_size_asked_for_do_not_pass_for_the_whole_list(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    def capped(seen: Seen, body: Any) -> Any:
        body[items_key(body)] = body[items_key(body)][:12]
        return body

    service = through(serve, sandbox, capped)
    with pytest.warns(InconsistentAnswerWarning, match=rf"said {len(clean)} items"):
        got = trades_of(proxied(service, tmp_path, sandbox))
    pages = -(-len(clean) // SIZE)
    received = (pages - 1) * 12 + min(12, len(clean) - (pages - 1) * SIZE)
    assert checks(got) == {"total": {"said": len(clean), "received": received}}


def test_a_total_that_changes_between_pages_warns(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    def drifting(seen: Seen, body: Any) -> Any:
        return set_total(body, total_of(body) + (1 if page_index(seen) == 3 else 0))

    service = through(serve, sandbox, drifting)
    with pytest.warns(InconsistentAnswerWarning, match=r"the total changed between pages"):
        got = trades_of(proxied(service, tmp_path, sandbox))
    pd.testing.assert_frame_equal(got, clean)
    assert checks(got) == {"totals": [len(clean), len(clean) + 1]}


def test_a_clean_load_records_no_checks(clean: pd.DataFrame) -> None:
    assert "checks" not in clean.attrs["quantscope"]


# --- fields the spec promises, missing or null -------------------------------------------------


def test_every_spec_promises_only_its_own_columns() -> None:
    for spec in _schemas.ALL_SPECS:
        assert set(spec.required) <= set(spec.names), spec.name
    assert "closed_at" not in _schemas.TRADES.required  # empty while a trade is open
    assert "decision" not in _schemas.TRADES.required  # metadata is optional in the spec


def test_metrics_missing_three_of_four_keys_warn_naming_them(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"metrics": {"totalTrades": 1}}), limit=1234, remaining=1234)
    with pytest.warns(DataQualityWarning, match=r"3 promised value\(s\) are absent or null") as w:
        stats = L.load_trade_stats(client=fake_client(service, tmp_path))
    assert len(w) == 1
    assert "total_volume_usd (1)" in str(w[0].message)
    assert stats["total_trades"] == 1
    assert checks(stats) == {
        "missing": {"total_volume_usd": 1, "trades_weekly_change": 1, "volume_weekly_change": 1}
    }


def test_nulls_in_promised_fields_of_a_paged_load_are_counted_once(
    serve: Callable[..., FakeService], sandbox: SandboxServer, clean: pd.DataFrame, tmp_path: Path
) -> None:
    def nulls(seen: Seen, body: Any) -> Any:
        for trade in body["trades"][:2]:
            trade["pnl_usd"] = None
            trade.pop("token_symbol")
        return body

    service = through(serve, sandbox, nulls)
    with pytest.warns(DataQualityWarning) as caught:
        got = trades_of(proxied(service, tmp_path, sandbox))
    assert len(caught) == 1
    n = 2 * -(-len(clean) // SIZE)
    text = str(caught[0].message)
    assert f"pnl_usd ({n})" in text
    assert f"token_symbol ({n})" in text
    assert checks(got) == {"missing": {"token_symbol": n, "pnl_usd": n}}
    # the second load, from the cache, says the same
    with pytest.warns(DataQualityWarning, match="pnl_usd"):
        again = trades_of(proxied(service, tmp_path, sandbox))
    assert checks(again) == checks(got)


# --- odd Retry-After values --------------------------------------------------------------------

ODD_RETRY_AFTER = [
    "inf",
    "-inf",
    "nan",
    "1e400",
    "99999999999999999999999999",
    "-5",
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Fri, 31 Dec 9999 23:59:59 GMT",
    "soon",
    "",
    "0x10",
]


@pytest.mark.parametrize("value", ODD_RETRY_AFTER)
def test_retry_after_is_a_bounded_number_or_none(value: str) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    got = _retry_after_s({"Retry-After": value}, now)
    assert got is None or 0.0 <= got <= 86_400.0


def test_retry_after_rule() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def read(value: str) -> float | None:
        return _retry_after_s({"Retry-After": value}, now)

    assert read("7") == 7.0
    assert read("0.25") == 0.25
    assert read("99999999999999999999999999") == 86_400.0  # capped at a day
    assert read("Fri, 31 Dec 9999 23:59:59 GMT") == 86_400.0
    assert read("Sun, 06 Nov 1994 08:49:37 GMT") == 0.0  # in the past: now
    for bad in ("inf", "nan", "-5", "1e400", "soon", "", "-inf"):
        assert read(bad) is None, bad


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("value", ODD_RETRY_AFTER)
def test_odd_retry_after_through_the_client_is_a_quantscope_error(
    serve: Callable[..., FakeService], tmp_path: Path, status: int, value: str
) -> None:
    # no readable reset of its own: the client's only clue to when the quota comes back
    headers = {"Retry-After": value, "X-RateLimit-Reset": "unknown"}
    service = serve(lambda s: (status, headers, {"error": {"code": "x"}}))
    expected = RateLimitError if status == 429 else ServerError
    with pytest.raises(expected):
        fake_client(service, tmp_path).get("/api/trades/stats")


@pytest.mark.parametrize(
    "value", ["inf", "nan", "1e400", "-1e300", "99999999999999999999999", "garbage"]
)
def test_odd_rate_limit_headers_are_unknown_not_a_crash(
    serve: Callable[..., FakeService], tmp_path: Path, value: str
) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_reset(value, now) is None or parse_reset(value, now).year < 10_000
    quota = quota_from_headers(
        {"X-RateLimit-Limit": value, "X-RateLimit-Remaining": value, "X-RateLimit-Reset": value},
        now,
    )
    assert quota is None or all(
        n is None or (isinstance(n, int) and n >= 0) for n in (quota.limit, quota.remaining)
    )

    def answer(s: Seen) -> Any:
        return 200, {"X-RateLimit-Remaining": value}, {"metrics": {}}

    service = serve(answer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        with contextlib.suppress(QuantscopeError):
            fake_client(service, tmp_path).get("/api/trades/stats")
