"""Compare-and-swap under concurrency (issue 20, item 5): writers racing on one playbook entry
from the same old value. One is written; every other is refused as stale with nothing sent;
the audit log holds one entry, and it records what the service held after the write."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _helpers import QUANT, service_playbook, smart_money, value_of

import quantscope as qs
import quantscope.loaders as L
from quantscope import audit
from quantscope._client import Client
from quantscope.sandbox.serve import SandboxServer

THREADS = 16


def race(
    server: SandboxServer, tmp_path: Path, row: Any, *, shared_cache: bool
) -> tuple[list[audit.Written | Exception], list[Client]]:
    """``THREADS`` clients (caches of their own, or one shared) write the entry's threshold
    from the value they all saw to values of their own, all at once."""
    old = float(row["threshold"])
    clients = [
        Client(
            server.url,
            server.keys["enterprise"],
            cache_dir=str(tmp_path / ("shared" if shared_cache else f"c{i}")),
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


@pytest.mark.parametrize("shared_cache", [False, True], ids=["own-caches", "shared-cache"])
def test_sixteen_threads_writing_one_entry_from_one_old_value_write_it_once(
    fresh_sandbox: Callable[..., SandboxServer],
    client_for: Callable[..., Client],
    tmp_path: Path,
    shared_cache: bool,
) -> None:
    server = fresh_sandbox()
    row = smart_money(L.load_playbook(QUANT, client=client_for(server)))
    config_id, old = str(row["config_id"]), float(row["threshold"])

    results, clients = race(server, tmp_path, row, shared_cache=shared_cache)
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
