"""The HTTP cache's storage format (``_http.cacheformat``): a JSON head and the body, no pickle.

Answers of the real sandbox are stored and read back field by field; every row of a cache file
is in the format; a cache file an older quantscope wrote (requests-cache's pickles) is set
aside unread with one warning, and a pickle planted in a current file is a miss, never
unpickled, whatever reads it (a load, the frame-cache check, ``clear``, a write's invalidation).
"""

from __future__ import annotations

import json
import pickle
import sqlite3
import warnings
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import requests_cache
from _helpers.canary import Canary
from requests.structures import CaseInsensitiveDict
from requests_cache import CachedResponse
from requests_cache.models import CachedRequest

import quantscope.loaders as L
from quantscope._errors import CacheRecoveredWarning
from quantscope._http.cacheformat import (
    FORMAT_VERSION,
    MAGIC,
    STAMP_BYTES,
    dumps,
    loads,
    stamps_of,
)
from quantscope._http.cachestore import BODY_FILE_BYTES, bodies_dir
from quantscope._http.client import Client, OffsetPaging
from quantscope.sandbox.serve import SandboxServer

CACHE_FILE = "http_cache.sqlite"


def rows(path: Path) -> list[tuple[str, bytes]]:
    with closing(sqlite3.connect(path)) as db:
        return [(k, bytes(v)) for k, v in db.execute("SELECT key, value FROM responses")]


def details(c: Client, ids: list[int]) -> Any:
    return L.load_eval_details(ids, client=c)


# --- the format ---------------------------------------------------------------------------


def test_a_stored_answer_reads_back_field_by_field(client: Client) -> None:
    before = datetime.now(UTC)
    fetched = client.get("/api/eval-details", {"evaluationId": 7})
    ((key, value),) = rows(client.cache.path)
    stored = client.cache.lookup(client._prepare("GET", "/api/eval-details", {"evaluationId": 7}))
    assert stored is not None
    assert stored.cache_key == key
    assert stored.status_code == 200
    assert stored.reason == "OK"
    assert stored.url.endswith("/api/eval-details?evaluationId=7")
    assert stored.json() == fetched.data
    assert stored.headers["Content-Type"] == "application/json"
    assert stored.request.method == "GET"
    assert stored.request.url == stored.url
    assert stored.request.headers["X-API-Key"] == "REDACTED"
    assert stored.expires is None  # details never expire
    assert before <= stored.created_at <= datetime.now(UTC)
    # The layout: magic, the stamps, the head's length, the head (JSON), the body as served.
    assert value.startswith(MAGIC)
    head_size = int.from_bytes(value[24:28], "little")
    head = json.loads(value[STAMP_BYTES : STAMP_BYTES + head_size])
    assert head["status"] == 200
    assert head["request"]["method"] == "GET"
    assert value[STAMP_BYTES + head_size :] == stored.content
    assert stamps_of(value[:STAMP_BYTES]) == (stored.created_at, None)


def test_stamps_round_trip_to_the_microsecond() -> None:
    created = datetime(2026, 11, 25, 1, 2, 3, 456789, tzinfo=UTC)
    expires = created + timedelta(minutes=10, microseconds=1)
    response = CachedResponse(
        content=b'{"a": 1}',
        created_at=created,
        expires=expires,
        status_code=200,
        url="http://quantscope.service/api/trades",
        headers=CaseInsensitiveDict({"Content-Type": "application/json"}),
        request=CachedRequest(method="GET", url="http://quantscope.service/api/trades"),
    )
    value = dumps(response)
    assert stamps_of(value[:STAMP_BYTES]) == (created, expires)
    back = loads(value)
    assert back is not None
    assert (back.created_at, back.expires, back.content) == (created, expires, b'{"a": 1}')
    assert back.json() == {"a": 1}
    assert not back.history


