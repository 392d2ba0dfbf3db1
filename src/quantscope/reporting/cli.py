"""``quantscope report``: write study reports from the command line.

    quantscope report --quant N [--criteria a,b] [--confirm] -o FILE.html
    quantscope report --all-quants [--confirm] -o DIR

The client is ``connect()``'s (``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY``, else the embedded
sandbox). ``--all-quants`` writes ``DIR/quant-<id>.html`` for every quant that has trades.
The output path is checked before anything is sent (an ``.html`` file, or a folder with
``--all-quants``, somewhere writable); the report prices its loads and refuses over the
quota share unless ``--confirm`` (exit 75), having sent only the trades' pages. A refusal is
one line on stderr with the command line's exit status (``_cli_exit``); the paths written go
to stdout (``--json``: one JSON object).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

REPORT_SUFFIXES = (".html", ".htm")


def _criteria(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"expected criterion keys separated by commas, got {text!r}"
        )
    return names


def _quants(client: Any) -> list[int]:
    """Every quant with trades: the trades' quant names, each one's id read from the details
    of one of its buy evaluations (one request per quant; the report reuses them).
    """
    from quantscope import loaders as L

    trades = L.load_trades(trading_status="all", client=client)
    firsts = trades.dropna(subset=["evaluation_id"]).groupby("quant_name", observed=True).first()
    ids = [int(i) for i in firsts["evaluation_id"]]
    details = L.load_eval_details(ids, client=client)
    return sorted({int(q) for q in details["quant_id"].dropna().unique()})


def _run(args: argparse.Namespace) -> int:
    from quantscope._cli_common import Voice, print_json, writable_output
    from quantscope._cli_exit import UsageError
    from quantscope._client import connect
    from quantscope.reporting import report

    # Validate before anything is sent: the suffix, a writable place.
    writable_output(args.output, REPORT_SUFFIXES, directory=args.all_quants, make_parents=True)
    voice = Voice(args)
    with contextlib.redirect_stdout(sys.stderr):  # the embedded sandbox's line
        client = connect(progress=voice.progress)
    written: list[str] = []
    try:
        if args.all_quants:
            out = Path(args.output)
            for quant in _quants(client):
                path = report(
                    quant, out / f"quant-{quant}.html", client=client, confirm=args.confirm
                )
                written.append(str(path))
                if not args.json:
                    print(path)
        else:
            path = report(
                args.quant, args.output, criteria=args.criteria, client=client, confirm=args.confirm
            )
            written.append(str(path))
            if not args.json:
                print(path)
    except ValueError as exc:  # the arguments: an unknown criterion, a quant id
        raise UsageError(str(exc).splitlines()[0]) from None
    if args.json:
        print_json({"written": written})
    return 0


def add_report_commands(commands: Any) -> None:
    """Add ``quantscope report`` to the command line's subparsers."""
    from quantscope._cli_common import add_output_options

    parser = commands.add_parser(
        "report",
        help="write a self-contained HTML study report of a quant",
        description="Write one self-contained HTML study report (figures embedded, nothing "
        "fetched when opened, the same data gives the same bytes). The output is checked "
        "before anything is sent; the cost is priced and refused over the quota share "
        "unless --confirm.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--quant", type=int, metavar="N", help="the quant's id")
    which.add_argument(
        "--all-quants", action="store_true", help="one report per quant, into the folder -o"
    )
    parser.add_argument(
        "--criteria", type=_criteria, default=[], metavar="A,B", help="criteria to study"
    )
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="spend more than the client's share of the quota left (default: refuse)",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="PATH",
        help="FILE.html (a folder with --all-quants)",
    )
    add_output_options(parser, json_help="the paths written, as one JSON object")
    parser.set_defaults(handler=_run)
