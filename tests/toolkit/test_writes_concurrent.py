"""Compare-and-swap under concurrency (issue 20, item 5): writers racing on one playbook entry
from the same old value. One is written; every other is refused as stale with nothing sent;
the audit log holds one entry, and it records what the service held after the write."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _helpers import (
    QUANT,
    ApiSession,
    other_client,
    quota_left,
    service_playbook,
    smart_money,
    value_of,
)

import quantscope as qs
import quantscope.loaders as L
from quantscope import audit
from quantscope._http.client import Client
from quantscope._http.writelock import lock_dir, playbook_lock
from quantscope.sandbox.serve import SandboxServer

THREADS = 16
CONFIG = "/api/degen/config"


def race(
    server: SandboxServer, tmp_path: Path, row: Any
) -> tuple[list[audit.Written | Exception], list[Client]]:
    """``THREADS`` clients write the entry's threshold from the value they all saw to values
    of their own, all at once: the even ones share one cache directory (and audit log), the
    odd ones have their own."""
    old = float(row["threshold"])
    clients = [
        Client(
            server.url,
            server.keys["enterprise"],
            cache_dir=str(tmp_path / ("shared" if i % 2 == 0 else f"c{i}")),
            progress=False,
        )
        for i in range(THREADS)
    ]
    start = threading.Barrier(THREADS)

    def write(i: int) -> audit.Written | Exception:
        change = audit.Change.of(row, "threshold", old + 1 + i / 100)
        start.wait()
        try:
            return audit.write_changes(QUANT, [change], client=clients[i])
        except qs.StaleWriteError as exc:
            return exc

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(write, range(THREADS))), clients


@pytest.mark.slow  # threads racing, or a second process
def test_sixteen_threads_writing_one_entry_from_one_old_value_write_it_once(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    row = smart_money(L.load_playbook(QUANT, client=client_for(server)))
    config_id, old = str(row["config_id"]), float(row["threshold"])

    results, clients = race(server, tmp_path, row)
    try:
        written = [r for r in results if isinstance(r, audit.Written)]
        refused = [r for r in results if isinstance(r, qs.StaleWriteError)]
        assert (len(written), len(refused)) == (1, THREADS - 1)
        (winner,) = written
        (entry,) = winner.entries
        final = float(value_of(service_playbook(server), config_id))
        assert final == entry.new_value  # the one written is the one that survived
        assert (entry.old_value, entry.read_back, entry.verified) == (old, final, True)
        for stale in refused:  # each refused with the winner's value, nothing sent
            ((_, now),) = stale.stale
            assert now == final
        logs = {audit.AuditLog.for_client(c).path for c in clients}
        logged = [e for path in logs for e in audit.AuditLog(path).entries()]
        assert logged == [entry]  # the log holds the one write, as the service holds it
    finally:
        for c in clients:
            c.close()


@pytest.mark.slow  # threads racing, or a second process
def test_update_playbook_checks_and_writes_under_the_lock_too(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    server = fresh_sandbox()
    row = smart_money(L.load_playbook(QUANT, client=client_for(server)))
    config_id, old = str(row["config_id"]), float(row["threshold"])
    clients = [other_client(server, tmp_path / str(i)) for i in range(8)]
    start = threading.Barrier(len(clients))

    def write(i: int) -> float | Exception:
        start.wait()
        change = {"config_id": config_id, "value": old + 1 + i, "old_value": old}
        try:
            L.update_playbook(QUANT, [change], client=clients[i])
        except qs.StaleWriteError as exc:
            return exc
        return old + 1 + i

    try:
        with ThreadPoolExecutor(len(clients)) as pool:
            results = list(pool.map(write, range(len(clients))))
    finally:
        for c in clients:
            c.close()
    (value,) = [r for r in results if isinstance(r, float)]
    assert sum(isinstance(r, qs.StaleWriteError) for r in results) == len(clients) - 1
    assert float(value_of(service_playbook(server), config_id)) == value


def test_a_read_back_showing_another_writers_value_is_logged_as_such(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A writer on another machine (no lock of ours reaches it) changes one of two entries
    between this write's PUT and its read-back: both were written (all or nothing), the log
    says which one the service no longer holds and what it holds instead."""
    server = fresh_sandbox()
    client = client_for(server)
    log = audit.AuditLog(tmp_path / "log.jsonl")
    playbook = L.load_playbook(QUANT, client=client)
    first, second = smart_money(playbook), smart_money(playbook, "LOW_CAP")
    a, b = float(first["threshold"]), float(second["threshold"])
    put = L.update_playbook

    def then_elsewhere(*args: Any, **kwargs: Any) -> Any:
        answer = put(*args, **kwargs)
        with ApiSession(server.url, server.keys["enterprise"]) as elsewhere:
            body = {
                "quantId": QUANT,
                "newConfigs": [
                    {"configId": str(second["config_id"]), "field": "threshold", "newValue": b + 5}
                ],
            }
            assert elsewhere.put(CONFIG, json=body).status_code == 200
        return answer

    monkeypatch.setattr(L, "update_playbook", then_elsewhere)
    written = audit.write_changes(
        QUANT,
        [
            audit.Change.of(first, "threshold", a + 1),
            audit.Change.of(second, "threshold", b + 1),
        ],
        client=client,
        log=log,
    )

    mine, theirs = written.entries
    assert (mine.old_value, mine.new_value, mine.read_back, mine.verified) == (
        a,
        a + 1,
        a + 1,
        True,
    )
    assert (theirs.old_value, theirs.new_value, theirs.read_back) == (b, b + 1, b + 5)
    assert not theirs.verified
    assert not written.verified
    assert theirs.note == (
        f"read back threshold={b + 5!r}, sent {b + 1!r}: the service holds another value "
        "(another writer's, written after this one from another machine or around quantscope; "
        "or the service did not keep it)"
    )
    assert log.entries() == [mine, theirs]
    assert float(value_of(service_playbook(server), str(first["config_id"]))) == a + 1


