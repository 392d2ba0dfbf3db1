"""Safe playbook writes: sent, read back to verify, logged, and undone from the log.

Every change a panel makes goes through this module (it has no UI; ``widgets`` draws it)::

    from quantscope import audit
    written = audit.write_changes(1, [audit.Change.of(row, "threshold", 3.0)])
    written.entries[0].verified       # the read-back showed the new value
    audit.undo(written.entries)       # one PUT restoring the old values, verified, logged too
    audit.apply_recommendation_verified(1, recs.iloc[0])   # the optimizer's, the same way

``loaders.apply_recommendation`` and ``loaders.update_playbook`` are the plain API calls; the
functions here wrap them with the read-back and the log. What a change is, and the service's
rules for it (``check_change``), live in ``_changes``, which needs no client.

A write is compare-and-swap: first one read of the playbook from the service (never the
cache), and a ``StaleWriteError`` (nothing sent, nothing logged) when an entry no longer holds
the value the change was made from (``Change.old_value``: what the user saw; a
recommendation's ``old_threshold``); ``force=True`` writes anyway and logs the value it
replaced. Then one PUT (the service applies all of its changes or none), then one read of the
playbook to check that every field now holds the value sent: three requests. Only then are the
entries appended to the audit log, all lines of one write in a single ``write()``; a PUT that
fails logs nothing, and a read-back that disagrees (or fails) is logged with
``verified: false``. All of it holds the playbook's lock (``_http.writelock``): no other write
through quantscope on this machine, in any thread or process, lands between the check and the
read-back, so of writers that saw the same value one writes and the others are refused as
stale. Across machines the service offers no conditional write: docs/writes.md.

``undo`` is a write of the old values whose check is that the entries still hold what the
undone write set (``UndoRefusedError`` otherwise): it never restores over a change it did not
make.

After every write that reached the service, the functions registered with ``on_write`` are
called with the client, the quant and the playbook as read back (``widgets`` keeps its shared
view of the playbook up to date this way, without this module knowing about panels).

The log is JSON lines at ``<cache dir>/audit.jsonl`` (``AuditLog.for_client``): wall-clock
time, the service (``client.settings.service`` and the URL without credentials, never the
key), quant, config id, criterion, field, the old value (as the check read it from the
service), the new value (as sent), the value read back after the write (what the service
held: another writer's value when it changed in between) and whether it verified.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

import pandas as pd

from quantscope import loaders as L
from quantscope._advice import Said
from quantscope._changes import (
    FIELD_COLUMNS,
    Change,
    number,
    plain,
    same_value,
    stale_changes,
    stale_write_error,
)
from quantscope._errors import (
    APIConnectionError,
    QuantscopeError,
    StaleWriteError,
    UndoRefusedError,
)
from quantscope._http.client import Client, get_default_client
from quantscope._http.writelock import playbook_lock

__all__ = [
    "AuditEntry",
    "AuditLog",
    "Change",
    "Written",
    "apply_recommendation_verified",
    "on_write",
    "undo",
    "write_changes",
]

#: Called after every write that reached the service: (client, quant id, playbook read back).
WriteListener = Callable[[Client, int, "pd.DataFrame | None"], None]
_LISTENERS: list[WriteListener] = []


def on_write(listener: WriteListener) -> None:
    """Call ``listener(client, quant_id, playbook)`` after every write made here that reached
    the service (``playbook``: as read back, None when the read-back failed). Registering
    the same function twice registers it once.
    """
    if listener not in _LISTENERS:
        _LISTENERS.append(listener)


def _written(client: Client, quant_id: int, playbook: pd.DataFrame | None) -> None:
    for listener in list(_LISTENERS):
        listener(client, int(quant_id), playbook)


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit log: a change that reached the service, and whether it verified."""

    id: str
    timestamp: str  # ISO 8601, UTC, wall clock
    service: str
    url: str
    quant_id: int
    action: str  # "change", "undo" or "recommendation"
    config_id: str
    criterion: str | None
    market_cap_class: str | None
    config_type: str | None
    field: str
    old_value: Any
    new_value: Any
    verified: bool
    batch: str  # shared by the entries of one request
    undoes: str | None = None  # the id of the entry an undo reverts
    recommendation_id: int | None = None
    note: str | None = None  # why it did not verify
    read_back: Any = None  # what the service held after the write (None: the read-back failed)

    @property
    def change(self) -> Change:
        return Change(
            self.config_id,
            self.field,
            self.old_value,
            self.new_value,
            self.criterion,
            self.market_cap_class,
            self.config_type,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AuditEntry:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


class AuditLog:
    """The JSON-lines audit log of playbook writes (one file, appended to, never rewritten)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @classmethod
    def for_client(cls, client: Client) -> AuditLog:
        """The log next to the client's HTTP cache: ``<cache dir>/audit.jsonl``."""
        return cls(Path(client.settings.cache_dir) / "audit.jsonl")

    def append(self, entries: Sequence[AuditEntry]) -> None:
        """Append entries, all lines in one ``write()`` on an append-only descriptor."""
        if not entries:
            return
        data = "".join(json.dumps(asdict(e), sort_keys=True) + "\n" for e in entries)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self, quant_id: int | None = None) -> list[AuditEntry]:
        """Every entry, oldest first (of one quant when given); unreadable lines are skipped."""
        if not self.path.exists():
            return []
        found = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = AuditEntry.from_json(json.loads(line))
            except (ValueError, TypeError):
                continue  # a line torn by a crash mid-write: never half an entry
            if quant_id is None or entry.quant_id == quant_id:
                found.append(entry)
        return found

    def frame(self, quant_id: int | None = None) -> pd.DataFrame:
        """The entries as a DataFrame, one row each (``timestamp`` as datetime64[ms, UTC])."""
        rows = [asdict(e) for e in self.entries(quant_id)]
        frame = pd.DataFrame(rows, columns=[f.name for f in fields(AuditEntry)])
        stamps = pd.to_datetime(frame["timestamp"], utc=True, format="ISO8601")
        frame["timestamp"] = stamps.dt.as_unit("ms")
        return frame

    def undone(self) -> set[str]:
        """Ids of the entries an undo has reverted."""
        return {e.undoes for e in self.entries() if e.undoes}

    def __repr__(self) -> str:
        return f"AuditLog({str(self.path)!r})"


