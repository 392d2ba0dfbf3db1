"""Incremental, quota-aware sync: ``qsc.sync(catalog, resources=..., quant_id=..., start=...)``.

A sync is a list of tasks, one per (resource, quant) (eval details: per month; candles: per
quant's tokens), each one load through the ordinary loaders, so the same client, HTTP cache,
frame cache, quota rules and progress bars apply. Each task writes its partitions' new files
and then swaps the manifest (``manifest.Store.save``): a task is in the catalog whole or not
at all. What is fetched (docs/catalog.md, "Sync rules"):

* ``trades``, ``evaluations`` (by quant and month): a month is *sealed* once it ended (plus
  ``Resource.settle``) before a sync and none of its trades was open; sealed months are never
  fetched again. The load asks for every month from the first unsealed one (or the month
  after the last sealed one), whole months (a window is widened to them).
* ``eval_details``: the criterion results behind the quant's stored trades (the evaluation
  that bought), by the month of that evaluation: only ids the catalog lacks (immutable).
* ``ohlcv``: the candles of the tokens the quant traded; a token whose trades are all closed
  and whose stored candles reach past the last close is sealed.
* ``signals``, ``playbook``, ``recommendations``: snapshotted, one partition per day (a second
  sync on the same day replaces that day's snapshot).

Quota: the share rule applies to each load as in the loaders (``confirm=True`` lifts it);
``max_requests`` caps the whole sync (each load gets what is left and is refused before it
sends when it needs more). A refused or failed task stops the sync with the loader's error;
the manifest then says which tasks are done (run ``status`` ``quota_stopped`` or
``interrupted``; ``running`` when the process was killed), and the same ``sync`` call resumes
the run: it skips the done tasks (and uses
the run's snapshot day), so the catalog ends as an uninterrupted run would have made it.
``dry_run=True`` sends nothing and returns what each task would cost (``qsc.estimate``).

Damage (``catalog.integrity``): a sync first checks every listed file cheaply (confined,
size, footer). A damaged partition in the sync's scope is fetched again: a damaged month as
if unsealed (a sealed one alone, as its own window), damaged details, candles and today's
snapshot as if absent; a damaged snapshot of a past day cannot be fetched again and is
dropped from the manifest. Tasks a resumed run had done over damaged partitions run again.
What stays damaged (another quant, another window) is named in the report. A file that cannot
be written (a full disk: ``CatalogWriteError``) stops the sync as any error does; the files
the failed task wrote are removed before the run is recorded, so the space they took helps
the manifest be written.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import partial
from typing import Any

import pandas as pd

import quantscope.loaders as L
from quantscope._endpoints import DETAILS, OHLCV
from quantscope._errors import (
    CatalogIntegrityError,
    CatalogWriteError,
    ConfigurationError,
    QuotaError,
    QuotaShareExceededError,
)
from quantscope._http.client import Client
from quantscope._http.estimate import Estimate, estimate
from quantscope._http.quota import share_limit
from quantscope._ids import IdArg, many_ids
from quantscope._progress import progress
from quantscope._reprs import sync_report_html
from quantscope._typed.frames import with_categories
from quantscope.catalog.layout import RESOURCES, Resource
from quantscope.catalog.lock import sync_lock
from quantscope.catalog.manifest import MANIFEST, Manifest, Store, is_temporary, now_iso
from quantscope.catalog.read import month_of, parse_time, read_resource
from quantscope.catalog.repair import damaged_files, drop_past_snapshots, undo_damaged_tasks
from quantscope.catalog.write import partition_dir, write_partition
from quantscope.loaders._base import client_or_default
from quantscope.loaders._empty import expect_empty

__all__ = ["DEFAULT_RESOURCES", "SyncReport", "sync"]

#: What ``sync`` fetches when ``resources`` is not given (details and candles cost one
#: request per evaluation or token: ask for them by name).
DEFAULT_RESOURCES = ("trades", "evaluations", "signals", "playbook", "recommendations")
_ORDER = (
    "trades",
    "evaluations",
    "eval_details",
    "ohlcv",
    "signals",
    "playbook",
    "recommendations",
)
_SNAPSHOT_LOADERS: dict[str, Callable[..., pd.DataFrame]] = {
    "signals": L.load_signals,
    "playbook": L.load_playbook,
    "recommendations": L.load_recommendations,
}


@dataclass
class SyncReport:
    """What a sync did (or, with ``dry_run``, would do): per task its requests (estimated
    for a dry run), rows added and updated, and how the run ended.
    """

    catalog: str
    run: int | None
    status: str
    dry_run: bool
    tasks: list[dict[str, Any]] = field(default_factory=list)
    quota: str = ""
    #: Files found damaged and fetched again by this sync (relative to the catalog).
    repaired: list[str] = field(default_factory=list)
    #: Damaged snapshots of past days, dropped from the manifest (they cannot be fetched again).
    dropped: list[str] = field(default_factory=list)
    #: Files still damaged after the sync: outside what it asked for (another quant, window).
    damaged: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(int(t.get("requests") or 0) for t in self.tasks)

    @property
    def rows_added(self) -> int:
        return sum(int(t.get("added") or 0) for t in self.tasks)

    @property
    def rows_updated(self) -> int:
        return sum(int(t.get("updated") or 0) for t in self.tasks)

    def __str__(self) -> str:
        head = (
            f"sync of {self.catalog} (dry run): would send {self.requests} requests"
            + ("" if all(t.get("exact", True) for t in self.tasks) else " or more")
            if self.dry_run
            else f"sync of {self.catalog}, run {self.run}: {self.status}, {self.requests} "
            f"requests, {self.rows_added} rows added, {self.rows_updated} updated"
        )
        lines = [head, f"  quota: {self.quota}"]
        for t in self.tasks:
            note = f" ({t['note']})" if t.get("note") else ""
            rows = (
                ""
                if self.dry_run
                else f", {t.get('added', 0)} added, {t.get('updated', 0)} updated"
            )
            lines.append(f"  {t['task']}: {t.get('requests', 0)} requests{rows}{note}")
        for label, files in (
            ("fetched again (damaged)", self.repaired),
            ("dropped (a damaged past snapshot)", self.dropped),
            ("still damaged (outside this sync: sync its quant and window)", self.damaged),
        ):
            lines += [f"  {label}: {f}" for f in files]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return sync_report_html(self)


class _Budget:
    """The sync's ``max_requests`` ceiling and what its loads spent."""

    def __init__(self, ceiling: int | None, client: Client, confirm: bool) -> None:
        self.ceiling = ceiling
        self.spent = 0
        self.client = client
        self.confirm = confirm

    def left(self) -> int | None:
        return None if self.ceiling is None else self.ceiling - self.spent

    def check(self, needed: int, endpoint: str) -> None:
        """Refuse ``needed`` single requests the ceiling or the share rule does not allow."""
        quota = self.client.quota
        remaining = quota.remaining if quota.remaining is not None else 0
        fields: dict[str, Any] = {
            "endpoint": endpoint,
            "needed": needed,
            "fetched": 0,
            "remaining": remaining,
            "limit": quota.limit,
            "reset": quota.reset,
            "reserve": self.client.settings.quota_reserve,
            "share": self.client.settings.quota_share,
        }
        left = self.left()
        if left is not None and needed > left:
            raise QuotaShareExceededError(
                f"{endpoint}: this sync needs {needed} more requests, more than the "
                f"{left} its max_requests={self.ceiling} leaves: sent nothing more; raise "
                "max_requests, or run the same sync again to resume",
                **fields,
            )
        share = self.client.settings.quota_share
        if (
            left is None
            and not self.confirm
            and quota.remaining is not None
            and needed > share_limit(share, quota.remaining)
        ):
            raise QuotaShareExceededError(
                f"{endpoint}: this sync needs {needed} requests, more than {share:.0%} of the "
                f"{quota.remaining} left: sent nothing more; pass confirm=True (or "
                f"max_requests=) to spend them",
                **fields,
            )

    def spend_of(self, frame: pd.DataFrame) -> int:
        spent = int((frame.attrs.get("quantscope") or {}).get("requests") or 0)
        self.spent += spent
        return spent


