"""The Parquet catalog against the sandbox: frames equal the loaders', sync is incremental,
an interrupted or quota-stopped sync resumes to the catalog an uninterrupted one makes.

One module sandbox (``own_sandbox``: syncs spend quota). The window is July 2026 (the
world's first month): every trade in it is closed, so its months, details and candles are
sealed after one sync and a second sync only re-snapshots the three live resources.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import quantscope as qs
import quantscope.catalog.sync as sync_module
import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

QUANT = 1
START, END = "2026-07-01", "2026-07-31T23:59:59"
ALL = ["trades", "evaluations", "eval_details", "ohlcv", "signals", "playbook", "recommendations"]


def _client(server: SandboxServer, cache: Path) -> Client:
    return Client(server.url, server.keys["enterprise"], cache_dir=str(cache), progress=False)


@pytest.fixture(scope="module")
def loader_client(
    own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    with _client(own_sandbox, tmp_path_factory.mktemp("loader-cache")) as c:
        yield c


@pytest.fixture(scope="module")
def reference(
    own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, qs.SyncReport]:
    """A catalog of quant 1's July, every resource, made by one uninterrupted sync."""
    path = tmp_path_factory.mktemp("reference") / "cat"
    with _client(own_sandbox, tmp_path_factory.mktemp("ref-cache")) as c:
        report = qs.sync(path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c)
    return path, report


def _rows(path: Path) -> dict[str, tuple[Any, ...]]:
    """The manifest's partition rows, the snapshot day made neutral (runs may straddle it)."""
    cat = qs.open_catalog(path)
    return {
        re.sub(r"snapshot=[^/]+", "snapshot=*", name): (
            re.sub(r"snapshot=[^/]+", "snapshot=*", p["file"]),
            p["rows"],
            p["sha256"],
            p.get("sealed"),
        )
        for name, p in cat.partitions.items()
    }


def test_first_sync_fetches_every_resource(reference: tuple[Path, qs.SyncReport]) -> None:
    path, report = reference
    assert report.status == "complete"
    tasks = {t["task"]: t for t in report.tasks}
    assert tasks["trades:quant_id=1"]["requests"] == 1  # one page of July's 107 trades
    assert tasks["trades:quant_id=1"]["added"] == 107
    assert tasks["eval_details:quant_id=1:month=2026-07"]["requests"] == 107  # one per trade
    info = qs.open_catalog(path).info()
    assert info["resources"]["trades"] == {
        "partitions": 1,
        "rows": 107,
        "bytes": info["resources"]["trades"]["bytes"],
    }
    assert info["runs"][0]["requests"] == report.requests
    assert (path / "trades" / "quant_id=1" / "month=2026-07").is_dir()


def test_catalog_frames_equal_loader_frames(
    reference: tuple[Path, qs.SyncReport], loader_client: Client
) -> None:
    cat = qs.open_catalog(reference[0])
    c = loader_client
    window = {"start": START, "end": END}
    pairs = [
        (cat.trades(QUANT, **window), L.load_trades(QUANT, client=c, **window)),
        (
            cat.trades(QUANT, start="2026-07-26T06:00:00", end="2026-07-29", status="Profit"),
            L.load_trades(
                QUANT, start="2026-07-26T06:00:00", end="2026-07-29", status="Profit", client=c
            ),
        ),
        (cat.evaluations(QUANT, **window), L.load_evaluations(QUANT, client=c, **window)),
        (
            cat.evaluations(QUANT, start="2026-07-27", end="2026-07-28", passed=True),
            L.load_evaluations(QUANT, start="2026-07-27", end="2026-07-28", passed=True, client=c),
        ),
        (cat.signals(QUANT), L.load_signals(QUANT, client=c)),
        (cat.playbook(QUANT), L.load_playbook(QUANT, client=c)),
        (cat.recommendations(QUANT), L.load_recommendations(QUANT, client=c)),
    ]
    trades = pairs[0][0]
    token = int(trades["token_id"].iloc[0])
    pairs.append((cat.ohlcv(token), L.load_ohlcv(token, client=c)))
    ids = [int(i) for i in trades["evaluation_id"].dropna().unique()[:40]][::-1]
    pairs.append((cat.eval_details(ids), L.load_eval_details(ids, client=c)))
    for got, want in pairs:
        assert len(want) > 0
        pd.testing.assert_frame_equal(got, want)


