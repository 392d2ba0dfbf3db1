"""List items rendered once: their JSON bytes by (world, kind, id), within a byte budget.

An eval-results item (its narrative texts above all) or a list trade is a pure function of
rows that never change while a world is served, so its JSON is kept and spliced into later
pages as an ``orjson.Fragment``: the same bytes as rendering the item again (orjson writes no
whitespace, and items are dumped with the response's own options). Least recently used items
go first once ``max_bytes`` is reached. The world is named by its database file (path and
inode: a rebuilt world is a new file).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from quantscope.sandbox import inline

OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY  # deps.OrjsonResponse's
World = tuple[str, int]


def world_of(conn: sqlite3.Connection) -> World:
    """The database file behind ``conn``, by path and inode.

    A ``WorldConnection`` (the Store's) remembers it: a connection stays on the file it
    opened, so asking once per connection is enough.
    """
    world: World | None = getattr(conn, "world", None)
    if world is None:
        path = str(conn.execute("PRAGMA database_list").fetchone()[2])
        world = path, os.stat(path).st_ino if path else id(conn)
        if isinstance(conn, WorldConnection):
            conn.world = world
    return world


class WorldConnection(sqlite3.Connection):
    """A connection that can remember its world (``world_of``)."""

    world: World | None = None


class RenderedItems:
    """JSON bytes of rendered items (thread-safe, bounded by ``max_bytes``)."""

    def __init__(self, max_bytes: int = 64 * 2**20) -> None:
        self.max_bytes = max_bytes
        self.enabled = True
        self._bytes = 0
        self._items: OrderedDict[tuple[World, str, int], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def fragments(
        self,
        world: World,
        kind: str,
        ids: Sequence[int],
        render: Callable[[list[int]], Iterable[dict[str, Any]]],
    ) -> list[orjson.Fragment]:
        """The items of ``ids`` in order; ``render(missing ids)`` yields the others' dicts in
        the order asked.
        """
        found: dict[int, bytes] = {}
        if self.enabled:
            with self._lock:
                for i in ids:
                    data = self._items.get((world, kind, i))
                    if data is not None:
                        self._items.move_to_end((world, kind, i))
                        found[i] = data
        missing = [i for i in ids if i not in found]
        if missing:
            inline.ensure_cheap("rendering list items")  # a JSON render per item, and more
            made = {
                i: orjson.dumps(item, option=OPTIONS)
                for i, item in zip(missing, render(missing), strict=True)
            }
            found.update(made)
            if self.enabled:
                with self._lock:
                    for i, data in made.items():
                        key = (world, kind, i)
                        if key not in self._items:
                            self._items[key] = data
                            self._bytes += len(data)
                    while self._bytes > self.max_bytes and self._items:
                        _, old = self._items.popitem(last=False)
                        self._bytes -= len(old)
        return [orjson.Fragment(found[i]) for i in ids]


ITEMS = RenderedItems()
