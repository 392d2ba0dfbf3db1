"""``quantscope fetch RESOURCE [filters] -o FILE``: any loader's frame, to a file or stdout.

Each resource is a loader with every keyword it takes as an option (``RESOURCES``: data, not
an if-chain; a test holds them equal to the loaders' signatures; the options of the service's
parameters, flags and ``--help`` included, come from the endpoint registry), so ``quantscope fetch
trades --help`` lists exactly what ``load_trades`` takes, ``--confirm``, ``--max-requests``
and ``--partial`` included wherever the loader has them. The output's suffix picks the
format: ``.parquet`` and ``.feather`` keep dtypes, categories, UTC datetimes, the index and
``df.attrs`` (provenance, JSON); ``.csv`` is plain text; ``-`` writes JSON lines to stdout
(one object per row, ISO-8601 datetimes, nulls as ``null``). A loader that returns several
frames (``trade``: the trade and its transactions) writes the one ``--part`` names.

Validate, then price, then spend: the arguments, the values the spec enumerates and the
output path are checked before anything is sent; then the load is priced from the cache
(nothing sent) and refused if the quota last seen, the plan or ``--max-requests`` rules it out
(``cli.preflight``: zero requests sent); then a paged load's first page, which tells how many
follow, is the one request pricing may spend (the load reuses it), and the cost is said on
stderr; then the loader runs under its own quota rules, whose refusals come
back as one line with the flags that lift them (``cli.exit``). A filter that matched nothing
is said on stderr (exit 0). Progress bars and the summary line go to stderr.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from quantscope import _endpoints as E
from quantscope._errors import EmptyResultWarning
from quantscope.cli.common import (
    EXAMPLES_FORMATTER,
    Subparsers,
    UsageError,
    Voice,
    add_connection_options,
    add_output_options,
    client_from,
    int_at_least,
    print_json,
    writable_output,
)
from quantscope.cli.preflight import check_values, refuse_early

FORMATS = (".parquet", ".feather", ".csv")


@dataclass(frozen=True)
class Opt:
    """One keyword of a loader: its flag (or positional name), the keyword, parsing and help.

    ``action="store_true"``: a switch for a keyword whose default is False.
    """

    flag: str
    kwarg: str
    help: str
    type: Callable[[str], Any] | None = str
    nargs: str | None = None
    action: str | None = None


@dataclass(frozen=True)
class Resource:
    """A loader reachable from the command line."""

    loader: str  # a name in quantscope.loaders
    help: str
    options: tuple[Opt, ...] = ()
    example: str = ""
    paged: bool = False  # takes --page-size (and --max-pages with max_pages)
    max_pages: bool = False
    budget: bool = False  # takes --confirm/--max-requests/--partial
    parts: tuple[str, ...] = ()  # a loader returning several frames: their names
    fixed: dict[str, Any] = field(default_factory=dict)


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


_id = int_at_least(0, what="an integer id")
_count_arg = int_at_least(1, what="a whole number")


def _time(text: str) -> str:
    """ISO-8601 text, checked here (the service would refuse it with a 422), passed on as is."""
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO-8601 date or time (2026-09-01, 2026-09-01T12:00Z), got {text!r}"
        ) from None
    return text


_METAVARS: dict[Callable[[str], Any] | None, str] = {
    _id: "ID",
    _bool: "BOOL",
    _time: "TIME",
    _count_arg: "N",
}

_TYPES: dict[str, Callable[[str], Any]] = {
    "id": _id,
    "bool": _bool,
    "time": _time,
    "int": _count_arg,
    "text": str,
}


def _opt(param: E.Param) -> Opt:
    """A registry parameter as an option: its flag, keyword, ``--help`` and parsing."""
    assert param.flag is not None, param
    if param.kind == "switch":
        return Opt(param.flag, param.name, param.help, None, action="store_true")
    return Opt(param.flag, param.name, param.help, _TYPES[param.kind], nargs=param.nargs)


def _opts(endpoint: E.Endpoint, *names: str) -> tuple[Opt, ...]:
    """The options of ``endpoint``'s parameters ``names`` (default: each that has a flag)."""
    params = [endpoint.param(n) for n in names] or [p for p in endpoint.params if p.flag]
    return tuple(_opt(p) for p in params)