def test_accessor_and_backtest_work_unchanged(
    reference: tuple[Path, qs.SyncReport], loader_client: Client
) -> None:
    cat = qs.open_catalog(reference[0])
    c = loader_client
    trades = cat.trades(QUANT, start=START, end=END)
    loaded = L.load_trades(QUANT, start=START, end=END, client=c)
    pd.testing.assert_series_equal(trades.quant.summary(), loaded.quant.summary())
    ids = [int(i) for i in trades["evaluation_id"].dropna().unique()]
    ours = qs.backtest.replay(cat.playbook(QUANT), cat.eval_details(ids))
    theirs = qs.backtest.replay(
        L.load_playbook(QUANT, client=c), L.load_eval_details(ids, client=c)
    )
    pd.testing.assert_frame_equal(ours, theirs)
    assert len(ours) == len(ids)


def test_second_sync_spends_only_what_changed(
    reference: tuple[Path, qs.SyncReport], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    path, _ = reference
    before = _rows(path)
    # A fresh HTTP cache: what is not fetched is skipped by the catalog, not by the cache.
    with _client(own_sandbox, tmp_path / "cache") as c:
        plan = qs.sync(
            path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c, dry_run=True
        )
        report = qs.sync(path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c)
    spent = {t["task"]: t["requests"] for t in report.tasks}
    assert spent == {
        "trades:quant_id=1": 0,  # July sealed: every trade closed, the month over
        "evaluations:quant_id=1": 0,
        "eval_details:quant_id=1": 0,  # no evaluation missing
        "ohlcv:quant_id=1": 0,  # every token's trades closed, candles past the last close
        "signals:quant_id=1": 1,  # snapshots: what can still change
        "playbook:quant_id=1": 1,
        "recommendations:quant_id=1": 1,
    }
    assert plan.requests == report.requests == 3
    assert (report.rows_added, report.rows_updated) == (0, 0)
    assert _rows(path) == before  # the same day's snapshots, unchanged, hash-equal
    assert [r["requests"] for r in qs.open_catalog(path).runs][-1] == 3


def test_interrupted_sync_resumes_to_the_same_catalog(
    reference: tuple[Path, qs.SyncReport],
    own_sandbox: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "cat"
    real = sync_module.write_partition
    calls = {"n": 0}

    def crash_on_third(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 5:  # dies in the candles task, after two of its files: none listed
            real(*args, **kwargs)
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    with _client(own_sandbox, tmp_path / "cache") as c:
        monkeypatch.setattr(sync_module, "write_partition", crash_on_third)
        with pytest.raises(KeyboardInterrupt):
            qs.sync(path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c)
        monkeypatch.setattr(sync_module, "write_partition", real)
        cat = qs.open_catalog(path)
        run = cat.runs[-1]
        assert run["status"] == "interrupted"
        assert sorted(run["tasks"]) == [
            "eval_details:quant_id=1:month=2026-07",
            "evaluations:quant_id=1",
            "trades:quant_id=1",
        ]
        assert set(cat.info()["resources"]) == {"trades", "evaluations", "eval_details"}
        # The failed task's files are removed as it stops (their space back: a full disk);
        # the one whose write never returned to the sync is listed nowhere, never read.
        assert len(list(path.glob("ohlcv/**/*.parquet"))) == 1
        report = qs.sync(path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c)
    assert report.run == 1
    assert report.status == "complete"
    notes = {t["task"]: t.get("note") for t in report.tasks}
    assert notes["trades:quant_id=1"] == notes["evaluations:quant_id=1"] == "done before"
    assert notes["eval_details:quant_id=1"] == "0 months to fetch"  # all stored before
    assert _rows(path) == _rows(reference[0])
    stray = {p.relative_to(path).as_posix() for p in path.rglob("*.parquet")}
    listed = {p["file"] for p in qs.open_catalog(path).partitions.values()}
    assert stray == listed  # the file the crash left unlisted was removed at the end


_KILLED = """
import os, signal, sys
import quantscope as qs
import quantscope.catalog.sync as sync_module
from quantscope._http.client import Client

real, calls = sync_module.write_partition, [0]

def write_then_die(*args, **kwargs):
    calls[0] += 1
    if calls[0] == 5:  # SIGKILL: no except, no finally, no manifest written on the way out
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)

sync_module.write_partition = write_then_die
url, key, cache, path, start, end = sys.argv[1:]
c = Client(url, key, cache_dir=cache, progress=False)
qs.sync(path, quant_id=1, resources=%r, start=start, end=end, client=c)
"""


def test_killed_sync_resumes_to_the_same_catalog(
    reference: tuple[Path, qs.SyncReport], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    import signal
    import subprocess
    import sys

    path, cache = tmp_path / "cat", tmp_path / "cache"
    args = [own_sandbox.url, own_sandbox.keys["enterprise"], str(cache), str(path), START, END]
    done = subprocess.run(
        [sys.executable, "-c", _KILLED % (ALL,), *args], capture_output=True, timeout=300
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-500:]
    run = qs.open_catalog(path).runs[-1]
    assert run["status"] == "running"  # nothing ran on the way out
    assert len(run["tasks"]) == 3  # trades, evaluations, July's details: each swapped in whole
    with _client(own_sandbox, cache) as c, pytest.warns(qs.StaleLockWarning, match="killed"):
        report = qs.sync(path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c)
    assert report.run == 1
    assert report.status == "complete"
    assert _rows(path) == _rows(reference[0])


def test_quota_stopped_sync_resumes_to_the_same_catalog(
    reference: tuple[Path, qs.SyncReport], own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "cat"
    with _client(own_sandbox, tmp_path / "cache") as c:
        with pytest.raises(qs.QuotaShareExceededError, match="max_requests") as caught:
            qs.sync(
                path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c, max_requests=50
            )
        assert "resumes" in " ".join(getattr(caught.value, "__notes__", []))
        run = qs.open_catalog(path).runs[-1]
        assert run["status"] == "quota_stopped"
        assert run["requests"] <= 50
        done = set(run["tasks"])
        assert {"trades:quant_id=1", "evaluations:quant_id=1"} <= done
        assert "eval_details:quant_id=1:month=2026-07" not in done  # 107 > what was left
        report = qs.sync(path, quant_id=QUANT, resources=ALL, start=START, end=END, client=c)
    assert report.status == "complete"
    assert report.run == 1
    assert report.requests == sum(
        t["requests"] for t in report.tasks if t.get("note") != "done before"
    )
    assert _rows(path) == _rows(reference[0])


def test_connect_to_a_catalog_answers_the_loaders_without_a_service(
    reference: tuple[Path, qs.SyncReport], loader_client: Client
) -> None:
    want = L.load_trades(QUANT, start=START, end=END, client=loader_client)
    details_ids = [int(i) for i in want["evaluation_id"].dropna().unique()[:5]]
    want_details = L.load_eval_details(details_ids, client=loader_client)
    try:
        client = qs.connect(catalog=reference[0])
        assert client.settings.api_key is None
        assert client.settings.service == "catalog"
        pd.testing.assert_frame_equal(qs.load_trades(QUANT, start=START, end=END), want)
        pd.testing.assert_frame_equal(qs.load_eval_details(details_ids), want_details)
        with pytest.raises(qs.ConfigurationError, match="cannot answer search"):
            qs.load_trades(QUANT, search="PEPE")
        with pytest.raises(qs.ConfigurationError, match="not kept in a catalog"):
            qs.load_signal_stats(QUANT)
    finally:
        qs.set_default_client(None)
    with pytest.raises(qs.ConfigurationError, match="or a catalog, not both"):
        qs.Client("http://127.0.0.1:1", "key", catalog=reference[0])


def test_sql_prunes_partitions_with_filters(
    reference: tuple[Path, qs.SyncReport], tmp_path: Path
) -> None:
    import shutil

    copy = tmp_path / "cat"
    shutil.copytree(reference[0], copy)
    cat = qs.open_catalog(copy)
    trades = cat.trades(QUANT)
    counts = cat.sql(
        "SELECT quant_id, month, count(*) AS n, sum(pnl_usd) AS pnl FROM trades "
        "GROUP BY ALL ORDER BY month"
    )
    assert counts["n"].tolist() == [len(trades)]
    assert counts["pnl"].iloc[0] == pytest.approx(trades["pnl_usd"].sum())
    tokens = sorted(
        p["keys"]["token_id"] for p in cat.partitions.values() if p["resource"] == "ohlcv"
    )
    keep = tokens[0]
    for p in cat.partitions.values():  # break every other token's file
        if p["resource"] == "ohlcv" and p["keys"]["token_id"] != keep:
            (copy / p["file"]).write_bytes(b"not parquet")
    one = cat.sql(f"SELECT count(*) AS n FROM ohlcv WHERE token_id = {keep}")
    assert one["n"].tolist() == [len(cat.ohlcv(int(keep)))]  # the broken files were never read
    with pytest.raises(qs.CatalogIntegrityError, match=r"ohlcv/timeframe=1h/token_id=\d+/part-"):
        cat.sql("SELECT count(*) FROM ohlcv")  # a broken file is named, not DuckDB's error


def test_bad_input_gets_one_line_errors(
    reference: tuple[Path, qs.SyncReport], tmp_path: Path
) -> None:
    with pytest.raises(qs.ConfigurationError, match="no catalog at"):
        qs.open_catalog(tmp_path / "nothing")
    with pytest.raises(qs.ConfigurationError, match="unknown resources"):
        qs.sync(tmp_path / "x", quant_id=1, resources=["tardes"])
    cat = qs.open_catalog(reference[0])
    with pytest.raises(qs.ConfigurationError, match="not in the catalog"):
        cat.eval_details([999_999_999])
    with pytest.raises(qs.ConfigurationError, match="no 4h candles"):
        cat.ohlcv(1, "4h")
