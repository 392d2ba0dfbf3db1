"""``quantscope sync``, ``catalog info|verify|sql`` and ``bundle``: the catalog's commands.

    quantscope sync CATALOG --quant 1 [--quant 2] [--resources trades,evaluations]
                    [--start 2026-07-01] [--end 2026-09-30] [--timeframe 1h]
                    [--confirm] [--max-requests N] [--dry-run]
    quantscope catalog info CATALOG [--json]
    quantscope catalog verify CATALOG
    quantscope catalog sql CATALOG "SELECT ..." [--csv | --json] [-o FILE]
    quantscope bundle export STUDY.qsbundle --catalog CATALOG [--quant 1] [--start ...]
                    [--end ...] [--notebook NB.ipynb]
    quantscope bundle verify STUDY.qsbundle
    quantscope bundle open STUDY.qsbundle [--to DIR]

``sync`` connects as ``qsc.connect()`` does (``QUANTSCOPE_URL``/``QUANTSCOPE_API_KEY``, else the
embedded sandbox). Exit statuses are the command line's (``cli.exit``): 75 stopped at the
quota (the same command resumes), 65 a damaged catalog or bundle (``catalog info``/``verify``
name each damaged file on stdout; ``bundle verify`` the first member that fails), 66 no such
catalog or bundle, 2 a query DuckDB refuses. Every command takes ``--json``, ``-q``, ``-v``;
the report goes to stdout, errors (one line) and progress to stderr. Handlers raise, and
``cli.main`` prints the one line. Imports of the toolkit happen inside the handlers, so
``quantscope --help`` stays fast.
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
  quantscope catalog info ./study                     # exit 65 names damaged files
  quantscope catalog verify ./study                   # every file's SHA-256
"""

SQL_EXAMPLES = """examples:
  quantscope catalog sql ./study "SELECT chain, count(*) AS n FROM trades GROUP BY 1"
  quantscope catalog sql ./study "SELECT * FROM evaluations WHERE quant_id = 1" --csv > ev.csv
  quantscope catalog sql ./study "SELECT * FROM trades" -o trades.parquet
"""

BUNDLE_EXAMPLES = """examples:
  quantscope bundle export study.qsbundle --catalog ./study --quant 1 \\
      --start 2026-09-01 --end 2026-09-30 --notebook study.ipynb
  quantscope bundle verify study.qsbundle            # exit 1 names the first bad member
  quantscope bundle open study.qsbundle --to ./from-alice
"""


