"""The HTTP cache under faults the sandbox cannot produce (issue 20): a row deleted by another
client between the query that found it and the read of its stamps, and a full disk when a
write's invalidation deletes rows. Neither is a raw ``sqlite3`` error."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import quantscope as qs
from quantscope._http.client import Client


class _VanishingRows:
    """A connection whose row query also finds a row that is gone when it is opened."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con = con

    def execute(self, sql: str, *args: Any) -> Any:
        cursor = self._con.execute(sql, *args)
        if sql.startswith("SELECT key, rowid"):
            rows = [*cursor.fetchall(), ("gone-meanwhile", 10**9)]
            return self._con.execute(
                "SELECT column1, column2 FROM (VALUES " + ",".join("(?, ?)" for _ in rows) + ")",
                [v for row in rows for v in row],
            )
        return cursor

    def blobopen(self, *args: Any, **kwargs: Any) -> Any:
        return self._con.blobopen(*args, **kwargs)


def test_a_row_deleted_meanwhile_counts_as_absent(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = qs.load_trades(quant_id=1, page_size=100, max_pages=1, client=client)
    responses = client.cache._store.responses
    real = responses.connection

    @contextmanager
    def vanishing(*args: Any, **kwargs: Any) -> Iterator[_VanishingRows]:
        with real(*args, **kwargs) as con:
            yield _VanishingRows(con)

    monkeypatch.setattr(responses, "connection", vanishing)
    # Before: sqlite3.OperationalError ("no such rowid") from the frame cache's check.
    assert client.cache._stamps(["gone-meanwhile"]) == {}
    again = qs.load_trades(quant_id=1, page_size=100, max_pages=1, client=client)
    assert again["trade_id"].tolist() == frame["trade_id"].tolist()


def test_an_invalidation_on_a_full_disk_warns_and_the_write_stands(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*keys: str, **kwargs: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    qs.load_playbook(quant_id=1, client=client)  # something to invalidate
    monkeypatch.setattr(client.cache._store, "delete", full)
    with pytest.warns(qs.CacheWriteWarning, match=r"PUT /api/degen/config was written.*stale"):
        assert client.cache.invalidate("PUT", "/api/degen/config") == 0
    with pytest.warns(qs.CacheWriteWarning, match="cannot write the HTTP cache"):
        client.cache.forget(["any-key"])
