"""``quantscope report``: write study reports from the command line.

    quantscope report --quant N [--criteria a,b] [--confirm | --max-requests N] -o FILE.html
    quantscope report --all-quants [--confirm] -o DIR

Validate, then price, then spend. Before the first request: the output (an ``.html`` file, or
a folder with ``--all-quants``, somewhere writable), the quant id, the options that apply to
one report only (``--criteria``, ``--max-requests``). The client is the command line's
(``client_from``: ``--url``/``--cache-dir``/``--offline``, ``$QUANTSCOPE_URL``/
``$QUANTSCOPE_API_KEY``, else the embedded sandbox), so the quota an earlier command saw
refuses a report that cannot fit with nothing sent (``cli.preflight.price_report``, exit
75), and the quota this one sees is kept for the next. Then ``--criteria`` is checked
against the quant's playbook (1 request, 0 when cached: criterion keys depend on the world),
never the trades. Then the cost known before the trades is said on stderr, and the report
runs: its loads are priced again once the trades are read (the details, one request each)
and refused over the quota share unless ``--confirm``, or over ``--max-requests``, having
sent only the trades' pages. A refusal is one line on stderr with the command line's exit
status (``cli.exit``); the paths written go to stdout (``--json``: one JSON object).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quantscope._errors import QuotaShareExceededError, QuotaWouldBeExceededError
    from quantscope._http.client import Client
    from quantscope._http.estimate import Estimate
    from quantscope._http.quota import Quota

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


def _check_arguments(args: argparse.Namespace) -> None:
    """Everything that needs no request (module docstring): ``UsageError``/``CannotWriteError``."""
    from quantscope.cli.common import writable_output
    from quantscope.cli.exit import UsageError

    writable_output(args.output, REPORT_SUFFIXES, directory=args.all_quants, make_parents=True)
    if args.all_quants:
        for flag, given in (("--criteria", args.criteria), ("--max-requests", args.max_requests)):
            if given or given == 0:
                raise UsageError(f"{flag} applies to one report: give --quant N, not --all-quants")


def _check_criteria(client: Client, quant: int, criteria: list[str]) -> None:
    """``UnknownCriterionError`` (exit 2) naming the keys the quant's playbook lacks, and the
    ones it has (``reporting.build.check_criteria``: the playbook, 1 request, 0 when cached).
    A plan that cannot read it leaves the check to the report, which says what it could not
    load.
    """
    from quantscope.reporting.build import check_criteria

    check_criteria(quant, criteria, client, param="--criteria")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _left(quota: Quota | None) -> str:
    from quantscope._errors import format_reset

    if quota is None or quota.remaining is None:
        return "the quota is learnt from the first answer"
    of = f" of {quota.limit}" if quota.limit is not None else ""
    return f"{quota.remaining}{of} left, resets at {format_reset(quota.reset)}"


def _cost_line(quant: int, est: Estimate, quota: Quota | None) -> str:
    """``report of quant 1: at least 4 requests (...); 4870 of 5000 left, resets at ...``."""
    cached = f", {est.cached} from the cache" if est.cached else ""
    return (
        f"report of quant {quant}: at least {_count(est.requests, 'request')}{cached} (the "
        "trades, evaluations, playbook and recommendations; the buy evaluations' details, one "
        f"request each, are priced once the trades are read); {_left(quota)}"
    )


def _quota_line(
    exc: QuotaShareExceededError | QuotaWouldBeExceededError, quant: int, *, lower: bool
) -> str:
    """A report's refusal in the command line's words (a report has no ``--partial``)."""
    from quantscope._errors import QuotaShareExceededError, format_reset

    total = exc.needed + exc.fetched
    needs = f"the report of quant {quant} needs {'at least ' if lower else ''}{total} requests"
    sent = (
        f"sent {_count(exc.fetched, 'request')} (the trades' pages, kept in the cache), "
        "nothing more"
        if exc.fetched
        else "sent nothing"
    )
    of = f" of {exc.limit}" if exc.limit is not None else ""
    reset = f"the quota resets at {format_reset(exc.reset)}"
    if isinstance(exc, QuotaShareExceededError) and exc.ceiling is not None:
        line = f"{needs}, more than --max-requests {exc.ceiling}: {sent}. Raise --max-requests"
        line += f" to {total}" + (" or more" if lower else "")
    elif isinstance(exc, QuotaShareExceededError):
        left = exc.remaining + exc.fetched
        line = (
            f"{needs}, more than {exc.share:.0%} of the {left}{of} left: {sent}. --confirm "
            f"spends them (or --max-requests N), or wait: {reset}"
        )
    else:
        line = f"{needs}, {exc.remaining}{of} are left at most: {sent}. Wait: {reset}"
    notes = [str(n).rstrip(".") for n in getattr(exc, "__notes__", ())]
    return "; ".join([line, *notes])


def _one_report(args: argparse.Namespace, client: Client) -> Path:
    """Pre-flight (module docstring), then the report of ``--quant``."""
    from quantscope._errors import QuotaError, QuotaShareExceededError, QuotaWouldBeExceededError
    from quantscope.cli.common import Voice
    from quantscope.cli.preflight import last_seen, price_report
    from quantscope.reporting import report

    spend = {"confirm": args.confirm, "max_requests": args.max_requests}
    quant: int = args.quant
    if not client.settings.offline:
        try:
            est = price_report(client, quant, spend)  # sends nothing
        except (QuotaShareExceededError, QuotaWouldBeExceededError) as exc:
            raise QuotaError(_quota_line(exc, quant, lower=True)) from None
        if args.criteria:
            _check_criteria(client, quant, args.criteria)  # 1 request, 0 when cached
        seen = client.quota if client.quota.updated_at is not None else last_seen(client)
        Voice(args).note(_cost_line(quant, est, seen))
    elif args.criteria:
        _check_criteria(client, quant, args.criteria)
    try:
        return report(
            quant,
            args.output,
            criteria=args.criteria,
            client=client,
            confirm=args.confirm,
            max_requests=args.max_requests,
        )
    except (QuotaShareExceededError, QuotaWouldBeExceededError) as exc:
        if exc.endpoint != "report":  # a loader's own refusal: its fields say it
            raise
        raise QuotaError(_quota_line(exc, quant, lower=False)) from None


def _run(args: argparse.Namespace) -> int:
    from quantscope.cli.common import client_from, print_json
    from quantscope.cli.exit import UsageError
    from quantscope.reporting import report

    _check_arguments(args)  # before anything is sent
    written: list[str] = []
    with client_from(args) as client:
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
                path = _one_report(args, client)
                written.append(str(path))
                if not args.json:
                    print(path)
        except ValueError as exc:  # the arguments the service decides: a quant id
            raise UsageError(str(exc).splitlines()[0]) from None
    if args.json:
        print_json({"written": written})
    return 0


def add_report_commands(commands: Any) -> None:
    """Add ``quantscope report`` to the command line's subparsers."""
    from quantscope.cli.common import add_connection_options, add_output_options, int_at_least

    parser = commands.add_parser(
        "report",
        help="write a self-contained HTML study report of a quant",
        description="Write one self-contained HTML study report (figures embedded, nothing "
        "fetched when opened, the same data gives the same bytes). The arguments, the output "
        "and --criteria (against the playbook) are checked before the trades are read; the "
        "cost is said first and refused over the quota share unless --confirm, or over "
        "--max-requests.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--quant", type=int_at_least(0, what="a quant id"), metavar="N", help="the quant's id"
    )
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
        "--max-requests",
        type=int_at_least(0, what="a number of requests"),
        metavar="N",
        help="a ceiling on the requests the report may send, instead of the share",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="PATH",
        help="FILE.html (a folder with --all-quants)",
    )
    add_connection_options(parser)
    add_output_options(parser, json_help="the paths written, as one JSON object")
    parser.set_defaults(handler=_run)