@dataclass
class _Context:
    store: Store
    manifest: Manifest
    client: Client
    budget: _Budget
    now: pd.Timestamp
    snapshot: str
    window: tuple[pd.Timestamp | None, pd.Timestamp | None]
    timeframe: str
    run: dict[str, Any]
    replaced: list[str] = field(default_factory=list)
    #: files found damaged when the sync began, not yet written again
    damaged: set[str] = field(default_factory=set)
    #: files written by the task under way (removed when it fails)
    written: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    def whole(self, record: Mapping[str, Any] | None) -> bool:
        """Whether ``record``'s file can be read (listed and not found damaged)."""
        return record is not None and record.get("file") not in self.damaged

    def stored(self, resource: Resource, record: Mapping[str, Any] | None) -> pd.DataFrame | None:
        """The frame of a held partition, or None when there is none or it is damaged (a
        damage the checks at the start could not see, found on reading, counts as one).
        """
        if record is None or not self.whole(record):
            return None
        try:
            return read_resource(self.store, resource, [record])
        except CatalogIntegrityError:
            self.damaged.add(str(record.get("file")))
            return None

    def kw(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "confirm": self.budget.confirm,
            "max_requests": self.budget.left(),
        }


# ----- helpers -----


def _month_start(month: str) -> pd.Timestamp:
    return pd.Timestamp(f"{month}-01", tz="UTC")


