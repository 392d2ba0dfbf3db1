"""Typed frames kept next to the HTTP cache, so a warm reload neither decodes nor rebuilds.

Every loader's recipe (``loaders._base.load``) stores the frame it built here, with the cache
entries (``_http.cache.CacheEntry``: key and ``created_at``) of the answers it was built from, as
the client returned them. The next identical load asks the HTTP cache whether every one is
still stored unchanged and usable (``ResponseCache.unchanged``: fresh, or of any age offline;
one SQL query and the tail of each row, no body decoded) and then reads the stored frame back
instead of decoding every page and running ``build_frame`` again
(``benchmarks/README.md``: reload, loadpath, framecache).

* **The HTTP cache stays the authority.** A frame is never served once any answer it came from
  expired, was invalidated by a write, was removed by ``client.cache.clear()`` or was fetched
  again (another ``created_at``). Nothing here decides freshness.
* **Keys** (``frame_key``) digest what determines the frame besides those answers: the frame
  spec (its name and every column), the function that builds the frame, the source of the
  modules that shape it (so an edited parser misses), the pandas and pyarrow versions (the
  conversion between Arrow and pandas types is theirs), the service and key scope
  (``_http.cache.key_scope``: a digest of a digest of the API key, never the key), the endpoint,
  its wire parameters and the paging. A load whose one answer makes several frames (a trade
  and its transactions, the dashboard's parts) keeps each under ``part_key``, with the same
  entries. The entries themselves are stored with the frame, not
  in the key: which pages a load reads is only known from the first page's body, and
  decoding it is what this avoids.
* **Storage: Arrow, never pickle.** One SQLite file beside the HTTP cache
  (``frame_cache.sqlite``, 64 kB pages, read through mmap), one row per frame: the frame as an
  Arrow IPC stream (``_typed.arrowframe``: dtypes, categories, UTC datetimes, nullable ints, the
  index and the JSON-safe attrs). A row is read into a new writable buffer of which the
  frame's columns are views (``read_writable``, ``_typed.arrowframe.frame_from_arrow``): one copy
  out of SQLite, none after. A frame is stored by writing its stream into a ``zeroblob`` of
  the size a counting pass gave, piece by piece (``_typed.arrowframe.ArrowStream``, SQLite's
  incremental blob I/O, no mmap): never the whole stream in memory, nor SQLite's copies of
  a bound blob. Reading a row parses Arrow and runs no code from the file, so a
  cache directory copied from a colleague is safe to use. Rows of the pickle format of
  earlier versions (table ``frames``) are never read: the first store drops them, and their
  loads are misses that store Arrow frames instead. A row's entries are checked before its
  blob is read, in one read transaction. Bounded (``DEFAULT_MAX_BYTES``): the least
  recently used rows are dropped when a new one would exceed it. A row read within
  ``TOUCH_AFTER_S`` of its last use is not written again, so hot reloads only read. A frame
  whose answers are gone (cleared, invalidated) is never served but stays until a new frame
  with its key replaces it or it is evicted; ``FrameCache.clear()`` empties the file.
* **Never in the way.** Any failure here (locked or unwritable file, an unreadable row, a
  frame Arrow cannot hold such as attrs that are not JSON) makes a miss or a skipped store,
  logged at DEBUG; the load then goes the usual way. A store that fails because the disk is
  full (or the file cannot be written) also warns, once per cache directory and process
  (``CacheWriteWarning``, shared with the HTTP cache: ``_http.cachestore.warn_unwritable``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from quantscope._http.cache import CacheEntry
from quantscope._http.cachestore import warn_unwritable
from quantscope._typed.arrowframe import ArrowStream, arrow_stream, frame_from_arrow
from quantscope._typed.frames import FrameSpec

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FILENAME",
    "CachedFrame",
    "FrameCache",
    "Unchanged",
    "frame_key",
    "part_key",
]

log = logging.getLogger(__name__)

FILENAME = "frame_cache.sqlite"
DEFAULT_MAX_BYTES = 256 * 2**20
TOUCH_AFTER_S = 60.0
_FORMAT = 3  # bump when what is stored changes (1: pickled frames, table "frames")
_READ_CHUNK = 2**18  # a blob is read in slices this long (cache-sized) into its buffer
_MMAP_BYTES = 2**30

# Modules whose code decides what a frame looks like, besides its spec and builder.
_SHAPING_MODULES = (
    "quantscope._typed.decode",
    "quantscope._typed.frames",
    "quantscope._typed.parse",
    "quantscope._http.results",
    "quantscope.loaders._base",
)

_TABLE = "arrow_frames"
_PICKLED_TABLE = "frames"  # format 1: pickled frames, dropped unread

_SCHEMA = """
CREATE TABLE IF NOT EXISTS arrow_frames (
    key TEXT PRIMARY KEY,
    used REAL NOT NULL,
    size INTEGER NOT NULL,
    meta TEXT NOT NULL,
    frame BLOB NOT NULL
)
"""  # the blob last: reading the other columns does not walk its overflow pages


def read_writable(blob: sqlite3.Blob) -> np.ndarray:
    """The bytes of ``blob`` in a new writable NumPy buffer (SQLite's blobs read only into
    new ``bytes``: slices of ``_READ_CHUNK``, copied while hot in the CPU's cache).
    """
    size = len(blob)
    buffer = np.empty(size, np.uint8)
    into = memoryview(buffer.data)
    for start in range(0, size, _READ_CHUNK):
        into[start : start + _READ_CHUNK] = blob.read(_READ_CHUNK)
    return buffer


class Unchanged(Protocol):
    """What decides whether answers are still cached as they were (``ResponseCache``)."""

    def unchanged(self, entries: Sequence[CacheEntry]) -> bool: ...


@dataclass(frozen=True)
class CachedFrame:
    """A stored frame (a new object on every read) and the cache entries it was built from."""

    frame: pd.DataFrame
    entries: tuple[CacheEntry, ...]


class FrameCache:
    """Frames in one SQLite file (Arrow IPC), keyed by ``frame_key``, valid while their
    answers are.
    """

    #: How a frame becomes the stored bytes, how a stored blob is read (into a new writable
    #: buffer, which the frame's columns then use) and how it becomes a frame again (a
    #: benchmark's baseline swaps all three).
    #: ``encode`` may give the bytes, or an ``ArrowStream`` (the default), which ``put``
    #: writes into the row's blob in pieces: no copy of the whole stream is ever held.
    encode: Callable[[pd.DataFrame], bytes | memoryview | ArrowStream] = staticmethod(arrow_stream)
    read_blob: Callable[[sqlite3.Blob], Any] = staticmethod(read_writable)
    decode: Callable[[Any], pd.DataFrame] = staticmethod(frame_from_arrow)

    def __init__(self, path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes

    @classmethod
    def beside(cls, http_cache: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> FrameCache:
        """The frame cache next to the HTTP cache file ``http_cache``."""
        return cls(Path(http_cache).with_name(FILENAME), max_bytes)

    def get(self, key: str, cache: Unchanged) -> CachedFrame | None:
        """The frame stored under ``key`` when ``cache.unchanged(entries)`` says every answer
        it was built from is still cached as it was; None otherwise (or on any failure).

        The row's entries are checked before its blob is read, in one read transaction, so
        the blob is the one those entries describe and a stale frame costs no read.
        """
        if not self.path.exists():
            return None
        found = self._read(key, cache)
        if found is None:
            return None
        used, entries, blob = found
        if blob is None:  # the row could not be read as stored
            self._delete(key)
            return None
        try:
            frame = self.decode(blob)
        except Exception as exc:  # any unreadable blob is a miss
            log.debug("frame cache: cannot read the frame of %s: %s", key, exc)
            self._delete(key)
            return None
        if not isinstance(frame, pd.DataFrame):
            self._delete(key)
            return None
        if time.time() - used > TOUCH_AFTER_S:
            self._touch(key)
        return CachedFrame(frame, entries)

    def _read(self, key: str, cache: Unchanged) -> tuple[float, tuple[CacheEntry, ...], Any] | None:
        """``(used, entries, blob)`` of a usable row (``blob`` None when its entries are
        unreadable); None when there is none, it is not usable, or on a failure.
        """
        try:
            with self._connect() as db:
                db.execute("BEGIN")  # a snapshot: no writer replaces the row meanwhile
                try:
                    row = db.execute(
                        "SELECT rowid, used, meta FROM arrow_frames WHERE key = ?", (key,)
                    ).fetchone()
                    if row is None:
                        return None
                    rowid, used, meta = row
                    try:
                        entries = _entries_from(meta)
                    except (ValueError, TypeError, KeyError) as exc:
                        log.debug("frame cache: unreadable entry %s: %s", key, exc)
                        return used, (), None
                    if not entries or not cache.unchanged(entries):
                        return None  # the next load stores its frame under the same key
                    # Straight from the pages into the buffer (a SELECT copies twice).
                    with db.blobopen(_TABLE, "frame", rowid, readonly=True) as blob:
                        return used, entries, self.read_blob(blob)
                finally:
                    db.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            log.debug("frame cache: cannot read %s: %s", self.path, exc)
            return None

    def put(self, key: str, frame: pd.DataFrame, entries: Sequence[CacheEntry]) -> bool:
        """Store ``frame`` built from ``entries`` under ``key``, dropping the least recently
        used frames beyond the size bound. False when not stored (too large, or a failure).
        """
        if not entries:
            return False
        try:
            blob = self.encode(frame)
        except Exception as exc:  # a frame Arrow cannot hold is not cached
            log.debug("frame cache: cannot store the frame for %s as Arrow: %s", key, exc)
            return False
        try:
            size = blob.nbytes if isinstance(blob, ArrowStream) else len(blob)
        except Exception as exc:  # the stream's pass that only counts its bytes
            log.debug("frame cache: cannot store the frame for %s as Arrow: %s", key, exc)
            return False
        if size > self.max_bytes:
            return False
        meta = json.dumps([[e.key, e.created_at.isoformat()] for e in entries])
        try:
            with self._connect() as db:
                db.execute("PRAGMA mmap_size = 0")  # writing the blob maps none of the file
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute(f"DROP TABLE IF EXISTS {_PICKLED_TABLE}")  # never unpickled
                    if isinstance(blob, ArrowStream):
                        _insert_stream(db, (key, time.time(), size, meta), blob, size)
                    else:
                        db.execute(
                            "INSERT OR REPLACE INTO arrow_frames (key, used, size, meta, frame) "
                            "VALUES (?, ?, ?, ?, ?)",
                            (key, time.time(), size, meta, blob),
                        )
                    self._evict(db)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except (sqlite3.Error, OSError, ValueError, pa.ArrowException) as exc:
            # ValueError: a stream longer than its blob (SQLite's blobs cannot grow)
            log.debug("frame cache: cannot store %s in %s: %s", key, self.path, exc)
            if _unwritable(exc):
                warn_unwritable(self.path.parent, "frame cache", exc)
            return False
        return True

    def clear(self) -> int:
        """Remove every stored frame; returns how many there were."""
        if not self.path.exists():
            return 0
        try:
            with self._connect() as db:
                count = int(db.execute("SELECT COUNT(*) FROM arrow_frames").fetchone()[0])
                db.execute("DELETE FROM arrow_frames")
                db.execute(f"DROP TABLE IF EXISTS {_PICKLED_TABLE}")
        except (sqlite3.Error, OSError) as exc:
            log.debug("frame cache: cannot clear %s: %s", self.path, exc)
            return 0
        return count

    def stats(self) -> tuple[int, int]:
        """(frames stored, their bytes as Arrow)."""
        if not self.path.exists():
            return 0, 0
        try:
            with self._connect() as db:
                count, size = db.execute("SELECT COUNT(*), SUM(size) FROM arrow_frames").fetchone()
        except (sqlite3.Error, OSError):
            return 0, 0
        return int(count), int(size or 0)

    def __repr__(self) -> str:
        count, size = self.stats()
        return f"<FrameCache {count} frames, {size / 1e6:.1f} MB, path={str(self.path)!r}>"

    # ----- internals -----

    def _evict(self, db: sqlite3.Connection) -> None:
        total = 0
        drop: list[tuple[str]] = []
        for key, size in db.execute("SELECT key, size FROM arrow_frames ORDER BY used DESC"):
            total += size
            if total > self.max_bytes:
                drop.append((key,))
        if drop:
            db.executemany("DELETE FROM arrow_frames WHERE key = ?", drop)

    def _touch(self, key: str) -> None:
        try:
            with self._connect() as db:
                db.execute("UPDATE arrow_frames SET used = ? WHERE key = ?", (time.time(), key))
        except (sqlite3.Error, OSError) as exc:
            log.debug("frame cache: cannot mark %s used: %s", key, exc)

    def _delete(self, key: str) -> None:
        try:
            with self._connect() as db:
                db.execute("DELETE FROM arrow_frames WHERE key = ?", (key,))
        except (sqlite3.Error, OSError) as exc:
            log.debug("frame cache: cannot delete %s: %s", key, exc)

    def _connect(self) -> _Connection:
        return _Connection(self.path)


class _Connection:
    """A short-lived connection (autocommit; closed on exit): safe across threads and forks.

    The table is created when missing on every connection (cheap when it exists), so a file
    deleted behind a running process is simply recreated.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        new = not self.path.exists()
        if new:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None)
        self.db = db
        try:
            if new:  # only before the first table (and costly to ask on an existing file)
                # Frames are blobs of megabytes: large pages make their overflow chains short.
                db.execute("PRAGMA page_size = 65536")
                db.execute("PRAGMA auto_vacuum = FULL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")  # a frame read is one copy
            db.execute(_SCHEMA)
        except BaseException:
            db.close()
            self.db = None
            raise
        return db

    def __exit__(self, *exc: object) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None


