"""A full disk (issue 20, item 4): real write failures, without root.

A child process whose ``RLIMIT_FSIZE`` is small (and ``SIGXFSZ`` ignored) gets ``EFBIG`` from
the kernel for every write past the limit, as a full disk gives ``ENOSPC``: the catalog's
Parquet files, its manifest, the HTTP cache's SQLite file and body files, the frame cache.
A sync then stops with one quantscope error line, leaves no file under a final name that its
manifest does not list whole, no temporary file, a run that resumes; and a load on a full
cache disk goes on uncached with one ``CacheWriteWarning``. The real full disk (an 8 MB
tmpfs, as root) is the reliability suite's (``tests/reliability/test_catalog_damage.py``).
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

import quantscope as qs
from quantscope._http.client import Client
from quantscope._http.framecache import FrameCache
from quantscope.sandbox.serve import SandboxServer

START, END = "2026-07-01", "2026-07-31T23:59:59"
LIMIT = 100_000  # the trades file (~29 kB) fits, the evaluations file (~170 kB) does not


def _limited(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))


def _env(server: SandboxServer, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "QUANTSCOPE_URL": server.url,
        "QUANTSCOPE_API_KEY": server.keys["enterprise"],
        "QUANTSCOPE_CACHE_DIR": str(cache),
    }


def test_a_full_disk_stops_a_sync_cleanly_and_the_next_one_completes(
    own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "cat"
    resources = "trades,evaluations,playbook"
    args = [sys.executable, "-m", "quantscope", "sync", str(path), "--quant", "1"]
    args += ["--resources", resources, "--start", START, "--end", END, "--no-progress"]
    done = subprocess.run(
        args,
        env=_env(own_sandbox, tmp_path / "cache"),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: _limited(LIMIT),
    )
    assert done.returncode == 73, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("quantscope: error:")]
    assert len(errors) == 1, done.stderr[-2000:]
    assert "evaluations" in errors[0], done.stderr[-2000:]
    assert "resume" in errors[0]

    cat = qs.open_catalog(path)
    run = cat.runs[-1]
    assert run["status"] == "interrupted"
    assert "File too large" in run["error"]
    assert list(run["tasks"]) == ["trades:quant_id=1"]
    listed = {p["file"]: p for p in cat.partitions.values()}
    on_disk = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()}
    assert on_disk == {"manifest.json", ".sync.lock", *listed}  # no temporary, no stray file
    for file, record in listed.items():  # every file under a final name is whole
        assert hashlib.sha256((path / file).read_bytes()).hexdigest() == record["sha256"]
    assert cat.verify() == []

    with Client(
        own_sandbox.url,
        own_sandbox.keys["enterprise"],
        cache_dir=str(tmp_path / "cache"),
        progress=False,
    ) as c:
        report = qs.sync(
            path, quant_id=1, resources=resources.split(","), start=START, end=END, client=c
        )
    assert (report.run, report.status) == (1, "complete")
    assert {t["task"]: t.get("note") for t in report.tasks}["trades:quant_id=1"] == "done before"
    cat = qs.open_catalog(path)
    assert cat.verify() == []
    assert len(cat.evaluations(1)) == 1868
    assert len(cat.trades(1)) == 107


_LOAD = """
import sys, warnings
import pandas as pd
import quantscope as qs
from quantscope._http.client import Client
url, key, cache = sys.argv[1:]
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    with Client(url, key, cache_dir=cache, progress=False) as c:
        frame = qs.load_evaluations(1, start="2026-07-01", end="2026-07-31T23:59:59", client=c)
        again = qs.load_evaluations(1, start="2026-07-01", end="2026-07-31T23:59:59", client=c)
print(len(frame), int(pd.util.hash_pandas_object(frame, index=True).sum()), frame.equals(again))
for w in seen:
    print(type(w.message).__name__, str(w.message).splitlines()[0])
"""


def test_a_full_cache_disk_loads_uncached_with_one_warning(
    own_sandbox: SandboxServer, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    args = [own_sandbox.url, own_sandbox.keys["enterprise"], str(cache)]
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, *args],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: _limited(64_000),  # 2.4 MB pages: no body file, no SQLite row fits
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    with Client(
        own_sandbox.url,
        own_sandbox.keys["enterprise"],
        cache_dir=str(tmp_path / "other"),
        progress=False,
    ) as c:
        want = qs.load_evaluations(1, start=START, end=END, client=c)
    digest = int(pd.util.hash_pandas_object(want, index=True).sum())
    assert lines[0] == f"{len(want)} {digest} True"
    warned = lines[1:]
    assert len(warned) == 1, lines
    assert warned[0].startswith("CacheWriteWarning")
    assert str(cache) in warned[0]
    assert not list(cache.rglob("*.part"))  # no half body file left


class _Full:
    """A SQLite connection that cannot write: the frame cache's one write seam, full."""

    def __init__(self, path: Path) -> None:
        pass

    def __enter__(self) -> sqlite3.Connection:
        raise sqlite3.OperationalError("database or disk is full")

    def __exit__(self, *exc: object) -> None:
        pass


def test_a_full_frame_cache_skips_the_store_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import quantscope._http.framecache as framecache
    from quantscope._http.cache import CacheEntry

    cache = FrameCache(tmp_path / "frame_cache.sqlite")
    entry = CacheEntry("k", pd.Timestamp("2026-07-01", tz="UTC").to_pydatetime())
    frame = pd.DataFrame({"a": [1, 2, 3]})
    monkeypatch.setattr(framecache, "_Connection", _Full)
    with pytest.warns(qs.CacheWriteWarning, match="disk is full") as seen:
        assert cache.put("a", frame, [entry]) is False
    assert len(seen) == 1
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert cache.put("b", frame, [entry]) is False
    assert again == []  # one warning per full disk, not one per skipped store
