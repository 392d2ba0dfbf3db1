"""What the command line's groups share: connection and output options, paths, the client.

* ``add_output_options`` gives every command ``--json``, ``-q/--quiet`` and ``-v/--verbose``
  (one of the last two); ``Voice(args)`` says what a command may print: ``note`` (a summary
  or the cost, on stderr; silent with ``--quiet``), ``detail`` (only with ``--verbose``),
  and ``progress`` (bars on stderr: only when stderr is a terminal and not ``--quiet``, as
  git shows progress; ``$QUANTSCOPE_PROGRESS=0`` turns them off too).
* ``add_connection_options`` gives a command ``--url``, ``--cache-dir`` and ``--offline``;
  ``client_from(args)`` builds the ``Client`` from them and the environment
  (``QUANTSCOPE_URL``, ``QUANTSCOPE_API_KEY``, ``QUANTSCOPE_CACHE_DIR``: the key is read from
  the environment only, never from the command line, where shells and ``ps`` would keep it).
  Anything the client prints while it starts (the embedded sandbox's line) goes to stderr, so
  stdout carries only a command's output.
* ``writable_output`` and ``existing_input`` check paths before anything is sent or spent.
* ``UsageError`` (exit 2) and the other statuses: ``cli.exit``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quantscope.cli.exit import CannotWriteError, InputNotFoundError, UsageError

if TYPE_CHECKING:
    from quantscope._http.client import Client

__all__ = [
    "EXAMPLES_FORMATTER",
    "Subparsers",
    "UsageError",
    "Voice",
    "add_connection_options",
    "add_output_options",
    "client_from",
    "existing_input",
    "int_at_least",
    "print_json",
    "say",
    "writable_output",
]

Subparsers = Any  # argparse's _SubParsersAction, which is private

EXAMPLES_FORMATTER = argparse.RawDescriptionHelpFormatter


def say(text: str) -> None:
    """One line for the user, on stderr (stdout is for data)."""
    print(text, file=sys.stderr, flush=True)


def print_json(value: Any) -> None:
    """``value`` as one JSON document on stdout."""
    print(json.dumps(value, default=str))


def int_at_least(
    minimum: int, maximum: int | None = None, *, what: str = "an integer"
) -> Callable[[str], int]:
    """An argparse type: a base-10 integer from ``minimum`` (to ``maximum``)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"expected {what} {bounds}, got {value}")
        return value

    return parse


def add_output_options(parser: argparse.ArgumentParser, *, json_help: str = "") -> None:
    """``--json``, and ``-q/--quiet`` or ``-v/--verbose`` (module docstring)."""
    group = parser.add_argument_group("output")
    group.add_argument(
        "--json", action="store_true", help=json_help or "the result as JSON on stdout"
    )
    loud = group.add_mutually_exclusive_group()
    loud.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress, no summary: errors and warnings only",
    )
    loud.add_argument(
        "-v", "--verbose", action="store_true", help="say more: the cost of each load, the cause"
    )


class Voice:
    """What a command prints besides its result, by ``--quiet``/``--verbose`` (stderr)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.quiet = bool(getattr(args, "quiet", False))
        self.verbose = bool(getattr(args, "verbose", False))

    def note(self, text: str) -> None:
        if not self.quiet:
            say(f"quantscope: {text}")

    def detail(self, text: str) -> None:
        if self.verbose:
            say(f"quantscope: {text}")

    @property
    def progress(self) -> bool:
        """Progress bars: not quiet, stderr a terminal, and not turned off in the environment."""
        if self.quiet or not sys.stderr.isatty():
            return False
        return os.environ.get("QUANTSCOPE_PROGRESS", "1").strip().lower() not in (
            "0",
            "false",
            "no",
        )


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """Add the connection options every command that talks to the service takes."""
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--url",
        help="the service's base URL (default: $QUANTSCOPE_URL, else the embedded sandbox); "
        "the key comes from $QUANTSCOPE_API_KEY only",
    )
    group.add_argument(
        "--cache-dir", metavar="DIR", help="the HTTP cache (default: $QUANTSCOPE_CACHE_DIR)"
    )
    group.add_argument(
        "--offline", action="store_true", help="answer from the cache only; spend no request"
    )


def client_from(args: argparse.Namespace) -> Client:
    """The client the options and the environment describe (stdout kept clean)."""
    from quantscope._http.client import Client
    from quantscope.cli.preflight import opened

    with contextlib.redirect_stdout(sys.stderr):
        return opened(
            Client(
                getattr(args, "url", None),
                cache_dir=getattr(args, "cache_dir", None),
                offline=bool(getattr(args, "offline", False)),
                progress=Voice(args).progress,
            )
        )


def writable_output(
    text: str,
    suffixes: Sequence[str],
    *,
    option: str = "-o",
    directory: bool = False,
    make_parents: bool = False,
) -> Path:
    """``text`` as an output path, checked before anything is fetched: the suffix
    (``UsageError``, exit 2; none asked for a ``directory``), and that it can be created
    (``CannotWriteError``, exit 73): its folder exists (with ``make_parents``, the nearest
    existing folder above it, the rest being created when writing) and is writable, and the
    path is not a folder (a ``directory`` not a file).
    """
    path = Path(text).expanduser()
    if not directory and path.suffix.lower() not in suffixes:
        raise UsageError(
            f"{option} {text}: expected {' or '.join(suffixes)}, got "
            f"{path.suffix or '(no suffix)'!r}"
        )
    if not directory and path.is_dir():
        raise CannotWriteError(f"{option} {text}: is a directory; name a file in it")
    if directory and path.exists() and not path.is_dir():
        raise CannotWriteError(f"{option} {text}: is a file; name a directory")
    parent = path if directory else path.parent
    above = parent.absolute()
    if not above.exists() and not (make_parents or directory):
        raise CannotWriteError(f"{option} {text}: no such directory {parent}")
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise CannotWriteError(f"{option} {text}: {above} is not a directory")
    if not os.access(above, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CannotWriteError(f"{option} {text}: {above} is not writable")
    return path


def existing_input(text: str, what: str) -> str:
    """``text`` when it names an existing local path (or a URL, checked when opened);
    ``InputNotFoundError`` (exit 66) otherwise.
    """
    if "://" in text or Path(text).expanduser().exists():
        return text
    raise InputNotFoundError(f"{text}: no such {what}")
