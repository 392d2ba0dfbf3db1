"""``quantscope sync`` and ``quantscope catalog info`` against the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import quantscope as qs
from quantscope.cli.main import build_parser, main
from quantscope.sandbox.serve import SandboxServer


@pytest.fixture
def service(own_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("QUANTSCOPE_URL", own_sandbox.url)
    monkeypatch.setenv("QUANTSCOPE_API_KEY", own_sandbox.keys["enterprise"])
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    yield
    qs.set_default_client(None)


def test_sync_dry_run_then_sync_then_info(
    service: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "cat")
    args = ["sync", path, "--quant", "2", "--resources", "trades,playbook", "--no-progress"]
    assert main([*args, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "(dry run): would send 2 requests" in out
    assert "trades:quant_id=2: 1 requests" in out
    assert not (tmp_path / "cat").exists()  # a dry run writes nothing
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "run 1: complete, 2 requests, 726 rows added, 0 updated" in out
    assert main(["catalog", "info", path]) == 0
    info = capsys.readouterr().out
    assert "trades: 3 partitions, 618 rows" in info
    assert "playbook: 1 partitions, 108 rows" in info
    assert main(["catalog", "info", path, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["runs"][0]["rows_added"] == 726


def test_quota_stop_exits_75_and_errors_say_their_cause(
    service: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "cat")
    code = main(
        [
            "sync",
            path,
            "--quant",
            "1",
            "--resources",
            "evaluations",
            "--max-requests",
            "3",
            "--no-progress",
        ]
    )
    assert code == 75
    (err,) = capsys.readouterr().err.splitlines()
    assert err.startswith("quantscope: error: ")
    assert "the same command resumes" in err
    assert "max_requests=" not in err
    assert "--max-requests" in err
    assert main(["catalog", "info", str(tmp_path / "none")]) == 66
    assert "no catalog at" in capsys.readouterr().err
    assert main(["sync", path, "--quant", "1", "--resources", "nope"]) == 2
    assert "unknown resources" in capsys.readouterr().err


def test_help_shows_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert "sync" in build_parser().format_help()
    with pytest.raises(SystemExit) as done:
        main(["sync", "--help"])
    assert done.value.code == 0
    assert "quantscope sync ./study --quant 1 --dry-run" in capsys.readouterr().out