def _next_month(month: str) -> pd.Timestamp:
    return _month_start(month) + pd.offsets.MonthBegin(1)


def _row_digests(frame: pd.DataFrame, key: Sequence[str]) -> dict[Any, int]:
    """One digest per row (by its key columns), to tell added from updated rows."""
    if not len(frame):
        return {}
    flat = frame.reset_index() if frame.index.name is not None else frame
    digests = pd.util.hash_pandas_object(flat.astype("str"), index=False).to_numpy()
    keys = list(zip(*(flat[k].tolist() for k in key), strict=True))
    return dict(zip(keys, digests.tolist(), strict=True))


def _changes(old: pd.DataFrame | None, new: pd.DataFrame, key: Sequence[str]) -> tuple[int, int]:
    """(rows added, rows updated) from ``old`` to ``new``."""
    if old is None:
        return len(new), 0
    if not key:  # a snapshot: all its rows are new, or an update of the same day's
        same = old.reset_index().astype("str").equals(new.reset_index().astype("str"))
        return 0, 0 if same else len(new)
    before, after = _row_digests(old, key), _row_digests(new, key)
    added = sum(1 for k in after if k not in before)
    updated = sum(1 for k, d in after.items() if k in before and before[k] != d)
    return added, updated


def _put(
    ctx: _Context,
    resource: Resource,
    keys: dict[str, Any],
    frame: pd.DataFrame,
    source: Any,
    **extra: Any,
) -> tuple[int, int]:
    """Write one partition's new file (when its rows changed) and record it in the manifest
    in memory (saved by the caller, after the task's every file is written).
    """
    name = partition_dir(resource, keys)
    held = ctx.manifest.partitions.get(name)
    old = ctx.stored(resource, held)
    added, updated = _changes(old, frame, resource.key)
    record = write_partition(ctx.store, resource, keys, frame, source)
    ctx.written.append(record["file"])
    if held and held["file"] != record["file"]:
        ctx.replaced.append(held["file"])  # never a file outside the catalog (Store.remove)
    if held and not ctx.whole(held):
        ctx.damaged.discard(held["file"])
        ctx.repaired.append(held["file"])
    record.update(synced_at=now_iso(ctx.now.to_pydatetime()), **extra)
    ctx.manifest.partitions[name] = record
    return added, updated


def _held(ctx: _Context, resource: str, quant: int) -> dict[str, dict[str, Any]]:
    """The month partitions of ``quant``: month -> record."""
    return {
        p["keys"]["month"]: p
        for p in ctx.manifest.of(resource).values()
        if p["keys"]["quant_id"] == str(quant)
    }


def _in_window(ctx: _Context, month: str) -> bool:
    lo, hi = ctx.window
    return (lo is None or month >= month_of(lo)) and (hi is None or month <= month_of(hi))


Span = tuple[pd.Timestamp | None, pd.Timestamp | None]


def _month_spans(ctx: _Context, resource: str, quant: int) -> list[Span]:
    """The windows a month task loads, (since, until) each: every damaged sealed month
    before the ordinary window alone, then the ordinary window (``_month_span``).
    """
    held = {m: p for m, p in _held(ctx, resource, quant).items() if _in_window(ctx, m)}
    span = _month_span(ctx, resource, quant)
    since = span[0] if span is not None else None
    spans: list[Span] = [
        (_month_start(m), _next_month(m) - pd.Timedelta(milliseconds=1))
        for m, p in sorted(held.items())
        if p.get("sealed")
        and not ctx.whole(p)
        and (span is None or (since is not None and _month_start(m) < since))
    ]
    return spans + ([span] if span is not None else [])


