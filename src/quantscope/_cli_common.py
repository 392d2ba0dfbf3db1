"""What the command line's groups share: connection options, the client, errors, output.

* ``add_connection_options`` gives a command ``--url``, ``--cache-dir``, ``--offline`` and
  ``--quiet``; ``client_from(args)`` builds the ``Client`` from them and the environment
  (``QUANTSCOPE_URL``, ``QUANTSCOPE_API_KEY``, ``QUANTSCOPE_CACHE_DIR``: the key is read from
  the environment only, never from the command line, where shells and ``ps`` would keep it).
  Anything the client prints while it starts (the embedded sandbox's line) goes to stderr, so
  stdout carries only a command's output.
* ``UsageError``: bad input found by a handler; ``cli.main`` prints it as argparse does and
  exits 2. ``QuantscopeError`` (the service, the quota, the configuration) exits 1.
* ``say``: progress and summaries, to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quantscope._client import Client

Subparsers = Any  # argparse's _SubParsersAction, which is private

EXAMPLES_FORMATTER = argparse.RawDescriptionHelpFormatter


class UsageError(Exception):
    """Bad input found after parsing (a file suffix, a date): exit status 2."""


def say(text: str) -> None:
    """One line for the user, on stderr (stdout is for data)."""
    print(text, file=sys.stderr, flush=True)


def add_connection_options(parser: argparse.ArgumentParser) -> None:
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
    group.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def client_from(args: argparse.Namespace) -> Client:
    """The client the options and the environment describe (stdout kept clean)."""
    from quantscope._client import Client

    with contextlib.redirect_stdout(sys.stderr):
        return Client(
            args.url,
            cache_dir=args.cache_dir,
            offline=args.offline,
            progress=False if args.quiet else None,
        )
