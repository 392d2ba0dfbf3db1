"""``quantscope report``: write study reports from the command line.

    quantscope report --quant N [--criteria a,b] [--confirm] -o FILE.html
    quantscope report --all-quants [--confirm] -o DIR

The client is ``connect()``'s (``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY``, else the embedded
sandbox). ``--all-quants`` writes ``DIR/quant-<id>.html`` for every quant that has trades.
A refusal (quota share, plan, unknown quant) is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _criteria(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(
            f"expected criterion keys separated by commas, got {text!r}"
        )
    return names


def _quants(client: Any) -> list[int]:
    """Every quant with trades: the trades' quant names, each one's id read from the details
    of one of its buy evaluations (one request per quant; the report reuses them)."""
    from quantscope import loaders as L

    trades = L.load_trades(trading_status="all", client=client)
    firsts = trades.dropna(subset=["evaluation_id"]).groupby("quant_name", observed=True).first()
    ids = [int(i) for i in firsts["evaluation_id"]]
    details = L.load_eval_details(ids, client=client)
    return sorted({int(q) for q in details["quant_id"].dropna().unique()})


def _run(args: argparse.Namespace) -> int:
    from quantscope._client import connect
    from quantscope._errors import QuantscopeError
    from quantscope.reporting import report

    client = connect()  # progress as QUANTSCOPE_PROGRESS says: the report's stages on stderr
    try:
        if args.all_quants:
            out = Path(args.output)
            for quant in _quants(client):
                path = report(
                    quant, out / f"quant-{quant}.html", client=client, confirm=args.confirm
                )
                print(path)
        else:
            path = report(
                args.quant, args.output, criteria=args.criteria, client=client, confirm=args.confirm
            )
            print(path)
    except (QuantscopeError, ValueError) as exc:
        print(f"quantscope: error: {exc}", file=sys.stderr)
        return 1
    return 0


def add_report_commands(commands: Any) -> None:
    """Add ``quantscope report`` to the command line's subparsers."""
    parser = commands.add_parser(
        "report",
        help="write a self-contained HTML study report of a quant",
        description="Write one self-contained HTML study report (figures embedded, nothing "
        "fetched when opened, the same data gives the same bytes).",
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
    parser.set_defaults(handler=_run)