def _month_span(ctx: _Context, resource: str, quant: int) -> Span | None:
    """The months a month task loads: (since, until) or None when every one is sealed and
    the window ends before anything new.
    """
    held = {m: p for m, p in _held(ctx, resource, quant).items() if _in_window(ctx, m)}
    unsealed = sorted(m for m, p in held.items() if not p.get("sealed"))
    sealed = sorted(m for m, p in held.items() if p.get("sealed"))
    lo, hi = ctx.window
    since: pd.Timestamp | None
    if unsealed:
        since = _month_start(unsealed[0])
    elif sealed:
        since = _next_month(sealed[-1])
    else:
        since = _month_start(month_of(lo)) if lo is not None else None
    if lo is not None and since is not None:
        since = max(since, _month_start(month_of(lo)))
    until = _next_month(month_of(hi)) - pd.Timedelta(milliseconds=1) if hi is not None else None
    if since is not None and (since > ctx.now or (until is not None and since > until)):
        return None
    return since, until


def _as_arg(stamp: pd.Timestamp | None) -> datetime | None:
    return None if stamp is None else stamp.to_pydatetime()


# ----- tasks -----


def _month_task(ctx: _Context, name: str, quant: int) -> dict[str, Any]:
    spans = _month_spans(ctx, name, quant)
    if not spans:
        return {"requests": 0, "note": "every month sealed"}
    spent = added = updated = partitions = 0
    for since, until in spans:
        s, a, u, n = _month_load(ctx, name, quant, since, until)
        spent, added, updated, partitions = spent + s, added + a, updated + u, partitions + n
    return {"requests": spent, "added": added, "updated": updated, "partitions": partitions}


def _month_load(
    ctx: _Context, name: str, quant: int, since: pd.Timestamp | None, until: pd.Timestamp | None
) -> tuple[int, int, int, int]:
    """One load of a month task: its months' partitions written; (requests, added, updated,
    partitions).
    """
    resource = RESOURCES[name]
    loader = L.load_trades if name == "trades" else L.load_evaluations
    frame = loader(quant, start=_as_arg(since), end=_as_arg(until), **ctx.kw())
    spent = ctx.budget.spend_of(frame)
    months = frame[resource.time].dt.strftime("%Y-%m").to_numpy(object)
    held = _held(ctx, name, quant)
    first = month_of(since) if since is not None else ""
    last = month_of(until) if until is not None else "9999-99"
    todo = sorted(
        {*months.tolist(), *(m for m in held if first <= m <= last and _in_window(ctx, m))}
    )
    added = updated = 0
    for month in todo:
        rows = frame[months == month].reset_index(drop=True)
        open_rows = bool((rows["status"] == "Open").any()) if "status" in rows else False
        settled = _next_month(month) + resource.settle <= ctx.now
        source = {
            "endpoint": frame.attrs.get("quantscope", {}).get("endpoint"),
            "quant_id": quant,
            "month": month,
        }
        a, u = _put(
            ctx,
            resource,
            {"quant_id": quant, "month": month},
            rows,
            source,
            sealed=bool(settled and not open_rows),
        )
        added, updated = added + a, updated + u
    return spent, added, updated, len(todo)


def _trades_of(ctx: _Context, quant: int) -> pd.DataFrame:
    """The quant's stored trades in the window (what details and candles are planned from);
    damaged ones are fetched again only by a sync that asks for trades: it says so.
    """
    parts = [p for p in _held(ctx, "trades", quant).values() if _in_window(ctx, p["keys"]["month"])]
    try:
        return read_resource(ctx.store, RESOURCES["trades"], parts)
    except CatalogIntegrityError as exc:
        raise CatalogIntegrityError(
            f"catalog {ctx.store.url}: the stored trades of quant {quant} that eval_details and "
            f"ohlcv are planned from are damaged ({', '.join(exc.files)}): sync with "
            "resources including 'trades' to fetch them again",
            catalog=exc.catalog,
            files=exc.files,
            problems=exc.problems,
        ) from None