@pytest.mark.slow  # threads racing, or a second process
def test_a_playbook_locked_by_another_process_waits_then_refuses_naming_it(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
) -> None:
    """A real second process holds the playbook's lock: this one is refused after its wait
    (nothing sent); once that process is killed (-9), the system has dropped the lock."""
    server = fresh_sandbox()
    client = client_for(server)
    row = smart_money(L.load_playbook(QUANT, client=client))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, server.url, str(tmp_path / "holder"), str(QUANT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "QUANTSCOPE_API_KEY": server.keys["enterprise"]},
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        left = quota_left(server, "enterprise")
        with pytest.raises(qs.PlaybookBusyError) as busy, playbook_lock(client, QUANT, wait_s=0.2):
            pass
        assert (busy.value.pid, busy.value.quant_id) == (holder.pid, QUANT)
        assert str(busy.value).startswith(
            f"quant {QUANT}'s playbook on {server.url} is being written by the write of pid "
            f"{holder.pid} on "
        )
        assert isinstance(busy.value, qs.WriteRefusedError)
        assert quota_left(server, "enterprise") == left
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
        assert holder.stdin is not None
        holder.stdin.close()
    written = audit.write_changes(
        QUANT, [audit.Change.of(row, "threshold", float(row["threshold"]) + 1)], client=client
    )
    assert written.verified


# A process that takes the playbook lock, says so, and holds it until killed or its stdin ends.
HOLD = """
import sys
from quantscope._http.client import Client
from quantscope._http.writelock import playbook_lock
url, cache, quant = sys.argv[1:]
with Client(url, cache_dir=cache, progress=False) as client, playbook_lock(client, int(quant)):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_the_lock_directory_is_never_one_someone_else_could_swap(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = client_for(fresh_sandbox())
    temp = tmp_path / "temp"
    (temp / "elsewhere").mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    (temp / f"quantscope-{os.getuid()}").symlink_to(temp / "elsewhere")
    assert lock_dir(client) == Path(client.settings.cache_dir) / "locks"
    (temp / f"quantscope-{os.getuid()}").unlink()
    assert lock_dir(client) == temp / f"quantscope-{os.getuid()}" / "locks"
    assert oct((temp / f"quantscope-{os.getuid()}").stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("applied", [True, False], ids=["applied", "not-applied"])
def test_a_put_without_an_answer_is_logged_all_or_nothing_by_its_read_back(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    applied: bool,
) -> None:
    """The answer to a two-entry PUT is lost (the service applied it, or not), and a writer
    elsewhere then moves the second entry: applied, both entries are logged (the second as
    not holding its value, and why); not applied, the error is raised and nothing logged."""
    server = fresh_sandbox()
    client = client_for(server)
    log = audit.AuditLog(tmp_path / "log.jsonl")
    playbook = L.load_playbook(QUANT, client=client)
    first, second = smart_money(playbook), smart_money(playbook, "LOW_CAP")
    a, b = float(first["threshold"]), float(second["threshold"])
    put = L.update_playbook

    def answer_lost(*args: Any, **kwargs: Any) -> Any:
        if applied:
            put(*args, **kwargs)
        with ApiSession(server.url, server.keys["enterprise"]) as elsewhere:
            move = {"configId": str(second["config_id"]), "field": "threshold", "newValue": b + 5}
            body = {"quantId": QUANT, "newConfigs": [move]}
            assert elsewhere.put(CONFIG, json=body).status_code == 200
        raise qs.APIConnectionError("connection reset while reading the answer", endpoint=CONFIG)

    monkeypatch.setattr(L, "update_playbook", answer_lost)
    changes = [
        audit.Change.of(first, "threshold", a + 1),
        audit.Change.of(second, "threshold", b + 1),
    ]
    if not applied:
        with pytest.raises(qs.APIConnectionError, match="connection reset"):
            audit.write_changes(QUANT, changes, client=client, log=log)
        assert log.entries() == []
        assert float(value_of(service_playbook(server), str(first["config_id"]))) == a
        return
    written = audit.write_changes(QUANT, changes, client=client, log=log)
    mine, theirs = written.entries
    assert (mine.read_back, mine.verified) == (a + 1, True)
    assert mine.note == "the PUT got no answer; the read-back shows it applied"
    assert (theirs.old_value, theirs.new_value, theirs.read_back, theirs.verified) == (
        b,
        b + 1,
        b + 5,
        False,
    )
    assert theirs.note is not None
    assert theirs.note.startswith(
        f"the PUT got no answer; the read-back shows it applied, but read back "
        f"threshold={b + 5!r}, sent {b + 1!r}: the service holds another value"
    )
    assert log.entries() == [mine, theirs]


def test_a_process_forked_during_a_write_holds_nothing_of_its_lock(tmp_path: Path) -> None:
    """The child of a fork in the middle of a write is another process: it waits for the
    parent's lock (here: gives up after its wait), instead of entering it re-entrantly."""
    with (
        Client("http://127.0.0.1:9", "k" * 32, cache_dir=str(tmp_path), progress=False) as client,
        playbook_lock(client, QUANT),
    ):
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only when refused
            code = 1
            try:
                with playbook_lock(client, QUANT, wait_s=0.2):
                    pass
            except qs.PlaybookBusyError as exc:
                code = 0 if exc.pid == os.getppid() else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
