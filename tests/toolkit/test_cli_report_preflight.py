"""``quantscope report``: validate, then price, then spend (issue 24, item 1).

The report loaded its trades (the expensive part) before it could refuse an unknown
``--criteria``, built its client with ``connect()`` (neither reading nor writing the quota
last seen) and said nothing of its cost before spending. Requests are counted on the
sandbox's own quota; the observations run the installed ``quantscope`` console script, the
matrix of bad arguments runs in-process (``cli.main``, cheap).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _helpers import QUANT, quota_left, spend_quota
from _helpers.cli import PYTHON_ADVICE, one_error, run_cli, use

from quantscope import cli
from quantscope.cli.preflight import SEEN_FILE
from quantscope.sandbox.serve import SandboxServer

quantscope = run_cli


def test_an_unknown_criterion_is_refused_from_the_playbook_not_the_trades(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It loaded the trades and every detail (~860 requests) before saying the key was
    unknown; now the playbook alone decides: 1 request, 0 when it is cached."""
    cache = tmp_path / "cache"
    left = quota_left(sandbox, "enterprise")
    argv = ("report", "--quant", str(QUANT), "--criteria", "smart_money_buys,smart_money_buy")
    out = ("-o", str(tmp_path / "r.html"))
    done = quantscope(*argv, *out, server=sandbox, plan="enterprise", cache=cache)
    assert done.returncode == 2, done.stderr
    assert quota_left(sandbox, "enterprise") == left - 1, done.stderr  # the playbook only
    line = one_error(done)
    assert "--criteria smart_money_buy:" in line
    assert "did you mean 'smart_money_buys'" in line
    assert "smart_money_buys," in line.split("criteria are ", 1)[1]  # the known ones, listed
    assert not (tmp_path / "r.html").exists()
    seen = json.loads((cache / SEEN_FILE).read_text(encoding="utf-8"))
    assert [v["remaining"] for v in seen.values()] == [left - 1]  # the quota seen, recorded
    use(monkeypatch, sandbox, "enterprise", cache)
    assert cli.main([*argv, *out]) == 2
    assert quota_left(sandbox, "enterprise") == left - 1  # the playbook is cached: 0 requests


def test_a_report_that_cannot_fit_the_quota_seen_is_refused_with_zero_requests(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report built its client with ``connect()``: it never read the quota an earlier
    command saw, and spent the trades' pages to learn it."""
    cache = use(monkeypatch, sandbox, "basic", tmp_path / "cache")
    spend_quota(sandbox, "basic", 95)
    assert cli.main(["quota", "-q"]) == 0  # the day's earlier command: 4 left, remembered
    left = quota_left(sandbox, "basic")
    out = str(tmp_path / "r.html")
    done = quantscope("report", "--quant", str(QUANT), "-o", out, server=sandbox, plan="basic",
                      cache=cache)  # fmt: skip
    assert quota_left(sandbox, "basic") == left, done.stderr  # nothing sent
    assert done.returncode == 75, done.stderr
    line = one_error(done)
    assert f"the report of quant {QUANT} needs at least" in line
    assert "sent nothing" in line
    assert "--confirm" in line
    assert "as last reported" in line
    assert "--partial" not in line


def test_the_cost_is_said_first_and_max_requests_bounds_the_whole_report(
    sandbox: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The cost is said before anything is spent; ``--max-requests`` refuses a report over it,
    before the first request when the known loads exceed it, after the trades otherwise (when
    the details are counted), having sent only the trades' pages."""
    cache = tmp_path / "cache"
    left = quota_left(sandbox, "enterprise")
    out = str(tmp_path / "r.html")
    argv = ("report", "--quant", str(QUANT), "-o", out)
    use(monkeypatch, sandbox, "enterprise", cache)
    assert cli.main([*argv, "--max-requests", "1"]) == 75
    tight = capsys.readouterr().err
    assert quota_left(sandbox, "enterprise") == left, tight
    assert "more than --max-requests 1: sent nothing" in tight
    done = quantscope(*argv, "--max-requests", "20", server=sandbox, plan="enterprise",
                      cache=cache)  # fmt: skip
    assert done.returncode == 75, done.stderr
    spent = left - quota_left(sandbox, "enterprise")
    cost = done.stderr.index(f"quantscope: report of quant {QUANT}: at least")
    assert cost < done.stderr.index("quantscope: error:")  # said before the refusal
    line = one_error(done)
    assert "more than --max-requests 20" in line
    assert f"sent {spent} request" in line
    assert 1 <= spent <= 2
    assert "--partial" not in line
    assert not Path(out).exists()


Q, R = ["--quant", str(QUANT)], ["-o", "{tmp}/r.html"]
BAD: list[tuple[str, list[str], int]] = [
    ("quant-text", ["--quant", "x", *R], 2),
    ("quant-negative", ["--quant", "-1", *R], 2),
    ("suffix", [*Q, "-o", "{tmp}/r.pdf"], 2),
    ("no-folder", [*Q, "-o", "{tmp}/f/r.html"], 73),
    ("output-is-folder", [*Q, "-o", "{tmp}"], 2),
    ("all-quants-into-a-file", ["--all-quants", "-o", "{tmp}/f"], 73),
    ("empty-criteria", [*Q, "--criteria", ",", *R], 2),
    ("criteria-of-all", ["--all-quants", "--criteria", "smart_money_buys", "-o", "{tmp}/d"], 2),
    ("max-requests-text", [*Q, "--max-requests", "x", *R], 2),
    ("max-requests-negative", [*Q, "--max-requests", "-3", *R], 2),
    ("max-requests-of-all", ["--all-quants", "--max-requests", "50", "-o", "{tmp}/d"], 2),
    ("both", [*Q, "--all-quants", "-o", "{tmp}/d"], 2),
    ("neither", R, 2),
    ("quiet-and-verbose", [*Q, "-q", "-v", *R], 2),
    ("url", [*Q, "--url", "ftp://nowhere", *R], 78),
]


@pytest.mark.parametrize(("name", "argv", "status"), BAD, ids=[b[0] for b in BAD])
def test_every_bad_argument_costs_nothing(
    name: str,
    argv: list[str],
    status: int,
    sandbox: SandboxServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    use(monkeypatch, sandbox, "enterprise", tmp_path / "cache")
    (tmp_path / "f").write_text("a file, not a folder")
    left = quota_left(sandbox, "enterprise")
    try:
        got = cli.main(["report", *(a.replace("{tmp}", str(tmp_path)) for a in argv)])
    except SystemExit as parsed:  # argparse's own usage errors
        got = int(parsed.code or 0)
    err = capsys.readouterr().err
    assert quota_left(sandbox, "enterprise") == left, err  # zero requests sent
    assert got == status, err
    errors = [x for x in err.splitlines() if x.startswith("quantscope") and ": error: " in x]
    assert len(errors) == 1, err
    assert not any(text in err for text in PYTHON_ADVICE), err
    assert not list(tmp_path.glob("**/*.html"))