class Written(NamedTuple):
    """What a verified write returns: its log entries and the playbook as read back."""

    entries: list[AuditEntry]
    playbook: pd.DataFrame | None

    @property
    def verified(self) -> bool:
        return all(e.verified for e in self.entries)


def _service(client: Client) -> tuple[str, str]:
    """The service's name and its URL without any credentials (never the key)."""
    parts = urlsplit(client.base_url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return client.settings.service, urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class _Check(NamedTuple):
    """What the read-back showed for one change: whether it holds the value sent, why not,
    and the value it holds (None when the read-back failed or lacks the entry).
    """

    ok: bool
    note: str | None
    held: Any = None


def _value(playbook: pd.DataFrame, change: Change) -> tuple[bool, Any]:
    """Whether ``playbook`` has the change's entry, and the value its field holds there."""
    rows = playbook[(playbook["config_id"] == change.config_id).fillna(False).to_numpy(bool)]
    if rows.empty:
        return False, None
    return True, plain(rows.iloc[0][FIELD_COLUMNS[change.field]])


def _holds(playbook: pd.DataFrame, change: Change) -> _Check:
    """Whether the read-back playbook holds the change's new value (and why not)."""
    found, actual = _value(playbook, change)
    if not found:
        return _Check(False, f"config {change.config_id} is missing from the playbook read back")
    if same_value(actual, change.new_value):
        return _Check(True, None, actual)
    return _Check(
        False,
        f"read back {change.field}={actual!r}, sent {change.new_value!r}: the service holds "
        "another value (another writer's, written after this one from another machine or "
        "around quantscope; or the service did not keep it)",
        actual,
    )


def _read_back(
    quant_id: int, changes: Sequence[Change], client: Client
) -> tuple[pd.DataFrame | None, list[_Check], QuantscopeError | None]:
    """Read the playbook from the service (never the cache) and check every change in it."""
    try:
        playbook = L.load_playbook(quant_id, fresh=True, client=client)
    except QuantscopeError as exc:
        note = f"the read-back failed: {exc}"
        return None, [_Check(False, note)] * len(changes), exc
    return playbook, [_holds(playbook, c) for c in changes], None


def _log(
    quant_id: int,
    changes: Sequence[Change],
    checks: Sequence[_Check],
    *,
    client: Client,
    log: AuditLog,
    action: str,
    undoes: Sequence[str | None] | None = None,
    recommendation_id: int | None = None,
) -> list[AuditEntry]:
    service, url = _service(client)
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    batch = uuid.uuid4().hex
    entries = [
        AuditEntry(
            id=uuid.uuid4().hex,
            timestamp=stamp,
            service=service,
            url=url,
            quant_id=int(quant_id),
            action=action,
            config_id=c.config_id,
            criterion=c.criterion,
            market_cap_class=c.market_cap_class,
            config_type=c.config_type,
            field=c.field,
            old_value=c.old_value,
            new_value=c.new_value,
            verified=check.ok,
            batch=batch,
            undoes=None if undoes is None else undoes[i],
            recommendation_id=recommendation_id,
            note=check.note,
            read_back=check.held,
        )
        for i, (c, check) in enumerate(zip(changes, checks, strict=True))
    ]
    log.append(entries)
    return entries


def _checked(quant_id: int, changes: Sequence[Change], client: Client, force: bool) -> list[Change]:
    """Compare: read the playbook from the service; refuse (``StaleWriteError``) when an entry
    no longer holds the change's ``old_value``, unless ``force``. Returns the changes with
    ``old_value`` as the service holds it now (what the write replaces, and logs). Called with
    the playbook's lock held, so nobody on this machine writes before the PUT.
    """
    now = L.load_playbook(quant_id, fresh=True, client=client)
    stale = stale_changes(now, changes)
    if stale and not force:
        raise stale_write_error(stale, now)
    checked = []
    for change in changes:
        found, value = _value(now, change)
        checked.append(replace(change, old_value=value) if found else change)
    return checked


def _applied(changes: Sequence[Change], checks: Sequence[_Check]) -> bool:
    """Whether a PUT that got no answer was applied, by its read-back: every entry holds its
    new value, or one entry does that did not before (the service writes all changes of a
    request or none, so the others were written too, and changed since by another writer).
    """
    return all(c.ok for c in checks) or any(
        check.ok and not same_value(change.old_value, change.new_value)
        for change, check in zip(changes, checks, strict=True)
    )


def write_changes(
    quant_id: int,
    changes: Sequence[Change],
    *,
    force: bool = False,
    client: Client | None = None,
    log: AuditLog | None = None,
    action: str = "change",
    undoes: Sequence[str | None] | None = None,
) -> Written:
    """Check, send the changes in one PUT, read the playbook back, log each with ``verified``.

    The check (module docstring) refuses with a ``StaleWriteError`` when an entry no longer
    holds the change's ``old_value``; ``force=True`` writes anyway (the log holds the value
    replaced). A PUT the service refused raises and logs nothing (the service wrote nothing).
    A PUT that got no answer may have been applied: the playbook is read back, and when it
    shows the PUT applied (every new value, or one that was not there before: the service
    writes all or none) the write is logged (with a note) and returned, else the error is
    raised and nothing is logged. A read-back that fails after an answered PUT is logged with
    ``verified`` false and re-raised after logging.

    Check, PUT, read-back and log happen under the playbook's lock (``_http.writelock``): no other
    write through quantscope on this machine reaches this playbook in between, so of writers
    that saw the same value one writes and the others are refused as stale. Each entry's
    ``old_value`` is what the check read from the service and ``read_back`` what the service
    held after the write; a read-back that shows another value (a writer from elsewhere) is
    logged with ``verified`` false and a note saying so, and returned, not raised.
    """
    if not changes:
        raise ValueError("write_changes needs at least one change")
    client = client if client is not None else get_default_client()
    log = log if log is not None else AuditLog.for_client(client)
    with playbook_lock(client, quant_id):
        entries, playbook, failure = _write(
            quant_id, changes, client, log, force=force, action=action, undoes=undoes
        )
    _written(client, quant_id, playbook)
    if failure is not None:
        raise failure
    return Written(entries, playbook)


def _write(
    quant_id: int,
    changes: Sequence[Change],
    client: Client,
    log: AuditLog,
    *,
    force: bool,
    action: str,
    undoes: Sequence[str | None] | None,
) -> tuple[list[AuditEntry], pd.DataFrame | None, QuantscopeError | None]:
    """``write_changes``' check, PUT, read-back and log (the caller holds the lock)."""
    changes = _checked(quant_id, changes, client, force)
    try:
        L.update_playbook(quant_id, [c.request() for c in changes], client=client)
    except APIConnectionError:
        playbook, checks, failure = _read_back(quant_id, changes, client)
        if failure is not None or not _applied(changes, checks):
            raise  # not applied (the service writes all or nothing), or not known: no log
        note = "the PUT got no answer; the read-back shows it applied"
        checks = [c._replace(note=note if c.ok else f"{note}, but {c.note}") for c in checks]
    else:
        playbook, checks, failure = _read_back(quant_id, changes, client)
    entries = _log(quant_id, changes, checks, client=client, log=log, action=action, undoes=undoes)
    return entries, playbook, failure


def apply_recommendation_verified(
    quant_id: int,
    recommendation: pd.Series,
    *,
    force: bool = False,
    client: Client | None = None,
    log: AuditLog | None = None,
) -> Written:
    """Apply one optimizer recommendation (a ``load_recommendations`` row), verify, log it.

    Checked first: a ``StaleWriteError`` when the entry no longer holds the recommendation's
    ``old_threshold`` (the threshold it was made for, which the user saw); ``force=True``
    skips that check, but the service itself refuses a recommendation whose entry moved
    (409 ``stale_recommendation``). The service's apply sets the entry's threshold to
    ``new_threshold``; the read-back checks it, and the entry logs old -> new so that
    ``undo`` can revert.
    """
    client = client if client is not None else get_default_client()
    log = log if log is not None else AuditLog.for_client(client)
    rec_id = int(recommendation["recommendation_id"])
    with playbook_lock(client, quant_id):  # as write_changes: one writer on this machine
        (change,) = _checked(quant_id, [Change.of_recommendation(recommendation)], client, force)
        L.apply_recommendation(rec_id, client=client)
        playbook, checks, failure = _read_back(quant_id, [change], client)
        entries = _log(
            quant_id,
            [change],
            checks,
            client=client,
            log=log,
            action="recommendation",
            recommendation_id=rec_id,
        )
    _written(client, quant_id, playbook)
    if failure is not None:
        raise failure
    return Written(entries, playbook)


def undo(
    entries: AuditEntry | Iterable[AuditEntry],
    *,
    client: Client | None = None,
    log: AuditLog | None = None,
    force: bool = False,
) -> Written:
    """Restore the old values of logged changes (of one quant) in one PUT; verify; log it.

    Refused (``UndoRefusedError``, nothing sent) when an entry was undone before, or when the
    playbook no longer holds the entry's new value (someone changed it since: the check reads
    the playbook from the service, and the error names both values). ``force=True`` skips the
    second check (the log then holds the value the undo replaced).
    """
    chosen = [entries] if isinstance(entries, AuditEntry) else list(entries)
    if not chosen:
        raise ValueError("undo needs at least one audit entry")
    quants = {e.quant_id for e in chosen}
    if len(quants) != 1:
        raise ValueError(f"undo one quant's entries at a time, got quants {sorted(quants)}")
    client = client if client is not None else get_default_client()
    log = log if log is not None else AuditLog.for_client(client)
    (quant_id,) = quants
    try:
        with playbook_lock(client, quant_id):  # two undos of one entry: the second sees the first
            done = log.undone() & {e.id for e in chosen}
            if done:
                raise UndoRefusedError(f"already undone: audit entries {sorted(done)}")
            return write_changes(
                quant_id,
                [e.change.reverted() for e in chosen],
                force=force,
                client=client,
                log=log,
                action="undo",
                undoes=[e.id for e in chosen],
            )
    except StaleWriteError as exc:
        raise _undo_refused(exc) from None


def _undo_refused(exc: StaleWriteError) -> UndoRefusedError:
    """The refusal of an undo whose entries changed since the change it undoes."""
    moved = "; ".join(
        f"{c.where} is now {number(now)}, not the {number(c.old_value)} the undone change set"
        for c, now in exc.stale
    )
    return UndoRefusedError(
        Said(
            "undo refused, nothing was written: {moved}: it changed since. {Advice}.",
            ("reload", "force"),
            {"moved": moved},
        ),
        stale=exc.stale,
        playbook=exc.playbook,
    )
