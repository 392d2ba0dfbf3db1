"""``quantscope sync`` and ``quantscope catalog info``: the catalog's command group.

    quantscope sync CATALOG --quant 1 [--quant 2] [--resources trades,evaluations]
                    [--start 2026-07-01] [--end 2026-09-30] [--timeframe 1h]
                    [--confirm] [--max-requests N] [--dry-run]
    quantscope catalog info CATALOG [--json]

``sync`` connects as ``qsc.connect()`` does (``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY``, else the
embedded sandbox). Exit status: 0 done, 3 stopped at the quota (the same command resumes),
1 any other error; the report goes to stdout, errors (one line) and progress to stderr.
Imports of the toolkit happen inside the handlers, so ``quantscope --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_catalog_commands"]

EXAMPLES = """examples:
  quantscope sync ./study --quant 1 --dry-run        # what it would cost, sends nothing
  quantscope sync ./study --quant 1 --quant 2 --start 2026-07-01
  quantscope sync ./study --quant 1 --resources trades,eval_details --confirm
  quantscope catalog info ./study
"""


def _resources(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _sync(args: argparse.Namespace) -> int:
    from quantscope._client import connect
    from quantscope._errors import QuantscopeError, QuotaError
    from quantscope.catalog.sync import sync

    try:
        client = connect(progress=not args.no_progress)
        report = sync(
            args.catalog,
            quant_id=args.quant,
            resources=args.resources,
            start=args.start,
            end=args.end,
            timeframe=args.timeframe,
            confirm=args.confirm,
            max_requests=args.max_requests,
            dry_run=args.dry_run,
            client=client,
        )
    except QuotaError as exc:
        print(f"quantscope: stopped at the quota: {str(exc).splitlines()[0]}", file=sys.stderr)
        print("quantscope: the same command resumes the sync", file=sys.stderr)
        return 3
    except QuantscopeError as exc:
        print(f"quantscope: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    print(report)
    return 0


def _info(args: argparse.Namespace) -> int:
    from quantscope._errors import QuantscopeError
    from quantscope.catalog.read import open_catalog

    try:
        info: dict[str, Any] = open_catalog(args.catalog).info()
    except QuantscopeError as exc:
        print(f"quantscope: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"catalog {info['catalog']} (schema version {info['schema_version']})")
    for name, held in sorted(info["resources"].items()):
        print(
            f"  {name}: {held['partitions']} partitions, {held['rows']} rows, "
            f"{held['bytes'] / 1e6:.2f} MB"
        )
    for run in info["runs"]:
        print(
            f"  run {run['id']} {run['started_at']}: {run['status']}, {run['requests']} "
            f"requests, {run['rows_added']} rows added, {run['rows_updated']} updated"
        )
    return 0


def add_catalog_commands(commands: Any) -> None:
    """Add ``sync`` and ``catalog info`` to the ``quantscope`` parser's subcommands."""
    fmt = argparse.RawDescriptionHelpFormatter
    sync = commands.add_parser(
        "sync",
        help="fetch into a Parquet catalog what it lacks or what can still change",
        description="Incremental, quota-aware sync into a Parquet catalog (docs/catalog.md).",
        epilog=EXAMPLES,
        formatter_class=fmt,
    )
    sync.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    sync.add_argument(
        "--quant", type=int, action="append", required=True, metavar="ID", help="repeatable"
    )
    sync.add_argument(
        "--resources",
        type=_resources,
        default=None,
        metavar="A,B",
        help="trades, evaluations, eval_details, ohlcv, signals, playbook, recommendations "
        "(default: all but eval_details and ohlcv)",
    )
    sync.add_argument("--start", help="window start (widened to its month)")
    sync.add_argument("--end", help="window end (widened to its month)")
    sync.add_argument("--timeframe", default="1h", help="candles' timeframe (default: 1h)")
    sync.add_argument("--confirm", action="store_true", help="spend more than the quota share")
    sync.add_argument("--max-requests", type=int, metavar="N", help="cap on the whole sync")
    sync.add_argument("--dry-run", action="store_true", help="print the cost, send nothing")
    sync.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    sync.set_defaults(handler=_sync)

    catalog = commands.add_parser(
        "catalog", help="inspect a Parquet catalog", epilog=EXAMPLES, formatter_class=fmt
    )
    actions = catalog.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = actions.add_parser("info", help="resources, partitions, rows, sync runs")
    info.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    info.add_argument("--json", action="store_true", help="as JSON")
    info.set_defaults(handler=_info)
