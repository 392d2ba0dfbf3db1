"""The ``quantscope`` command line (also ``python -m quantscope``).

    quantscope --version
    quantscope fetch RESOURCE [filters] [--confirm] [--partial] -o FILE.parquet|.feather|.csv|-
    quantscope sync CATALOG --quant N [--dry-run]       quantscope catalog info|verify|sql
    quantscope bundle export|verify|open                quantscope report --quant N -o F.html
    quantscope cache info|clear [ENDPOINT]              quantscope quota
    quantscope sandbox serve|keys

Every command validates its arguments and paths before it sends anything, says what a load
costs before spending it, and takes ``--json``, ``-q/--quiet`` and ``-v/--verbose``. Exit
statuses say the cause (``cli.exit.EXIT_CODES``, also in ``--help`` and docs/cli.md): 0
done, 1 other, 2 usage, 65 integrity, 66 not found, 67 auth, 69 network, 73 cannot write,
75 quota, 76 protocol, 77 plan, 78 config, 130 interrupted. An error is one line on stderr,
``quantscope: error: ...``, with the command line's advice and never the key; a warning
(``QuantscopeWarning``) is one line, ``quantscope: warning: ...``. Progress and summaries go
to stderr, data to stdout or the named file.

**Adding a command group** (from another module, e.g. ``catalog``'s ``sync``): write
``src/quantscope/cli/<name>.py`` with a function ``COMMANDS(commands)`` that calls
``commands.add_parser(...)`` for each of its commands and ``set_defaults(handler=f)`` on
them, ``f(args) -> int`` the exit status; give each ``add_output_options`` and import heavy
modules inside ``f``. Then append one line to ``COMMAND_GROUPS`` below and the command to
docs/cli.md (a test compares them). ``cli.common`` has what groups share (options, paths,
``Voice``, the client); raise exceptions rather than printing them: ``main`` prints each as
one line and exits with its status (``cli.exit``).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from quantscope._errors import QuantscopeError, QuantscopeWarning
from quantscope._versions import QUANTSCOPE_VERSION
from quantscope.cli import cache, fetch, preflight, sandbox
from quantscope.cli.catalog import add_catalog_commands
from quantscope.cli.common import EXAMPLES_FORMATTER, Subparsers
from quantscope.cli.exit import (
    INTERRUPTED,
    CannotWriteError,
    InputNotFoundError,
    PlanTooSmallError,
    UsageError,
    error_line,
    exit_codes_help,
    exit_status,
    with_cli_advice,
)
from quantscope.cli.report import add_report_commands

# One function per command group, in the order ``--help`` lists them (see the docstring).
COMMAND_GROUPS: tuple[Callable[[Subparsers], None], ...] = (
    fetch.COMMANDS,
    add_catalog_commands,
    add_report_commands,
    cache.COMMANDS,
    sandbox.COMMANDS,
)

EXAMPLES = (
    """the day's workflow:
  quantscope quota                                      # plan, requests left, reset
  quantscope sync study/ --quant 1 --start 2026-09-01 --dry-run   # the cost, nothing sent
  quantscope sync study/ --quant 1 --start 2026-09-01
  quantscope catalog sql study/ "SELECT chain, count(*) FROM trades GROUP BY 1"
  quantscope report --quant 1 --criteria smart_money_buys -o atlas.html

examples:
  quantscope fetch trades --quant 1 --status Closed -o trades.parquet
  quantscope fetch evaluations --quant 2 --start 2026-09-01 -o - | head
  quantscope fetch eval-details 101 102 103 --partial -o details.feather
  quantscope fetch trades --help          (every resource's filters)
  quantscope cache info
  quantscope sandbox serve --port 0

The service: $QUANTSCOPE_URL and $QUANTSCOPE_API_KEY (the key is read from the environment
only); without them the embedded sandbox answers. The cache: $QUANTSCOPE_CACHE_DIR.

"""
    + exit_codes_help()
    + "\n\nEvery command: --json, -q/--quiet, -v/--verbose. docs/cli.md has it all."
)


def build_parser() -> argparse.ArgumentParser:
    """The ``quantscope`` command line: every subcommand and its options."""
    parser = argparse.ArgumentParser(
        prog="quantscope",
        description="Research toolkit for the Quant Trading Data Service.",
        epilog=EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    parser.add_argument("--version", action="version", version=f"quantscope {QUANTSCOPE_VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_group in COMMAND_GROUPS:
        add_group(commands)
    return parser


@contextmanager
def _warnings_as_lines(verbose: bool) -> Iterator[None]:
    """quantscope's warnings as one line each on stderr (no source line), advice for the
    command line; once per message. Other libraries' warnings only with ``--verbose``.
    """
    seen: set[str] = set()

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if not issubclass(category, QuantscopeWarning) and not verbose:
            return
        text = with_cli_advice(str(message))
        text = text.removeprefix("quantscope: ")
        if text in seen:
            return
        seen.add(text)
        sys.stderr.write(f"quantscope: warning: {text}\n")

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)  # --help, --version and usage errors exit here (0, 2)
    prog = parser.prog
    try:
        with _warnings_as_lines(bool(getattr(args, "verbose", False))):
            status: int = args.handler(args)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return INTERRUPTED.code
    except (
        QuantscopeError,
        UsageError,
        CannotWriteError,
        InputNotFoundError,
        PlanTooSmallError,
        OSError,
    ) as exc:
        return _fail(prog, exc, args)
    finally:  # the quota the command saw, for the next one's refusals at zero requests
        preflight.remember_opened()
    return status


def _fail(prog: str, exc: BaseException, args: Any) -> int:
    status = exit_status(exc)
    cause = f" [{type(exc).__name__}, exit {status}]" if getattr(args, "verbose", False) else ""
    print(f"{prog}: error: {error_line(exc)}{cause}", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
