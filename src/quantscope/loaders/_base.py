"""The one recipe every loader follows, and what loaders share.

A loader declares a ``Recipe``: the endpoint, the frame spec, where the records are in an
answer (``items``) and which other top-level keys its frame reads (``keep``), the paging (or
none), and optionally its own ``build`` when the frame is more than the typed records. It then
returns its plan (``loaders._planned``: ``frame_plan(recipe, params, client=...)``, ``many=``
for one request per parameter set), and running the plan calls ``run_recipe``, the one
function that runs the load, straight down and back:

1. wire parameters, once (``_wire.wire_params``; the same text for key, request, provenance);
2. the frame cache (``_http.framecache``): the frame built before from the same answers, when the
   HTTP cache says they are all still stored unchanged (``ResponseCache.unchanged``); its
   provenance is made by ``_http.results.cached_provenance`` (no request, ``fetched_at`` of the
   oldest answer);
3. otherwise the client (``get`` / ``get_pages`` / ``get_many``) with the recipe's typed
   decoder passed explicitly (``_typed.decode.page_decoder``), returning the answers and their cache
   entries;
4. the typed frame (``_typed.frames.build_frame``, with provenance), and what it lacks: for a
   ``by_chain`` recipe whose request names no chain, the plan's chain allowance
   (``attrs["quantscope"]["plan_chains"]``: the service leaves out the other chains);
5. the frame stored beside the entries it came from (never an incomplete one);
6. an ``IncompleteDataWarning`` for whatever the frame lacks (``warn_incomplete``), on a
   frame-cache hit as on a fresh load; an ``EmptyResultWarning`` when a paged list load's
   filters matched nothing (``loaders._empty``).

What a load may spend is the caller's ``Spend`` (``_http.quota``): multi-request loaders take
``confirm``, ``max_requests`` and ``partial`` and pass them on (``spend_of``). A
``partial=True`` load that stopped at the quota returns its frame with
``attrs["quantscope"]["incomplete"]`` and the warning. ``qsc.estimate`` runs none of this: it
prices the plan (``LoadPlan.cost``) with ``frame_keys``/``stored_frames`` and the client.

A client connected to a catalog (``qsc.connect(catalog=path)``) skips all of this: the recipe's
endpoint and Python parameters (never encoded to the wire) go to the catalog source
(``_source``: ``catalog.answer``, plugged in by the catalog, which stands above the loaders),
which reads the catalog or says in one line that it does not keep that resource
(``qsc.estimate`` prices what it answers at 0).

Every GET loader runs this recipe, whatever its result's shape: one object of the service
(counts, statistics) is a one-row typed frame (``record_frame``) that ``series_plan`` turns
into the Series the loader returns (``_typed.frames.row_series``); one answer that holds several
(a trade and its transactions, the dashboard) is a recipe with ``parts``, whose ``build``
makes every frame and ``parts_plan``'s ``finish`` receives them, each kept in the frame cache. A new
loader copies any neighbour. Only writes (``post`` / ``put``) shape their answer with
``typed_series`` directly: never cached, nothing worth keeping.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, TypeVar

import pandas as pd

from quantscope._errors import DataQualityWarning, IncompleteDataWarning, InvalidResponseError
from quantscope._http.cache import CacheEntry, key_scope
from quantscope._http.client import (
    Client,
    Fetched,
    FetchedMany,
    FetchedPages,
    OffsetPaging,
    PageNumberPaging,
    Provenance,
    get_default_client,
)
from quantscope._http.framecache import CachedFrame, frame_key, part_key
from quantscope._http.quota import Spend
from quantscope._http.results import cached_provenance, with_provenance
from quantscope._plans import PLANS, plan_named
from quantscope._routes import route_at
from quantscope._typed.decode import page_decoder
from quantscope._typed.frames import (
    Columns,
    FrameSpec,
    Item,
    build_frame,
    quality_message,
    series_of,
)
from quantscope._wire import Params, Wire, wire_params
from quantscope.loaders._empty import warn_empty
from quantscope.loaders._fold import PageFolder, PageRows, joined
from quantscope.loaders._source import catalog_source

Loaded = Fetched | FetchedPages | FetchedMany
#: What a recipe makes of its answers: one frame, or with ``parts`` one per spec.
Frames = tuple[pd.DataFrame, ...]


def client_or_default(client: Client | None) -> Client:
    return client if client is not None else get_default_client()


@dataclass(frozen=True)
class Recipe:
    """What a loader declares: which answers, and how they become its frame.

    ``rows``: the frame's records are the answer's items, under the key its route declares
    (``items``: ``"trades"``, ``"results"``...; empty without ``rows``: ``build`` reads the
    answer, or the answer is itself the list); ``keep`` the other top-level keys ``build`` reads
    (the paging total is kept for paged recipes). ``build`` turns what the client returned
    into the frame with provenance; the default is the typed frame of the records. ``build``
    must depend on nothing but the answers and the parameters: the frame is kept under the
    spec, ``build``'s name and code, the parameters and the paging, not what a closure holds.
    ``by_chain``: the answers span chains, and the service narrows them to the plan's chains
    when the request names no ``chain`` (docs/service-contract.md, "Chains"). ``fold_rows``:
    the rows of a batch of pages converted together (``_fold.FOLD_ROWS`` when None); records
    that are large once decoded want smaller batches. ``parts``: the specs of the frames
    ``build`` makes besides ``spec``'s from one answer that holds several (a trade and its
    transactions): ``build`` then returns a tuple, ``spec``'s frame first (``parts_plan``).
    """

    endpoint: str
    spec: FrameSpec
    rows: bool = False
    keep: tuple[str, ...] = ()
    paging: PageNumberPaging | OffsetPaging | None = None
    build: Callable[[Recipe, Any], pd.DataFrame | Frames] | None = None
    desc: str | None = None
    by_chain: bool = False
    fold_rows: int | None = None
    parts: tuple[FrameSpec, ...] = ()

    @property
    def items(self) -> str:
        """The key of the records in an answer: its route's (``_routes``) with ``rows``, else
        empty.
        """
        return (route_at(self.endpoint).items or "") if self.rows else ""

    def decoder(self) -> Callable[[bytes], Any] | None:
        """The typed decoder of this recipe's answers (None: plain JSON)."""
        if not self.items:
            return None
        keep = self.keep
        if self.paging is not None and self.paging.total_path[0] not in keep:
            keep = (*keep, self.paging.total_path[0])
        return page_decoder(self.spec, self.items, keep)

    def folder(self) -> Callable[[Any], Any] | None:
        """How a paged recipe's pages are kept as they arrive (``Client.get_pages(fold=)``):
        a new ``_fold.PageFolder`` (one per load) that turns the pages' records into typed
        ``Columns`` a batch of pages at a time, beside their other keys (the total, a
        summary), so a load never holds every page's decoded items at once. None for other
        recipes. A page whose list holds anything but objects is kept as it came: the frame's
        checks then name it (``records``).
        """
        if self.paging is None or not self.items:
            return None
        return PageFolder(self.items, self.spec, self.fold_rows)

    def frames(self, loaded: Loaded) -> Frames:
        """The frames ``build`` (or the default) makes of ``loaded``: ``spec``'s, then one per
        spec of ``parts``.
        """
        if self.build is None:
            return (typed_frame(columns_of(self, loaded), self.spec, loaded.provenance),)
        built = self.build(self, loaded)
        frames = built if isinstance(built, tuple) else (built,)
        if len(frames) != 1 + len(self.parts):
            raise TypeError(f"{self.endpoint}: build made {len(frames)} frames, not 1 + parts")
        return frames


