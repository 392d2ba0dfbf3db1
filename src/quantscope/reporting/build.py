"""Gathering a report's data through the loaders, with the quota in view.

``gather(quant_id, ...)`` loads one quant's trades (executed and hypothetical, one load), then
prices everything else the report reads (``qsc.estimate``: the buy evaluations' details, the
evaluations, the playbook, the recommendations, two tokens' candles) and refuses, having sent
nothing more, when the total exceeds the client's share of the quota left
(``Settings.quota_share``) unless ``confirm=True``. ``from_trades(trades, ...)`` starts from a
trades frame already loaded (``df.quant.report``). Both return a ``ReportData``: the frames,
what they cost (requests sent, answers read from the cache) and the data's latest time, which
dates the report (never the wall clock, so the same data gives the same report).

A plan that cannot read the playbook or the optimizer leaves those frames None and says so in
``ReportData.notes``; the sections show the note.

Criterion keys (``criteria``) are checked against the quant's playbook before the trades are
read (``check_criteria``: 1 request, 0 when cached; the same read the report makes later):
a key the playbook lacks is refused with ``UnknownCriterionError``, naming the keys it has,
instead of after every load. A plan that cannot read the playbook leaves the check to the
research section.

An optional ``benchmark`` is checked before anything is sent: a daily returns Series, a
token's candles (a frame of ``load_ohlcv``), or a token id, whose candles are loaded with the
rest (one request, priced with them). It becomes daily returns (``analytics.candle_returns``)
beside the account's in the returns section. ``stages`` (``reporting.stages``) counts each
load as it starts, so a long build shows where it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from quantscope import analytics
from quantscope import backtest as bt
from quantscope import loaders as L
from quantscope._advice import Said
from quantscope._errors import (
    PermissionDeniedError,
    QuotaShareExceededError,
    UnknownCriterionError,
)
from quantscope._http.client import Client, get_default_client
from quantscope._http.estimate import Estimate, estimate
from quantscope._http.quota import share_limit
from quantscope._ids import one_id
from quantscope.reporting.stages import SILENT, Stages

__all__ = [
    "Benchmark",
    "Cost",
    "ReportData",
    "check_benchmark",
    "check_criteria",
    "from_trades",
    "gather",
]

#: What a report takes as its benchmark: daily returns, a token's candles, or a token id.
Benchmark: TypeAlias = pd.Series | pd.DataFrame | int | None


@dataclass(frozen=True)
class Cost:
    """What the report's loads cost: per endpoint, requests sent and answers from the cache."""

    loads: tuple[tuple[str, int, int], ...] = ()  # (endpoint, sent, from cache)

    @property
    def sent(self) -> int:
        return sum(s for _, s, _ in self.loads)

    @property
    def cached(self) -> int:
        return sum(c for _, _, c in self.loads)

    def add(self, frame: Any) -> Cost:
        """This cost plus the provenance of a loaded frame (``attrs["quantscope"]``)."""
        prov = getattr(frame, "attrs", {}).get("quantscope") or {}
        if not prov:
            return self
        sent = int(prov.get("requests", 0))
        answers = int(prov.get("pages", 0))
        return Cost((*self.loads, (str(prov.get("endpoint")), sent, max(0, answers - sent))))


@dataclass(frozen=True)
class ReportData:
    """Everything a report shows, for one quant (or one trades frame).

    ``trades`` is the frame as given or loaded (executed and, when loaded by ``gather``,
    hypothetical trades: the sections split them with ``analytics.select_execution``);
    ``features`` the executed closed trades with their criterion values
    (``backtest.trade_features``); ``details`` the buy evaluations' criterion results;
    ``evaluations``, ``playbook``, ``recommendations`` and ``candles`` may be None (not
    loaded, or the plan cannot read them: ``notes`` says). ``as_of`` is the data's latest time.
    """

    title: str
    quant_id: int | None
    trades: pd.DataFrame
    as_of: pd.Timestamp | None
    criteria: tuple[str, ...] = ()
    features: pd.DataFrame | None = None
    details: pd.DataFrame | None = None
    evaluations: pd.DataFrame | None = None
    playbook: pd.DataFrame | None = None
    recommendations: pd.DataFrame | None = None
    candles: tuple[tuple[str, pd.Series, pd.DataFrame], ...] = ()  # (label, trade, ohlcv)
    cost: Cost = field(default_factory=Cost)
    plan: str | None = None
    notes: tuple[str, ...] = ()
    benchmark: pd.Series | None = None  # daily returns (analytics.returns' definition)
    benchmark_label: str = ""

    @property
    def executed(self) -> pd.DataFrame:
        """The executed trades (realised)."""
        return analytics.select_execution(self.trades, "executed")

    @property
    def hypothetical(self) -> pd.DataFrame:
        """The trades never executed (their PnL is a shadow outcome)."""
        return analytics.select_execution(self.trades, "hypothetical")


