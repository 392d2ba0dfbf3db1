"""Pages whose cost does not grow with their position, and aggregates computed once.

The list endpoints page with the spec's ``page``/``offset`` parameters. A plain ``LIMIT ?
OFFSET ?`` walks every row before the page, so a page's cost grows with its offset: O(offset)
for the last page of 480k evaluations against O(page) for the first. ``Listing.page_ids``
answers the same offsets with keyset seeks: it
remembers *marks*, the sort key (value, id) of the row just before a position, and starts a
page from the nearest mark at or before its offset (``WHERE (value, id) after the mark``, an
index range), skipping at most ``ladder_step`` rows. Marks come from

* each page served (the next page of a sequential load starts exactly there), and
* a *ladder*: the first request more than ``ladder_step`` rows past any mark streams the keys
  once up to its offset and keeps every ``ladder_step``-th one, so later pages anywhere before
  it are cheap (a cold jump to the end still costs one scan, once per query).

The rows and their order are exactly those of ``ORDER BY value dir, id dir LIMIT OFFSET``
(ties broken by id, NULLs first ascending and last descending as SQLite sorts them); a test
compares every page with keyset seeks on and off (``Listing.keyset``).

``Listing.aggregate`` memoises the result of a query: the counts and summaries over every
matching row that each page repeats. Both caches are only sound for tables that do not change
while a world is served: ``evaluations``, ``trades``, ``tokens`` and ``quants`` (the write
endpoints change the playbook, recommendations and quotas only). Keys hold the SQL text and
its parameters; both caches are bounded (least recently used out first).
"""

from __future__ import annotations

import bisect
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_QUERIES = 256  # remembered queries per cache (aggregates; marks)
MAX_MARKS = 100_000  # marks per query (a position and a key each)
LADDER_STEP = 1_000  # rows between ladder marks: the most rows a page seek skips


@dataclass(frozen=True)
class Order:
    """``ORDER BY value dir, id dir``: SQL expressions (fixed text, never user input).

    ``nullable``: whether ``value`` may be NULL (SQLite sorts NULL first ascending).
    """

    value: str
    id: str
    descending: bool
    nullable: bool = False

    def sql(self) -> str:
        direction = "DESC" if self.descending else "ASC"
        return f"ORDER BY {self.value} {direction}, {self.id} {direction}"

    def after(self, key: tuple[Any, int]) -> tuple[str, list[Any]]:
        """A condition true exactly for the rows sorted after the row whose key is ``key``.

        Written so that an index on ``value`` serves it as a range (``value <= ?`` first).
        """
        value, row_id = key
        v, i = self.value, self.id
        if value is None:  # NULLs: first ascending, last descending
            if self.descending:
                return f"({v} IS NULL AND {i} < ?)", [row_id]
            return f"({v} IS NOT NULL OR {i} > ?)", [row_id]
        if self.descending:
            cond = f"({v} <= ? AND ({v} < ? OR {i} < ?))"
            if self.nullable:
                cond = f"({cond} OR {v} IS NULL)"
            return cond, [value, value, row_id]
        return f"({v} >= ? AND ({v} > ? OR {i} > ?))", [value, value, row_id]


@dataclass
class _Marks:
    """Positions (sorted) and the key of the row just before each."""

    positions: list[int] = field(default_factory=lambda: [0])
    keys: list[tuple[Any, int] | None] = field(default_factory=lambda: [None])

    def floor(self, offset: int) -> tuple[int, tuple[Any, int] | None]:
        at = bisect.bisect_right(self.positions, offset) - 1
        return self.positions[at], self.keys[at]

    def add(self, position: int, key: tuple[Any, int]) -> None:
        at = bisect.bisect_left(self.positions, position)
        if at < len(self.positions) and self.positions[at] == position:
            return
        if len(self.positions) >= MAX_MARKS:
            return
        self.positions.insert(at, position)
        self.keys.insert(at, key)