def columns_of(recipe: Recipe, loaded: Loaded) -> Columns:
    """The typed columns of what the client returned: of a paged load, each page's rows as
    they were folded on arrival (``Recipe.folder``) and the checked records of any page that
    still lists them, in page order (``_fold.joined``); of other loads, their checked records
    (``records_of``). A ``build`` of a paged recipe reads its records through this (its pages
    no longer list them).
    """
    if not isinstance(loaded, FetchedPages) or not any(_folded(recipe, b) for b in loaded.pages):
        return Columns.of(records_of(recipe, loaded), recipe.spec)
    paging = recipe.paging
    return joined(
        loaded.pages,
        recipe.items,
        recipe.spec,
        lambda run: Columns.of(records(run, recipe.endpoint), recipe.spec),
        paging.items_of if paging is not None else (lambda body: []),
    )


def _folded(recipe: Recipe, body: Any) -> bool:
    held = body.get(recipe.items) if isinstance(body, Mapping) else None
    return isinstance(held, PageRows)


def records_of(recipe: Recipe, loaded: Loaded) -> list[Any]:
    """The records of what the client returned, checked (the items of every page, or of the
    one answer, or of every answer of many; a paged load's folded pages hold columns instead:
    ``columns_of``).
    """
    if isinstance(loaded, FetchedPages):
        return records(loaded.items, recipe.endpoint)
    bodies = [loaded.data] if isinstance(loaded, Fetched) else [f.data for f in loaded.results if f]
    out: list[Any] = []
    for body in bodies:
        value = field(body, recipe.endpoint, recipe.items, list) if recipe.items else body
        out.extend(records(value, recipe.endpoint))
    return out


