"""requests-cache's SQLite backend with the bodies of large answers in files beside it.

A page of 1,000 evaluations is a 2.4 MB body. Through SQLite it was copied about seven times
(bound, made into a record, split into overflow pages, written to the WAL, read back and
written again by the checkpoint): ~0.2 s of CPU for the 49 pages of a cold
``load_evaluations``, against ~0.03 s to write the same bytes to files (benchmarks/README.md,
loadpath). So a body of ``BODY_FILE_BYTES`` or more goes to ``<cache file>-bodies/<key>.body``
(written to a temporary name, then renamed: a reader never sees half a body) and its row keeps
the head and the stamps (``_cacheformat``); smaller answers stay whole in their rows.

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
from pathlib import Path
from typing import Any

from requests_cache.backends.base import BaseCache
from requests_cache.backends.sqlite import SQLiteCache, SQLiteDict
from requests_cache.models.response import CachedResponse

from quantscope._cacheformat import HTTP_SERIALIZER, dumps, loads
from quantscope._errors import CacheWriteWarning

__all__ = ["BODY_FILE_BYTES", "WRITE_ERRORS", "BodyFileCache", "bodies_dir", "warn_unwritable"]

#: What a cache write that cannot happen raises (a full disk: ENOSPC, EFBIG, SQLITE_FULL...).
WRITE_ERRORS = (OSError, sqlite3.DatabaseError)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def warn_unwritable(directory: Path | str, what: str, exc: BaseException) -> None:
    """One ``CacheWriteWarning`` per cache ``directory`` and process: ``what`` could not be
    written (``exc``), so loads go on uncached."""
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


class _Responses(SQLiteDict):
    """The ``responses`` table, with large bodies in files (see the module docstring)."""

    def __init__(self, db_path: Any, bodies: Path, **kwargs: Any) -> None:
        super().__init__(db_path, **kwargs)
        self.bodies = bodies

    def _body_path(self, key: str) -> Path | None:
        return self.bodies / f"{key}{_SUFFIX}" if _SAFE_KEY.fullmatch(key) else None

    def _write(self, key: str, value: Any) -> None:
        content = getattr(value, "_content", None)
        path = self._body_path(key)
        if (
            not isinstance(value, CachedResponse)
            or path is None
            or content is None
            or len(content) < BODY_FILE_BYTES
        ):
            super()._write(key, value)
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
        row = dumps(value, body_elsewhere=True)
        with self.connection(commit=True) as con:
            con.execute(
                f"INSERT OR REPLACE INTO {self.table_name} (key,value,expires) VALUES (?,?,?)",
                (key, row, value.expires_unix),
            )

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
        or whose body file is gone."""
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


class BodyFileCache(SQLiteCache):
    """``SQLiteCache`` whose responses table keeps large bodies in files
    (``bodies_dir(db_path)``), stored in quantscope's format (``_cacheformat``)."""

    responses: _Responses

    def __init__(self, db_path: Path, **kwargs: Any) -> None:
        BaseCache.__init__(self, cache_name=str(db_path))
        self.responses = _Responses(
            db_path,
            bodies_dir(db_path),
            table_name="responses",
            serializer=HTTP_SERIALIZER,
            **kwargs,
        )
        self.redirects = SQLiteDict(
            db_path, table_name="redirects", lock=self.responses._lock, serializer=None, **kwargs
        )

    def save_response(
        self, response: Any, cache_key: str | None = None, expires: Any = None
    ) -> None:
        """Store ``response`` (requests-cache's ``save_response``); one that cannot be
        written (a full disk) is left unstored with one ``CacheWriteWarning`` (module
        docstring), and the load that fetched it goes on."""
        try:
            super().save_response(response, cache_key, expires)
        except WRITE_ERRORS as exc:
            warn_unwritable(Path(str(self.db_path)).parent, "HTTP cache", exc)
