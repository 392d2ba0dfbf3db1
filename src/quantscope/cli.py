"""The ``quantscope`` command line.

    quantscope sandbox serve [--host H] [--port P] [--data-dir DIR] [--seed N] [--scale S]
    quantscope sandbox keys  [--data-dir DIR] [--seed N] [--scale S]

Each command group is a function that adds its subparser (``COMMAND_GROUPS``); a command sets
``handler`` to a function of the parsed arguments returning the exit status. The sandbox is
reached through ``_embedded``, the toolkit's one door into it, and heavy imports (the sandbox,
fastapi, uvicorn) happen inside handlers, so ``quantscope --help`` works on a bare install.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from quantscope.catalog.cli import add_catalog_commands
from quantscope.reporting.cli import add_report_commands

Subparsers = Any  # argparse's _SubParsersAction, which is private


def _int_at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
            raise argparse.ArgumentTypeError(f"expected an integer {bounds}, got {value}")
        return value

    return parse


def _add_world_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where worlds are built and kept "
        "(default: $QUANTSCOPE_SANDBOX_DIR, else the user cache dir)",
    )
    parser.add_argument("--seed", type=_int_at_least(0), default=7, help="world seed (default: 7)")
    parser.add_argument(
        "--scale", type=_int_at_least(1), default=1, help="world size multiplier (default: 1)"
    )


def _sandbox_serve(args: argparse.Namespace) -> int:
    from quantscope._embedded import serve_sandbox

    try:
        serve_sandbox(args.host, args.port, args.data_dir, args.seed, args.scale)
    except ImportError as exc:
        print(f"quantscope: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(
            f"quantscope: error: cannot listen on {args.host}:{args.port}: {exc} "
            "(another port: --port N, or --port 0 for any free one)",
            file=sys.stderr,
        )
        return 1
    return 0


def _sandbox_keys(args: argparse.Namespace) -> int:
    from quantscope._embedded import sandbox_keys

    print(json.dumps(sandbox_keys(args.data_dir, args.seed, args.scale), indent=2))
    return 0


def _add_sandbox_commands(commands: Subparsers) -> None:
    sandbox = commands.add_parser(
        "sandbox", help="the local sandbox of the service", description="The local sandbox."
    )
    actions = sandbox.add_subparsers(dest="action", required=True, metavar="ACTION")

    serve = actions.add_parser(
        "serve",
        help="serve a world over HTTP (prints the base URL first)",
        description="Serve a sandbox world until interrupted. The first line printed is the "
        "base URL.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    serve.add_argument(
        "--port",
        type=_int_at_least(0, 65535),
        default=8000,
        help="port; 0 picks a free one (default: 8000)",
    )
    _add_world_options(serve)
    serve.set_defaults(handler=_sandbox_serve)

    keys = actions.add_parser(
        "keys",
        help="print the API keys of a world as JSON (builds it if needed)",
        description="Print {plan: key} of a sandbox world as JSON, building the world if needed.",
    )
    _add_world_options(keys)
    keys.set_defaults(handler=_sandbox_keys)


# One function per command group; later groups (fetch, cache) are appended here.
COMMAND_GROUPS: tuple[Callable[[Subparsers], None], ...] = (
    _add_sandbox_commands,
    add_report_commands,
    add_catalog_commands,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quantscope", description="Research toolkit for the Quant Trading Data Service."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_group in COMMAND_GROUPS:
        add_group(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