def latest_time(trades: pd.DataFrame) -> pd.Timestamp | None:
    """The data's latest time: the last close, or an open position's mark if later."""
    if trades.empty:
        return None
    closed = pd.to_datetime(trades["closed_at"], utc=True)
    marks = pd.to_datetime(trades["opened_at"], utc=True) + pd.to_timedelta(
        trades["duration_s"], unit="s"
    )
    latest = pd.concat([closed, marks]).max()
    return None if pd.isna(latest) else pd.Timestamp(latest)


def _closed_ids(executed: pd.DataFrame) -> list[int]:
    closed = executed[(executed["status"] == "Closed").fillna(False).to_numpy(bool)]
    ids = closed["evaluation_id"].dropna().to_numpy(dtype=np.int64)
    return [int(i) for i in pd.unique(ids)]


def _example_trades(executed: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """The best and the worst closed executed trade (by PnL, ties by trade id)."""
    closed = executed[(executed["status"] == "Closed").fillna(False).to_numpy(bool)]
    closed = closed[closed["pnl_usd"].notna() & closed["token_id"].notna()]
    if closed.empty:
        return []
    ordered = closed.sort_values(["pnl_usd", "trade_id"], kind="stable")
    best, worst = ordered.iloc[-1], ordered.iloc[0]
    return [("best", best)] + ([("worst", worst)] if worst["trade_id"] != best["trade_id"] else [])


def check_benchmark(benchmark: Benchmark) -> Benchmark:
    """The benchmark as given, checked before anything is sent: ValueError in one line
    otherwise. A token id is an int (a numpy integer or an int-valued string too).
    """
    if benchmark is None or isinstance(benchmark, pd.Series | pd.DataFrame):
        if isinstance(benchmark, pd.Series | pd.DataFrame) and not isinstance(
            benchmark.index, pd.DatetimeIndex
        ):
            raise ValueError(
                "benchmark= needs a DatetimeIndex: daily returns by UTC day, or a token's "
                "candles (load_ohlcv)"
            )
        return benchmark
    try:
        return one_id(benchmark, "benchmark")
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"benchmark= is daily returns (a Series), a token's candles (load_ohlcv) or a token "
            f"id, got {benchmark!r}"
        ) from exc


def _benchmark_label(benchmark: pd.Series | pd.DataFrame) -> str:
    params = benchmark.attrs.get("quantscope", {}).get("params") or {}
    token = params.get("tokenId") if isinstance(params, dict) else None
    if isinstance(benchmark, pd.DataFrame):
        return f"token {token}" if token is not None else "the candles given"
    return str(benchmark.name) if benchmark.name not in (None, "return") else "the series given"


def _benchmark_returns(benchmark: pd.Series | pd.DataFrame) -> pd.Series:
    if isinstance(benchmark, pd.DataFrame):
        return analytics.candle_returns(benchmark)
    return benchmark


# One load the report makes: (name, loader, positional args, keyword args of the load).
Load = tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]]
# Loads that may send many requests (they take confirm=; the others send one at most).
_MANY = {"details", "evaluations"}


