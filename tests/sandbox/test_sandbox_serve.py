"""Serving the sandbox: the data directory, the background server, and the CLI."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
import requests

from quantscope import cli
from quantscope.sandbox import datadir
from quantscope.sandbox.datadir import WorldInfo, copy_world, ensure_world
from quantscope.sandbox.serve import SandboxServer, bind_socket
from quantscope.sandbox.sim import build
from quantscope.sandbox.store import SCHEMA_VERSION

SRC = Path(__file__).resolve().parents[2] / "src"


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _health(url: str) -> dict:
    response = requests.get(f"{url}/health", timeout=10)
    response.raise_for_status()
    return response.json()


# --- the data directory ---------------------------------------------------------------------


def test_world_database_name_meta_and_reuse(sandbox_world):
    assert sandbox_world.db_path == sandbox_world.data_dir / "world-s7-x1.sqlite"
    with closing(sqlite3.connect(sandbox_world.db_path)) as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
    assert {k: meta[k] for k in ("schema_version", "seed", "scale")} == {
        "schema_version": SCHEMA_VERSION,
        "seed": "7",
        "scale": "1",
    }
    before = sandbox_world.db_path.stat()
    again = ensure_world(sandbox_world.data_dir, seed=7, scale=1)
    assert again == sandbox_world
    assert again.keys == sandbox_world.keys
    after = sandbox_world.db_path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.slow
def test_stale_world_is_rebuilt_atomically(sandbox_world, tmp_path):
    copy = copy_world(sandbox_world, tmp_path)
    with closing(sqlite3.connect(copy.db_path)) as conn, conn:
        conn.execute("UPDATE meta SET value = 'old' WHERE key = 'schema_version'")
    inode = copy.db_path.stat().st_ino
    rebuilt = ensure_world(tmp_path, seed=7, scale=1)
    assert rebuilt.db_path.stat().st_ino != inode  # a new file moved into place
    with closing(sqlite3.connect(rebuilt.db_path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            SCHEMA_VERSION,
        )
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "keys.json",
        "world-s7-x1.sqlite",
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_failed_build_leaves_no_file(tmp_path, monkeypatch):
    def broken_build(conn, seed, scale):
        raise RuntimeError("generator failed")

    monkeypatch.setattr(build, "WORLD_VERSION", "broken")
    monkeypatch.setattr(build, "build_world", broken_build)
    with pytest.raises(RuntimeError, match="generator failed"):
        ensure_world(tmp_path, seed=3, scale=1)
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_data_dir_comes_from_argument_then_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(datadir.ENV_DATA_DIR, str(tmp_path / "from-env"))
    assert datadir.resolve_data_dir() == tmp_path / "from-env"
    assert datadir.resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv(datadir.ENV_DATA_DIR)
    assert datadir.resolve_data_dir().parts[-2:] == ("quantscope", "sandbox")


@pytest.mark.parametrize(("seed", "scale"), [(-1, 1), (7, 0), ("7", 1), (True, 1)])
def test_bad_seed_or_scale_is_refused(tmp_path, seed, scale):
    with pytest.raises(ValueError, match="must be an integer"):
        ensure_world(tmp_path, seed=seed, scale=scale)


def test_copy_world_is_independent_of_its_source(sandbox_world, tmp_path):
    copy = copy_world(sandbox_world, tmp_path / "copy")
    assert copy.data_dir == tmp_path / "copy"
    assert copy.keys == sandbox_world.keys
    assert datadir.read_keys(copy.data_dir) == sandbox_world.keys
    with closing(sqlite3.connect(copy.db_path)) as conn, conn:
        conn.execute("INSERT INTO quota VALUES (1, '2026-01-01', 5)")
    with closing(sqlite3.connect(sandbox_world.db_path)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM quota").fetchone() == (0,)


def test_world_info_repr_hides_the_keys(sandbox_world):
    assert "qs_" not in repr(sandbox_world)


# --- the background server ------------------------------------------------------------------


def test_start_stop_twice_on_a_free_port(sandbox_world, tmp_path):
    server = SandboxServer(copy_world(sandbox_world, tmp_path))
    for _ in range(2):
        server.start()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", server.url)
        assert int(server.url.rsplit(":", 1)[1]) > 0
        assert _health(server.url)["seed"] == 7
        url = server.url
        server.stop()
        assert not [t for t in threading.enumerate() if t.name == f"quantscope-sandbox {url}"]
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{url}/health", timeout=5)
        with pytest.raises(RuntimeError, match="not running"):
            _ = server.url
    server.stop()  # stopping a stopped server is harmless


def test_a_given_port_is_used(sandbox_world, tmp_path):
    probe = bind_socket("127.0.0.1", 0)
    port = probe.getsockname()[1]
    probe.close()
    with SandboxServer(copy_world(sandbox_world, tmp_path), port=port) as server:
        assert server.url == f"http://127.0.0.1:{port}"
        assert _health(server.url)["status"] == "ok"
        with pytest.raises(OSError, match="in use"):
            SandboxServer(server.info, port=port).start()
        with pytest.raises(RuntimeError, match="already running"):
            server.start()


def test_server_exposes_the_world_keys(sandbox):
    assert sandbox.keys == sandbox.info.keys
    assert set(sandbox.keys) == {"basic", "growth", "enterprise"}


def test_missing_database_is_a_clear_error(tmp_path):
    info = WorldInfo(tmp_path, tmp_path / "world-s7-x1.sqlite", 7, 1, {})
    with pytest.raises(FileNotFoundError, match="ensure_world"):
        SandboxServer(info).start()
    assert not (tmp_path / "world-s7-x1.sqlite").exists()


# --- the command line -----------------------------------------------------------------------


def test_cli_keys_prints_the_three_keys_as_json(sandbox_world, tmp_path):
    copy = copy_world(sandbox_world, tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "quantscope", "sandbox", "keys", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
        check=True,
    )
    assert json.loads(result.stdout) == copy.keys
    assert list(json.loads(result.stdout)) == ["basic", "growth", "enterprise"]


def test_cli_serve_prints_the_url_first(sandbox_world, tmp_path):
    copy_world(sandbox_world, tmp_path)
    command = [sys.executable, "-m", "quantscope", "sandbox", "serve", "--port", "0"]
    process = subprocess.Popen(
        [*command, "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        timer = threading.Timer(120, process.kill)  # never hang on a server that did not start
        timer.start()
        first_line = process.stdout.readline().strip()  # type: ignore[union-attr]
        timer.cancel()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", first_line)
        assert _health(first_line) == {
            "status": "ok",
            "seed": 7,
            "scale": 1,
            "schemaVersion": SCHEMA_VERSION,
        }
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert process.returncode in (0, -15)


def test_cli_help_and_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    assert "sandbox" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["sandbox", "serve", "--port", "70000"])
    assert exit_info.value.code == 2
    assert "expected an integer from 0 to 65535, got 70000" in capsys.readouterr().err


def test_cli_serve_without_the_extra_names_the_install_command(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # find_spec() then reports it missing
    assert cli.main(["sandbox", "serve", "--port", "0"]) == 78
    err = capsys.readouterr().err
    assert 'pip install "quantscope[sandbox]"' in err
    assert "uvicorn not installed" in err


def test_cli_port_in_use_is_a_clear_error(sandbox, capsys):
    port = sandbox.url.rsplit(":", 1)[1]
    assert (
        cli.main(["sandbox", "serve", "--port", port, "--data-dir", str(sandbox.info.data_dir)])
        == 73
    )
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