class Wired(NamedTuple):
    """A load's parameters as sent: ``wire`` the one request's (a paged one's without its
    paging; for ``many``, the sets as one JSON text: the frame key's), ``wires`` the sets of
    ``many`` (empty otherwise), ``shown`` what provenance shows.
    """

    wire: Wire
    wires: list[Wire]
    shown: dict[str, str]


def wired(
    recipe: Recipe,
    params: Params | None,
    many: Sequence[Params] | None = None,
    shown: dict[str, str] | None = None,
) -> Wired:
    """The wire parameters of a load, once (``_wire.wire_params``; module docstring, 1)."""
    if many is not None:
        wires = [wire_params(p) for p in many]
        wire = Wire(many=json.dumps(wires, separators=(",", ":")))
        return Wired(wire, wires, shown if shown is not None else {})
    wire = wire_params(params)
    if recipe.paging is not None:
        wire = recipe.paging.without_paging(wire)
    return Wired(wire, [], wire)


def frame_keys(
    c: Client, recipe: Recipe, wire: Wire, max_pages: int | None, many: bool
) -> list[str]:
    """The frame cache's keys of a load's frames (``spec``'s, then one per part)."""
    shape = {
        "paging": recipe.paging,
        "max_pages": max_pages,
        "many": many,
        "by_chain": recipe.by_chain,
    }
    key = frame_key(
        spec=recipe.spec,
        build=recipe.build or Recipe.frames,
        scope=key_scope(c.settings.service_id, c.settings.api_key),
        endpoint=recipe.endpoint,
        params=wire,
        shape={**shape, "items": recipe.items, "keep": recipe.keep, "parts": recipe.parts},
    )
    return [part_key(key, i) for i in range(1 + len(recipe.parts))]


def from_catalog(
    c: Client, recipe: Recipe, params: Params | None, many: Sequence[Params] | None
) -> pd.DataFrame:
    """The frame a client connected to a catalog answers for the recipe (``_source``: the
    catalog's ``answer``, plugged in by ``quantscope.catalog``).
    """
    assert c.settings.catalog is not None
    source = catalog_source()
    return source.answer(
        c.settings.catalog, recipe.endpoint, recipe.spec.name, params, many, recipe.keep
    )


def record_frame(record: Any, spec: FrameSpec, provenance: Provenance) -> pd.DataFrame:
    """One record of the service (counts, statistics) as a one-row typed frame with its
    provenance: what a ``series_plan`` loader returns as a Series. As ``series_of``, a record
    holding none of the spec's fields is a row of missing values that the checks count.
    """
    return with_provenance(build_frame([record], spec, stacklevel=8), provenance)


