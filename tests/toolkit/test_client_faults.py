"""The client against a service that answers 200 with something it should not have.

Facts from the reliability battery (issue 14), each one a test: a truncated or non-JSON 200
was cached and replayed forever; wrong-shaped 200s gave empty frames or raw errors; a bogus
``pagination.total`` could spend a whole day of quota on empty pages; a key the server echoed
in a non-JSON body reached the error message and the on-disk cache; a corrupt cache file made
every ``connect()`` fail with advice about a writable directory. Counts are taken server-side.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from _helpers import KEY, FakeService, Seen, fake_client, ok

import quantscope as qs
from quantscope import loaders as L
from quantscope._errors import (
    CacheRecoveredWarning,
    IncompleteDataWarning,
    InvalidResponseError,
)
from quantscope._http.client import PageNumberPaging
from quantscope._http.quota import Spend

ECHO = b"<html>bad gateway; your key " + KEY.encode() + b" was refused upstream</html>"


def on_disk(tmp_path: Path, needle: bytes) -> list[str]:
    """The files under ``tmp_path`` that hold ``needle`` anywhere in their bytes."""
    return sorted(p.name for p in tmp_path.rglob("*") if p.is_file() and needle in p.read_bytes())


# --- bodies that cannot be decoded are never kept --------------------------------------------


def test_a_non_json_200_is_not_cached_and_is_asked_again(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: (200, {}, b"<html>maintenance</html>"))
    for _ in range(2):
        with pytest.raises(InvalidResponseError, match=r"/api/degen/config: .*not JSON"):
            L.load_playbook(1, client=fake_client(service, tmp_path))
    assert service.count() == 2  # the second client asked the service again
    assert fake_client(service, tmp_path).cache.info().entries == 0


def test_a_wrong_shaped_answer_is_one_clear_error_and_is_not_cached(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"unexpected": 1}))
    for _ in range(2):
        with pytest.raises(InvalidResponseError, match="/api/degen/config"):
            L.load_playbook(1, client=fake_client(service, tmp_path))
    assert service.count() == 2


@pytest.mark.parametrize(
    "body",
    [
        [1, 2, 3],  # a list where an object belongs: was a raw AttributeError
        {"trades": "x", "pagination": {"total": 1}},  # was a silent empty frame
        {"unexpected": 1},  # no 'trades' at all: was a silent empty frame
        {"trades": [1, 2], "pagination": {"total": 2}},  # items that are not objects
        {"trades": [{"foo": 1}], "pagination": {"total": 1}},  # was a silent row of NaN
    ],
)
def test_a_wrong_shaped_page_names_the_endpoint_never_a_silent_empty_frame(
    serve: Callable[..., FakeService], tmp_path: Path, body: Any
) -> None:
    service = serve(lambda s: ok(body))
    with pytest.raises(InvalidResponseError, match="/api/trades") as info:
        L.load_trades(1, client=fake_client(service, tmp_path))
    assert info.value.endpoint == "/api/trades"
    with pytest.raises(InvalidResponseError):
        L.load_trades(1, client=fake_client(service, tmp_path))
    assert service.count() == 2  # never kept in the cache


def test_evaluations_without_their_results_list_are_an_error_not_an_empty_frame(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"total": 0}))
    with pytest.raises(InvalidResponseError, match="/api/eval-results: expected 'results'"):
        L.load_evaluations(1, client=fake_client(service, tmp_path))


def test_an_empty_list_is_still_an_empty_frame(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"trades": [], "pagination": {"total": 0}}))
    with (
        pytest.warns(qs.EmptyResultWarning, match="no rows match quantId=1"),
        pytest.warns(IncompleteDataWarning, match="basic plan covers 1 chain"),
    ):
        frame = L.load_trades(1, client=fake_client(service, tmp_path))
    assert frame.empty
    assert "trade_id" in frame.columns


def test_only_the_bad_answer_of_many_is_asked_again(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    def handler(seen: Seen) -> Any:
        ident = int(seen.query["evaluationId"])
        if ident == 3 and sum(s.query == seen.query for s in service.seen) == 1:
            return 200, {}, b"{truncated"
        return ok({"evaluationResult": {"id": ident}, "evaluationResultDetails": []})

    service = serve(handler)
    with pytest.raises(InvalidResponseError, match="not JSON"):
        L.load_eval_details([1, 2, 3], client=fake_client(service, tmp_path))
    assert service.count() == 3
    L.load_eval_details([1, 2, 3], client=fake_client(service, tmp_path))
    assert [s.query["evaluationId"] for s in service.seen[3:]] == ["3"]


# --- a server-sent total is not trusted beyond what the pages show ---------------------------


def test_a_bogus_total_stops_at_the_first_empty_page(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    def handler(seen: Seen) -> Any:
        page = int(seen.query["page"])
        trades = [{"id": page * 10 + i} for i in range(10 if page < 3 else 4)] if page <= 3 else []
        return ok({"trades": trades, "pagination": {"total": 1_000_000}})

    service = serve(handler, limit=100, remaining=100)
    client = fake_client(service, tmp_path)
    with pytest.warns(
        Warning, match=r"said 1000000 items in all, but page 4 came back empty after 24"
    ):
        loaded = client.get_pages(
            "/api/trades",
            paging=PageNumberPaging(10),
            spend=Spend(confirm=True, partial=True),
        )
    assert len(loaded.items) == 24
    assert service.count() == 4  # not 100: the fourth page came back empty
    assert loaded.missing == ()


@pytest.mark.parametrize("total", [-5, "many", 1.5, None, True])
def test_a_total_that_is_not_a_count_pages_until_short(
    serve: Callable[..., FakeService], tmp_path: Path, total: Any
) -> None:
    def handler(seen: Seen) -> Any:
        page = int(seen.query["page"])
        trades = [{"id": page * 100 + i} for i in range(10 if page < 2 else 3)]
        return ok({"trades": trades, "pagination": {"total": total}})

    service = serve(handler)
    loaded = fake_client(service, tmp_path).get_pages("/api/trades", paging=PageNumberPaging(10))
    assert len(loaded.items) == 13
    assert loaded.total is None
    assert service.count() == 2


# --- the key, whatever the server echoes ---------------------------------------------------


def test_a_key_echoed_in_a_non_json_body_is_in_no_message_and_no_file(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: (200, {}, ECHO))
    with pytest.raises(InvalidResponseError) as info:
        L.load_playbook(1, client=fake_client(service, tmp_path))
    assert KEY not in str(info.value)
    assert "***" in str(info.value)
    assert on_disk(tmp_path, KEY.encode()) == []


def test_a_key_echoed_in_a_json_body_is_not_stored(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: ok({"echo": KEY, "ok": True}))
    client = fake_client(service, tmp_path)
    assert client.get("/api/trades/stats").data == {"echo": "***", "ok": True}
    client.close()
    assert on_disk(tmp_path, KEY.encode()) == []


def test_a_key_echoed_in_a_header_is_not_stored(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(lambda s: (200, {"X-Echo": KEY}, {"ok": True}))
    client = fake_client(service, tmp_path)
    client.get("/api/trades/stats")
    client.close()
    assert on_disk(tmp_path, KEY.encode()) == []


# --- a corrupt cache file is set aside, not a dead end --------------------------------------


def test_a_corrupt_cache_file_is_set_aside_with_one_warning(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    (tmp_path / "http_cache.sqlite").write_bytes(b"not a database " * 500)
    service = serve(lambda s: ok({"ok": True}))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        client = fake_client(service, tmp_path)
    recovered = [w for w in seen if issubclass(w.category, CacheRecoveredWarning)]
    assert len(recovered) == 1
    message = str(recovered[0].message)
    assert "http_cache.sqlite" in message
    assert "set aside" in message
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("http_cache.sqlite.corrupt")]
    assert len(aside) == 1
    assert aside[0].read_bytes().startswith(b"not a database")
    assert client.get("/api/trades/stats").data == {"ok": True}
    assert client.get("/api/trades/stats").provenance.from_cache  # the new cache works
    with closing(sqlite3.connect(tmp_path / "http_cache.sqlite")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