def test_bodies_and_redirects_of_any_bytes_round_trip() -> None:
    """Bytes that are not UTF-8 (in a body, a request body, a redirect's body) come back equal."""
    odd = bytes(range(256))
    hop = CachedResponse(
        content=odd,
        status_code=302,
        headers=CaseInsensitiveDict({"Location": "/b"}),
        url="http://x/a",
        request=CachedRequest(method="GET", url="http://x/a", body=odd),
    )
    response = CachedResponse(
        content=odd * 3,
        status_code=200,
        url="http://x/b",
        history=[hop],
        request=CachedRequest(method="GET", url="http://x/b"),
    )
    back = loads(dumps(response))
    assert back is not None
    assert back.content == odd * 3
    (again,) = back.history
    assert (again.content, again.status_code, again.request.body) == (odd, 302, odd)
    assert again.headers["Location"] == "/b"


@pytest.mark.parametrize(
    "value",
    [
        pickle.dumps({"_content": b"x", "status_code": 200}),
        b"",
        b"qs-http1",  # the magic alone, cut short
        MAGIC + b"\0" * 20 + (1000).to_bytes(4, "little") + b"{not json",
        "text, not bytes",
        None,
    ],
    ids=["pickle", "empty", "magic only", "damaged head", "text", "null"],
)
def test_a_value_in_another_format_is_a_miss(value: Any) -> None:
    assert loads(value) is None
    if isinstance(value, bytes) and not value.startswith(MAGIC):
        assert stamps_of(value[:STAMP_BYTES]) is None


