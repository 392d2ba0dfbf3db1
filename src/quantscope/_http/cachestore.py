"""requests-cache's SQLite backend with the bodies of large answers in files beside it.

A page of 1,000 evaluations is a 2.4 MB body. Through SQLite it was copied about seven times
(bound, made into a record, split into overflow pages, written to the WAL, read back and
written again by the checkpoint), where a file is written once: the copies grow with the
body, so large bodies cost several times more in SQLite (benchmarks/README.md, loadpath).
So a body of ``BODY_FILE_BYTES`` or more goes to ``<cache file>-bodies/<key>.body``
(written to a temporary name, then renamed: a reader never sees half a body) and its row keeps
the head and the stamps (``_http.cacheformat``); smaller answers stay whole in their rows.

The row is the truth: a body file is read only through a row that names its size, so a file
missing, cut short or left over from a crash is a miss (asked again), never a wrong answer.
Files follow their rows: replaced with them (same key, same name), deleted with them
(``__delitem__``, ``bulk_delete``), emptied with them (``clear``).

**A full disk is not an error of the load.** An answer that cannot be stored (no space left,
a file size limit, a read-only or locked file: ``OSError``, ``sqlite3.DatabaseError``) is
handed back unstored: the load goes on uncached, with one ``CacheWriteWarning`` per cache
directory and process (``warn_unwritable``, which the frame cache shares); the half-written
body file is removed.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import threading
import warnings
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from requests_cache.backends.sqlite import SQLiteCache, SQLiteDict
from requests_cache.models.response import CachedResponse

from quantscope._errors import CacheWriteWarning
from quantscope._http.cacheformat import (
    HTTP_SERIALIZER,
    STAMP_BYTES,
    BodyElsewhere,
    loads,
    stamps_of,
)
from quantscope._versions import Span, installed_within, within

__all__ = [
    "BODY_FILE_BYTES",
    "VERIFIED_REQUESTS_CACHE",
    "WRITE_ERRORS",
    "BodyFileCache",
    "bodies_dir",
    "verified_version",
    "warn_unwritable",
]

#: What a cache write that cannot happen raises (a full disk: ENOSPC, EFBIG, SQLITE_FULL...).
WRITE_ERRORS = (OSError, sqlite3.DatabaseError)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_unwritable(directory: Path | str, what: str, exc: BaseException) -> None:
    """One ``CacheWriteWarning`` per cache ``directory`` and process: ``what`` could not be
    written (``exc``), so loads go on uncached.
    """
    key = os.path.abspath(directory)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    warnings.warn(
        f"quantscope: cannot write the {what} in {key} ({reason}): loads go on without "
        "caching what cannot be stored (a full disk? free space there, or set another "
        "cache_dir)",
        CacheWriteWarning,
        stacklevel=2,
    )


BODY_FILE_BYTES = 256 * 1024
_SAFE_KEY = re.compile(r"[0-9a-f]{8,64}")  # quantscope's keys are hex digests
_SUFFIX = ".body"


def bodies_dir(cache_path: Path | str) -> Path:
    """Where the bodies of the cache file ``cache_path`` live."""
    return Path(f"{cache_path}-bodies")


#: requests-cache versions whose SQLite table layout (``key``, ``value``, ``expires``; a rowid
#: table) ``_Responses`` reads by SQL: [from, to). pyproject.toml caps the dependency below
#: ``to``; any other version, or a table of another layout, takes the public way (``__getitem__``
#: and ``__iter__`` of a storage without serializer), slower and the same answers.
VERIFIED_REQUESTS_CACHE: Span = ((1, 2), (1, 4))
_STAMP_COLUMNS = {"key", "value"}
_SQL_VARIABLES = 900  # below SQLite's default limit of host parameters per statement
_MMAP_BYTES = 2**30


def verified_version(version: str | None = None) -> bool:
    """Whether ``version`` of requests-cache (default: the installed one) is one whose table
    layout was verified (``VERIFIED_REQUESTS_CACHE``).
    """
    if version is None:
        return installed_within("requests-cache", VERIFIED_REQUESTS_CACHE)
    return within(version, VERIFIED_REQUESTS_CACHE)


class _Responses(SQLiteDict):
    """The ``responses`` table, with large bodies in files (see the module docstring).

    Only requests-cache's public storage interface is used: ``__setitem__`` stores a value
    through the serializer (a large body's row is a ``BodyElsewhere``: the head alone),
    ``deserialize`` reads it back. ``stamps`` and ``count_besides`` read the table by SQL when
    its layout is the verified one (``sql_layout``), else through ``raw``, a storage of the
    same table without serializer.
    """

    def __init__(self, db_path: Any, bodies: Path, **kwargs: Any) -> None:
        super().__init__(db_path, **kwargs)
        self.bodies = bodies
        self._raw_kwargs = {**kwargs, "serializer": None}
        self._raw: SQLiteDict | None = None
        self.sql_layout = verified_version() and self._layout_verified()

    @property
    def raw(self) -> SQLiteDict:
        """The same table without serializer (values as stored), opened on first use: only
        off the verified layout.
        """
        if self._raw is None:
            self._raw = SQLiteDict(self.db_path, **self._raw_kwargs)
        return self._raw

    def _layout_verified(self) -> bool:
        with self.connection() as con:
            columns = {row[1] for row in con.execute(f"PRAGMA table_info({self.table_name})")}
            try:
                con.execute(f"SELECT rowid FROM {self.table_name} LIMIT 0")
            except sqlite3.OperationalError:  # a WITHOUT ROWID table: no blob reads
                return False
        return columns >= _STAMP_COLUMNS

    def _body_path(self, key: str) -> Path | None:
        return self.bodies / f"{key}{_SUFFIX}" if _SAFE_KEY.fullmatch(key) else None

    def __setitem__(self, key: str, value: Any) -> None:
        content = value.content if isinstance(value, CachedResponse) else None
        path = self._body_path(key)
        if path is None or content is None or len(content) < BODY_FILE_BYTES:
            super().__setitem__(key, value)
            if path is not None:
                path.unlink(missing_ok=True)  # a large body of this key before, now small
            return
        self.bodies.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.part")
        try:
            with open(part, "wb") as out:
                out.write(content)
            os.replace(part, path)
        except BaseException:
            part.unlink(missing_ok=True)  # a full disk leaves no half body behind
            raise
        super().__setitem__(key, BodyElsewhere(value))

    def _read_body(self, key: str) -> bytes | None:
        path = self._body_path(key)
        if path is None:
            return None
        try:
            with open(path, "rb") as body:
                return body.read()
        except OSError:
            return None

    def deserialize(self, key: str, value: Any) -> CachedResponse | None:
        """The stored answer, or None (a miss) for a row of another format (never unpickled)
        or whose body file is gone.
        """
        response = loads(value, lambda: self._read_body(key))
        if response is not None:
            response.cache_key = key
        return response

    def __delitem__(self, key: str) -> None:
        try:
            super().__delitem__(key)
        finally:
            self._unlink(key)

    def bulk_delete(self, keys: Any = None, values: Any = None) -> None:
        super().bulk_delete(keys, values)
        for key in keys or ():
            self._unlink(key)

    def clear(self) -> None:
        super().clear()
        shutil.rmtree(self.bodies, ignore_errors=True)

    def close(self) -> None:
        super().close()
        raw = getattr(self, "_raw", None)  # absent while ``__init__`` runs
        if raw is not None:
            raw.close()

    def _unlink(self, key: str) -> None:
        path = self._body_path(key)
        if path is not None:
            path.unlink(missing_ok=True)

    def bodies_size(self) -> int:
        """Bytes of the body files."""
        try:
            return sum(e.stat().st_size for e in os.scandir(self.bodies) if e.is_file())
        except OSError:
            return 0

    def stamps(self, keys: Sequence[str]) -> dict[str, tuple[datetime, datetime | None]]:
        """``key -> (created_at, expires)`` of the stored answers among ``keys``.

        On the verified layout, one query finds the rows and only the first ``STAMP_BYTES``
        (28) of each are read, through SQLite's incremental blob I/O, where ``_http.cacheformat``
        keeps the two stamps: checking a frame built from 49 pages of 2.4 MB reads ~1.4 kB,
        and no response is built. Otherwise each row is read whole through ``raw``. A row in
        another format (an older quantscope's pickle) counts as absent, unread.
        """
        unique = list(dict.fromkeys(keys))
        if not self.sql_layout:
            return {key: stamp for key in unique if (stamp := self._raw_stamp(key)) is not None}
        found: dict[str, tuple[datetime, datetime | None]] = {}
        table = self.table_name
        with self.connection() as con:
            con.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")  # heads read without a syscall each
            for i in range(0, len(unique), _SQL_VARIABLES):
                chunk = unique[i : i + _SQL_VARIABLES]
                marks = ",".join("?" * len(chunk))
                rows = con.execute(
                    f"SELECT key, rowid FROM {table} WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, rowid in rows:
                    try:
                        with con.blobopen(table, "value", rowid, readonly=True) as blob:
                            stamp = stamps_of(blob.read(STAMP_BYTES))
                    except sqlite3.OperationalError:  # deleted meanwhile by another client
                        continue
                    if stamp is not None:
                        found[key] = stamp
        return found

    def _raw_stamp(self, key: str) -> tuple[datetime, datetime | None] | None:
        try:
            value = self.raw[key]
        except KeyError:
            return None
        return stamps_of(bytes(value[:STAMP_BYTES])) if isinstance(value, bytes) else None

    def count_besides(self, keys: Sequence[str]) -> int:
        """How many rows are stored under keys other than ``keys``."""
        if not self.sql_layout:
            return len(set(self.raw) - set(keys))
        unique = list(dict.fromkeys(keys))
        table = self.table_name
        with self.connection() as con:
            (stored,) = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
            for i in range(0, len(unique), _SQL_VARIABLES):
                chunk = unique[i : i + _SQL_VARIABLES]
                marks = ",".join("?" * len(chunk))
                (held,) = con.execute(
                    f"SELECT COUNT(*) FROM {table} WHERE key IN ({marks})", chunk
                ).fetchone()
                stored -= held
        return int(stored)


class BodyFileCache(SQLiteCache):
    """``SQLiteCache`` whose responses table keeps large bodies in files
    (``bodies_dir(db_path)``), stored in quantscope's format (``_http.cacheformat``).

    requests-cache's own ``__init__`` sets the backend up; its two tables are then replaced by
    quantscope's ``responses`` and a ``redirects`` table sharing one lock, as its own share
    theirs (the lock is passed, not read from requests-cache).
    """

    responses: _Responses

    def __init__(self, db_path: Path, **kwargs: Any) -> None:
        super().__init__(db_path, serializer=HTTP_SERIALIZER, **kwargs)
        self.responses.close()
        self.redirects.close()
        lock = threading.RLock()
        self.responses = _Responses(
            db_path,
            bodies_dir(db_path),
            table_name="responses",
            serializer=HTTP_SERIALIZER,
            lock=lock,
            **kwargs,
        )
        self.redirects = SQLiteDict(
            db_path, table_name="redirects", lock=lock, serializer=None, **kwargs
        )

    def save_response(
        self, response: Any, cache_key: str | None = None, expires: Any = None
    ) -> None:
        """Store ``response`` (requests-cache's ``save_response``); one that cannot be
        written (a full disk) is left unstored with one ``CacheWriteWarning`` (module
        docstring), and the load that fetched it goes on.
        """
        try:
            super().save_response(response, cache_key, expires)
        except WRITE_ERRORS as exc:
            warn_unwritable(Path(str(self.db_path)).parent, "HTTP cache", exc)