_WINDOW = ("quant_id", "start", "end", "all_quants")

RESOURCES: dict[str, Resource] = {
    "trades": Resource(
        "load_trades",
        "trades (executed by default)",
        _opts(E.TRADES),
        "quantscope fetch trades --quant 1 --status Closed -o trades.parquet",
        paged=True,
        max_pages=True,
        budget=True,
    ),
    "trade": Resource(
        "load_trade",
        "one trade with its detail fields, or its transactions (--part)",
        _opts(E.TRADE),
        "quantscope fetch trade 42 --part transactions -o -",
        parts=("trade", "transactions"),
    ),
    "trade-stats": Resource("load_trade_stats", "trade statistics (one row)", _opts(E.STATS)),
    "evaluations": Resource(
        "load_evaluations",
        "evaluations",
        _opts(E.EVALUATIONS),
        "quantscope fetch evaluations --quant 2 --type TOKEN_BUY --start 2026-09-01 -o -",
        paged=True,
        max_pages=True,
        budget=True,
    ),
    "eval-details": Resource(
        "load_eval_details",
        "criterion results of evaluations (one request each)",
        _opts(E.DETAILS),
        "quantscope fetch eval-details 101 102 103 -o details.feather",
        budget=True,
    ),
    "eval-history": Resource(
        "load_eval_history",
        "every evaluation of the same token by the same quant",
        _opts(E.HISTORY),
        paged=True,
        budget=True,
    ),
    "eval-timeseries": Resource(
        "load_eval_timeseries",
        "evaluation counts over time",
        _opts(E.TIMESERIES, *_WINDOW),
        "quantscope fetch eval-timeseries --quant 1 --start 2026-09-01 --end 2026-10-01 -o -",
    ),
    "eval-count": Resource(
        "load_eval_count", "evaluation counts (one row)", _opts(E.COUNT, *_WINDOW)
    ),
    "ohlcv": Resource(
        "load_ohlcv",
        "candles of a token (index: timestamp, UTC)",
        _opts(E.OHLCV),
        "quantscope fetch ohlcv 42 --timeframe 5m -o candles.csv",
    ),
    "signals": Resource("load_signals", "alpha signals", _opts(E.SIGNALS)),
    "signal": Resource(
        "load_signal",
        "one token's signal, or the criterion results behind it (--part)",
        _opts(E.SIGNAL),
        parts=("signal", "criteria"),
    ),
    "signal-stats": Resource("load_signal_stats", "signal counts by stage", _opts(E.SIGNALS)),
    "playbook": Resource(
        "load_playbook",
        "a quant's playbook, long (one row per criterion entry)",
        (
            *_opts(E.CONFIG),
            Opt(
                "--fresh",
                "fresh",
                "ask the service even when the cache holds a copy (1 request)",
                None,
                action="store_true",
            ),
        ),
        "quantscope fetch playbook 1 -o playbook.parquet",
    ),
    "recommendations": Resource(
        "load_recommendations",
        "the optimizer's recommendations",
        (*_opts(E.DASHBOARD), Opt("--applied", "applied", "true or false", _bool)),
    ),
    "dashboard": Resource(
        "load_dashboard",
        "the optimizer's dashboard: performance (one row), recent, applied or weekly (--part)",
        _opts(E.DASHBOARD),
        parts=("performance", "recent", "applied", "weekly"),
    ),
}


def _add_budget_options(sub: argparse.ArgumentParser, resource: Resource) -> None:
    budget = sub.add_argument_group("quota (the cost is said before anything is spent)")
    if resource.paged:
        budget.add_argument(
            "--page-size", type=_count_arg, metavar="N", help="items per request (default 1000)"
        )
    if resource.max_pages:
        budget.add_argument("--max-pages", type=_count_arg, metavar="N", help="pages at most")
    if resource.budget:
        budget.add_argument(
            "--confirm",
            action="store_true",
            help="spend more than the quota share (25%% of what is left by default)",
        )
        budget.add_argument(
            "--max-requests",
            type=_id,
            metavar="N",
            help="a ceiling on the requests this load may send, instead of the share",
        )
        budget.add_argument(
            "--partial",
            action="store_true",
            help="fetch what fits in the quota left; the same command after the reset "
            "fetches the rest from the cache",
        )


