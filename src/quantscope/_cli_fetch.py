"""``quantscope fetch RESOURCE [filters] -o FILE``: any loader's frame, to a file or stdout.

Each resource is a loader with its filters as options (``RESOURCES``: data, not an if-chain),
so ``quantscope fetch trades --help`` lists exactly what ``load_trades`` takes. The output's
suffix picks the format: ``.parquet`` and ``.feather`` keep dtypes, categories, UTC
datetimes, the index and ``df.attrs`` (provenance, JSON); ``.csv`` is plain text; ``-``
writes JSON lines to stdout (one object per row, ISO-8601 datetimes, nulls as ``null``).
Progress bars and the summary line go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from quantscope._cli_common import (
    EXAMPLES_FORMATTER,
    Subparsers,
    UsageError,
    add_connection_options,
    client_from,
    say,
)

FORMATS = (".parquet", ".feather", ".csv")


@dataclass(frozen=True)
class Opt:
    """One filter: its flag (or positional name), the loader's keyword, parsing and help."""

    flag: str
    kwarg: str
    help: str
    type: Callable[[str], Any] = str
    nargs: str | None = None
    choices: Sequence[str] | None = None


@dataclass(frozen=True)
class Resource:
    """A loader reachable from the command line."""

    loader: str  # a name in quantscope.loaders
    help: str
    options: tuple[Opt, ...] = ()
    example: str = ""
    paged: bool = False  # takes --max-pages/--confirm/--max-requests/--partial
    fixed: dict[str, Any] = field(default_factory=dict)


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "1"):
        return True
    if lowered in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _id(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer id, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an id >= 0, got {value}")
    return value


def _time(text: str) -> str:
    """ISO-8601 text, checked here (the service would refuse it with a 422), passed on as is."""
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO-8601 date or time (2026-09-01, 2026-09-01T12:00Z), got {text!r}"
        ) from None
    return text


_METAVARS: dict[Callable[[str], Any], str] = {_id: "ID", _bool: "BOOL", _time: "TIME"}

QUANT = Opt("--quant", "quant_id", "the quant's id (default: every quant)", _id)
START = Opt("--start", "start", "from this time (ISO 8601, UTC; e.g. 2026-09-01)", _time)
END = Opt("--end", "end", "up to this time (ISO 8601, UTC)", _time)
CHAIN = Opt("--chain", "chain", "one chain (SOLANA, BASE, ...)")
SEARCH = Opt("--search", "search", "token name, symbol or address contains")

RESOURCES: dict[str, Resource] = {
    "trades": Resource(
        "load_trades",
        "trades (executed by default)",
        (
            QUANT,
            Opt("--trading-status", "trading_status", "executed, all, ...", str),
            Opt("--status", "status", "Open or Closed"),
            CHAIN,
            SEARCH,
            START,
            END,
        ),
        "quantscope fetch trades --quant 1 --status Closed -o trades.parquet",
        paged=True,
    ),
    "trade-stats": Resource("load_trade_stats", "trade statistics (one row)", (QUANT,)),
    "evaluations": Resource(
        "load_evaluations",
        "evaluations",
        (
            QUANT,
            Opt("--type", "evaluation_type", "TOKEN_STATUS, TOKEN_BUY or TOKEN_SELL"),
            Opt("--passed", "passed", "true or false", _bool),
            CHAIN,
            SEARCH,
            START,
            END,
        ),
        "quantscope fetch evaluations --quant 2 --type TOKEN_BUY --start 2026-09-01 -o -",
        paged=True,
    ),
    "eval-details": Resource(
        "load_eval_details",
        "criterion results of evaluations (one request each)",
        (Opt("evaluation_ids", "evaluation_ids", "evaluation ids", _id, nargs="+"),),
        "quantscope fetch eval-details 101 102 103 -o details.feather",
    ),
    "eval-history": Resource(
        "load_eval_history",
        "every evaluation of the same token by the same quant",
        (Opt("evaluation_id", "evaluation_id", "an evaluation id", _id),),
    ),
    "eval-timeseries": Resource(
        "load_eval_timeseries",
        "evaluation counts over time",
        (QUANT, START, END),
        "quantscope fetch eval-timeseries --quant 1 --start 2026-09-01 --end 2026-10-01 -o -",
    ),
    "eval-count": Resource("load_eval_count", "evaluation counts (one row)", (QUANT, START, END)),
    "ohlcv": Resource(
        "load_ohlcv",
        "candles of a token (index: timestamp, UTC)",
        (
            Opt("token_id", "token_id", "the token's id", _id),
            Opt("--timeframe", "timeframe", "candle width (default 1h)"),
            Opt("--limit", "limit", "candles at most", _id),
        ),
        "quantscope fetch ohlcv 42 --timeframe 5m -o candles.csv",
    ),
    "signals": Resource("load_signals", "alpha signals", (QUANT, CHAIN, SEARCH)),
    "signal-stats": Resource("load_signal_stats", "signal counts by stage", (QUANT, CHAIN, SEARCH)),
    "playbook": Resource(
        "load_playbook",
        "a quant's playbook, long (one row per criterion entry)",
        (Opt("quant_id", "quant_id", "the quant's id", _id),),
        "quantscope fetch playbook 1 -o playbook.parquet",
    ),
    "recommendations": Resource(
        "load_recommendations",
        "the optimizer's recommendations",
        (QUANT, Opt("--applied", "applied", "true or false", _bool)),
    ),
}


