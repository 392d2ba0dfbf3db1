"""Reading a catalog: ``qsc.open_catalog(path)`` and typed frames with the loaders' signatures.

``Catalog.trades(quant_id=1, start=..., end=...)`` reads only the partitions of that quant
whose month meets the window (the manifest says which files they are: no listing, no scan),
filters the rows as the service does (open date to the second, both ends inclusive;
evaluations' ``createdAt`` to the millisecond) and returns the loader's frame: same columns,
dtypes, categories and row order, so ``df.quant`` and ``backtest`` work unchanged. Filters
the catalog cannot answer as the service would (``search``, another ``trading_status``) are
refused with a one-line error rather than answered differently. A frame's
``attrs["quantscope"]`` carries what a loader's does (``provenance``: the service's endpoint,
the filters asked, when its rows were fetched and from which service) and where it was read
(files, rows stored and returned). Snapshots (signals,
playbook, recommendations) answer from the newest snapshot, or the newest on or before
``as_of``. ``cat.sql(...)`` runs DuckDB over the same files (``catalog.sql``).

Every file read is checked against its manifest record (``catalog.integrity``: confined to
the catalog, size, footer, page checksums, rows): a damaged or missing file raises
``CatalogIntegrityError`` naming it, never a frame silently wrong. ``cat.info()`` lists damaged
files (cheap checks), ``cat.verify()`` hashes every file whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from quantscope import _endpoints as E
from quantscope._errors import ConfigurationError
from quantscope._ids import IdArg, many_ids, one_id, optional_id
from quantscope._reprs import catalog_html
from quantscope._typed.frames import with_categories
from quantscope.catalog.integrity import read_checked, scan
from quantscope.catalog.layout import RESOURCES, Resource, arrow_schema, from_table
from quantscope.catalog.manifest import Manifest, Store
from quantscope.catalog.sql import connection, run_sql

__all__ = ["Catalog", "open_catalog", "parse_time", "read_resource", "read_table"]

TimeArg = datetime | date | str


def read_table(store: Store, resource: Resource, records: Iterable[Mapping[str, Any]]) -> pa.Table:
    """The Arrow table of manifest partition ``records``, in order, each file checked
    (``integrity.read_checked``), partition keys the spec has as columns restored.
    """
    tables = [read_checked(store, resource, record) for record in records]
    if not tables:
        return arrow_schema(resource).empty_table()
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def read_resource(
    store: Store, resource: Resource, records: Iterable[Mapping[str, Any]]
) -> pd.DataFrame:
    """The typed frame of manifest partition ``records`` (concatenated in order)."""
    return from_table(resource, read_table(store, resource, records))


def parse_time(value: TimeArg | None) -> pd.Timestamp | None:
    """A window bound as a UTC timestamp (naive values are UTC, as the service reads them)."""
    if value is None:
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def month_of(stamp: pd.Timestamp) -> str:
    return f"{stamp.year:04d}-{stamp.month:02d}"


def _whole_months(stamp: pd.Timestamp) -> bool:
    """Whether ``stamp`` is a month's first instant: a bound there cuts no month partition
    (the partitions read are those of the window's months), so it filters nothing.
    """
    return bool(stamp == stamp.normalize() and stamp.day == 1)


def _unsupported(name: str, **given: Any) -> None:
    bad = [k for k, v in given.items() if v is not None]
    if bad:
        raise ConfigurationError(
            f"catalog.{name}: the catalog cannot answer {', '.join(bad)} as the service would; "
            "load from the service, or filter the frame"
        )


def _allowed(route: E.Endpoint, given: Mapping[str, Any]) -> None:
    """Refuse a value of ``given`` (a method's keywords) that ``route``'s spec does not allow,
    as the loader and the command line do before any request (``_endpoints.checked_choice``:
    ``InvalidChoiceError``, the same message), before anything is read.
    """
    for param in route.params:
        if param.choices and param.name in given:
            E.checked_choice(param, given[param.name])


def _tri(value: bool | str | None) -> bool | None:
    """A true/false/all filter as the service reads it (a checked value, any ASCII case):
    None (``all``) keeps every row.
    """
    if value is None or isinstance(value, bool):
        return value
    text = str(value).lower()
    return None if text == "all" else text == "true"


class Catalog:
    """A catalog opened for reading (``open_catalog``); the manifest is re-read on each
    call, so a sync in another process shows up.
    """

    def __init__(
        self, path: str | os.PathLike[str], storage_options: Mapping[str, Any] | None = None
    ) -> None:
        self.store = Store(path, storage_options)
        self._manifest = self.store.load_existing()

    @property
    def url(self) -> str:
        return self.store.url

    def _current(self) -> Manifest:
        """The manifest as of now (re-read)."""
        self._manifest = self.store.load_existing()
        return self._manifest

    @property
    def partitions(self) -> dict[str, dict[str, Any]]:
        """Every partition the manifest lists: its directory -> file, rows, SHA-256, keys..."""
        return self._current().partitions

    @property
    def runs(self) -> list[dict[str, Any]]:
        """Every sync run: when, what, requests spent, rows added and updated, status."""
        return self._current().runs

    def info(self, *, verify: bool = False) -> dict[str, Any]:
        """A summary: per resource its partitions, rows and bytes; the runs; the schema;
        ``damaged``: the files found not whole (``catalog.integrity``: size and footer, or
        with ``verify`` every file hashed whole, as ``quantscope catalog info`` does).
        """
        m = self._current()
        resources: dict[str, dict[str, int]] = {}
        for p in m.partitions.values():
            held = resources.setdefault(p["resource"], {"partitions": 0, "rows": 0, "bytes": 0})
            held["partitions"] += 1
            held["rows"] += int(p["rows"])
            held["bytes"] += int(p["bytes"])
        return {
            "catalog": self.url,
            "schema_version": m.schema_version,
            "created_at": m.created_at,
            "resources": resources,
            "runs": [
                {
                    k: r.get(k)
                    for k in (
                        "id",
                        "started_at",
                        "status",
                        "requests",
                        "rows_added",
                        "rows_updated",
                    )
                }
                for r in m.runs
            ],
            "damaged": [p.as_dict() for p in scan(self.store, m.partitions, full=verify)],
        }

    def verify(self) -> list[dict[str, str]]:
        """Every partition whose file is not whole, each file hashed whole (SHA-256 against
        the manifest): ``[{"partition", "file", "problem"}]``, empty when all are.
        """
        return [p.as_dict() for p in scan(self.store, self._current().partitions, full=True)]

    def __repr__(self) -> str:
        m = self._manifest
        return (
            f"<quantscope.Catalog {self.url}: {len(m.partitions)} partitions, {len(m.runs)} runs>"
        )

    def _repr_html_(self) -> str:
        return catalog_html(self.url, self._manifest)

    # ----- the files -----

    def files(
        self, resource: str, where: Callable[[Mapping[str, str]], bool] | None = None
    ) -> list[dict[str, Any]]:
        """The manifest records of the resource's partitions ``where`` accepts (by keys)."""
        parts = self._current().of(resource)
        return [p for _, p in sorted(parts.items()) if where is None or where(p["keys"])]

    def _frame(
        self, name: str, files: Sequence[Mapping[str, Any]], asked: Mapping[str, Any]
    ) -> pd.DataFrame:
        """The typed frame of ``files`` with its provenance (``provenance``)."""
        resource = RESOURCES[name]
        frame = from_table(resource, read_table(self.store, resource, files))
        frame.attrs["quantscope"] = provenance(name, self.url, files, asked)
        return frame

    @staticmethod
    def _ordered(frame: pd.DataFrame, resource: Resource) -> pd.DataFrame:
        """``frame`` in the loader's order: checked in one pass (files keep it), sorted only
        when several quants' partitions were read.
        """
        if not resource.order or len(frame) < 2:
            return frame
        cols = [c for c, _ in resource.order]
        ascending = [a for _, a in resource.order]
        if _in_order(frame, cols, ascending):
            return frame
        return frame.sort_values(cols, ascending=ascending, kind="stable").reset_index(drop=True)

    def _months(
        self, name: str, quant_id: IdArg | None, lo: pd.Timestamp | None, hi: pd.Timestamp | None
    ) -> list[dict[str, Any]]:
        quant = optional_id(quant_id, "quant_id")
        first = month_of(lo) if lo is not None else None
        last = month_of(hi) if hi is not None else None

        def keep(keys: Mapping[str, str]) -> bool:
            return (
                (quant is None or keys["quant_id"] == str(quant))
                and (first is None or keys["month"] >= first)
                and (last is None or keys["month"] <= last)
            )

        files = self.files(name, keep)
        return sorted(files, key=lambda f: f["keys"]["month"], reverse=True)

    # ----- the loaders' signatures -----

    def trades(
        self,
        quant_id: IdArg | None = None,
        *,
        trading_status: str | None = "executed",
        trading_mode: str | None = None,
        position_closed: bool | str | None = None,
        tracking_enabled: bool | None = None,
        status: str | None = None,
        chain: str | None = None,
        search: str | None = None,
        start: TimeArg | None = None,
        end: TimeArg | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        **_ignored: Any,
    ) -> pd.DataFrame:
        """``load_trades`` from the catalog (the executed trades a sync stored)."""
        _allowed(E.TRADES, locals())
        if trading_status not in (None, "executed"):
            raise ConfigurationError(
                f"catalog.trades: the catalog keeps executed trades; trading_status="
                f"{trading_status!r} needs the service"
            )
        _unsupported(
            "trades",
            trading_mode=trading_mode,
            tracking_enabled=tracking_enabled,
            search=search,
            sort_by=sort_by,
            sort_order=sort_order,
        )
        lo, hi = parse_time(start), parse_time(end)
        asked = {
            "quant_id": quant_id,
            "trading_status": trading_status,
            "position_closed": position_closed,
            "status": status,
            "chain": chain,
            "start": start,
            "end": end,
        }
        frame = self._frame("trades", self._months("trades", quant_id, lo, hi), asked)
        mask = np.ones(len(frame), dtype=bool)
        opened = frame["opened_at"]
        if lo is not None and not _whole_months(lo):
            mask &= (opened >= lo.ceil("s")).to_numpy(bool)
        if hi is not None and not _whole_months(hi + pd.Timedelta(seconds=1)):
            mask &= (opened < hi.floor("s") + pd.Timedelta(seconds=1)).to_numpy(bool)
        closed = _tri(position_closed)
        if closed is not None:
            mask &= (frame["status"] == ("Closed" if closed else "Open")).to_numpy(bool)
        if status is not None and status.lower() != "all":
            col = "status" if status.lower() in ("open", "closed") else "result"
            mask &= (frame[col].astype("str").str.lower() == status.lower()).to_numpy(bool)
        if chain is not None:
            mask &= (frame["chain"].astype("str").str.upper() == chain.upper()).to_numpy(bool)
        return self._finish(frame, mask, RESOURCES["trades"])

    def _finish(self, frame: pd.DataFrame, mask: np.ndarray, resource: Resource) -> pd.DataFrame:
        attrs = frame.attrs
        frame = self._ordered(_subset(frame, mask, resource), resource)
        frame.attrs = attrs
        _returned(frame)
        return frame

    def evaluations(
        self,
        quant_id: IdArg | None = None,
        *,
        evaluation_type: str | Sequence[str] | None = None,
        passed: bool | None = None,
        chain: str | None = None,
        search: str | None = None,
        unique_tokens_only: bool | None = None,
        only_scored: bool | None = None,
        start: TimeArg | None = None,
        end: TimeArg | None = None,
        **_ignored: Any,
    ) -> pd.DataFrame:
        """``load_evaluations`` from the catalog."""
        _allowed(E.EVALUATIONS, locals())
        _unsupported(
            "evaluations",
            search=search,
            unique_tokens_only=unique_tokens_only,
            only_scored=only_scored,
        )
        lo, hi = parse_time(start), parse_time(end)
        asked = {
            "quant_id": quant_id,
            "evaluation_type": evaluation_type,
            "passed": passed,
            "chain": chain,
            "start": start,
            "end": end,
        }
        frame = self._frame("evaluations", self._months("evaluations", quant_id, lo, hi), asked)
        mask = np.ones(len(frame), dtype=bool)
        created = frame["created_at"]
        if lo is not None:
            mask &= (created >= lo).to_numpy(bool)
        if hi is not None:
            mask &= (created <= hi).to_numpy(bool)
        if passed is not None:
            mask &= (frame["passed"] == passed).fillna(False).to_numpy(bool)
        if chain is not None:
            mask &= (frame["chain"].astype("str").str.upper() == chain.upper()).to_numpy(bool)
        if evaluation_type is not None:
            types = [evaluation_type] if isinstance(evaluation_type, str) else evaluation_type
            wanted = {t.strip() for text in types for t in text.split(",") if t.strip()}
            mask &= frame["evaluation_type"].astype("str").isin(wanted).to_numpy(bool)
        return self._finish(frame, mask, RESOURCES["evaluations"])

    def eval_details(
        self, evaluation_ids: IdArg | Iterable[IdArg], **_ignored: Any
    ) -> pd.DataFrame:
        """``load_eval_details`` from the catalog: rows in the order of the ids asked."""
        ids = many_ids(evaluation_ids, "evaluation_ids")
        wanted = set(ids)
        lo, hi = (min(ids), max(ids)) if ids else (0, -1)
        parts = self._current().of("eval_details")
        files = [
            p
            for _, p in sorted(parts.items())
            if p.get("ids") is None or (p["ids"][0] <= hi and p["ids"][1] >= lo)
        ]
        frame = self._frame("eval_details", files, {"evaluation_ids": f"{len(ids)} ids"})
        have = frame["evaluation_id"].to_numpy("int64", na_value=-1)
        mask = np.isin(have, list(wanted))
        missing = wanted - set(have[mask].tolist()) - self._empty_details(parts.values())
        if missing:
            raise ConfigurationError(
                f"catalog.eval_details: {len(missing)} of {len(wanted)} evaluations are not in "
                f"the catalog (e.g. {sorted(missing)[:3]}): qsc.sync(..., resources="
                "['eval_details']) fetches them"
            )
        rank = {i: n for n, i in enumerate(ids)}
        frame = _subset(frame, mask, RESOURCES["eval_details"])
        pos = frame["evaluation_id"].map(rank).to_numpy("int64")
        out = frame.iloc[np.argsort(pos, kind="stable")].reset_index(drop=True)
        out.attrs = frame.attrs
        _returned(out)
        return out

    @staticmethod
    def _empty_details(parts: Iterable[Mapping[str, Any]]) -> set[int]:
        return {int(i) for p in parts for i in p.get("empty", ())}

    def ohlcv(
        self, token_id: IdArg, timeframe: str = "1h", *, limit: int = 5000, **_ignored: Any
    ) -> pd.DataFrame:
        """``load_ohlcv`` from the catalog: the newest ``limit`` stored candles, oldest first."""
        token = str(one_id(token_id, "token_id"))
        files = self.files(
            "ohlcv", lambda k: k["token_id"] == token and k["timeframe"] == timeframe
        )
        if not files:
            raise ConfigurationError(
                f"catalog.ohlcv: no {timeframe} candles of token {token} in the catalog"
            )
        asked = {"token_id": token, "timeframe": timeframe, "limit": limit}
        frame = self._frame("ohlcv", files, asked).sort_index()
        out = frame.iloc[-limit:] if limit < len(frame) else frame
        out.attrs = {**frame.attrs, "token_id": int(token), "timeframe": timeframe}
        _returned(out)
        return out

    def _snapshot(
        self, name: str, quant_id: IdArg, as_of: TimeArg | None, **asked: Any
    ) -> pd.DataFrame:
        quant = str(one_id(quant_id, "quant_id"))
        stamp = parse_time(as_of)
        day = stamp.strftime("%Y-%m-%d") if stamp is not None else None
        files = self.files(
            name,
            lambda k: k["quant_id"] == quant and (day is None or k["snapshot"] <= day),
        )
        if not files:
            raise ConfigurationError(
                f"catalog.{name}: no snapshot of quant {quant}"
                f"{'' if day is None else ' on or before ' + day} in the catalog"
            )
        newest = max(files, key=lambda f: f["keys"]["snapshot"])
        frame = self._frame(name, [newest], {"quant_id": quant, "as_of": as_of, **asked})
        frame.attrs["quantscope"]["snapshot"] = newest["keys"]["snapshot"]
        return frame

    def signals(
        self,
        quant_id: IdArg,
        *,
        chain: str | None = None,
        search: str | None = None,
        limit: int = 500,
        as_of: TimeArg | None = None,
        **_ignored: Any,
    ) -> pd.DataFrame:
        """``load_signals`` from the newest snapshot (on or before ``as_of``)."""
        _allowed(E.SIGNALS, locals())
        _unsupported("signals", search=search)
        frame = self._snapshot("signals", quant_id, as_of, chain=chain, limit=limit)
        if chain is not None:
            mask = (frame["chain"].astype("str").str.upper() == chain.upper()).to_numpy(bool)
            frame = self._finish(frame, mask, RESOURCES["signals"])
        if limit < len(frame):
            frame = frame.iloc[:limit]
            _returned(frame)
        return frame

    def playbook(
        self,
        quant_id: IdArg,
        *,
        config_group_id: str | None = None,
        as_of: TimeArg | None = None,
        **_ignored: Any,
    ) -> pd.DataFrame:
        """``load_playbook`` from the newest snapshot (on or before ``as_of``)."""
        _unsupported("playbook", config_group_id=config_group_id)
        return self._snapshot("playbook", quant_id, as_of)

    def recommendations(
        self,
        quant_id: IdArg,
        *,
        applied: bool | None = None,
        as_of: TimeArg | None = None,
        **_ignored: Any,
    ) -> pd.DataFrame:
        """``load_recommendations`` from the newest snapshot (on or before ``as_of``)."""
        frame = self._snapshot("recommendations", quant_id, as_of, applied=applied)
        if applied is not None:
            mask = (frame["applied"].fillna(False) == applied).to_numpy(bool)
            frame = self._finish(frame, mask, RESOURCES["recommendations"])
        return frame

    def sql(self, query: str) -> pd.DataFrame:
        """Run ``query`` with DuckDB over the catalog's views (``catalog.sql``)."""
        return run_sql(self.store, self._current(), query)

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection with one view per resource (``catalog.sql``), for queries
        that should stay in DuckDB (``.arrow()``, ``.pl()``).
        """
        return connection(self.store, self._current())


def provenance(
    name: str, catalog: str, files: Sequence[Mapping[str, Any]], asked: Mapping[str, Any]
) -> dict[str, Any]:
    """What a catalog frame says of itself: what a loader's frame says (``endpoint``,
    ``params``, ``fetched_at``, ``service``, ``from_cache``, ``pages``, ``requests``; the
    service's endpoint and when the oldest of its rows was fetched, from the files' records),
    where it was read (``catalog``, ``files``, ``synced_at``: the newest file's sync) and its
    sample sizes (``rows``: stored in the files read, returned after the filters). A file
    written before records kept their load's provenance counts by its ``synced_at``.
    """
    fetched = [f.get("provenance") or {} for f in files]
    times = [p.get("fetched_at") or f.get("synced_at") for p, f in zip(fetched, files, strict=True)]
    services = sorted({p["service"] for p in fetched if p.get("service")})
    endpoints = sorted({p["endpoint"] for p in fetched if p.get("endpoint")})
    synced = [f["synced_at"] for f in files if f.get("synced_at")]
    stored = sum(int(f.get("rows", 0)) for f in files)
    return {
        "endpoint": f"catalog:{name}",
        "params": {k: _text(v) for k, v in asked.items() if v is not None},
        "fetched_at": min((t for t in times if t), default=None),
        "from_cache": False,
        "pages": 0,
        "requests": 0,
        "service": services[0] if len(services) == 1 else services or "",
        "source": endpoints[0] if len(endpoints) == 1 else endpoints or "",
        "catalog": catalog,
        "files": len(files),
        "synced_at": max(synced, default=None),
        "rows": {"stored": stored, "returned": stored},
    }


def _text(value: Any) -> str:
    """A filter as provenance shows it (text, as a loader's ``params``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def _returned(frame: pd.DataFrame) -> None:
    """Record in ``frame``'s provenance how many rows it returns."""
    held = frame.attrs.get("quantscope")
    if isinstance(held, dict) and isinstance(held.get("rows"), dict):
        held = {**held, "rows": {**held["rows"], "returned": len(frame)}}
        frame.attrs["quantscope"] = held


def _in_order(frame: pd.DataFrame, cols: Sequence[str], ascending: Sequence[bool]) -> bool:
    """Whether ``frame`` is sorted by ``cols`` (no missing values), ties broken in order."""
    tied = np.ones(len(frame) - 1, dtype=bool)
    ok = np.zeros(len(frame) - 1, dtype=bool)
    for col, up in zip(cols, ascending, strict=True):
        series = frame[col]
        if series.hasnans:
            return False
        values = series.to_numpy("int64") if series.dtype.kind != "M" else series.array.asi8
        step = values[1:] > values[:-1] if up else values[1:] < values[:-1]
        ok |= tied & step
        tied &= values[1:] == values[:-1]
    return bool(ok.all())


def _subset(frame: pd.DataFrame, mask: np.ndarray, resource: Resource) -> pd.DataFrame:
    """The rows ``mask`` keeps; categories as the loader makes them of the rows it returns
    (the spec's whole set, else the values left, sorted).
    """
    if mask.all():
        return frame
    out = frame[mask].reset_index(drop=True)
    for col in resource.spec.columns:
        if col.name in out.columns and isinstance(out[col.name].dtype, pd.CategoricalDtype):
            values = out[col.name].array
            assert isinstance(values, pd.Categorical)
            out[col.name] = with_categories(values.remove_unused_categories(), col.categories)
    return out


def open_catalog(
    path: str | os.PathLike[str], *, storage_options: Mapping[str, Any] | None = None
) -> Catalog:
    """Open the catalog at ``path`` (a directory or an fsspec URL) for reading;
    ``storage_options``: the filesystem's (``{"endpoint_url": ...}`` for an S3 server).
    """
    return Catalog(path, storage_options)