def _add_fetch(commands: Subparsers) -> None:
    examples = "\n".join(f"  {r.example}" for r in RESOURCES.values() if r.example)
    fetch = commands.add_parser(
        "fetch",
        help="load a resource into a Parquet, Feather or CSV file, or JSON lines on stdout",
        description="Load a resource (any loader) with its filters and write it out. Quota "
        "rules and the cache apply as in Python: cached pages cost nothing; the cost is "
        "said before anything is spent.\n\nexamples:\n" + examples,
        formatter_class=EXAMPLES_FORMATTER,
    )
    resources = fetch.add_subparsers(dest="resource", required=True, metavar="RESOURCE")
    for name, resource in RESOURCES.items():
        sub = resources.add_parser(
            name,
            help=resource.help,
            description=f"{resource.help} (quantscope.{resource.loader})"
            + (f"\n\nexample:\n  {resource.example}" if resource.example else ""),
            formatter_class=EXAMPLES_FORMATTER,
        )
        for opt in resource.options:
            kwargs: dict[str, Any] = {"help": opt.help}
            if opt.action:
                kwargs["action"] = opt.action
            else:
                kwargs["type"] = opt.type
            if opt.nargs:
                kwargs["nargs"] = opt.nargs
            if opt.flag.startswith("-"):
                kwargs["dest"] = opt.kwarg
                if not opt.action:
                    kwargs["metavar"] = _METAVARS.get(opt.type, opt.kwarg.split("_")[-1].upper())
            sub.add_argument(opt.flag, **kwargs)
        if resource.parts:
            sub.add_argument(
                "--part",
                choices=resource.parts,
                default=resource.parts[0],
                help=f"which frame to write (default: {resource.parts[0]})",
            )
        if resource.paged or resource.budget:
            _add_budget_options(sub, resource)
        sub.add_argument(
            "-o",
            "--output",
            required=True,
            metavar="FILE",
            help="FILE.parquet, FILE.feather, FILE.csv, or - for JSON lines on stdout",
        )
        add_connection_options(sub)
        add_output_options(sub, json_help="the summary as one JSON object on stdout (with -o FILE)")
        sub.set_defaults(handler=_fetch, fetch_resource=resource)


_BUDGET_KEYWORDS = ("page_size", "max_pages", "max_requests", "confirm", "partial")


def _kwargs(args: argparse.Namespace, resource: Resource) -> dict[str, Any]:
    out: dict[str, Any] = dict(resource.fixed)
    for opt in resource.options:
        value = getattr(args, opt.kwarg)
        if value is not None and value is not False:
            out[opt.kwarg] = value
    for name in _BUDGET_KEYWORDS:
        value = getattr(args, name, None)
        if value is not None and value is not False:
            out[name] = value
    return out


def _output(args: argparse.Namespace) -> str:
    text: str = args.output
    if text == "-":
        if args.json:
            raise UsageError("--json prints the summary on stdout: give -o FILE, not -o -")
        return text
    writable_output(text, FORMATS)
    return text


def _filters(args: argparse.Namespace, resource: Resource) -> str:
    """The filters given, as typed: ``--quant 999 --status Closed``."""
    shown = []
    for opt in resource.options:
        value = getattr(args, opt.kwarg)
        if value is None or value is False:
            continue
        text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
        if not opt.flag.startswith("-"):
            shown.append(f"{opt.kwarg} {text}")
        else:
            shown.append(opt.flag if value is True else f"{opt.flag} {text}")
    return " ".join(shown)


def _price(
    loader: Any, kwargs: dict[str, Any], client: Any, resource: Resource, *, probe: bool
) -> Any:
    """The load's ``Estimate``; with ``probe``, a paged load spends its first page to count
    the rest.
    """
    from quantscope._http.estimate import estimate

    return estimate(loader, probe=probe and resource.paged, client=client, **kwargs)


def _cost_line(name: str, est: Any) -> str:
    """``trades: 11 requests (...), 2 from the cache; 483 of 500 left, resets at ...``."""
    from quantscope._errors import format_reset

    n = est.requests + est.probed
    cost = f"{'at least ' if not est.exact else ''}{_count(n, 'request')}"
    if est.probed:
        cost += " (the first page among them, sent now to count the pages)"
    cached = est.cached - est.probed
    if cached:
        cost += f", {cached} from the cache"
    if est.remaining is None:
        left = "the quota is learnt from the first answer"
    else:
        of = f" of {est.limit}" if est.limit is not None else ""
        left = f"{est.remaining}{of} left, resets at {format_reset(est.reset)}"
    return f"{name}: {cost}; {left}"