def run_recipe(
    recipe: Recipe,
    params: Params | None,
    client: Client | None,
    many: Sequence[Params] | None = None,
    shown: dict[str, str] | None = None,
    max_pages: int | None = None,
    spend: Spend | None = None,
) -> Frames:
    """Run ``recipe`` (module docstring): ``spec``'s frame, then one per part.

    Args:
        params: the request's parameters (Python values).
        many: instead of ``params``, one request per parameter set (``client.get_many``).
        shown: the parameters provenance shows for ``many`` (one dict per request would make
            attrs as large as the requests, and pandas deep-copies attrs on every operation).
        max_pages: stop a paged recipe after this many pages.
        spend: what a multi-request load may spend (``spend_of``; default ``Spend()``).

    Warnings point at the loader's caller: ``run_recipe`` is called by ``LoadPlan.run``
    (``loaders._planned``), that by the loader.
    """
    c = client_or_default(client)
    if c.settings.catalog is not None:  # qsc.connect(catalog=...): the catalog answers
        return (from_catalog(c, recipe, params, many),)
    wire, wires, provenance_params = wired(recipe, params, many, shown)
    keys = frame_keys(c, recipe, wire, max_pages, many is not None)
    hits = stored_frames(c, keys)
    if hits is not None:
        prov = cached_provenance(
            recipe.endpoint, provenance_params, hits[0].entries, c.settings.service
        )
        return _finished(tuple(with_provenance(h.frame, prov) for h in hits), recipe, wire, c)
    loaded, entries = _fetch(c, recipe, wire, wires if many is not None else None, max_pages, spend)
    if many is not None:
        loaded = replace(loaded, provenance=replace(loaded.provenance, params=provenance_params))
    try:
        frames = recipe.frames(loaded)
    except InvalidResponseError:
        c.cache.forget([e.key for e in at_fault(recipe, loaded, entries) if e is not None])
        raise
    for frame in frames:
        if recipe.by_chain:
            note_plan_chains(frame, wire, c)
        if isinstance(loaded, FetchedPages):
            note_checks(frame, loaded.checks)
    missing = len(loaded.missing) if isinstance(loaded, FetchedPages | FetchedMany) else 0
    of = len(loaded.results) if isinstance(loaded, FetchedMany) else loaded.provenance.pages
    del loaded  # the answers (a paged load's columns): the frame cache stores the frames alone
    stored = [e for e in entries if e is not None]
    if missing:  # partial=True: what fitted, never kept as the frame of these parameters
        for frame in frames:
            with_provenance(frame, None, incomplete={"missing": missing, "of": of})
    elif any(checked(f) for f in frames):  # never served again without the checks' warning
        pass
    elif stored and len(stored) == len(entries):  # every answer is in the cache as loaded
        for part, frame in zip(keys, frames, strict=True):
            c.frames.put(part, frame, stored)
    return _finished(frames, recipe, wire, c)


def stored_frames(c: Client, keys: Sequence[str]) -> list[CachedFrame] | None:
    """The frames kept under every key of ``keys`` (one load's parts), or None when any is
    not kept (then the load makes them all again).
    """
    hits: list[CachedFrame] = []
    for key in keys:
        hit = c.frames.get(key, c.cache)
        if hit is None:
            return None
        hits.append(hit)
    return hits


def _finished(frames: Frames, recipe: Recipe, wire: Wire, c: Client) -> Frames:
    """``frames`` after their warnings: what each lacks (``warn_incomplete``), and for a paged
    list load, filters that matched nothing (``loaders._empty``); ``stacklevel`` points at
    the loader's caller (``_finished`` < ``run_recipe`` < ``LoadPlan.run`` < loader < caller).
    """
    for frame in frames:
        warn_incomplete(frame, stacklevel=6)
    if recipe.paging is not None:
        warn_empty(frames[0], recipe.endpoint, wire, c.quota.plan, c.settings.service, stacklevel=6)
    return frames


def note_checks(obj: pd.DataFrame | pd.Series, found: Mapping[str, Any]) -> None:
    """Add what the answers' checks found (``_http.pagecheck``: items seen twice, totals) to
    ``attrs["quantscope"]["checks"]``, beside what the frame's conversion found.
    """
    if found:
        held = (obj.attrs.get("quantscope") or {}).get("checks") or {}
        with_provenance(obj, None, checks={**held, **found})


