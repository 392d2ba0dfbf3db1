"""A researcher's day from a terminal (issue 24): the installed ``quantscope`` command, with
this tree on its path, against the session's sandbox. Each test is an observation of the
issue: arguments and paths checked before the first request, the cost said first, refusals
with the command line's advice, exit statuses by cause, one line per warning. A process
each (2-6 s on a loaded machine): here, not in ``make test`` (tests/toolkit/test_cli_reference.py
holds the fast in-process checks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _helpers import QUANT, quota_left, spend_quota
from _helpers.cli import PYTHON_ADVICE, one_error, run_cli

from quantscope.sandbox.serve import SandboxServer

pytestmark = pytest.mark.reliability


quantscope = run_cli


def test_paths_are_checked_before_the_first_request(sandbox: SandboxServer, tmp_path: Path) -> None:
    left = quota_left(sandbox, "enterprise")
    nowhere = quantscope(
        "fetch", "trades", "-o", "/nonexistent/dir/x.parquet", server=sandbox, cache=tmp_path
    )
    assert nowhere.returncode == 73
    assert "no such directory /nonexistent/dir" in one_error(nowhere)
    pdf = quantscope("report", "--quant", str(QUANT), "-o", "r.pdf", server=sandbox, cache=tmp_path)
    assert pdf.returncode == 2
    assert "expected .html or .htm" in one_error(pdf)
    assert quota_left(sandbox, "enterprise") == left  # nothing was sent


def test_eval_details_takes_the_budget_flags_and_refuses_with_them(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    ids = [str(i) for i in range(1, 1302)]  # more than 25 % of enterprise's 5000
    out = tmp_path / "details.parquet"
    refused = quantscope(
        "fetch", "eval-details", *ids, "-o", str(out), server=sandbox, cache=tmp_path
    )
    assert refused.returncode == 75, refused.stderr
    line = one_error(refused)
    assert "--confirm spends them" in line
    assert "--partial" in line
    assert "resets at" in line
    assert "eval-details: 1301 requests" in refused.stderr  # the cost, said first
    assert quota_left(sandbox, "enterprise") == 5000 - 1  # the first answer told the quota
    partial = quantscope(
        "fetch", "eval-details", *ids, "--max-requests", "3", "--partial", "-o", str(out),
        server=sandbox, cache=tmp_path,
    )  # fmt: skip
    assert partial.returncode == 0, partial.stderr
    (warning,) = [x for x in partial.stderr.splitlines() if "warning:" in x]
    assert warning.startswith("quantscope: warning: /api/eval-details: partial load, 1297 of 1301")
    assert not any(text in partial.stderr for text in PYTHON_ADVICE)
    assert "cli/fetch.py" not in partial.stderr  # no source line under the warning


def test_exit_statuses_say_the_cause(sandbox: SandboxServer, tmp_path: Path) -> None:
    def status(*argv: str, plan: str = "enterprise", **env: str) -> tuple[int, str]:
        done = quantscope(*argv, server=sandbox, plan=plan, cache=tmp_path, **env)
        return done.returncode, one_error(done)

    code, line = status("fetch", "trades", "-o", "-", QUANTSCOPE_API_KEY="qs_wrong_0123456789")
    assert code == 67
    assert "check QUANTSCOPE_API_KEY" in line
    assert "qs_wrong" not in line
    code, line = status("fetch", "eval-details", "5", "-o", "-", plan="basic")
    assert code == 77
    assert "Growth or higher" in line
    code, line = status("fetch", "playbook", "999", "-o", "-")
    assert code == 66
    assert "quantId=999" in line
    code, line = status("fetch", "trades", "-o", "-", QUANTSCOPE_URL="http://127.0.0.1:9")
    assert code == 69
    assert "could not be reached" in line
    spend_quota(sandbox, "basic", quota_left(sandbox, "basic"))
    code, line = status("fetch", "trades", "-o", "-", plan="basic")
    assert code == 75
    assert "resets at" in line
    assert "--offline" in line


def test_a_filter_matching_nothing_says_so(sandbox: SandboxServer, tmp_path: Path) -> None:
    done = quantscope(
        "fetch", "trades", "--quant", "999", "-o", "-", server=sandbox, cache=tmp_path
    )
    assert done.returncode == 0
    assert done.stdout == ""
    assert "quantscope: warning: no trades match --quant 999" in done.stderr
    assert done.stderr.count("warning:") == 1, done.stderr  # the loader's warning is not repeated


def test_the_dry_run_says_the_quota_in_words_and_sql_reads_the_catalog(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    cat = str(tmp_path / "study")
    sync = ["sync", cat, "--quant", "2", "--resources", "trades"]
    dry = quantscope(*sync, "--dry-run", server=sandbox, cache=tmp_path)
    assert dry.returncode == 0
    assert "Quota(" not in dry.stdout
    assert "quota: not known yet: a dry run sends nothing" in dry.stdout
    assert quantscope(*sync, "-q", server=sandbox, cache=tmp_path).returncode == 0
    query = "SELECT chain, count(*) AS n FROM trades GROUP BY 1 ORDER BY 1"
    table = quantscope("catalog", "sql", cat, query, server=None, cache=tmp_path)
    rows = json.loads(
        quantscope("catalog", "sql", cat, query, "--json", server=None, cache=tmp_path).stdout
    )
    assert sum(r["n"] for r in rows) == 618
    assert len(table.stdout.splitlines()) == len(rows) + 1
    csv = quantscope("catalog", "sql", cat, query, "--csv", "-q", server=None, cache=tmp_path)
    assert csv.stdout.splitlines()[0] == "chain,n"
    assert csv.stderr == ""
    bad = quantscope("catalog", "sql", cat, "SELEC 1", server=None, cache=tmp_path)
    assert bad.returncode == 2
    assert "the query: Parser Error" in one_error(bad)
    missing = quantscope("catalog", "info", str(tmp_path / "none"), server=None, cache=tmp_path)
    assert missing.returncode == 66
    assert "quantscope sync" in one_error(missing)


def test_sandbox_keys_are_the_data_dirs_world(sandbox: SandboxServer, tmp_path: Path) -> None:
    one = tmp_path / "one"
    one.mkdir()
    shutil.copy(sandbox.info.db_path, one / sandbox.info.db_path.name)
    done = quantscope("sandbox", "keys", "--data-dir", str(one), server=None, cache=tmp_path)
    assert done.returncode == 0
    assert json.loads(done.stdout) == sandbox.keys
    (one / "world-s3-x1.sqlite").write_bytes(b"")  # a second world: which one is served?
    both = quantscope("sandbox", "keys", "--data-dir", str(one), server=None, cache=tmp_path)
    assert both.returncode == 2
    assert both.stdout == ""
    assert "seed 3 scale 1, seed 7 scale 1" in one_error(both)
    assert "--seed" in both.stderr