def _fetch(args: argparse.Namespace) -> int:
    import pandas as pd

    import quantscope.loaders as L

    resource: Resource = args.fetch_resource
    voice = Voice(args)
    target = _output(args)  # before anything is sent
    loader = getattr(L, resource.loader)
    kwargs = _kwargs(args, resource)
    check_values(kwargs, {opt.kwarg: opt.flag for opt in resource.options})
    from quantscope._errors import QuantscopeError

    with client_from(args) as client:
        try:
            probed = 0
            if not client.settings.offline:
                est = _price(loader, kwargs, client, resource, probe=False)  # sends nothing
                refuse_early(est, kwargs, client)
                if not est.exact:  # a paged load: its first page counts the rest
                    est = _price(loader, kwargs, client, resource, probe=True)
                probed = est.probed
                line = _cost_line(args.resource, est)
                if est.requests + est.probed > 1 or not est.exact:
                    voice.note(line)
                else:
                    voice.detail(line)
            with warnings.catch_warnings():  # said below in the CLI's words, once
                warnings.simplefilter("ignore", EmptyResultWarning)
                result = loader(**kwargs, client=client)
        except QuantscopeError:
            raise
        except (TypeError, ValueError) as exc:  # the loader refused the arguments
            raise UsageError(f"fetch {args.resource}: {exc}") from None
    frame = _frame_of(pd, result, getattr(args, "part", None))
    write(frame, target)
    prov = frame.attrs.get("quantscope", {})
    where = "stdout" if target == "-" else target
    spent, answers = int(prov.get("requests", 0)) + probed, int(prov.get("pages", 0))
    if len(frame) == 0 and _filters(args, resource):
        from quantscope.cli.exit import with_cli_advice

        sys.stderr.write(
            with_cli_advice(
                f"quantscope: warning: no {args.resource} match {_filters(args, resource)}: "
                "check the ids and filters (an unknown id matches nothing)"
            )
            + "\n"
        )
    summary = {
        "resource": args.resource,
        "rows": len(frame),
        "columns": len(frame.columns),
        "output": where,
        "requests": spent,
        "answers": answers,
        "incomplete": prov.get("incomplete"),
    }
    if args.json:
        print_json(summary)
        return 0
    voice.note(
        f"{len(frame)} rows x {len(frame.columns)} columns of {args.resource} to "
        f"{where} ({_count(spent, 'request')} spent, {_count(answers, 'answer')} used)"
    )
    return 0


def _frame_of(pd: Any, result: Any, part: str | None) -> Any:
    """The frame to write: a loader's one frame, the ``part`` of several, a Series as a row."""
    if part is not None:
        result = getattr(result, part)
    if isinstance(result, pd.Series):  # a one-record answer: one row of typed columns
        frame = result.to_frame().T.infer_objects().reset_index(drop=True)
        frame.attrs = result.attrs
        return frame
    return result


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def write(frame: Any, target: str) -> None:
    """``frame`` to ``target`` by its suffix (see the module docstring); ``-``: stdout."""
    import pandas as pd

    from quantscope.cli.exit import CannotWriteError

    assert isinstance(frame, pd.DataFrame)
    plain = frame if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    if target == "-":
        if len(plain):
            text = plain.to_json(orient="records", lines=True, date_format="iso", date_unit="ms")
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    suffix = Path(target).suffix.lower()
    try:
        if suffix == ".parquet":
            frame.to_parquet(target)
        elif suffix == ".feather":
            frame.to_feather(target)
        else:
            plain.to_csv(target, index=False, date_format="%Y-%m-%dT%H:%M:%S.%fZ")
    except OSError as exc:  # a full disk, a folder removed meanwhile: the answers are cached
        raise CannotWriteError(
            f"cannot write {target}: {exc.strerror or exc}; the answers are in the cache, so "
            "the same command costs nothing again"
        ) from None


COMMANDS = _add_fetch