def checked(obj: pd.DataFrame | pd.Series) -> bool:
    """Whether the checks of the answers ``obj`` came from found anything (docs/
    service-contract.md, "How answers are checked"): such a frame is not kept in the frame
    cache, so that loading it again warns again.
    """
    return bool((obj.attrs.get("quantscope") or {}).get("checks"))


def _fetch(
    c: Client,
    recipe: Recipe,
    wire: Wire,
    wires: list[Wire] | None,
    max_pages: int | None,
    spend: Spend | None,
) -> tuple[Loaded, tuple[CacheEntry | None, ...]]:
    """The client's answers for ``recipe`` (``wires``: one request each) and their entries;
    a paged recipe's pages folded as they arrive (``Recipe.folder``).
    """
    decode = recipe.decoder()
    if wires is not None:
        many = c.get_many(recipe.endpoint, wires, desc=recipe.desc, decode=decode, spend=spend)
        return many, many.entries
    if recipe.paging is not None:
        pages = c.get_pages(
            recipe.endpoint,
            wire,
            paging=recipe.paging,
            max_pages=max_pages,
            desc=recipe.desc,
            decode=decode,
            spend=spend,
            fold=recipe.folder(),
        )
        return pages, pages.entries
    one = c.get(recipe.endpoint, wire, decode=decode)
    return one, (one.entry,)


def at_fault(
    recipe: Recipe, loaded: Loaded, entries: Sequence[CacheEntry | None]
) -> list[CacheEntry | None]:
    """The cache entries of the answers ``recipe`` could not make a frame of, so that none of
    them is served again: the one answer; of pages or many answers, each one that fails alone
    (the error path only: one small build per answer).
    """
    if isinstance(loaded, Fetched):
        return list(entries)
    alone: list[tuple[Loaded, CacheEntry | None]]
    if isinstance(loaded, FetchedPages):
        items = recipe.paging.items_of if recipe.paging is not None else (lambda b: [])
        alone = [
            (FetchedPages((body,), items(body), loaded.total, loaded.provenance, (), (e,)), e)
            for body, e in zip(loaded.pages, entries, strict=False)
        ]
    else:
        answers = [r for r in loaded.results if r is not None]
        alone = [
            (FetchedMany((r,), loaded.provenance, (), (e,)), e)
            for r, e in zip(answers, entries, strict=False)
        ]
    bad = []
    for one, entry in alone:
        try:
            recipe.frames(one)
        except InvalidResponseError:
            bad.append(entry)
    return bad


def spend_of(confirm: bool, max_requests: int | None, partial: bool) -> Spend:
    """The ``Spend`` of a multi-request loader's keywords (``confirm``, ``max_requests``,
    ``partial``: see ``_http.quota.Spend``).
    """
    return Spend(confirm=confirm, max_requests=max_requests, partial=partial)


def note_plan_chains(obj: pd.DataFrame | pd.Series, wire: Mapping[str, str], c: Client) -> None:
    """Record in attrs that the plan's chain allowance narrowed ``obj``: the request named no
    chain and the plan (known from the quota headers) does not cover every chain.
    """
    plan = c.quota.plan
    if wire.get("chain") or plan is None or plan_named(plan).chains is None:
        return
    seen = (
        sorted(str(v) for v in obj["chain"].dropna().unique())
        if isinstance(obj, pd.DataFrame) and "chain" in obj.columns
        else None
    )
    note = {"plan": plan, "chains_allowed": plan_named(plan).chains, "chains_in_frame": seen}
    with_provenance(obj, None, plan_chains=note)


def _wider(count: int) -> str:
    """``Growth covers 2 chains, Enterprise all``: the plans covering more than ``count``."""
    return ", ".join(
        f"{p.title} covers {p.chains} chains" if p.chains else f"{p.title} all"
        for p in PLANS
        if p.chains is None or p.chains > count
    )


_Held = TypeVar("_Held", pd.DataFrame, pd.Series)


