"""One writer at a time per playbook on this machine: ``playbook_lock``.

The service has no conditional write, so a compare-and-swap (read, check the values the
caller saw, write, read back) is only as good as the guarantee that nobody writes in between.
On one machine quantscope gives that guarantee itself: every write it makes to a playbook
(``audit``'s, and ``update_playbook``/``apply_recommendation`` when they check) holds the
playbook's lock from before its check until after its read-back, so a second writer that saw
the same old value reads the first one's value and is refused as stale.

A playbook is one quant's on one service for one key: the lock is named by a digest of the
service URL (scheme, host, port, path; never credentials), the API key and the quant id. It is
two locks, taken in this order:

* within the process, a ``threading.RLock`` per playbook (re-entrant: ``audit`` holds it and
  calls the loaders, which take it again);
* across the processes of this user on this machine, ``fcntl.flock`` on
  ``<lock dir>/<digest>.lock``, taken by the thread that takes the process lock first. The lock
  directory is ``<temp dir>/quantscope-<uid>/locks`` (mode 0700, used only when it is a real
  directory owned by this user; else ``<cache dir>/locks``), so processes serialise whatever
  cache directories they use. The system drops a flock with its holder (``kill -9`` included),
  so a dead writer never blocks the next one; a child forked meanwhile holds nothing. Lock
  files are small, hold the holder's pid, host and start while held, and are never deleted
  (deleting a lock file races: one process may lock the unlinked file while another creates a
  new one).

A writer waits at most ``WAIT_S`` seconds for a lock (a write is three requests, each bounded
by the client's timeout), then is refused with ``PlaybookBusyError`` naming the holder:
nothing was read or written. Not covered: other machines, other users, containers with their
own temp dir, and platforms without ``fcntl`` (Windows: the process lock only); docs/writes.md
says what the service itself can and cannot guarantee there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from quantscope._errors import PlaybookBusyError
from quantscope._http.client import Client

try:
    import fcntl
except ImportError:  # Windows: no flock, the process lock only
    fcntl = None  # type: ignore[assignment]  # no fcntl on Windows: callers check for None

__all__ = ["WAIT_S", "digest", "lock_dir", "playbook_lock", "service_url"]

#: How long a writer waits for another writer of the same playbook before giving up.
WAIT_S = 120.0

_GUARD = threading.Lock()  # guards _LOCKS
_LOCKS: dict[str, _PlaybookLock] = {}


class _PlaybookLock:
    """The process's lock of one playbook: an RLock, and the flock its outermost holder
    took (``depth`` counts the holding thread's nested entries).
    """

    def __init__(self) -> None:
        self.rlock = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


def _forget_after_fork() -> None:
    """In a child process (``fork``): hold nothing. Its copies of the parent's locks would let
    it in re-entrantly (the forking thread lives on in it) while the parent's write goes on;
    closing its copies of the lock files leaves the parent's flocks held by the parent.
    """
    global _GUARD
    _GUARD = threading.Lock()
    for lock in _LOCKS.values():
        if lock.fd is not None:
            with contextlib.suppress(OSError):
                os.close(lock.fd)
    _LOCKS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def service_url(client: Client) -> str:
    """The service's URL as a lock names it: no credentials, host in lower case."""
    parts = urlsplit(client.base_url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def digest(client: Client, quant_id: int) -> str:
    """The playbook's lock name: a digest of service URL, key and quant (the key unrecoverable)."""
    text = "\n".join([service_url(client), client.settings.api_key or "", str(int(quant_id))])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def lock_dir(client: Client) -> Path:
    """Where the playbook lock files live (module docstring)."""
    shared = Path(tempfile.gettempdir()) / f"quantscope-{os.getuid()}" / "locks"
    if _private_dir(shared.parent) and _private_dir(shared):
        return shared
    fallback = Path(client.settings.cache_dir) / "locks"
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


def _private_dir(path: Path) -> bool:
    """Make ``path`` (mode 0700) unless it exists; whether it is a directory of this user's
    that nobody else may write to (a symlink or someone else's directory is never used).
    """
    with contextlib.suppress(FileExistsError, OSError):
        path.mkdir(mode=0o700)
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


@contextlib.contextmanager
def playbook_lock(client: Client, quant_id: int, *, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the lock of ``quant_id``'s playbook on the client's service meanwhile (module
    docstring); ``PlaybookBusyError`` when another writer holds it longer than ``wait_s``.
    """
    name = digest(client, quant_id)
    with _GUARD:
        lock = _LOCKS.setdefault(name, _PlaybookLock())
    deadline = time.monotonic() + wait_s
    if not lock.rlock.acquire(timeout=max(wait_s, 0)):
        raise _busy(client, quant_id, wait_s, {"pid": os.getpid(), "host": socket.gethostname()})
    try:
        if lock.depth == 0 and fcntl is not None:
            lock.fd = _flock(lock_dir(client) / f"{name}.lock", deadline, client, quant_id, wait_s)
        lock.depth += 1
        try:
            yield
        finally:
            lock.depth -= 1
            if lock.depth == 0 and lock.fd is not None:
                fd, lock.fd = lock.fd, None
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)  # let go cleanly: no holder to report
                os.close(fd)  # and the flock with it
    finally:
        lock.rlock.release()


def _flock(path: Path, deadline: float, client: Client, quant_id: int, wait_s: float) -> int:
    """Open ``path`` and take its flock, polling until ``deadline``; record the holder."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    pause = 0.002
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _busy(client, quant_id, wait_s, _holder(fd)) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.01)
        me = {"pid": os.getpid(), "host": socket.gethostname(), "since": _now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _holder(fd: int) -> dict[str, Any]:
    """The holder recorded in the lock file ({} when none, or unreadable)."""
    try:
        found = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _busy(
    client: Client, quant_id: int, wait_s: float, holder: dict[str, Any]
) -> PlaybookBusyError:
    pid = holder.get("pid")
    pid = pid if isinstance(pid, int) else None
    host = str(holder["host"]) if "host" in holder else None
    since = str(holder["since"]) if "since" in holder else None
    who = "another write" if pid is None else f"the write of pid {pid} on {host}"
    if since is not None:
        who += f" (since {since})"
    return PlaybookBusyError(
        f"quant {int(quant_id)}'s playbook on {service_url(client)} is being written by {who}: "
        f"waited {wait_s:g} s; nothing was read or written. Try again when it is done (or stop "
        "it).",
        quant_id=int(quant_id),
        pid=pid,
        host=host,
        since=since,
    )
