"""One sync at a time per catalog (``quantscope.catalog.lock``), with two real processes.

A child process runs a real ``qs.sync`` against the sandbox and pauses after its first task
is swapped in (it writes ``ready`` and waits for ``go``): the test's own sync of the same
catalog meanwhile is refused with ``CatalogBusyError`` naming the child, and loses nothing
of the child's run. Killed there (SIGKILL: no cleanup), the child leaves its record in the
lock file: the next sync warns (``StaleLockWarning``), takes the lock and resumes the run.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

import quantscope as qs
from quantscope._http.client import Client
from quantscope.catalog.lock import LOCK_FILE
from quantscope.sandbox.serve import SandboxServer

START, END = "2026-07-01", "2026-07-31T23:59:59"
RESOURCES = ["trades", "evaluations"]

_PAUSED = """
import sys, time
from pathlib import Path
import quantscope as qs
import quantscope.catalog.sync as sync_module
from quantscope._http.client import Client

url, key, cache, path, start, end, flags = sys.argv[1:]
real = sync_module._record

def record_then_wait(*args, **kwargs):
    real(*args, **kwargs)
    ready, go = Path(flags) / "ready", Path(flags) / "go"
    if not ready.exists():  # after the first task only
        ready.touch()
        deadline = time.monotonic() + 120
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.02)

sync_module._record = record_then_wait
with Client(url, key, cache_dir=cache, progress=False) as c:
    qs.sync(path, quant_id=1, resources=%r, start=start, end=end, client=c)
"""


@pytest.fixture
def paused(
    own_sandbox: SandboxServer, tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """A child process syncing ``tmp_path/cat``, paused after its first task."""
    path, flags = tmp_path / "cat", tmp_path / "flags"
    flags.mkdir()
    args = [
        own_sandbox.url,
        own_sandbox.keys["enterprise"],
        str(tmp_path / "child-cache"),
        str(path),
        START,
        END,
        str(flags),
    ]
    child = subprocess.Popen(
        [sys.executable, "-c", _PAUSED % (RESOURCES,), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not (flags / "ready").exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            pytest.fail(f"the child sync never paused: {child.communicate()[1].decode()[-800:]}")
        time.sleep(0.02)
    try:
        yield child, path
    finally:
        (flags / "go").touch()
        if child.poll() is None:
            child.wait(timeout=120)
        child.communicate()


def _sync(server: SandboxServer, cache: Path, path: Path) -> qs.SyncReport:
    with Client(server.url, server.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        return qs.sync(path, quant_id=1, resources=RESOURCES, start=START, end=END, client=c)


def test_a_second_sync_is_refused_and_loses_nothing(
    paused: tuple[subprocess.Popen[bytes], Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    child, path = paused
    before = (path / "manifest.json").read_bytes()
    with pytest.raises(qs.CatalogBusyError) as busy:
        _sync(own_sandbox, tmp_path / "cache", path)
    error = busy.value
    assert (error.pid, error.host, error.catalog) == (child.pid, socket.gethostname(), str(path))
    assert error.since is not None
    assert (
        abs((datetime.now().astimezone() - datetime.fromisoformat(error.since)).total_seconds())
        < 300
    )
    assert f"pid {child.pid} on {socket.gethostname()}" in str(error)
    assert "nothing was read or written" in str(error)
    assert (path / "manifest.json").read_bytes() == before  # refused before anything
    # A dry run only reads: not locked out.
    with Client(
        own_sandbox.url,
        own_sandbox.keys["enterprise"],
        cache_dir=str(tmp_path / "cache"),
        progress=False,
    ) as c:
        dry = qs.sync(
            path, quant_id=1, resources=RESOURCES, start=START, end=END, client=c, dry_run=True
        )
    assert dry.dry_run
    assert dry.run is None

    (path.parent / "flags" / "go").touch()
    assert child.wait(timeout=120) == 0, child.communicate()[1].decode()[-800:]
    runs = qs.open_catalog(path).runs
    assert [(r["id"], r["status"]) for r in runs] == [(1, "complete")]
    assert set(runs[0]["tasks"]) == {"trades:quant_id=1", "evaluations:quant_id=1"}
    assert (path / LOCK_FILE).read_bytes() == b""  # let go cleanly

    again = _sync(own_sandbox, tmp_path / "cache", path)  # now free: a run of its own
    assert (again.run, again.status) == (2, "complete")
    runs = qs.open_catalog(path).runs
    assert [(r["id"], r["status"]) for r in runs] == [(1, "complete"), (2, "complete")]


def test_a_dead_syncs_lock_is_taken_over_with_a_warning(
    paused: tuple[subprocess.Popen[bytes], Path], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    child, path = paused
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=60) == -signal.SIGKILL
    assert json.loads((path / LOCK_FILE).read_bytes())["pid"] == child.pid  # left behind
    run = qs.open_catalog(path).runs[-1]
    assert run["status"] == "running"
    assert list(run["tasks"]) == ["trades:quant_id=1"]

    with pytest.warns(qs.StaleLockWarning, match=rf"pid {child.pid} on .*\(killed\?\)"):
        report = _sync(own_sandbox, tmp_path / "cache", path)
    assert (report.run, report.status) == (1, "complete")  # the dead run, resumed
    notes = {t["task"]: t.get("note") for t in report.tasks}
    assert notes["trades:quant_id=1"] == "done before"
    run = qs.open_catalog(path).runs[-1]
    assert [a["status"] for a in run["attempts"]] == ["running", "complete"]
    assert (path / LOCK_FILE).read_bytes() == b""
