"""One sync at a time per catalog: ``sync_lock``, an exclusive lock on a local catalog.

Two syncs of one catalog at once would each read the manifest, add their run and swap it
in: the later swap would drop the earlier one's run record and partitions. So a sync holds
``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``<catalog>/.sync.lock`` from before it reads the
manifest until after its last swap. A second sync, in another process or this one, finds it
held and raises ``CatalogBusyError`` before it reads or writes anything, naming the holder
(pid, host, since: the file's content, written by the holder once it holds the lock).

The system drops the lock with its holder, however the holder ends (``kill -9`` included),
so a dead sync never blocks the next one. A holder empties the file when it lets go; a
record still in the file when the lock is taken was left by a holder that died mid-sync:
the new sync warns (``StaleLockWarning``, naming it) and takes over, and the dead run
(``status: running`` in the manifest) resumes as any interrupted run does. The file itself
is never deleted: deleting a lock file races (one process may lock the unlinked file while
another creates a new one and locks that).

Not locked (docs/catalog.md): catalogs on object stores (``s3://``...), where a conditional
create cannot tell a dead holder from a live one without leases, so concurrent syncs into
one are the user's to avoid; and platforms without ``fcntl`` (Windows).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import warnings
from collections.abc import Iterator
from typing import Any

from quantscope._errors import CatalogBusyError, StaleLockWarning
from quantscope.catalog.manifest import Store, now_iso

try:
    import fcntl
except ImportError:  # Windows: no flock
    fcntl = None  # type: ignore[assignment]  # no fcntl on Windows: callers check for None

__all__ = ["LOCK_FILE", "sync_lock"]

LOCK_FILE = ".sync.lock"


@contextlib.contextmanager
def sync_lock(store: Store) -> Iterator[None]:
    """Hold the catalog's sync lock meanwhile (module docstring); raises
    ``CatalogBusyError`` when another sync holds it.
    """
    if not store.local or fcntl is None:
        yield
        return
    try:
        os.makedirs(store.root, exist_ok=True)
        fd = os.open(store.path(LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # a full disk, a read-only one: one line, nothing written
        raise store.write_error(LOCK_FILE, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            raise CatalogBusyError(
                _busy(store.url, holder), catalog=store.url, **_fields(holder)
            ) from None
        left = _holder(fd)
        if left:
            warnings.warn(_stale(store.url, left), StaleLockWarning, stacklevel=3)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": now_iso()}
        os.ftruncate(fd, 0)
        with contextlib.suppress(OSError):  # a full disk: the lock holds, unnamed
            os.pwrite(fd, json.dumps(me).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # let go cleanly: nobody to report to the next sync
    finally:
        os.close(fd)  # and the lock with it


def _holder(fd: int) -> dict[str, Any]:
    """The holder recorded in the lock file ({} when none, or unreadable)."""
    try:
        found = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _fields(holder: dict[str, Any]) -> dict[str, Any]:
    pid = holder.get("pid")
    return {
        "pid": pid if isinstance(pid, int) else None,
        "host": str(holder["host"]) if "host" in holder else None,
        "since": str(holder["since"]) if "since" in holder else None,
    }


def _who(holder: dict[str, Any]) -> str:
    f = _fields(holder)
    if f["pid"] is None:
        return "another sync (it has not recorded itself yet, or is letting go)"
    return f"the sync of pid {f['pid']} on {f['host']} since {f['since']}"


def _busy(url: str, holder: dict[str, Any]) -> str:
    return (
        f"catalog {url} is being synced by {_who(holder)}: wait for it to end (or stop it) and "
        "sync again; nothing was read or written"
    )


def _stale(url: str, holder: dict[str, Any]) -> str:
    return (
        f"catalog {url}: {_who(holder)} ended without letting go of the sync lock (killed?); "
        "this sync took it over (a sync asking for what that one did resumes its run)"
    )