def _details_plan(ctx: _Context, quant: int) -> dict[str, list[int]]:
    """month -> the evaluation ids behind the quant's stored trades the catalog lacks."""
    trades = _trades_of(ctx, quant)
    if trades is None or not len(trades):
        return {}
    bought = trades[trades["evaluation_id"].notna()]
    when = bought["evaluated_at"].fillna(bought["opened_at"])
    months = when.dt.strftime("%Y-%m").to_numpy(object)
    held = _held(ctx, "eval_details", quant)
    todo: dict[str, list[int]] = {}
    for month in sorted(set(months.tolist())):
        ids = sorted({int(i) for i in bought["evaluation_id"][months == month]})
        part = held.get(month)
        have: set[int] = set()
        stored = ctx.stored(RESOURCES["eval_details"], part)
        if part is not None and stored is not None:
            have = {int(i) for i in stored["evaluation_id"].dropna()} | set(part.get("empty", ()))
        missing = [i for i in ids if i not in have]
        if missing:
            todo[month] = missing
    return todo


def _details_task(ctx: _Context, quant: int, month: str, ids: list[int]) -> dict[str, Any]:
    resource = RESOURCES["eval_details"]
    frame = L.load_eval_details(ids, **ctx.kw())
    spent = ctx.budget.spend_of(frame)
    held = _held(ctx, "eval_details", quant).get(month)
    old = ctx.stored(resource, held)
    merged = frame if old is None else pd.concat([old, frame], ignore_index=True)
    merged = _recategorise(merged, resource)
    got = set(frame["evaluation_id"].dropna().astype(int).tolist())
    empty = sorted({*(held or {}).get("empty", ()), *(i for i in ids if i not in got)})
    all_ids = merged["evaluation_id"].dropna().astype(int)
    span = [int(all_ids.min()), int(all_ids.max())] if len(all_ids) else None
    if empty:
        span = [min([*(span or []), *empty]), max([*(span or []), *empty])]
    source = {"endpoint": DETAILS.path, "quant_id": quant, "month": month}
    _put(
        ctx,
        resource,
        {"quant_id": quant, "month": month},
        merged,
        source,
        sealed=True,
        ids=span,
        empty=empty,
    )
    return {"requests": spent, "added": len(frame), "updated": 0}


def _recategorise(frame: pd.DataFrame, resource: Resource) -> pd.DataFrame:
    fixed = {c.name: c.categories for c in resource.spec.columns}
    for name in frame.columns:
        if isinstance(frame[name].dtype, pd.CategoricalDtype):
            values = frame[name].astype("object")
            cats = sorted({v for v in values.tolist() if v is not None and v == v})
            column = pd.Categorical(values, categories=pd.Index(cats, dtype="str"))
            frame[name] = with_categories(column, fixed.get(name, ()))
    return frame


def _tokens_plan(ctx: _Context, quant: int) -> list[tuple[int, pd.Timestamp | None]]:
    """(token, last close) of the quant's traded tokens whose candles are not sealed."""
    trades = _trades_of(ctx, quant)
    if trades is None or not len(trades):
        return []
    todo = []
    for token, rows in trades.groupby("token_id", sort=True, observed=True):
        keys = {"timeframe": ctx.timeframe, "token_id": int(token)}
        held = ctx.manifest.partitions.get(partition_dir(RESOURCES["ohlcv"], keys))
        if held is None or not held.get("sealed") or not ctx.whole(held):
            closed = rows["closed_at"].max() if (rows["status"] == "Closed").all() else None
            todo.append((int(token), None if pd.isna(closed) else closed))
    return todo


def _ohlcv_task(ctx: _Context, quant: int) -> dict[str, Any]:
    resource = RESOURCES["ohlcv"]
    todo = _tokens_plan(ctx, quant)
    ctx.budget.check(len(todo), OHLCV.path)
    spent = added = updated = 0
    with progress(len(todo), "candles", enabled=ctx.client.settings.progress) as bar:
        for token, last_close in todo:
            frame = L.load_ohlcv(token, ctx.timeframe, client=ctx.client)
            spent += ctx.budget.spend_of(frame)
            keys = {"timeframe": ctx.timeframe, "token_id": token}
            held = ctx.manifest.partitions.get(partition_dir(resource, keys))
            old = ctx.stored(resource, held)
            if old is not None:
                frame = pd.concat([old[~old.index.isin(frame.index)], frame]).sort_index()
            sealed = last_close is not None and len(frame) > 0 and frame.index.max() >= last_close
            source = {"endpoint": OHLCV.path, "token_id": token, "timeframe": ctx.timeframe}
            a, u = _put(ctx, resource, keys, frame, source, sealed=bool(sealed))
            added, updated = added + a, updated + u
            bar.update(1)
    return {"requests": spent, "added": added, "updated": updated, "partitions": len(todo)}


