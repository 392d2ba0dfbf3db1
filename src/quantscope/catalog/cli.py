"""``quantscope sync``, ``catalog info`` and ``bundle``: the catalog's command groups.

    quantscope sync CATALOG --quant 1 [--quant 2] [--resources trades,evaluations]
                    [--start 2026-07-01] [--end 2026-09-30] [--timeframe 1h]
                    [--confirm] [--max-requests N] [--dry-run]
    quantscope catalog info CATALOG [--json]
    quantscope catalog verify CATALOG
    quantscope bundle export STUDY.qsbundle --catalog CATALOG [--quant 1] [--start ...]
                    [--end ...] [--notebook NB.ipynb]
    quantscope bundle verify STUDY.qsbundle
    quantscope bundle open STUDY.qsbundle [--to DIR]

``sync`` connects as ``qsc.connect()`` does (``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY``, else the
embedded sandbox). Exit status: 0 done, 3 stopped at the quota (the same command resumes),
1 any other error (``bundle verify``: the first member that fails its check, named;
``catalog info``/``verify``: a damaged file, each named on stdout); the report goes to
stdout, errors (one line) and progress to stderr.
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
  quantscope catalog info ./study                     # exit 1 names damaged files
  quantscope catalog verify ./study                   # every file's SHA-256
"""

BUNDLE_EXAMPLES = """examples:
  quantscope bundle export study.qsbundle --catalog ./study --quant 1 \\
      --start 2026-09-01 --end 2026-09-30 --notebook study.ipynb
  quantscope bundle verify study.qsbundle            # exit 1 names the first bad member
  quantscope bundle open study.qsbundle --to ./from-alice
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
        info: dict[str, Any] = open_catalog(args.catalog).info(verify=True)
    except QuantscopeError as exc:
        print(f"quantscope: error: {exc}", file=sys.stderr)
        return 1
    damaged = info["damaged"]
    if args.json:
        print(json.dumps(info, indent=2))
        return 1 if damaged else 0
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
    return _report_damage(info["catalog"], damaged)


def _report_damage(catalog: str, damaged: list[dict[str, str]]) -> int:
    """Damaged files on stdout, one line each, and a one-line error: 1; else 0."""
    for d in damaged:
        print(f"  damaged: {d['file']}: {d['problem']}")
    if not damaged:
        return 0
    print(
        f"quantscope: error: {len(damaged)} damaged files in {catalog}: the same quantscope "
        "sync fetches them again",
        file=sys.stderr,
    )
    return 1


def _verify(args: argparse.Namespace) -> int:
    from quantscope._errors import QuantscopeError
    from quantscope.catalog.read import open_catalog

    try:
        cat = open_catalog(args.catalog)
        damaged = cat.verify()
        files = len(cat.partitions)
    except QuantscopeError as exc:
        print(f"quantscope: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    if not damaged:
        print(f"{args.catalog}: ok, {files} files match their SHA-256")
    return _report_damage(args.catalog, damaged)


def _bundle_export(args: argparse.Namespace) -> int:
    from quantscope._errors import QuantscopeError
    from quantscope.catalog.bundle_export import export_bundle

    try:
        bundle = export_bundle(
            args.file,
            args.catalog,
            quant_id=args.quant,
            start=args.start,
            end=args.end,
            notebook=args.notebook,
        )
    except (QuantscopeError, OSError) as exc:
        print(f"quantscope: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    rows = ", ".join(f"{k} {v}" for k, v in bundle.rows.items())
    print(
        f"wrote {bundle.path} ({bundle.size / 1e6:.2f} MB): {bundle.partitions} partitions "
        f"({rows} rows), notebook {bundle.notebook or 'none'}, quantscope "
        f"{bundle.quantscope_version}"
    )
    return 0


def _bundle_verify(args: argparse.Namespace) -> int:
    from quantscope._errors import QuantscopeError
    from quantscope.catalog.bundle_open import verify_bundle

    try:
        bundle = verify_bundle(args.file)
    except QuantscopeError as exc:
        print(f"quantscope: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    print(
        f"{bundle.path}: ok, {len(bundle.members)} members match their SHA-256 "
        f"(quantscope {bundle.quantscope_version}, {bundle.created_at})"
    )
    return 0


def _bundle_open(args: argparse.Namespace) -> int:
    from quantscope._errors import QuantscopeError
    from quantscope.catalog.bundle_open import open_bundle

    try:
        opened = open_bundle(args.file, args.to)
    except (QuantscopeError, OSError) as exc:
        print(f"quantscope: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    print(opened.how_to_run())
    return 0


def _add_bundle_commands(commands: Any) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    bundle = commands.add_parser(
        "bundle",
        help="a study as one file: catalog slice, notebook, hashes (export, verify, open)",
        description="Study bundles (docs/catalog.md, Bundles): one zip file a colleague "
        "verifies and re-runs offline, with no service and no key.",
        epilog=BUNDLE_EXAMPLES,
        formatter_class=fmt,
    )
    actions = bundle.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser(
        "export", help="write a bundle", epilog=BUNDLE_EXAMPLES, formatter_class=fmt
    )
    export.add_argument("file", metavar="FILE", help="the bundle to write (STUDY.qsbundle)")
    export.add_argument("--catalog", required=True, help="the catalog (directory or fsspec URL)")
    export.add_argument(
        "--quant", type=int, action="append", metavar="ID", help="repeatable (default: all)"
    )
    export.add_argument("--start", help="window start (widened to its month)")
    export.add_argument("--end", help="window end (widened to its month)")
    export.add_argument("--notebook", metavar="NB.ipynb", help="the study's notebook")
    export.set_defaults(handler=_bundle_export)
    verify = actions.add_parser("verify", help="check every member's SHA-256 (exit 1 if not)")
    verify.add_argument("file", metavar="FILE")
    verify.set_defaults(handler=_bundle_verify)
    opener = actions.add_parser(
        "open", help="verify, unpack read-only, say how to re-run the notebook offline"
    )
    opener.add_argument("file", metavar="FILE")
    opener.add_argument("--to", metavar="DIR", help="where (default: beside FILE, its name)")
    opener.set_defaults(handler=_bundle_open)


def add_catalog_commands(commands: Any) -> None:
    """Add ``sync``, ``catalog info`` and ``bundle`` to the ``quantscope`` parser's
    subcommands."""
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
    info = actions.add_parser(
        "info", help="resources, partitions, rows, sync runs, damaged files (exit 1 if any)"
    )
    info.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    info.add_argument("--json", action="store_true", help="as JSON")
    info.set_defaults(handler=_info)
    verify = actions.add_parser(
        "verify", help="hash every file against the manifest (exit 1 naming damaged files)"
    )
    verify.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    verify.set_defaults(handler=_verify)
    _add_bundle_commands(commands)
