"""The sandbox's data directory: build a world database once, reuse it while it is current.

A data directory holds one database per (seed, scale), ``world-s{seed}-x{scale}.sqlite``, and
``keys.json`` (mode 0600) with the plain API keys of the world ensured last. A database is reused
when its ``meta`` matches what this code would build (schema version, seed, scale, world
version) and holds the seed's keys; otherwise it is built into a temporary file in the same
directory and moved into place with ``os.replace``, so no reader ever sees a half-built world;
the temporary files of a killed build are deleted by the next build of that world. A lock file
serialises builders (two notebooks, parallel test workers) on POSIX systems.

The directory is, in order: the ``data_dir`` argument, ``$QUANTSCOPE_SANDBOX_DIR``, or
``<user cache dir>/quantscope/sandbox``.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from quantscope.sandbox import auth, store
from quantscope.sandbox.sim import build

ENV_DATA_DIR = "QUANTSCOPE_SANDBOX_DIR"
KEYS_FILE = "keys.json"


@dataclass(frozen=True)
class WorldInfo:
    """A built world: where it lives, how it was made, and its plain API keys by plan."""

    data_dir: Path
    db_path: Path
    seed: int
    scale: int
    keys: dict[str, str] = field(repr=False, compare=False)


def default_data_dir() -> Path:
    """``<user cache dir>/quantscope/sandbox`` (platformdirs)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("quantscope")) / "sandbox"


def resolve_data_dir(data_dir: Path | str | None = None) -> Path:
    """The argument, else ``$QUANTSCOPE_SANDBOX_DIR``, else the default cache directory."""
    if data_dir is not None:
        return Path(data_dir).expanduser()
    from_env = os.environ.get(ENV_DATA_DIR)
    return Path(from_env).expanduser() if from_env else default_data_dir()


def world_db_name(seed: int, scale: int) -> str:
    """The file name of the world of this seed and scale."""
    return f"world-s{seed}-x{scale}.sqlite"


def expected_meta(seed: int, scale: int) -> dict[str, str]:
    """The ``meta`` rows of a current world of this seed and scale."""
    return {
        "schema_version": store.SCHEMA_VERSION,
        "seed": str(seed),
        "scale": str(scale),
        "world_version": build.WORLD_VERSION,
    }


def _check_args(seed: int, scale: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise ValueError(f"scale must be an integer >= 1, got {scale!r}")


def ensure_world(data_dir: Path | str | None = None, seed: int = 7, scale: int = 1) -> WorldInfo:
    """The world of ``seed`` and ``scale`` in the data directory, built if missing or stale.

    Raises:
        ValueError: for a negative seed or a scale below 1.
    """
    _check_args(seed, scale)
    directory = resolve_data_dir(data_dir)
    directory.mkdir(parents=True, exist_ok=True)
    db_path = directory / world_db_name(seed, scale)
    keys = auth.derive_keys(seed)
    with _build_lock(directory / f".{db_path.name}.lock"):
        if not _is_current(db_path, expected_meta(seed, scale), keys):
            _remove_dead_builds(db_path)
            _build(db_path, seed, scale)
    write_keys(directory, keys)
    return WorldInfo(directory, db_path, seed, scale, keys)


def copy_world(info: WorldInfo, dest_dir: Path | str) -> WorldInfo:
    """A pristine, writable copy of a built world (and its keys.json) in ``dest_dir``.

    Uses SQLite's backup API, so the copy is consistent even while the source is served.
    """
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    db_path = dest / info.db_path.name
    tmp = dest / f".{db_path.name}.{uuid.uuid4().hex}.tmp"
    try:
        with (
            contextlib.closing(_connect_ro(info.db_path)) as src,
            contextlib.closing(sqlite3.connect(tmp)) as dst,
        ):
            src.backup(dst)
        _replace_db(tmp, db_path)
    finally:
        tmp.unlink(missing_ok=True)
    write_keys(dest, info.keys)
    return WorldInfo(dest, db_path, info.seed, info.scale, dict(info.keys))


def read_keys(data_dir: Path | str) -> dict[str, str]:
    """The plan -> key mapping of ``keys.json`` in ``data_dir``."""
    loaded = json.loads((Path(data_dir) / KEYS_FILE).read_text(encoding="utf-8"))
    return {str(plan): str(key) for plan, key in loaded.items()}


def write_keys(data_dir: Path, keys: dict[str, str]) -> Path:
    """Write ``keys.json`` (mode 0600) atomically, unless it already holds ``keys``."""
    path = data_dir / KEYS_FILE
    with contextlib.suppress(OSError, ValueError):
        if read_keys(data_dir) == keys:
            os.chmod(path, 0o600)
            return path
    tmp = data_dir / f".{KEYS_FILE}.{uuid.uuid4().hex}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(keys, out, indent=2)
            out.write("\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _connect_ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _is_current(db_path: Path, meta: dict[str, str], keys: dict[str, str]) -> bool:
    if not db_path.exists():
        return False
    try:
        with contextlib.closing(_connect_ro(db_path)) as conn:
            stored = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
            return all(stored.get(k) == v for k, v in meta.items()) and auth.keys_match(conn, keys)
    except sqlite3.DatabaseError:  # not a database, or an older layout: build anew
        return False


def _build_prefix(db_path: Path) -> str:
    return f".{db_path.name}.build-"


def _remove_dead_builds(db_path: Path) -> None:
    """Delete what a killed build of this world left (its temp file, its staging files).

    Called under the world's build lock, so no live build of it owns such a file; the world
    itself was never touched by that build (it moves into place only once complete).
    """
    for leftover in db_path.parent.glob(f"{glob.escape(_build_prefix(db_path))}*"):
        leftover.unlink(missing_ok=True)


def _build(db_path: Path, seed: int, scale: int) -> None:
    """Build the world into a temporary file next to ``db_path``, then move it into place.

    A build that dies leaves only temporary files (``_remove_dead_builds``), never a world that
    ``_is_current`` would accept: the meta rows, keys and data commit together, and the file
    is renamed into place only after the commit. So the one-off build runs without a rollback
    journal or syncs.
    """
    tmp = db_path.with_name(f"{_build_prefix(db_path)}{uuid.uuid4().hex}.tmp")
    try:
        with contextlib.closing(sqlite3.connect(tmp, isolation_level=None)) as conn:
            conn.execute("PRAGMA journal_mode=OFF")  # a failed build only loses the temp file
            conn.execute("PRAGMA synchronous=OFF")
            store.create_schema(conn)
            conn.execute("BEGIN")
            build.build_world(conn, seed, scale)
            auth.create_keys(conn, seed)
            conn.executemany(  # build.build_world writes some of these rows too
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                sorted(expected_meta(seed, scale).items()),
            )
            conn.execute("COMMIT")
        _replace_db(tmp, db_path)
    finally:
        tmp.unlink(missing_ok=True)


def _replace_db(tmp: Path, db_path: Path) -> None:
    # A -wal/-shm pair left by the old file must never be replayed onto the new one.
    for suffix in ("-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    os.replace(tmp, db_path)


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (POSIX); a no-op where fcntl is missing."""
    try:
        import fcntl
    except ImportError:  # Windows: os.replace still keeps readers safe
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