def _snapshot_task(ctx: _Context, name: str, quant: int) -> dict[str, Any]:
    ctx.budget.check(1, name)
    frame = _SNAPSHOT_LOADERS[name](quant, client=ctx.client)
    spent = ctx.budget.spend_of(frame)
    keys = {"quant_id": quant, "snapshot": ctx.snapshot}
    source = {"endpoint": frame.attrs.get("quantscope", {}).get("endpoint"), "quant_id": quant}
    added, updated = _put(
        ctx, RESOURCES[name], keys, frame, source, snapshot_at=ctx.run["started_at"]
    )
    return {"requests": spent, "added": added, "updated": updated}


# ----- planning -----


def _tasks(
    ctx: _Context, resources: Sequence[str], quants: Sequence[int]
) -> list[tuple[str, Callable[[], dict[str, Any]]]]:
    """The run's tasks, in order: (id, what runs it). Detail and candle tasks are planned
    when reached (they depend on the trades the same run stored).
    """
    tasks: list[tuple[str, Callable[[], dict[str, Any]]]] = []
    for quant in quants:
        for name in resources:
            tid = f"{name}:quant_id={quant}"
            job: Callable[[], dict[str, Any]]
            if name in ("trades", "evaluations"):
                job = partial(_month_task, ctx, name, quant)
            elif name == "ohlcv":
                job = partial(_ohlcv_task, ctx, quant)
            elif name == "eval_details":
                job = partial(dict, expand=quant)
            else:
                job = partial(_snapshot_task, ctx, name, quant)
            tasks.append((tid, job))
    return tasks


def _estimate_task(ctx: _Context, name: str, quant: int) -> tuple[int, bool, str]:
    """(requests, exact, note) a task would send, sending nothing."""

    def cost(est: Estimate) -> tuple[int, bool]:
        return est.requests, est.exact

    c = ctx.client
    if name in ("trades", "evaluations"):
        spans = _month_spans(ctx, name, quant)
        if not spans:
            return 0, True, "every month sealed"
        loader = L.load_trades if name == "trades" else L.load_evaluations
        n, exact = 0, True
        for since, until in spans:
            more, whole = cost(
                estimate(loader, quant, start=_as_arg(since), end=_as_arg(until), client=c)
            )
            n, exact = n + more, exact and whole
        first = spans[0][0]
        return n, exact, f"from {month_of(first) if first is not None else 'the start'}"
    if name == "eval_details":
        plan = _details_plan(ctx, quant)
        ids = [i for v in plan.values() for i in v]
        if not ids:
            return 0, True, "none missing (of the trades stored now)"
        n, exact = cost(estimate(L.load_eval_details, ids, client=c))
        return n, exact, f"{len(ids)} evaluations"
    if name == "ohlcv":
        todo = _tokens_plan(ctx, quant)
        total = sum(estimate(L.load_ohlcv, t, ctx.timeframe, client=c).requests for t, _ in todo)
        return total, True, f"{len(todo)} tokens (of the trades stored now)"
    n, exact = cost(estimate(_SNAPSHOT_LOADERS[name], quant, client=c))
    return n, exact, "snapshot"


def _request(
    resources: Sequence[str], quants: Sequence[int], start: Any, end: Any, timeframe: str
) -> dict[str, Any]:
    return {
        "resources": list(resources),
        "quant_ids": list(quants),
        "start": None if start is None else str(start),
        "end": None if end is None else str(end),
        "timeframe": timeframe,
    }