def _add_fetch(commands: Subparsers) -> None:
    examples = "\n".join(f"  {r.example}" for r in RESOURCES.values() if r.example)
    fetch = commands.add_parser(
        "fetch",
        help="load a resource into a Parquet, Feather or CSV file, or JSON lines on stdout",
        description="Load a resource (any loader) with its filters and write it out. Quota "
        "rules and the cache apply as in Python: cached pages cost nothing.\n\nexamples:\n"
        + examples,
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
            kwargs: dict[str, Any] = {"help": opt.help, "type": opt.type}
            if opt.nargs:
                kwargs["nargs"] = opt.nargs
            if opt.flag.startswith("-"):
                kwargs["dest"] = opt.kwarg
                kwargs["metavar"] = _METAVARS.get(opt.type, opt.kwarg.split("_")[-1].upper())
            sub.add_argument(opt.flag, **kwargs)
        if resource.paged:
            budget = sub.add_argument_group("quota")
            budget.add_argument("--max-pages", type=_id, help="pages at most")
            budget.add_argument(
                "--confirm", action="store_true", help="spend more than the quota share"
            )
            budget.add_argument("--max-requests", type=_id, help="requests at most")
            budget.add_argument(
                "--partial", action="store_true", help="fetch what fits in the quota"
            )
        sub.add_argument(
            "-o",
            "--output",
            required=True,
            metavar="FILE",
            help="FILE.parquet, FILE.feather, FILE.csv, or - for JSON lines on stdout",
        )
        add_connection_options(sub)
        sub.set_defaults(handler=_fetch, fetch_resource=resource)


def _kwargs(args: argparse.Namespace, resource: Resource) -> dict[str, Any]:
    out: dict[str, Any] = dict(resource.fixed)
    for opt in resource.options:
        value = getattr(args, opt.kwarg)
        if value is not None:
            out[opt.kwarg] = value
    if resource.paged:
        for name in ("max_pages", "max_requests"):
            if getattr(args, name) is not None:
                out[name] = getattr(args, name)
        for name in ("confirm", "partial"):
            if getattr(args, name):
                out[name] = True
    return out


def _output(text: str) -> str:
    if text == "-":
        return text
    suffix = Path(text).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(
            f"-o {text}: unknown format {suffix or '(no suffix)'!r}; "
            f"use {', '.join(FORMATS)} or - for JSON lines on stdout"
        )
    return text


def _fetch(args: argparse.Namespace) -> int:
    import pandas as pd

    import quantscope.loaders as L

    resource: Resource = args.fetch_resource
    target = _output(args.output)
    loader = getattr(L, resource.loader)
    from quantscope._errors import QuantscopeError

    with client_from(args) as client:
        try:
            result = loader(**_kwargs(args, resource), client=client)
        except QuantscopeError:
            raise
        except (TypeError, ValueError) as exc:  # the loader refused the arguments
            raise UsageError(f"fetch {args.resource}: {exc}") from None
    if isinstance(result, pd.Series):  # a one-record answer: one row of typed columns
        frame = result.to_frame().T.infer_objects().reset_index(drop=True)
        frame.attrs = result.attrs
    else:
        frame = result
    write(frame, target)
    prov = frame.attrs.get("quantscope", {})
    where = "stdout" if target == "-" else target
    spent, answers = int(prov.get("requests", 0)), int(prov.get("pages", 0))
    say(
        f"quantscope: {len(frame)} rows x {len(frame.columns)} columns of {args.resource} to "
        f"{where} ({_count(spent, 'request')} spent, {_count(answers, 'answer')} used)"
    )
    return 0


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def write(frame: Any, target: str) -> None:
    """``frame`` to ``target`` by its suffix (see the module docstring); ``-``: stdout."""
    import pandas as pd

    assert isinstance(frame, pd.DataFrame)
    plain = frame if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    if target == "-":
        if len(plain):
            text = plain.to_json(orient="records", lines=True, date_format="iso", date_unit="ms")
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    suffix = Path(target).suffix.lower()
    if suffix == ".parquet":
        frame.to_parquet(target)
    elif suffix == ".feather":
        frame.to_feather(target)
    else:
        plain.to_csv(target, index=False, date_format="%Y-%m-%dT%H:%M:%S.%fZ")


COMMANDS = _add_fetch