def _insert_stream(
    db: sqlite3.Connection, row: tuple[str, float, int, str], stream: ArrowStream, size: int
) -> None:
    """The row with a blob of ``size`` zeros, then ``stream`` written into it piece by piece
    (SQLite's incremental blob I/O): neither the stream nor a bound copy of it is held whole.
    Raises when the stream is not ``size`` bytes long (the blob cannot grow).
    """
    cursor = db.execute(
        "INSERT OR REPLACE INTO arrow_frames (key, used, size, meta, frame) "
        "VALUES (?, ?, ?, ?, zeroblob(?))",
        (*row, size),
    )
    rowid = cursor.lastrowid
    if rowid is None:
        raise sqlite3.DataError("the frame's row was not inserted")
    with db.blobopen(_TABLE, "frame", rowid) as blob:
        stream.write_to(_BlobFile(blob))
        if blob.tell() != size:
            raise sqlite3.DataError(f"frame stream of {blob.tell()} bytes, {size} counted")


class _BlobFile:
    """A writable SQLite blob as the file ``pa.PythonFile`` writes to."""

    closed = False

    def __init__(self, blob: sqlite3.Blob) -> None:
        self.blob = blob

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.blob.write(view)
        return view.nbytes

    def tell(self) -> int:
        return self.blob.tell()

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