def sync(
    catalog: str | os.PathLike[str],
    *,
    quant_id: IdArg | Iterable[IdArg],
    resources: Sequence[str] | None = None,
    start: datetime | date | str | None = None,
    end: datetime | date | str | None = None,
    timeframe: str = "1h",
    confirm: bool = False,
    max_requests: int | None = None,
    dry_run: bool = False,
    client: Client | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> SyncReport:
    """Bring the catalog at ``catalog`` (a directory or fsspec URL; made if missing) up to
    date for ``quant_id`` (one or several) and ``resources`` (default ``DEFAULT_RESOURCES``),
    fetching only what it lacks or what can still change (module docstring).

    Args:
        start, end: the window (widened to whole months); default everything.
        timeframe: the candles' timeframe (``ohlcv``).
        confirm: lift the share rule for each load (as the loaders' ``confirm``).
        max_requests: a ceiling on the requests the whole sync may send.
        dry_run: send nothing; the report's tasks say what each would cost.
        storage_options: the fsspec filesystem's options for an fsspec URL (``s3://``:
            ``endpoint_url``, ``key``, ``secret``...).

    A quota refusal or any error stops the sync after the last whole task and is raised
    (with a note); the same call then resumes the run. One sync at a time per local catalog
    (``catalog.lock``): another one running raises ``CatalogBusyError`` (a dry run reads
    only and is not locked out).
    """
    names = list(resources) if resources is not None else list(DEFAULT_RESOURCES)
    unknown = [n for n in names if n not in RESOURCES]
    if unknown:
        raise ConfigurationError(f"sync: unknown resources {unknown}; known: {sorted(RESOURCES)}")
    if max_requests is not None and max_requests < 0:
        raise ConfigurationError(f"sync: max_requests must be >= 0, got {max_requests}")
    names = [n for n in _ORDER if n in names]
    quants = many_ids(quant_id, "quant_id")
    if not quants:
        raise ConfigurationError("sync needs quant_id= (one id or several)")
    c = client_or_default(client)
    store = Store(catalog, storage_options)
    with contextlib.nullcontext() if dry_run else sync_lock(store):
        where = (names, quants, start, end, timeframe)
        return _sync(store, c, catalog, where, confirm, max_requests, dry_run)


def _sync(
    store: Store,
    c: Client,
    catalog: Any,
    where: tuple[list[str], list[int], Any, Any, str],
    confirm: bool,
    max_requests: int | None,
    dry_run: bool,
) -> SyncReport:
    """``sync``'s work, under the catalog's lock unless ``dry_run``: ``where`` is what it
    asks for (resources, quants, start, end, timeframe).
    """
    names, quants, start, end, timeframe = where
    manifest = store.load()
    request = _request(names, quants, start, end, timeframe)
    now = pd.Timestamp.now(tz="UTC")
    last = manifest.runs[-1] if manifest.runs else None
    resuming = (
        last is not None
        and last["status"] in ("interrupted", "quota_stopped", "running")  # running: killed
        and last["request"] == request
    )
    if resuming:
        assert last is not None
        run = last
    else:
        run = {
            "id": (manifest.runs[-1]["id"] + 1) if manifest.runs else 1,
            "started_at": now_iso(now.to_pydatetime()),
            "request": request,
            "snapshot": now.strftime("%Y-%m-%d"),
            "status": "running",
            "requests": 0,
            "rows_added": 0,
            "rows_updated": 0,
            "tasks": {},
            "attempts": [],
        }
    ctx = _Context(
        store=store,
        manifest=manifest,
        client=c,
        budget=_Budget(max_requests, c, confirm),
        now=now,
        snapshot=run["snapshot"],
        window=(parse_time(start), parse_time(end)),
        timeframe=timeframe,
        run=run,
        damaged=damaged_files(store, manifest, names, quants, (parse_time(start), parse_time(end))),
    )
    dropped = drop_past_snapshots(manifest, ctx.damaged, names, quants, ctx.snapshot)
    if dry_run:
        return _dry_run(ctx, names, quants, catalog)
    if not resuming:
        manifest.runs.append(run)
    elif ctx.damaged:
        undo_damaged_tasks(run, manifest, ctx.damaged)
    run["status"] = "running"
    run["attempts"].append({"started_at": now_iso(now.to_pydatetime()), "status": "running"})
    report = SyncReport(str(catalog), run["id"], "running", False, dropped=dropped)
    queue = _tasks(ctx, names, quants)
    done_state = dict(manifest.partitions)  # the catalog as of the last whole task
    try:
        # A month or a snapshot with no rows is an ordinary answer for a sync: no warning.
        with progress(len(queue), "sync", enabled=c.settings.progress) as bar, expect_empty():
            while queue:
                tid, job = queue.pop(0)
                if tid in run["tasks"]:
                    report.tasks.append({"task": tid, "requests": 0, "note": "done before"})
                    bar.update(1)
                    continue
                done_state = dict(manifest.partitions)
                result = job()
                if "expand" in result:  # eval details: one task per month, planned now
                    quant = int(result["expand"])
                    months = _details_plan(ctx, quant)
                    subtasks = [
                        (
                            f"{tid}:month={m}",
                            partial(_details_task, ctx, quant, m, ids),
                        )
                        for m, ids in months.items()
                    ]
                    queue[:0] = [s for s in subtasks if s[0] not in run["tasks"]]
                    result = {"requests": 0, "note": f"{len(subtasks)} months to fetch"}
                    report.tasks.append({"task": tid, **result})
                    bar.update(1)
                    continue  # planned again on a resume: only its months are tasks
                _record(ctx, tid, result)
                report.tasks.append({"task": tid, **result})
                bar.update(1)
    except BaseException as exc:
        stopped = "quota_stopped" if isinstance(exc, QuotaError) else "interrupted"
        manifest.partitions = done_state
        listed = {p["file"] for p in done_state.values()}
        for file in ctx.written:  # the failed task's files: unlisted, and their space back
            if file not in listed:
                store.remove(file)
        ctx.replaced.clear()
        ctx.written.clear()
        run["status"] = run["attempts"][-1]["status"] = stopped
        run["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        _note_repairs(ctx, report)
        with contextlib.suppress(CatalogWriteError):  # else the last swap's run: "running"
            store.save(manifest)
        exc.add_note(
            f"qsc.sync: stopped ({stopped}) after {len(run['tasks'])} tasks; the catalog holds "
            "every task done so far, and the same sync call resumes from there"
        )
        raise
    run["status"] = run["attempts"][-1]["status"] = "complete"
    run["finished_at"] = now_iso()
    run.pop("error", None)
    _note_repairs(ctx, report)
    store.save(manifest)
    _collect_garbage(store, manifest)
    report.status = "complete"
    report.quota = str(c.quota)
    return report


def _record(ctx: _Context, tid: str, result: dict[str, Any]) -> None:
    """The task is done: its numbers in the run, then the manifest swapped, then the files
    it replaced removed.
    """
    run = ctx.run
    run["tasks"][tid] = {k: result[k] for k in ("requests", "added", "updated") if k in result}
    run["requests"] += int(result.get("requests") or 0)
    run["rows_added"] += int(result.get("added") or 0)
    run["rows_updated"] += int(result.get("updated") or 0)
    ctx.store.save(ctx.manifest)
    for old in ctx.replaced:
        ctx.store.remove(old)
    ctx.replaced.clear()
    ctx.written.clear()


def _dry_run(ctx: _Context, names: Sequence[str], quants: Sequence[int], where: Any) -> SyncReport:
    report = SyncReport(str(where), None, "dry run", True)
    for quant in quants:
        for name in names:
            n, exact, note = _estimate_task(ctx, name, quant)
            report.tasks.append(
                {"task": f"{name}:quant_id={quant}", "requests": n, "exact": exact, "note": note}
            )
    report.quota = str(ctx.client.quota)
    return report


def _collect_garbage(store: Store, manifest: Manifest) -> None:
    """Remove Parquet files no partition lists and temporary files (left by an interrupted
    or killed run).
    """
    listed = {p["file"] for p in manifest.partitions.values()}
    tops = [store.path(name) for name in RESOURCES]
    found = [
        path for top in tops if store.fs.exists(top) for path in store.fs.find(top, withdirs=False)
    ]
    found += [
        str(path)
        for path in store.fs.ls(store.root, detail=False)
        if str(path).rpartition("/")[2].startswith(f".{MANIFEST}.")
    ]
    for path in found:
        relative = path[len(store.root) + 1 :] if path.startswith(store.root) else path
        if is_temporary(relative) or (relative.endswith(".parquet") and relative not in listed):
            store.remove(relative)


def _note_repairs(ctx: _Context, report: SyncReport) -> None:
    """The run and the report name what was fetched again and what is still damaged."""
    report.repaired = list(ctx.repaired)
    report.damaged = sorted(ctx.damaged)
    if ctx.repaired:
        ctx.run["repaired"] = sorted({*ctx.run.get("repaired", ()), *ctx.repaired})
    if report.dropped:
        ctx.run["dropped"] = sorted({*ctx.run.get("dropped", ()), *report.dropped})