def _resources(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _catalog_at(text: str) -> str:
    """``text`` when a catalog is there (a local directory with its manifest; a URL is
    checked when opened); ``InputNotFoundError`` (exit 66) otherwise.
    """
    from pathlib import Path

    from quantscope.catalog.manifest import MANIFEST
    from quantscope.cli.exit import InputNotFoundError

    if "://" in text or (Path(text).expanduser() / MANIFEST).is_file():
        return text
    raise InputNotFoundError(
        f"no catalog at {text} (no {MANIFEST}): quantscope sync {text} --quant N makes one"
    )


def _quota_words(quota: Any) -> str:
    """The client's quota in words (a dry run sends nothing, so it may not be known)."""
    from quantscope._errors import format_reset

    if quota.remaining is None:
        return (
            "not known yet: a dry run sends nothing, and only an answer says it "
            "(quantscope quota asks, for 1 request)"
        )
    of = f" of {quota.limit}" if quota.limit is not None else ""
    return f"{quota.remaining}{of} requests left, resets at {format_reset(quota.reset)}"


def _report_json(report: Any) -> dict[str, Any]:
    return {
        "catalog": report.catalog,
        "run": report.run,
        "status": report.status,
        "dry_run": report.dry_run,
        "requests": report.requests,
        "rows_added": report.rows_added,
        "rows_updated": report.rows_updated,
        "quota": report.quota,
        "tasks": report.tasks,
        "repaired": report.repaired,
        "dropped": report.dropped,
        "damaged": report.damaged,
    }


def _sync(args: argparse.Namespace) -> int:
    import contextlib

    from quantscope._errors import QuotaError
    from quantscope._http.client import connect
    from quantscope.catalog.layout import RESOURCES
    from quantscope.catalog.sync import sync
    from quantscope.cli.common import Voice, print_json
    from quantscope.cli.exit import UsageError

    unknown = [n for n in args.resources or () if n not in RESOURCES]
    if unknown:  # before connecting
        raise UsageError(
            f"--resources: unknown resources {', '.join(unknown)}; known: "
            f"{', '.join(sorted(RESOURCES))}"
        )
    voice = Voice(args)
    with contextlib.redirect_stdout(sys.stderr):  # the embedded sandbox's line
        client = connect(progress=voice.progress and not args.no_progress)
    try:
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
        exc.add_note("the same command resumes the sync")
        raise
    except ValueError as exc:  # a bad window: the arguments
        raise UsageError(str(exc).splitlines()[0]) from None
    if args.dry_run:
        report.quota = _quota_words(client.quota)
    if args.json:
        print_json(_report_json(report))
    elif not args.quiet or args.dry_run:
        print(report)
    return 0


def _info(args: argparse.Namespace) -> int:
    from quantscope.catalog.read import open_catalog

    info: dict[str, Any] = open_catalog(_catalog_at(args.catalog)).info(verify=True)
    damaged = info["damaged"]
    if args.json:
        print(json.dumps(info, indent=2, default=str))
        return _damage_status(info["catalog"], damaged, say_files=False)
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
    return _damage_status(info["catalog"], damaged)


def _damage_status(catalog: str, damaged: list[dict[str, str]], *, say_files: bool = True) -> int:
    """Damaged files on stdout, one line each, and a one-line error: 65; else 0."""
    from quantscope.cli.exit import INTEGRITY

    if say_files:
        for d in damaged:
            print(f"  damaged: {d['file']}: {d['problem']}")
    if not damaged:
        return 0
    print(
        f"quantscope: error: {len(damaged)} damaged files in {catalog}: the same quantscope "
        "sync fetches them again",
        file=sys.stderr,
    )
    return INTEGRITY.code


def _verify(args: argparse.Namespace) -> int:
    from quantscope.catalog.read import open_catalog
    from quantscope.cli.common import Voice, print_json

    cat = open_catalog(_catalog_at(args.catalog))
    damaged = cat.verify()
    files = len(cat.partitions)
    if args.json:
        print_json({"catalog": args.catalog, "files": files, "damaged": damaged})
        return _damage_status(args.catalog, damaged, say_files=False)
    if not damaged:
        Voice(args).note(f"{args.catalog}: ok, {files} files match their SHA-256")
    return _damage_status(args.catalog, damaged)


SQL_FORMATS = (".csv", ".json", ".parquet")


def _sql(args: argparse.Namespace) -> int:
    import duckdb

    from quantscope.catalog.read import open_catalog
    from quantscope.cli.common import Voice, writable_output
    from quantscope.cli.exit import UsageError

    if args.output is not None:
        writable_output(args.output, SQL_FORMATS)
    if args.csv and args.json:
        raise UsageError("--csv or --json, not both")
    cat = open_catalog(_catalog_at(args.catalog))
    try:
        frame = cat.sql(args.query)
    except duckdb.Error as exc:
        raise UsageError(f"the query: {str(exc).splitlines()[0]}") from None
    target = args.output
    suffix = "" if target is None else target.rsplit(".", 1)[-1].lower()
    if suffix == "parquet":
        frame.to_parquet(target)
    elif args.json or suffix == "json":
        text = frame.to_json(orient="records", date_format="iso", date_unit="ms")
        _emit(text + "\n", target)
    elif args.csv or suffix == "csv":
        _emit(frame.to_csv(index=False), target)
    else:
        _emit(frame.to_string(index=False, max_rows=args.max_rows) + "\n", target)
    Voice(args).note(f"{len(frame)} rows x {len(frame.columns)} columns")
    return 0


def _emit(text: str, target: str | None) -> None:
    if target is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(target, "w", encoding="utf-8") as out:
            out.write(text)


def _bundle_export(args: argparse.Namespace) -> int:
    from quantscope.catalog.bundle_export import export_bundle
    from quantscope.cli.common import print_json, writable_output

    writable_output(args.file, (".qsbundle", ".zip"), option="FILE")
    if args.notebook is not None:
        from quantscope.cli.common import existing_input

        existing_input(args.notebook, "notebook")
    bundle = export_bundle(
        args.file,
        _catalog_at(args.catalog),
        quant_id=args.quant,
        start=args.start,
        end=args.end,
        notebook=args.notebook,
    )
    if args.json:
        print_json(
            {
                "path": str(bundle.path),
                "bytes": bundle.size,
                "partitions": bundle.partitions,
                "rows": bundle.rows,
                "notebook": bundle.notebook,
                "quantscope_version": bundle.quantscope_version,
            }
        )
        return 0
    rows = ", ".join(f"{k} {v}" for k, v in bundle.rows.items())
    print(
        f"wrote {bundle.path} ({bundle.size / 1e6:.2f} MB): {bundle.partitions} partitions "
        f"({rows} rows), notebook {bundle.notebook or 'none'}, quantscope "
        f"{bundle.quantscope_version}"
    )
    return 0


def _bundle_verify(args: argparse.Namespace) -> int:
    from quantscope.catalog.bundle_open import verify_bundle
    from quantscope.cli.common import existing_input, print_json

    bundle = verify_bundle(existing_input(args.file, "bundle"))
    if args.json:
        print_json(
            {
                "path": str(bundle.path),
                "members": len(bundle.members),
                "quantscope_version": bundle.quantscope_version,
                "created_at": bundle.created_at,
            }
        )
        return 0
    print(
        f"{bundle.path}: ok, {len(bundle.members)} members match their SHA-256 "
        f"(quantscope {bundle.quantscope_version}, {bundle.created_at})"
    )
    return 0


def _bundle_open(args: argparse.Namespace) -> int:
    from quantscope.catalog.bundle_open import open_bundle
    from quantscope.cli.common import existing_input, print_json, writable_output

    existing_input(args.file, "bundle")
    if args.to is not None:
        writable_output(args.to, (), option="--to", directory=True)
    opened = open_bundle(args.file, args.to)
    if args.json:
        print_json(
            {
                "directory": str(opened.directory),
                "catalog": str(opened.catalog),
                "notebook": str(opened.notebook) if opened.notebook else None,
            }
        )
        return 0
    print(opened.how_to_run())
    return 0


def _add_bundle_commands(commands: Any) -> None:
    from quantscope.cli.common import add_output_options

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
    add_output_options(export, json_help="what was written, as one JSON object")
    export.set_defaults(handler=_bundle_export)
    verify = actions.add_parser("verify", help="check every member's SHA-256 (exit 65 if not)")
    verify.add_argument("file", metavar="FILE")
    add_output_options(verify, json_help="the bundle's facts, as one JSON object")
    verify.set_defaults(handler=_bundle_verify)
    opener = actions.add_parser(
        "open", help="verify, unpack read-only, say how to re-run the notebook offline"
    )
    opener.add_argument("file", metavar="FILE")
    opener.add_argument("--to", metavar="DIR", help="where (default: beside FILE, its name)")
    add_output_options(opener, json_help="where it was unpacked, as one JSON object")
    opener.set_defaults(handler=_bundle_open)


def _add_sync(commands: Any) -> None:
    from quantscope.cli.common import add_output_options

    sync = commands.add_parser(
        "sync",
        help="fetch into a Parquet catalog what it lacks or what can still change",
        description="Incremental, quota-aware sync into a Parquet catalog (docs/catalog.md).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    # The old spelling of --quiet's progress switch, kept working, not shown.
    sync.add_argument("--no-progress", action="store_true", help=argparse.SUPPRESS)
    add_output_options(sync, json_help="the sync's report as one JSON object")
    sync.set_defaults(handler=_sync)


def add_catalog_commands(commands: Any) -> None:
    """Add ``sync``, ``catalog info|verify|sql`` and ``bundle`` to the ``quantscope``
    parser's subcommands.
    """
    from quantscope.cli.common import add_output_options

    fmt = argparse.RawDescriptionHelpFormatter
    _add_sync(commands)
    catalog = commands.add_parser(
        "catalog", help="inspect and query a Parquet catalog", epilog=EXAMPLES, formatter_class=fmt
    )
    actions = catalog.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = actions.add_parser(
        "info", help="resources, partitions, rows, sync runs, damaged files (exit 65 if any)"
    )
    info.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    add_output_options(info, json_help="as JSON")
    info.set_defaults(handler=_info)
    verify = actions.add_parser(
        "verify", help="hash every file against the manifest (exit 65 naming damaged files)"
    )
    verify.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    add_output_options(verify, json_help="files checked and damaged ones, as one JSON object")
    verify.set_defaults(handler=_verify)
    sql = actions.add_parser(
        "sql",
        help="run a DuckDB SQL query over the catalog (one view per resource)",
        description="Run a DuckDB SQL query over the catalog: one view per resource "
        "(trades, evaluations, eval_details, ohlcv, signals, playbook, recommendations), "
        "partition keys (quant_id, month, ...) as columns. Nothing is sent to the service.",
        epilog=SQL_EXAMPLES,
        formatter_class=fmt,
    )
    sql.add_argument("catalog", metavar="CATALOG", help="a directory or an fsspec URL")
    sql.add_argument("query", metavar="QUERY", help="the SQL query (quote it)")
    sql.add_argument("--csv", action="store_true", help="CSV on stdout instead of a table")
    sql.add_argument(
        "--max-rows", type=int, default=60, metavar="N", help="table rows shown (default: 60)"
    )
    sql.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write FILE.csv, FILE.json or FILE.parquet instead of stdout",
    )
    add_output_options(sql, json_help="the rows as one JSON array of objects")
    sql.set_defaults(handler=_sql)
    _add_bundle_commands(commands)
