"""The command line against the sandbox: ``main(argv)`` in-process with the sandbox's URL and
key in the environment, and ``python -m quantscope`` in a subprocess for what only a real
process shows (stdout holding nothing but data, exit statuses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _helpers import QUANT

import quantscope as qsc
import quantscope.loaders as L
from quantscope import cli
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer


@pytest.fixture
def env(sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sandbox's URL and enterprise key in the environment, a fresh cache directory."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("QUANTSCOPE_URL", sandbox.url)
    monkeypatch.setenv("QUANTSCOPE_API_KEY", sandbox.keys["enterprise"])
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(cache))
    return cache


def run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    src = str(Path(qsc.__file__).resolve().parents[1])
    full = {**os.environ, "PYTHONPATH": src, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "quantscope", *argv],
        capture_output=True,
        text=True,
        env=full,
        timeout=300,
        check=False,
    )


def test_version_and_help_show_examples() -> None:
    done = run("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"quantscope {qsc.__version__}"
    helped = run("--help")
    assert helped.returncode == 0
    for text in ("fetch", "cache", "quota", "sandbox", "examples:", "QUANTSCOPE_API_KEY"):
        assert text in helped.stdout
    trades = run("fetch", "trades", "--help")
    assert "--quant ID" in trades.stdout
    assert "example:" in trades.stdout


def test_fetch_writes_the_loaders_frame(env: Path, tmp_path: Path, sandbox: SandboxServer) -> None:
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path / "ref")) as c:
        expected = L.load_trades(QUANT, status="Closed", client=c)
    for suffix in (".parquet", ".feather"):
        out = tmp_path / f"trades{suffix}"
        argv = ["fetch", "trades", "--quant", str(QUANT), "--status", "Closed", "-o", str(out)]
        assert cli.main(argv) == 0
        back = pd.read_parquet(out) if suffix == ".parquet" else pd.read_feather(out)
        pd.testing.assert_frame_equal(back, expected)
        assert back.attrs["quantscope"]["params"] == {
            "quantId": str(QUANT),
            "filterStatus": "Closed",
            "tradingStatus": "executed",
        }
    csv = tmp_path / "trades.csv"
    assert cli.main(["fetch", "trades", "--quant", str(QUANT), "-o", str(csv)]) == 0
    plain = pd.read_csv(csv)
    assert len(plain) == len(L.load_trades(QUANT, client=c_for(sandbox, tmp_path)))
    assert list(plain.columns) == list(expected.columns)


def c_for(sandbox: SandboxServer, tmp_path: Path) -> Client:
    return Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path / "ref"))


def test_fetch_to_stdout_is_json_lines_only(sandbox: SandboxServer, tmp_path: Path) -> None:
    keyed = {
        "QUANTSCOPE_URL": sandbox.url,
        "QUANTSCOPE_API_KEY": sandbox.keys["enterprise"],
        "QUANTSCOPE_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = run("fetch", "playbook", str(QUANT), "-o", "-", env=keyed)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    expected = L.load_playbook(QUANT, client=c_for(sandbox, tmp_path))
    assert len(rows) == len(expected)
    assert set(rows[0]) == set(expected.columns)
    assert [r["criterion"] for r in rows] == expected["criterion"].astype(str).tolist()
    assert json.loads(rows[0]["extra_info"]) == json.loads(expected["extra_info"].iloc[0])
    assert f"{len(expected)} rows" in done.stderr  # the summary, on stderr
    candles = run("fetch", "ohlcv", "1", "--limit", "24", "-o", "-", env=keyed)
    assert candles.returncode == 0, candles.stderr
    first = json.loads(candles.stdout.splitlines()[0])
    assert first["timestamp"].endswith("Z")
    assert set(first) >= {"open", "close", "volume"}
    assert sandbox.keys["enterprise"] not in done.stdout + done.stderr + candles.stderr


def test_a_one_record_resource_is_one_row(
    sandbox: SandboxServer, env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = L.load_trade_stats(QUANT, client=c_for(sandbox, tmp_path))
    assert cli.main(["fetch", "trade-stats", "--quant", str(QUANT), "-o", "-", "-q"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line) == pytest.approx(expected.to_dict())
    out = tmp_path / "stats.parquet"
    assert cli.main(["fetch", "trade-stats", "--quant", str(QUANT), "-o", str(out), "-q"]) == 0
    back = pd.read_parquet(out)
    assert list(back.columns) == list(expected.index)
    assert len(back) == 1
    assert back.iloc[0].to_dict() == pytest.approx(expected.to_dict())


def test_quota_reports_the_services_headers(sandbox: SandboxServer, env: Path) -> None:
    from _helpers import quota_left

    left = quota_left(sandbox, "enterprise")
    done = run("quota", "--json")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["plan"] == "enterprise"
    assert got["limit"] == 5000
    assert got["remaining"] == left - 1
    assert got["spent_by_this_query"] == 1
    assert got["reset"].endswith("+00:00")
    text = run("quota")
    assert "remaining" in text.stdout
    assert "reset" in text.stdout
    assert sandbox.keys["enterprise"] not in done.stdout + done.stderr + text.stdout


def test_errors_are_one_line_with_the_right_status(
    sandbox: SandboxServer, env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = run("fetch", "trades", "--quant", "x", "-o", "-")
    assert usage.returncode == 2
    assert "expected an integer id" in usage.stderr
    suffix = run("fetch", "trades", "-o", str(tmp_path / "t.xlsx"))
    assert suffix.returncode == 2
    assert suffix.stderr.strip().splitlines()[-1].startswith("quantscope: error: -o")
    wrong = "qs_wrong_key_0123456789"
    refused = run("fetch", "trades", "-o", "-", env={"QUANTSCOPE_API_KEY": wrong})
    assert refused.returncode == 67
    assert refused.stdout == ""
    (line,) = [x for x in refused.stderr.splitlines() if x.startswith("quantscope: error:")]
    assert wrong not in refused.stderr
    assert "key" in line.lower()
    missing = run("fetch", "playbook", "999", "-o", "-")
    assert missing.returncode == 66
    assert "quantscope: error:" in missing.stderr
    monkeypatch.setenv("QUANTSCOPE_API_KEY", sandbox.keys["enterprise"])
    with pytest.raises(SystemExit) as bad_time:
        cli.main(["fetch", "trades", "--start", "yesterday-ish", "-o", "-"])
    assert bad_time.value.code == 2
    window = run("fetch", "eval-timeseries", "--quant", "1", "-o", "-")  # needs --start/--end
    assert window.returncode == 2
    assert "needs the window" in window.stderr


def test_cache_info_and_clear(
    sandbox: SandboxServer, env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["fetch", "trades", "--quant", str(QUANT), "-o", "-", "-q"]) == 0
    assert cli.main(["fetch", "playbook", str(QUANT), "-o", "-", "-q"]) == 0
    capsys.readouterr()
    assert cli.main(["cache", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["entries"] == 2
    assert info["frames"] == 2
    assert info["path"].startswith(str(env))
    assert cli.main(["cache", "info", "trades*", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["matching_entries"] == 1
    assert cli.main(["cache", "clear", "degen/config*"]) == 0
    assert "removed 1 answers of degen/config*" in capsys.readouterr().err
    assert cli.main(["cache", "clear"]) == 0
    assert cli.main(["cache", "info", "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert (after["entries"], after["frames"]) == (0, 0)
    # No service needed: the cache commands work with no URL and no key at all.
    bare = run("cache", "info", env={"QUANTSCOPE_URL": "", "QUANTSCOPE_API_KEY": ""})
    assert bare.returncode == 0, bare.stderr