def test_every_stored_row_is_in_the_format_and_large_bodies_are_files(client: Client) -> None:
    pages = L.load_evaluations(page_size=500, max_pages=2, client=client)
    details(client, [1, 2, 3])
    stored = rows(client.cache.path)
    assert len(stored) == 5
    inline = 0
    for key, value in stored:
        assert value.startswith(MAGIC)
        head_size = int.from_bytes(value[24:28], "little")
        head = json.loads(value[STAMP_BYTES : STAMP_BYTES + head_size])
        body = value[STAMP_BYTES + head_size :]
        file = bodies_dir(client.cache.path) / f"{key}.body"
        if "body_size" in head:  # a page of 500 evaluations: ~1.2 MB, in a file
            assert body == b""
            assert file.stat().st_size == head["body_size"] >= BODY_FILE_BYTES
        else:  # a detail answer: small, in its row
            assert 0 < len(body) < BODY_FILE_BYTES
            assert not file.exists()
            inline += 1
    assert inline == 3
    with closing(sqlite3.connect(client.cache.path)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (FORMAT_VERSION,)
    info = client.cache.info()
    files = sum(p.stat().st_size for p in bodies_dir(client.cache.path).iterdir())
    assert info.entries == 5
    assert info.size_bytes > files > 2 * BODY_FILE_BYTES
    again = L.load_evaluations(page_size=500, max_pages=2, client=client)
    pd.testing.assert_frame_equal(again, pages)  # (the frame cache's)
    assert again.attrs["quantscope"]["requests"] == 0


def test_a_body_file_missing_or_cut_short_is_a_miss(client: Client) -> None:
    first = client.get_pages(
        "/api/eval-results", {}, paging=OffsetPaging(page_size=500), max_pages=2
    )
    files = sorted(bodies_dir(client.cache.path).iterdir())
    assert len(files) == 2
    files[0].unlink()
    files[1].write_bytes(files[1].read_bytes()[:-1])
    again = client.get_pages(
        "/api/eval-results", {}, paging=OffsetPaging(page_size=500), max_pages=2
    )
    assert again.provenance.requests == 2  # both asked again, and stored again
    assert again.items == first.items
    assert sorted(bodies_dir(client.cache.path).iterdir()) == files
    third = client.get_pages(
        "/api/eval-results", {}, paging=OffsetPaging(page_size=500), max_pages=2
    )
    assert third.provenance.requests == 0
    assert third.items == first.items


def test_body_files_go_with_their_rows(client: Client) -> None:
    """Deleted with their rows (forget, clear of an endpoint, clear), never left behind."""

    def load() -> Any:
        return client.get_pages(
            "/api/eval-results", {}, paging=OffsetPaging(page_size=500), max_pages=2
        )

    fetched = load()
    bodies = bodies_dir(client.cache.path)
    keys = [e.key for e in fetched.entries if e is not None]
    assert len(keys) == 2
    assert len(list(bodies.iterdir())) == 2
    client.cache.forget(keys[:1])
    assert [p.name for p in bodies.iterdir()] == [f"{keys[1]}.body"]
    load()
    assert client.cache.clear("/api/eval-results") == 2
    assert list(bodies.iterdir()) == []
    load()
    details(client, [1])
    assert client.cache.clear() == 3
    assert not bodies.exists() or list(bodies.iterdir()) == []


# --- nothing is ever unpickled ---------------------------------------------------------------


def test_an_older_pickled_cache_file_is_set_aside_unread_with_one_warning(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    """A cache file from a quantscope that stored requests-cache's pickles (and a planted
    pickle among them): set aside whole with one warning, nothing unpickled, asked again."""
    path = tmp_path / CACHE_FILE
    key = sandbox.keys["enterprise"]
    older = requests_cache.CachedSession(str(path), backend="sqlite", serializer="pickle")
    older.get(f"{sandbox.url}/api/eval-details?evaluationId=1", headers={"X-API-Key": key})
    older.close()
    canary = tmp_path / "unpickled"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "INSERT INTO responses VALUES ('planted', ?, NULL)", (pickle.dumps(Canary(canary)),)
        )
    before = rows(path)
    assert len(before) == 2
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        client = Client(sandbox.url, key, cache_dir=str(tmp_path), progress=False)
    try:
        recovered = [w for w in seen if issubclass(w.category, CacheRecoveredWarning)]
        assert len(recovered) == 1
        message = str(recovered[0].message)
        assert CACHE_FILE in message
        assert "set aside" in message
        assert "unpickle" in message
        (aside,) = tmp_path.glob(f"{CACHE_FILE}.old-format-*[0-9Z]")
        assert rows(aside) == before  # kept as it was, for an older quantscope
        frame = details(client, [1])
        assert frame.attrs["quantscope"]["requests"] == 1  # asked again
        assert details(client, [1]).attrs["quantscope"]["requests"] == 0
        assert client.cache.info().entries == 1
    finally:
        client.close()
    assert not canary.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new file opens without a word
        Client(sandbox.url, key, cache_dir=str(tmp_path), progress=False).close()


def test_a_pickle_planted_in_a_current_cache_is_a_miss_everywhere(
    client_for: Callable[..., Client], sandbox: SandboxServer, tmp_path: Path
) -> None:
    """A row of a current cache file replaced by a pickle (a colleague's copied cache): the
    load asks again, the frame-cache check and clearing skip it; nothing is unpickled."""
    client = client_for(sandbox)
    cold = details(client, [1, 2])
    assert cold.attrs["quantscope"]["requests"] == 2
    canary = tmp_path / "unpickled"
    with closing(sqlite3.connect(client.cache.path)) as db, db:
        db.execute("UPDATE responses SET value = ?", (pickle.dumps(Canary(canary)),))
    again = details(client, [1, 2])  # the frame's answers are no longer there unchanged
    assert again.attrs["quantscope"]["requests"] == 2
    pd.testing.assert_frame_equal(again, cold)
    with closing(sqlite3.connect(client.cache.path)) as db, db:
        db.execute("UPDATE responses SET value = ?", (pickle.dumps(Canary(canary)),))
    assert client.cache.clear("/api/eval-details") == 0  # unreadable rows match no endpoint
    assert client.cache.invalidate("PUT", "/api/degen/config") == 0
    assert client.cache.clear() == 2  # everything: counted, dropped, never read
    assert not canary.exists()


def test_an_empty_file_of_another_format_is_taken_over_silently(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    """A cache file with no answers in it (an older quantscope's, cleared) is simply used."""
    path = tmp_path / CACHE_FILE
    older = requests_cache.CachedSession(str(path), backend="sqlite", serializer="pickle")
    older.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client = Client(
            sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path), progress=False
        )
    try:
        assert details(client, [3]).attrs["quantscope"]["requests"] == 1
    finally:
        client.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (FORMAT_VERSION,)
    assert [p.name for p in tmp_path.iterdir() if ".old-format-" in p.name] == []
