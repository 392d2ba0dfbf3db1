"""Validate, then price, then spend (issue 24, item 1): every refusal the command line can
prove is given with zero requests sent, counted on the sandbox's own quota. The matrix runs
in-process (``cli.main``, cheap); the observations of the issue run the installed
``quantscope`` console script (tests/reliability/test_cli_refusals.py runs the whole matrix
through it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _helpers import QUANT, quota_left
from _helpers.cli import PYTHON_ADVICE, one_error, run_cli, use

from quantscope import cli
from quantscope.cli.fetch import RESOURCES
from quantscope.sandbox.serve import SandboxServer

ERROR_LINE = re.compile(r"^quantscope( [\w-]+)*: error: ")

# A value each resource must refuse before it sends anything (the spec's enumerations where
# the resource has one, else an id that is not a number), and its required arguments.
REQUIRED = {
    "trade": ["42"],
    "eval-details": ["1", "2", "3"],
    "eval-history": ["1"],
    "ohlcv": ["1"],
    "signal": ["1"],
    "playbook": [str(QUANT)],
}
BAD_VALUE = {
    "trades": ["--trading-mode", "bogus"],
    "evaluations": ["--type", "TOKEN_FOO"],
    "eval-history": ["1", "--exclude-type", "TOKEN_FOO"],
    "signals": ["--chain", "MOON"],
    "signal-stats": ["--chain", "MOON"],
}


def _bad_value(name: str) -> list[str]:
    if name in BAD_VALUE:
        return BAD_VALUE[name]
    if name in REQUIRED and name != "eval-details":
        return ["x"]
    return [*REQUIRED.get(name, []), "--quant", "x"]


def _cases() -> list[tuple[str, list[str], int]]:
    cases = []
    for name, resource in RESOURCES.items():
        args = ["fetch", name, *REQUIRED.get(name, [])]
        cases.append((f"{name}-path", [*args, "-o", "{tmp}/no/such/dir/x.parquet"], 73))
        cases.append((f"{name}-value", ["fetch", name, *_bad_value(name), "-o", "-"], 2))
        if resource.budget:
            cases.append((f"{name}-ceiling", [*args, "--max-requests", "0", "-o", "-"], 75))
    cases.append(("report-path", ["report", "--quant", str(QUANT), "-o", "{tmp}/f/r.html"], 73))
    cases.append(("report-suffix", ["report", "--quant", str(QUANT), "-o", "r.pdf"], 2))
    cases.append(("report-value", ["report", "--quant", "x", "-o", "{tmp}/r.html"], 2))
    return cases


CASES = _cases()


@pytest.fixture
def keyed(sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("QUANTSCOPE_URL", sandbox.url)
    monkeypatch.setenv("QUANTSCOPE_API_KEY", sandbox.keys["enterprise"])
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "f").write_text("a file, not a folder")
    return tmp_path


@pytest.mark.parametrize(("name", "argv", "status"), CASES, ids=[c[0] for c in CASES])
def test_every_refusal_sends_nothing(
    name: str,
    argv: list[str],
    status: int,
    sandbox: SandboxServer,
    keyed: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    left = quota_left(sandbox, "enterprise")
    try:
        got = cli.main([a.replace("{tmp}", str(keyed)) for a in argv])
    except SystemExit as parsed:  # argparse's own usage errors
        got = int(parsed.code or 0)
    err = capsys.readouterr().err
    assert quota_left(sandbox, "enterprise") == left, err  # zero requests sent
    assert got == status, err
    errors = [x for x in err.splitlines() if ERROR_LINE.match(x)]  # argparse's names the command
    assert len(errors) == 1, err
    assert not any(text in err for text in PYTHON_ADVICE), err


quantscope = run_cli


def test_700_eval_details_are_refused_with_zero_requests(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's observation: 700 ids on Growth spent a request to learn the quota. A
    command earlier in the day (here ``quantscope quota``) saw it; the refusal now needs none."""
    cache = use(monkeypatch, sandbox, "growth", tmp_path / "cache")
    assert cli.main(["quota", "-q"]) == 0  # the day's first command: 1 request, remembered
    key = sandbox.keys["growth"].encode()
    assert not any(key in f.read_bytes() for f in cache.rglob("*") if f.is_file())
    left = quota_left(sandbox, "growth")
    ids = [str(i) for i in range(1, 701)]
    out = str(tmp_path / "details.parquet")
    done = quantscope(
        "fetch", "eval-details", *ids, "-o", out, server=sandbox, plan="growth", cache=cache
    )
    assert quota_left(sandbox, "growth") == left, done.stderr  # nothing sent
    assert done.returncode == 75, done.stderr
    line = one_error(done)
    assert "sent nothing" in line
    assert "--partial" in line
    assert "as last reported" in line
    capped = quantscope(
        "fetch", "eval-details", *ids[:5], "--max-requests", "3", "-o", out,
        server=sandbox, plan="growth", cache=cache,
    )  # fmt: skip
    assert capped.returncode == 75
    assert quota_left(sandbox, "growth") == left
    assert "more than --max-requests 3" in one_error(capped)
    assert "Raise --max-requests to 5" in one_error(capped)


def test_a_plan_without_the_endpoint_is_refused_with_zero_requests(
    sandbox: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = use(monkeypatch, sandbox, "basic", tmp_path / "cache")
    assert cli.main(["fetch", "trades", "--quant", str(QUANT), "-o", "-", "-q"]) == 0
    left = quota_left(sandbox, "basic")
    done = quantscope(
        "fetch", "eval-details", "1", "2", "-o", "-", server=sandbox, plan="basic", cache=cache
    )
    assert quota_left(sandbox, "basic") == left, done.stderr
    assert done.returncode == 77, done.stderr
    assert "needs the Growth plan or above; this key's plan is Basic" in one_error(done)
