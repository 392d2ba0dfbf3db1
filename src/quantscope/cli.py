"""The ``quantscope`` command line (also ``python -m quantscope``).

    quantscope --version
    quantscope fetch RESOURCE [filters] -o FILE.parquet|FILE.feather|FILE.csv|-
    quantscope cache info|clear [ENDPOINT] [--cache-dir DIR]
    quantscope quota [--json]
    quantscope sandbox serve [--host H] [--port P] [--data-dir DIR] [--seed N] [--scale S]
    quantscope sandbox keys  [--data-dir DIR] [--seed N] [--scale S]

Exit status: 0 done; 1 the service, the quota or the configuration refused (one line on
stderr, ``quantscope: error: ...``, never the key); 2 bad usage (argparse's message, or a
handler's ``UsageError``); 130 interrupted. Progress and summaries go to stderr, data to
stdout or the named file.

**Adding a command group** (from another module, e.g. ``catalog``'s ``sync``): write
``src/quantscope/_cli_<name>.py`` with a function ``COMMANDS(commands)`` that calls
``commands.add_parser(...)`` for each of its commands and ``set_defaults(handler=f)`` on
them, ``f(args) -> int`` the exit status; import heavy modules inside ``f``. Then append one
line to ``COMMAND_GROUPS`` below. ``_cli_common`` has what groups share: the connection
options (``add_connection_options``, ``client_from``), ``UsageError``, ``say`` (stderr) and
the help formatter that keeps examples as written. Raise ``QuantscopeError`` subclasses for
service failures: ``main`` prints them as one line and exits 1.

The sandbox is reached through ``_embedded``, the toolkit's one door into it, and heavy imports
(the sandbox, fastapi, uvicorn, pyarrow) happen inside handlers.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from quantscope import __version__, _cli_cache, _cli_fetch
from quantscope._cli_common import EXAMPLES_FORMATTER, Subparsers, UsageError
from quantscope._errors import QuantscopeError
from quantscope.catalog.cli import add_catalog_commands
from quantscope.reporting.cli import add_report_commands


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


# One function per command group, in the order ``--help`` lists them (see the docstring).
COMMAND_GROUPS: tuple[Callable[[Subparsers], None], ...] = (
    _cli_fetch.COMMANDS,
    add_catalog_commands,
    add_report_commands,
    _cli_cache.COMMANDS,
    _add_sandbox_commands,
)

EXAMPLES = """examples:
  quantscope fetch trades --quant 1 --status Closed -o trades.parquet
  quantscope fetch evaluations --quant 2 --start 2026-09-01 -o - | head
  quantscope fetch trades --help          (every resource's filters)
  quantscope quota
  quantscope cache info
  quantscope sync study/ --quant 1 --start 2026-09-01 --dry-run
  quantscope catalog info study/
  quantscope report --quant 1 --criteria smart_money_buys -o atlas.html
  quantscope sandbox serve --port 0

The service: $QUANTSCOPE_URL and $QUANTSCOPE_API_KEY (the key is read from the environment
only); without them the embedded sandbox answers. The cache: $QUANTSCOPE_CACHE_DIR."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quantscope",
        description="Research toolkit for the Quant Trading Data Service.",
        epilog=EXAMPLES,
        formatter_class=EXAMPLES_FORMATTER,
    )
    parser.add_argument("--version", action="version", version=f"quantscope {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_group in COMMAND_GROUPS:
        add_group(commands)
    return parser


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)  # --help, --version and usage errors exit here (0, 2)
    try:
        status: int = args.handler(args)
    except UsageError as exc:
        print(f"{parser.prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except QuantscopeError as exc:
        print(f"{parser.prog}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    return status


if __name__ == "__main__":
    raise SystemExit(main())