class Listing:
    """Memoised aggregates and keyset marks of one world's list queries (thread-safe)."""

    def __init__(self, *, ladder_step: int = LADDER_STEP, max_queries: int = MAX_QUERIES) -> None:
        self.ladder_step = ladder_step
        self.max_queries = max_queries
        self.keyset = True  # False: plain LIMIT/OFFSET (tests compare the two)
        self.memoise = True  # False: every aggregate is computed again
        self.shortcuts = True  # False: no join or chain filter left out (every_row_joined)
        self._aggregates: OrderedDict[tuple[Any, ...], list[tuple[Any, ...]]] = OrderedDict()
        self._marks: OrderedDict[tuple[Any, ...], _Marks] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._aggregates.clear()
            self._marks.clear()

    def aggregate(
        self, conn: sqlite3.Connection, sql: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        """``conn.execute(sql, params).fetchall()`` as tuples, computed once per (sql, params).

        Only for queries over the tables that never change while the world is served.
        """
        key = (sql, tuple(params))
        with self._lock:
            rows = self._aggregates.get(key)
            if rows is not None:
                self._aggregates.move_to_end(key)
                return rows
        rows = [tuple(r) for r in conn.execute(sql, params).fetchall()]
        if self.memoise:
            with self._lock:
                self._aggregates[key] = rows
                while len(self._aggregates) > self.max_queries:
                    self._aggregates.popitem(last=False)
        return rows

    def none_match(self, conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> bool:
        """Whether the query ``sql`` (rows breaking an invariant) finds no row; asked once
        per (sql, params) like any aggregate. The list endpoints use it to leave out a join or
        a condition that every row of the world satisfies: the same rows, fewer lookups.
        """
        return not self.aggregate(conn, f"SELECT EXISTS ({sql})", params)[0][0]

    def every_row_joined(self, conn: sqlite3.Connection, table: str, chains: Sequence[str]) -> bool:
        """Whether every row of ``table`` (``trades`` or ``evaluations``, aliased ``x``) lies on
        one of ``chains`` and has its token in ``tokens``; asked once per world.

        When it holds, a condition on all of ``chains`` matches every row and the inner join
        with ``tokens`` drops none, so a query that reads no token column can leave both out
        (an index alone may then answer it). The built worlds always hold it; the check keeps
        the pages exact for any other database.
        """
        if not self.shortcuts:
            return False
        marks = ", ".join("?" * len(chains))
        return self.none_match(
            conn,
            f"SELECT 1 FROM {table} x WHERE x.chain NOT IN ({marks}) "
            "OR NOT EXISTS (SELECT 1 FROM tokens k WHERE k.id = x.token_id)",
            tuple(chains),
        )

    def page_ids(
        self,
        conn: sqlite3.Connection,
        source: str,
        where: Sequence[str],
        params: Sequence[Any],
        order: Order,
        limit: int,
        offset: int,
    ) -> list[int]:
        """The ids of rows ``offset`` to ``offset + limit`` of ``source`` in ``order``.

        Args:
            source: ``FROM ...`` (joins included) naming the columns ``order`` uses.
            where: conditions joined by AND (fixed text, values in ``params``).
        """
        if not self.keyset:
            rows = self._select(conn, source, where, params, order, limit, offset)
            return [int(r[1]) for r in rows]
        signature = (source, tuple(where), tuple(params), order)
        with self._lock:
            marks = self._marks.get(signature)
            if marks is None:
                marks = self._marks[signature] = _Marks()
                while len(self._marks) > self.max_queries:
                    self._marks.popitem(last=False)
            else:
                self._marks.move_to_end(signature)
            position, key = marks.floor(offset)
        if offset - position > self.ladder_step:
            self._climb(conn, source, where, params, order, marks, position, key, offset)
            with self._lock:
                position, key = marks.floor(offset)
        rows = self._select(conn, source, where, params, order, limit, offset - position, key)
        if rows:
            last = rows[-1]
            with self._lock:
                marks.add(offset + len(rows), (last[0], int(last[1])))
        return [int(r[1]) for r in rows]

    @staticmethod
    def _keys_sql(
        source: str,
        where: Sequence[str],
        params: Sequence[Any],
        order: Order,
        key: tuple[Any, int] | None,
    ) -> tuple[str, list[Any]]:
        """``SELECT value, id`` of the rows after ``key`` (all when None), in order."""
        clauses, args = list(where), list(params)
        if key is not None:
            cond, extra = order.after(key)
            clauses.append(cond)
            args.extend(extra)
        sql = f"SELECT {order.value}, {order.id} {source}"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        return f"{sql} {order.sql()}", args

    def _select(
        self,
        conn: sqlite3.Connection,
        source: str,
        where: Sequence[str],
        params: Sequence[Any],
        order: Order,
        limit: int,
        skip: int,
        key: tuple[Any, int] | None = None,
    ) -> list[Any]:
        sql, args = self._keys_sql(source, where, params, order, key)
        return conn.execute(f"{sql} LIMIT ? OFFSET ?", (*args, limit, skip)).fetchall()

    def _climb(
        self,
        conn: sqlite3.Connection,
        source: str,
        where: Sequence[str],
        params: Sequence[Any],
        order: Order,
        marks: _Marks,
        position: int,
        key: tuple[Any, int] | None,
        offset: int,
    ) -> None:
        """Stream the keys from ``position`` up to ``offset``, keeping every ladder step's."""
        sql, args = self._keys_sql(source, where, params, order, key)
        step = self.ladder_step
        found: list[tuple[int, tuple[Any, int]]] = []
        rows = conn.execute(f"{sql} LIMIT ?", (*args, offset - position))
        for n, row in enumerate(rows, start=position + 1):
            if n % step == 0:
                found.append((n, (row[0], int(row[1]))))
        with self._lock:
            for at, mark in found:
                marks.add(at, mark)
