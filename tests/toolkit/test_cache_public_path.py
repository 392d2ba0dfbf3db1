"""The HTTP cache off its verified path gives the same answers (docs/architecture.md,
"Private internals").

``_http.cachestore`` reads requests-cache's table layout by SQL (a 28-byte blob read per row) only
on a verified requests-cache version whose table has that layout; otherwise it takes the public
way (the rows read whole through a storage without serializer). A client on each path, over
the same loads, must see the same frames, hits, misses, entries and invalidations.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import quantscope.loaders as L
from quantscope._http import cachestore as _cachestore
from quantscope._http.cachestore import BodyFileCache, verified_version
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer


@pytest.mark.parametrize(
    ("version", "verified"),
    [("1.2.0", True), ("1.3.3", True), ("1.4.0", False), ("1.1.9", False), ("2.0", False)],
)
def test_only_verified_versions_read_the_table_by_sql(version: str, verified: bool) -> None:
    assert verified_version(version) is verified
    assert verified_version("dev") is False


def test_a_table_of_another_layout_takes_the_public_way(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with closing(sqlite3.connect(path)) as db:  # a layout SQLite blob reads cannot address
        db.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, value BLOB, expires INTEGER) "
            "WITHOUT ROWID"
        )
    other = BodyFileCache(path)
    usual = BodyFileCache(tmp_path / "usual.sqlite")
    try:
        assert (other.responses.sql_layout, usual.responses.sql_layout) == (False, True)
    finally:
        for cache in (other, usual):
            cache.responses.close()
            cache.redirects.close()


def _story(client: Client) -> list[Any]:
    """What a researcher's session shows of the cache: frames, counters, stored entries."""
    seen: list[Any] = []
    pages = L.load_evaluations(page_size=500, max_pages=2, client=client)  # bodies in files
    trades = L.load_trades(quant_id=1, page_size=100, max_pages=1, client=client)
    seen.append((client.cache.hits, client.cache.misses, client.cache.info().entries))
    warm = L.load_evaluations(page_size=500, max_pages=2, client=client)  # the frame cache
    pd.testing.assert_frame_equal(warm, pages)
    seen.append((warm.attrs["quantscope"]["requests"], client.cache.hits, client.cache.misses))
    stored = sorted(client.cache._store.responses)  # the same keys for the same requests
    keys = [*stored[:2], "not-stored"]
    seen.append((stored, client.cache.count_besides(keys), sorted(client.cache._stamps(keys))))
    seen.append(client.cache.clear("/api/trades*"))
    again = L.load_trades(quant_id=1, page_size=100, max_pages=1, client=client)
    pd.testing.assert_frame_equal(again, trades)
    seen.append((again.attrs["quantscope"]["requests"], client.cache.hits, client.cache.misses))
    seen.append((pages, trades))
    return seen


def test_the_public_way_gives_the_same_answers(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stories, paths = [], []
    for verified in (True, False):
        with monkeypatch.context() as patch:
            if not verified:  # as on a requests-cache outside the verified range
                patch.setattr(_cachestore, "VERIFIED_REQUESTS_CACHE", ((0, 0), (0, 0)))
            directory = tmp_path / str(verified)
            key = sandbox.keys["enterprise"]
            with Client(sandbox.url, key, cache_dir=str(directory), progress=False) as client:
                paths.append(client.cache._store.responses.sql_layout)
                stories.append(_story(client))
    assert paths == [True, False]
    verified_story, public_story = stories
    for ours, theirs in zip(verified_story[:-1], public_story[:-1], strict=True):
        assert ours == theirs
    for ours, theirs in zip(verified_story[-1], public_story[-1], strict=True):
        pd.testing.assert_frame_equal(ours, theirs)