def _check_share(
    what: str,
    priced: Sequence[Estimate],
    client: Client,
    confirm: bool,
    ceiling: tuple[int, int] | None = None,
) -> bool:
    """Refuse (``QuotaShareExceededError``) loads whose total exceeds the share, or, given a
    ``ceiling`` (``max_requests``, requests already sent), that ceiling; returns whether they
    may then be sent with ``confirm=True`` (the total was checked).
    """
    needed = sum(e.requests for e in priced)
    quota = client.quota
    if ceiling is not None:
        limit, sent = ceiling
        sent += sum(e.probed for e in priced)  # a paged load's first page, sent to price it
        if needed + sent <= limit:
            return True
        raise QuotaShareExceededError(
            f"the report of {what} needs {needed + sent} requests, more than its ceiling of "
            f"{limit} (max_requests): sent {sent}; raise the ceiling to {needed + sent}",
            endpoint="report",
            needed=needed,
            fetched=sent,
            remaining=quota.remaining or 0,
            limit=quota.limit,
            reset=quota.reset,
            reserve=client.settings.quota_reserve,
            share=client.settings.quota_share,
            ceiling=limit,
        )
    if quota.remaining is None:
        return confirm  # nothing known yet: each loader applies the rule itself
    share = client.settings.quota_share
    if needed > share_limit(share, quota.remaining) and not confirm:
        parts = ", ".join(f"{e.endpoint} {e.requests}" for e in priced if e.requests)
        raise QuotaShareExceededError(
            Said(
                "the report of {what} needs {needed} more requests ({parts}), more than {pct} "
                "of the {left} left: {advice} to spend them",
                ("confirm_report",),
                {
                    "what": what,
                    "needed": needed,
                    "parts": parts,
                    "pct": f"{share:.0%}",
                    "left": quota.remaining,
                },
            ),
            endpoint="report",
            needed=needed,
            fetched=0,
            remaining=quota.remaining,
            limit=quota.limit,
            reset=quota.reset,
            reserve=client.settings.quota_reserve,
            share=share,
        )
    return True


def _load_all(
    what: str,
    plan: Sequence[Load],
    client: Client,
    confirm: bool,
    stages: Stages = SILENT,
    ceiling: tuple[int, int] | None = None,
) -> tuple[dict[str, Any], Cost, list[str]]:
    """Price the loads, refuse over the share, then load: (frames by name, cost, notes).

    A load the plan does not allow (``PermissionDeniedError``) is left out with a note.
    """
    stages.more(len(plan) + 1)
    stages.step("pricing the loads")
    priced, allowed = [], []
    notes: list[str] = []
    for load in plan:
        name, loader, args, kwargs = load
        try:
            priced.append(estimate(loader, *args, probe=name in _MANY, client=client, **kwargs))
        except PermissionDeniedError as exc:
            notes.append(f"{name}: not available on this plan ({exc})")
            continue
        allowed.append(load)
    ok = _check_share(what, priced, client, confirm, ceiling)
    found: dict[str, Any] = {}
    cost = Cost()
    stages.more(len(allowed) - len(plan))
    for name, loader, args, kwargs in allowed:
        stages.step(name)
        extra = {"confirm": ok} if name in _MANY else {}
        try:
            found[name] = loader(*args, client=client, **kwargs, **extra)
        except PermissionDeniedError as exc:
            notes.append(f"{name}: not available on this plan ({exc})")
            continue
        cost = cost.add(found[name])
    return found, cost, notes


def check_criteria(
    quant_id: int, criteria: Sequence[str], client: Client, *, param: str = "criteria"
) -> pd.DataFrame | None:
    """The quant's playbook once every key of ``criteria`` is one of its criteria (1 request,
    0 when cached); None, unchecked, when the plan cannot read the playbook.

    Raises:
        UnknownCriterionError: keys the playbook lacks (``param`` names the argument in the
            message: ``--criteria`` on the command line).
    """
    try:
        playbook = L.load_playbook(quant_id, client=client)
    except PermissionDeniedError:
        return None
    known = tuple(sorted({str(k) for k in playbook["criterion"].dropna()}))
    unknown = tuple(dict.fromkeys(c for c in criteria if c not in known))
    if unknown:
        raise UnknownCriterionError(param, unknown, known, quant_id)
    return playbook


def _quant_loads(quant_id: int) -> list[Load]:
    return [
        ("evaluations", L.load_evaluations, (quant_id,), {}),
        ("playbook", L.load_playbook, (quant_id,), {}),
        ("recommendations", L.load_recommendations, (quant_id,), {}),
    ]


def gather(
    quant_id: Any,
    *,
    criteria: Sequence[str] = (),
    client: Client | None = None,
    confirm: bool = False,
    benchmark: Benchmark = None,
    stages: Stages = SILENT,
    max_requests: int | None = None,
) -> ReportData:
    """Load what the report of quant ``quant_id`` shows (module docstring for the cost);
    ``max_requests``: a ceiling on the whole report's requests instead of the share.
    """
    quant = one_id(quant_id, "quant_id")
    checked = check_benchmark(benchmark)
    c = client if client is not None else get_default_client()
    spent = Cost()
    if criteria:  # before the trades: a typo costs the playbook's read, not the report's
        spent = spent.add(check_criteria(quant, criteria, c))
    stages.step("trades")
    budget: dict[str, Any] = {"confirm": confirm}
    if max_requests is not None:
        budget["max_requests"] = max_requests - spent.sent
    trades = L.load_trades(quant, trading_status="all", client=c, **budget)
    return from_trades(
        trades,
        criteria=criteria,
        client=c,
        confirm=confirm,
        quant_id=quant,
        benchmark=checked,
        stages=stages,
        max_requests=max_requests,
        before=spent,
    )


