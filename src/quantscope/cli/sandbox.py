"""``quantscope sandbox serve|keys``: the local sandbox of the service.

``keys`` without ``--seed``/``--scale`` prints the keys of the world the data directory
holds (the one ``serve`` and the embedded sandbox use there), never another seed's: one
world, its keys; none, the default world (seed 7, what ``connect()`` embeds) is built; several,
it refuses and names them (``--seed`` picks one). The sandbox is reached through
``_http.embedded``, the toolkit's one door into it, imported inside the handlers.
"""

from __future__ import annotations

import argparse
import json

from quantscope.cli.common import (
    Subparsers,
    UsageError,
    Voice,
    add_output_options,
    int_at_least,
    print_json,
)

__all__ = ["COMMANDS"]


def _add_world_options(parser: argparse.ArgumentParser, *, default: int | None) -> None:
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help="where worlds are built and kept "
        "(default: $QUANTSCOPE_SANDBOX_DIR, else the user cache dir)",
    )
    said = "7" if default is not None else "the world the data dir holds"
    parser.add_argument(
        "--seed", type=int_at_least(0), default=default, help=f"world seed (default: {said})"
    )
    parser.add_argument(
        "--scale",
        type=int_at_least(1),
        default=1 if default is not None else None,
        help=f"world size multiplier (default: {'1' if default is not None else said})",
    )


def _sandbox_serve(args: argparse.Namespace) -> int:
    from quantscope._errors import SandboxUnavailableError
    from quantscope._http.embedded import serve_sandbox
    from quantscope.cli.exit import CannotWriteError

    if args.json:
        raise UsageError("sandbox serve prints the base URL alone on its first line; no --json")
    try:
        serve_sandbox(args.host, args.port, args.data_dir, args.seed, args.scale)
    except ImportError as exc:
        raise SandboxUnavailableError(str(exc)) from None
    except OSError as exc:
        raise CannotWriteError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc} "
            "(another port: --port N, or --port 0 for any free one)"
        ) from None
    return 0


def _sandbox_keys(args: argparse.Namespace) -> int:
    from quantscope._http.embedded import sandbox_keys

    try:
        seed, scale, keys = sandbox_keys(args.data_dir, args.seed, args.scale)
    except LookupError as exc:  # several worlds and none named
        raise UsageError(str(exc)) from None
    Voice(args).note(f"keys of the sandbox world seed {seed} scale {scale}")
    if args.json:
        print_json(keys)
    else:
        print(json.dumps(keys, indent=2))
    return 0


def COMMANDS(commands: Subparsers) -> None:
    """Add the ``sandbox`` group."""
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
        type=int_at_least(0, 65535),
        default=8000,
        help="port; 0 picks a free one (default: 8000)",
    )
    _add_world_options(serve, default=7)
    add_output_options(serve, json_help="refused: the first line is the URL, as text")
    serve.set_defaults(handler=_sandbox_serve)

    keys = actions.add_parser(
        "keys",
        help="print the API keys of a world as JSON (builds it if needed)",
        description="Print {plan: key} of a sandbox world as JSON: with no --seed, the world "
        "the data directory holds (the one served there); several worlds: name one with "
        "--seed; none: the default world (seed 7) is built.",
    )
    _add_world_options(keys, default=None)
    add_output_options(keys, json_help="one line of JSON (default: indented JSON)")
    keys.set_defaults(handler=_sandbox_keys)
