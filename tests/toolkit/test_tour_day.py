"""The tour survives a day: a sandbox already used today still runs the tour and the notebooks.

Observed (issue 24): after ordinary CLI and report runs on the embedded sandbox, notebook 5's
second cell raised ``QuotaShareExceededError`` (836 requests needed > 25 % of 2,632 left), and
only a fresh sandbox directory fixed it. ``quantscope.tour.connect`` (the tour's and the
notebooks' connect) gives the embedded sandbox a fresh quota day and says so.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

import quantscope as qsc
import quantscope._http.embedded as embedded_mod
from quantscope import tour
from quantscope._errors import QuotaShareExceededError
from quantscope._http.client import set_default_client
from quantscope.sandbox.auth import hash_key
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer

ENTERPRISE_LIMIT = 5000


def spend_today(world: WorldInfo, requests: int) -> None:
    """Count ``requests`` of the enterprise key today, as a day of CLI and report runs would
    have (written where the sandbox counts them: thousands of real requests would take long)."""
    today = datetime.now(UTC).date().isoformat()
    with closing(sqlite3.connect(world.db_path)) as conn, conn:
        (key_id,) = conn.execute(
            "SELECT id FROM api_keys WHERE key_hash = ?", (hash_key(world.keys["enterprise"]),)
        ).fetchone()
        conn.execute(
            "INSERT INTO quota (key_id, day, count) VALUES (?, ?, ?) "
            "ON CONFLICT (key_id, day) DO UPDATE SET count = excluded.count",
            (key_id, today, requests),
        )


@pytest.fixture
def used_world(
    sandbox_world: WorldInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[WorldInfo]:
    """The embedded sandbox's world (a copy of the session's), with no service configured."""
    world = copy_world(sandbox_world, tmp_path / "world")
    monkeypatch.setenv("QUANTSCOPE_SANDBOX_DIR", str(world.data_dir))
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("QUANTSCOPE_URL", "QUANTSCOPE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(embedded_mod, "_EMBEDDED", None)
    try:
        yield world
    finally:
        embedded_mod.stop_embedded_sandbox()
        set_default_client(None)


def test_a_used_day_refuses_a_big_load_and_the_tour_connect_gives_a_fresh_day(
    used_world: WorldInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    spend_today(used_world, ENTERPRISE_LIMIT - 10)  # 10 left: a load may spend 2 unconfirmed
    with qsc.connect(progress=False), pytest.raises(QuotaShareExceededError):
        qsc.load_trades(1, page_size=100)
    capsys.readouterr()
    with tour.connect(progress=False) as client:
        trades = qsc.load_trades(1, page_size=100)
        assert len(trades) > 300
        assert trades.attrs["quantscope"]["requests"] >= 4
        assert client.quota.remaining == ENTERPRISE_LIMIT - trades.attrs["quantscope"]["requests"]
    assert capsys.readouterr().out.splitlines() == [
        "quantscope: no service URL configured; using the embedded sandbox "
        "(seed 7, enterprise plan)",
        tour.FRESH_DAY_LINE,
    ]


def test_the_tour_connect_resets_nothing_on_another_service(
    sandbox: SandboxServer, capsys: pytest.CaptureFixture[str]
) -> None:
    spend_today(sandbox.info, 100)
    with tour.connect(sandbox.url, sandbox.keys["enterprise"], progress=False) as client:
        qsc.load_trade_stats(1, client=client)
        assert client.quota.remaining == ENTERPRISE_LIMIT - 101
    assert tour.FRESH_DAY_LINE not in capsys.readouterr().out
    set_default_client(None)


@pytest.mark.slow  # the whole text tour: 16 requests and every kind of frame
def test_the_tour_runs_on_a_sandbox_whose_day_is_spent(
    used_world: WorldInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spend_today(used_world, ENTERPRISE_LIMIT)  # nothing left: every request would be a 429
    assert tour.main(["--cache-dir", str(tmp_path / "tour-cache")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "quantscope: no service URL configured; started the embedded sandbox "
        "(seed 7, enterprise plan)",
        tour.FRESH_DAY_LINE,
    ]
    assert "== Cache and quota" in out
    assert "Traceback" not in out