def warn_incomplete(obj: _Held, *, stacklevel: int = 4) -> _Held:
    """One ``IncompleteDataWarning`` line per thing ``obj``'s attrs say it lacks; ``obj``."""
    attrs = obj.attrs.get("quantscope") or {}
    endpoint = attrs.get("endpoint", "this load")
    lines: list[str] = []
    chains = attrs.get("plan_chains")
    if chains:
        held = ", ".join(chains["chains_in_frame"] or []) or "its chains"
        count = chains["chains_allowed"]
        lines.append(
            f"{endpoint}: the {chains['plan']} plan covers {count} chain"
            f"{'s' if count != 1 else ''}, so the service left out the others (this frame "
            f"holds {held} only; attrs['quantscope']['plan_chains']); {_wider(count)}"
        )
    for cap in attrs.get("capped") or ():
        if cap.get("generated") is not None:  # known to be cut short (loaders.optimization)
            lines.append(cap["message"])
    incomplete = attrs.get("incomplete")
    if incomplete:
        lines.append(
            f"{endpoint}: partial load, {incomplete['missing']} of {incomplete['of']} requests "
            "did not fit in the quota and are missing (attrs['quantscope']['incomplete']); "
            "the same load after the reset fetches only them"
        )
    for line in lines:
        warnings.warn(f"quantscope: {line}", IncompleteDataWarning, stacklevel=stacklevel)
    return obj


def typed_frame(
    records: Sequence[Mapping[str, Any] | Item] | Columns,
    spec: FrameSpec,
    provenance: Provenance | None,
    **extra: Any,
) -> pd.DataFrame:
    """``build_frame`` plus ``df.attrs["quantscope"]`` (provenance and loader extras).

    The records may be items decoded by ``_typed.decode.page_decoder(spec, ...)`` (the same frame),
    or ``Columns`` already converted (``columns_of``).
    Records holding none of the spec's fields are never silent rows of missing values: when
    every record is such (another resource, error objects inside a 200) it is an
    ``InvalidResponseError``; when some are, they are counted in a ``DataQualityWarning``.
    """
    frame = build_frame(records, spec, warn=False)
    found = (frame.attrs.get("quantscope") or {}).get("checks") or {}
    lines = [quality_message(spec.name, found)] if found else []
    if len(frame) and len(frame.columns):
        blank = int(frame.isna().all(axis=1).sum())
        endpoint = provenance.endpoint if provenance is not None else spec.name
        if blank == len(frame):
            raise InvalidResponseError(
                f"{endpoint}: none of the {blank} records holds a field of {spec.name} "
                f"(first: {_first(records)!r:.120}); is this the documented answer?",
                endpoint=endpoint,
                status_code=200,
            )
        if blank:
            lines.append(
                f"{spec.name}: {blank} of {len(frame)} records hold none of its fields; their "
                "rows are all missing values"
            )
    if lines:  # one warning for the frame
        warnings.warn("; ".join(lines), DataQualityWarning, stacklevel=4)
    return with_provenance(frame, provenance, **extra)


def _first(records: Sequence[Any] | Columns) -> Any:
    return records.first if isinstance(records, Columns) else records[0]


def typed_series(record: Mapping[str, Any], spec: FrameSpec, provenance: Provenance) -> pd.Series:
    """``series_of`` (one record as a Series named after ``spec``) with its provenance."""
    return with_provenance(series_of(record, spec, spec.name), provenance)


def field(body: Any, endpoint: str, key: str, kind: type = dict) -> Any:
    """``body[key]`` when the body has the documented shape, else a clear error."""
    value = body.get(key) if isinstance(body, Mapping) else None
    if not isinstance(value, kind):
        raise InvalidResponseError(
            f"{endpoint}: expected '{key}' ({kind.__name__}) in the answer, got {body!r:.200}",
            endpoint=endpoint,
            status_code=200,
        )
    return value


def records(value: Any, endpoint: str) -> list[Mapping[str, Any]]:
    """A list of JSON objects (or of items a typed decoder built from them), or a clear error
    naming the endpoint.
    """
    # Judged per distinct type (one or two in a list of thousands), not per item.
    if not isinstance(value, list) or not all(
        issubclass(kind, (Item, Mapping)) for kind in set(map(type, value))
    ):
        raise InvalidResponseError(
            f"{endpoint}: expected a list of objects, got {value!r:.200}",
            endpoint=endpoint,
            status_code=200,
        )
    return value
