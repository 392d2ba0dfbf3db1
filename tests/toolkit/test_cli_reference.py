"""The command line's surface, in-process: every command takes ``--json``, ``--quiet`` and
``--verbose``; ``fetch`` reaches every keyword of every loader; docs/cli.md and ``--help``
list every command, option and exit status (so they cannot drift from the parsers)."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

import quantscope.loaders as L
from quantscope.cli.exit import EXIT_CODES
from quantscope.cli.fetch import RESOURCES
from quantscope.cli.main import build_parser, main

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("quantscope",)
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path), parser
        return
    for name, sub in subs[0].choices.items():
        yield from leaves(sub, (*path, name))


def test_every_command_takes_json_quiet_and_verbose() -> None:
    for command, parser in leaves(build_parser()):
        flags = {s for a in parser._actions for s in a.option_strings}
        assert {"--json", "-q", "--quiet", "-v", "--verbose"} <= flags, command


def test_fetch_reaches_every_keyword_of_its_loader() -> None:
    budget = {"page_size", "max_pages", "confirm", "max_requests", "partial"}
    for name, resource in RESOURCES.items():
        params = set(inspect.signature(getattr(L, resource.loader)).parameters)
        params -= {"client", "old"}
        given = {o.kwarg for o in resource.options}
        given |= {"page_size"} if resource.paged else set()
        given |= {"max_pages"} if resource.max_pages else set()
        given |= {"confirm", "max_requests", "partial"} if resource.budget else set()
        assert given == params, (name, params ^ given)
        assert budget & params <= given
    loaders = {n for n in L.__all__ if n.startswith("load_")}
    assert loaders == {r.loader for r in RESOURCES.values()}


def test_the_reference_lists_every_command_option_and_exit_status() -> None:
    doc = DOC.read_text(encoding="utf-8")
    sections = dict(
        (head.split("`")[1], body) for head, _, body in
        (part.partition("\n") for part in doc.split("\n### ")[1:])
    )  # fmt: skip
    for command, parser in leaves(build_parser()):
        assert command in sections, f"docs/cli.md lacks {command}"
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for flag in action.option_strings or [action.metavar or action.dest]:
                assert f"`{flag}`" in sections[command], (command, flag)
    helped = build_parser().format_help()
    for code in EXIT_CODES:
        assert f"| {code.code} | {code.name} | {code.cause} |" in doc
        assert f"{code.code:>3}  {code.name:<12} {code.cause}" in helped


def test_paths_and_names_are_checked_before_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No service is configured: each refusal comes before anything connects or is sent."""
    monkeypatch.setenv("QUANTSCOPE_URL", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("QUANTSCOPE_API_KEY", "qs_unused_0123456789")
    assert main(["fetch", "trades", "-o", "/nonexistent/dir/x.parquet"]) == 73
    assert main(["report", "--quant", "1", "-o", str(tmp_path / "r.pdf")]) == 2
    assert main(["sync", str(tmp_path / "c"), "--quant", "1", "--resources", "nope"]) == 2
    assert main(["catalog", "sql", str(tmp_path / "none"), "SELECT 1"]) == 66
    assert main(["bundle", "verify", str(tmp_path / "none.qsbundle")]) == 66
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "quantscope: error: -o /nonexistent/dir/x.parquet: no such directory /nonexistent/dir",
        f"quantscope: error: -o {tmp_path / 'r.pdf'}: expected .html or .htm, got '.pdf'",
        "quantscope: error: --resources: unknown resources nope; known: eval_details, "
        "evaluations, ohlcv, playbook, recommendations, signals, trades",
        f"quantscope: error: no catalog at {tmp_path / 'none'} (no manifest.json): quantscope "
        f"sync {tmp_path / 'none'} --quant N makes one",
        f"quantscope: error: {tmp_path / 'none.qsbundle'}: no such bundle",
    ]


def test_errors_and_warnings_get_the_command_lines_advice() -> None:
    from datetime import UTC, datetime

    from quantscope._errors import InvalidChoiceError, QuotaShareExceededError, RateLimitError
    from quantscope.cli.exit import error_line, exit_status, with_cli_advice

    share = QuotaShareExceededError(
        "... pass confirm=True (or max_requests=700) ...",
        share=0.25, endpoint="/api/eval-details", needed=699, fetched=1, remaining=493,
        limit=500, reset=datetime(2026, 11, 29, tzinfo=UTC), reserve=0,
    )  # fmt: skip
    line = error_line(share)
    assert line.startswith(
        "/api/eval-details needs 699 more requests (700 in all), more than 25% of the 494 of "
        "500 left: sent 1 request (kept in the cache), nothing more. --confirm spends them "
        "(or --max-requests 700), --partial fetches what fits"
    )
    assert exit_status(share) == 75
    assert exit_status(RateLimitError("x", status_code=429)) == 75
    bad = InvalidChoiceError("trading_status", "bogus", ("executed", "all"))
    assert exit_status(bad) == 2  # refused unsent by a loader a command calls: a usage error
    assert (
        with_cli_advice(
            "partial load (attrs['quantscope']['incomplete']); Cached data stays usable: "
            "qsc.connect(offline=True)"
        )
        == "partial load; Cached data stays usable: add --offline"
    )
