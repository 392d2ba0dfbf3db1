"""Every SQLite connection is closed by its owner, never left to the garbage collector.

Python 3.13 reports a connection collected unclosed (``ResourceWarning: unclosed database``,
which pytest's warnings-as-errors turn into failures of whatever test runs next); 3.11 and
3.12 say nothing but keep the file descriptors until a collection. So these tests look at
what is open, not only at warnings: the descriptors this process holds on the files under
the test's directory, right after the owner was closed and before any ``gc.collect()``.
"""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import quantscope._http.embedded as embedded_mod
import quantscope.loaders as L
from quantscope._http.client import Client, connect, set_default_client
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer


def open_files(under: Path) -> list[str]:
    """Files under ``under`` that this process holds a descriptor on (Linux's /proc)."""
    root = str(under.resolve())
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor of the listing itself, closed meanwhile
            continue
        if target.startswith(root):
            held.append(os.path.relpath(target, root))
    return sorted(held)


@contextmanager
def no_unclosed_database() -> Iterator[None]:
    """Fails when a connection is collected unclosed in the block or at its end (3.13 says
    so with a ResourceWarning; on older Pythons ``open_files`` is what shows the leak)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        yield
        gc.collect()


pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd (Linux)"
)


def test_a_stopped_sandbox_holds_no_connection_to_its_world(
    sandbox_world: WorldInfo, tmp_path: Path
) -> None:
    info = copy_world(sandbox_world, tmp_path / "world")
    with no_unclosed_database():
        with SandboxServer(info) as server:
            with Client(server.url, server.keys["enterprise"], cache_dir=str(tmp_path / "c")) as c:
                # a list page (the event loop's own connection), a detail (a worker thread's)
                assert len(L.load_trades(1, client=c, page_size=50, max_pages=2)) == 100
                assert len(L.load_playbook(1, client=c)) > 0
            assert any(name.startswith("world/") for name in open_files(tmp_path))
        assert open_files(tmp_path) == []


def test_a_closed_client_holds_no_cache_file(sandbox: SandboxServer, tmp_path: Path) -> None:
    with no_unclosed_database():
        with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path)) as c:
            first = L.load_trades(1, client=c, page_size=100, max_pages=1)
            again = L.load_trades(1, client=c, page_size=100, max_pages=1)  # the frame cache
            assert again.attrs["quantscope"]["from_cache"]
            assert len(first) == len(again) == 100
            assert open_files(tmp_path) != []
        assert open_files(tmp_path) == []


def test_the_embedded_sandbox_closes_its_world_when_stopped(
    sandbox_world: WorldInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    world = copy_world(sandbox_world, tmp_path / "world")
    monkeypatch.setenv("QUANTSCOPE_SANDBOX_DIR", str(world.data_dir))
    for name in ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(embedded_mod, "_EMBEDDED", None)
    try:
        with no_unclosed_database():
            with connect(cache_dir=str(tmp_path / "cache"), progress=False):
                assert len(L.load_trade_stats(1)) > 0
            embedded_mod.stop_embedded_sandbox()
            assert embedded_mod._EMBEDDED is None
            assert open_files(tmp_path) == []
    finally:
        embedded_mod.stop_embedded_sandbox()
        set_default_client(None)
    assert "started the embedded sandbox" in capsys.readouterr().out