def from_trades(
    trades: pd.DataFrame,
    *,
    criteria: Sequence[str] = (),
    client: Client | None = None,
    confirm: bool = False,
    quant_id: int | None = None,
    load: bool = True,
    benchmark: Benchmark = None,
    stages: Stages = SILENT,
    max_requests: int | None = None,
    before: Cost | None = None,
) -> ReportData:
    """The report's data starting from a trades frame; with ``load`` (default) the rest is
    loaded for the frame's quant (the playbook, recommendations and evaluations need exactly
    one quant in the frame), priced first and refused over the quota share as in ``gather``.
    A token id as ``benchmark`` needs ``load`` (its candles are loaded). ``before``: what the
    report already loaded besides the frame (``gather``'s criteria check), counted in its cost.
    """
    checked = check_benchmark(benchmark)
    if isinstance(checked, int) and not load:
        raise ValueError(
            "a token id as benchmark= is loaded, and load=False sends nothing: pass the "
            "token's candles (load_ohlcv) or daily returns instead"
        )
    names = sorted({str(n) for n in trades.get("quant_name", pd.Series()).dropna().unique()})
    title = ", ".join(names) if names else "trades"
    cost = (before or Cost()).add(trades)
    given = checked if isinstance(checked, pd.Series | pd.DataFrame) else None
    base = ReportData(
        title,
        quant_id,
        trades,
        latest_time(trades),
        tuple(criteria),
        cost=cost,
        benchmark=_benchmark_returns(given) if given is not None else None,
        benchmark_label=_benchmark_label(given) if given is not None else "",
    )
    if not load:
        return base
    c = client if client is not None else get_default_client()
    executed = analytics.select_execution(trades, "executed")
    examples = _example_trades(executed)
    plan: list[Load] = [("details", L.load_eval_details, (_closed_ids(executed),), {})]
    plan += [
        (f"candles {label}", L.load_ohlcv, (int(row["token_id"]),), {}) for label, row in examples
    ]
    if isinstance(checked, int):
        plan.append(("benchmark", L.load_ohlcv, (checked,), {}))
    if quant_id is not None:
        plan += _quant_loads(quant_id)
    what = f"quant {quant_id}" if quant_id is not None else title

    def ceiling(sent: int) -> tuple[int, int] | None:
        return None if max_requests is None else (max_requests, sent)

    found, spent, notes = _load_all(what, plan, c, confirm, stages, ceiling(cost.sent))
    details = found["details"]
    if quant_id is None:  # a frame of one quant: its id is in the details
        quants = details["quant_id"].dropna().unique() if len(details) else []
        if len(quants) == 1:
            quant_id = int(quants[0])
            more, extra, more_notes = _load_all(
                f"quant {quant_id}",
                _quant_loads(quant_id),
                c,
                confirm,
                stages,
                ceiling(cost.sent + spent.sent),
            )
            found.update(more)
            spent = Cost(spent.loads + extra.loads)
            notes += more_notes
        else:
            notes.append(
                "the frame holds several quants (or none with details): the playbook, "
                "recommendations and evaluations need one"
            )
    playbook = found.get("playbook")
    loaded = found.get("benchmark")
    bench = loaded if loaded is not None else given
    stages.step("criterion values of the trades")
    features = bt.trade_features(
        executed, details=details, playbook={quant_id: playbook} if playbook is not None else None
    )
    return ReportData(
        title=title,
        quant_id=quant_id,
        trades=trades,
        as_of=base.as_of,
        criteria=tuple(criteria),
        features=features,
        details=details,
        evaluations=found.get("evaluations"),
        playbook=playbook,
        recommendations=found.get("recommendations"),
        candles=tuple(
            (label, row, found[f"candles {label}"])
            for label, row in examples
            if f"candles {label}" in found
        ),
        cost=Cost(cost.loads + spent.loads),
        plan=c.quota.plan,
        notes=tuple(notes),
        benchmark=_benchmark_returns(bench) if bench is not None else None,
        benchmark_label=_benchmark_label(bench) if bench is not None else "",
    )