_NO_ROOM = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS})


def _unwritable(exc: BaseException) -> bool:
    """Whether a store failed for want of room (a full disk, a file size limit, a quota, a
    read-only disk), as opposed to a frame that cannot be stored or a busy or broken file
    (those stay quiet misses, as the module docstring says).
    """
    if isinstance(exc, OSError):
        return exc.errno in _NO_ROOM
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(
        words in text for words in ("disk is full", "disk i/o error", "readonly database")
    )


def _entries_from(meta: str) -> tuple[CacheEntry, ...]:
    return tuple(CacheEntry(str(k), datetime.fromisoformat(t)) for k, t in json.loads(meta))


# --- keys ---------------------------------------------------------------------------------

_DIGESTS: dict[str, str] = {}


def _module_digest(name: str) -> str:
    """A digest of a module's source (its name when the source cannot be read)."""
    found = _DIGESTS.get(name)
    if found is None:
        module = sys.modules.get(name)
        try:
            source = Path(str(getattr(module, "__file__", None))).read_bytes()
        except OSError:
            source = name.encode()
        found = _DIGESTS[name] = hashlib.blake2b(source, digest_size=16).hexdigest()
    return found


def spec_digest(spec: FrameSpec) -> str:
    """A digest of every column of ``spec`` (name, source, kind, scale, doc) and its index."""
    return hashlib.blake2b(repr(spec).encode(), digest_size=16).hexdigest()


def frame_key(
    *,
    spec: FrameSpec,
    build: Callable[..., Any],
    scope: str,
    endpoint: str,
    params: Mapping[str, str],
    shape: Mapping[str, Any],
) -> str:
    """The key of the frame ``build`` makes with ``spec`` from ``endpoint``'s answers to
    ``params`` (wire text) under ``scope`` (``_http.cache.key_scope``), loaded as ``shape`` says
    (paging, page cap). See the module docstring for what else goes in.
    """
    module = getattr(build, "__module__", "") or ""
    parts = {
        "format": _FORMAT,
        "spec": [spec.name, spec_digest(spec)],
        "build": f"{module}.{getattr(build, '__qualname__', repr(build))}",
        "code": [_module_digest(m) for m in (*_SHAPING_MODULES, module) if m],
        "versions": [pd.__version__, pa.__version__],
        "scope": scope,
        "endpoint": endpoint,
        "params": sorted(params.items()),
        "shape": sorted((k, repr(v)) for k, v in shape.items()),
    }
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()


def part_key(key: str, part: int) -> str:
    """The key of frame ``part`` of a load that makes several from one answer (``key``, the
    load's ``frame_key``, is its first frame's).
    """
    return key if part == 0 else f"{key}.{part}"
