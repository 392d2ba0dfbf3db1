"""The HTTP client that loaders build on: connect, cached GETs, pages, quota, retries, writes.

Loaders say what they want (paths from the endpoint registry, ``_endpoints``) and get parsed
JSON plus provenance::

    client = get_default_client()
    one = client.get(E.TRADE.path, {"id": 42})                   # one request (or cache hit)
    pages = client.get_pages(E.TRADES.path, {"quantId": 1}, paging=PageNumberPaging(1000))
    many = client.get_many(E.DETAILS.path, [{"evaluationId": i} for i in ids])
    df.attrs["quantscope"] = pages.provenance.as_dict()

Each result also carries the cache entries of its answers (``Fetched.entry``,
``FetchedPages.entries``, ``FetchedMany.entries``), which the frame cache keeps beside a frame,
and any of them takes ``decode=`` (``_typed.decode.page_decoder``): a function turning an answer's
bytes into its body in place of ``orjson``, passed down explicitly to where bodies are decoded.
``get_pages`` also takes ``fold=``: what a load keeps of each page, applied as the page arrives
(``loaders._fold``: its items as typed columns, converted a batch of pages at a time), so a
load never holds every page's decoded items, and no load holds its answers' ``Response``
objects (the cache has their bytes).
The client reads and writes the HTTP cache only through ``ResponseCache`` (``client.cache``).

Multi-request loads (``get_pages``, ``get_many``) serve cached answers first (no quota) and
count what the rest costs before sending any of it, by the caller's ``Spend``: the rules and
their refusals are ``_http.budget``'s. What a call would cost is priced without making it
(``qsc.estimate``): ``_http.prices``.

``get_default_client()`` raises when ``connect()`` was not called, rather than connecting
lazily: ``connect()`` is where settings are resolved, configuration errors surface and the
embedded sandbox announces itself, so that should happen in a cell the user wrote, once.

``Client`` is a façade over the pieces that live beside it: ``_wire`` (query parameters as text
and path templates), ``_http.sender`` (one request sent with retries within the deadline, and the
quota the answers report), ``_http.quota`` (``Quota`` and the rate-limit headers),
``_http.budget`` (what a load may spend, and its refusal), ``_http.paging`` (a paged load's
walk, its checks and its result), ``_http.prices`` (what a call or a plan would cost, from the
caches alone) and ``_http.results`` (what loads return, with provenance, and the paging
styles). The client keeps HTTP and the cache look-ups; the parts reach it through small
protocols (``paging.Batches``, ``prices.PriceSource``), never by importing it. This module
re-exports the public names, so ``from quantscope._http.client import ...`` is the one import
loaders and tests need.
"""

from __future__ import annotations

import importlib.metadata
import itertools
import os
import sqlite3
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import orjson
import requests

from quantscope._advice import Said
from quantscope._config import OPTIONS_HELP, RetryPolicy, Settings, passed, resolve_settings
from quantscope._errors import (
    APIConnectionError,
    ConfigurationError,
    InvalidResponseError,
    OfflineCacheMissError,
    RateLimitError,
    ServerError,
    StaleDataWarning,
    redact,
)
from quantscope._http import prices
from quantscope._http.budget import Budget, Refusal, extend_fetched
from quantscope._http.cache import (
    CacheEntry,
    CacheInfo,
    ResponseCache,
    key_scope,
    lifetime_until,
    open_session,
    rule_for,
)
from quantscope._http.embedded import start_embedded_sandbox
from quantscope._http.estimate import Estimate
from quantscope._http.framecache import FrameCache
from quantscope._http.paging import load_pages
from quantscope._http.plan import Requests
from quantscope._http.quota import (
    Quota,
    Spend,
    parse_reset,
    quota_from_headers,
)
from quantscope._http.results import (
    Decode,
    Fetched,
    FetchedMany,
    FetchedPages,
    Fold,
    OffsetPaging,
    One,
    PageNumberPaging,
    Provenance,
)
from quantscope._http.sender import Sender, query_string
from quantscope._progress import progress
from quantscope._reprs import client_html
from quantscope._secret import scrubber
from quantscope._wire import Params, _split_path, wire_params

__all__ = [
    "CacheEntry",
    "Client",
    "Fetched",
    "FetchedMany",
    "FetchedPages",
    "OffsetPaging",
    "PageNumberPaging",
    "Provenance",
    "Quota",
    "Spend",
    "cache_info",
    "connect",
    "get_default_client",
    "parse_reset",
    "quota_from_headers",
    "set_default_client",
    "wire_params",
]

try:
    _USER_AGENT = f"quantscope/{importlib.metadata.version('quantscope')}"
except importlib.metadata.PackageNotFoundError:  # running from a source tree
    _USER_AGENT = "quantscope"


# --- the client ---------------------------------------------------------------------------


class Client:
    """A connection to the service (or the embedded sandbox) with its cache and quota.

    Use ``connect()`` to build one and make it the loaders' default. Arguments as for
    ``resolve_settings`` (``Options``); everything is resolved once here and kept in
    ``self.settings``.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        offline: bool = False,
        progress: bool | None = None,
        timeout_s: float = 30.0,
        quota_reserve: int = 0,
        retry: RetryPolicy | None = None,
        quota_share: float | None = None,
        catalog: str | os.PathLike[str] | None = None,
        transport: Callable[[Any], Any] | None = None,
    ) -> None:
        settings = resolve_settings(**passed(locals()))
        if settings.url is None:
            settings = start_embedded_sandbox(settings, start_server=not settings.offline)
        self.settings: Settings = settings
        self.base_url: str = str(settings.url)
        scope = key_scope(settings.service_id, settings.api_key)
        try:
            self._session = open_session(
                settings.cache_path, scope, self.base_url, settings.transport
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigurationError(
                Said(
                    "cannot use the cache at {path} ({exc}); set QUANTSCOPE_CACHE_DIR or "
                    "{cache_dir} a writable directory",
                    values={"path": settings.cache_path, "exc": exc},
                )
            ) from exc
        # A client dropped unclosed (a notebook's second connect()) closes its cache file
        # when collected, never leaving it to the connection's own collection (a
        # ResourceWarning on Python 3.13); close() or ``with`` closes it at once.
        weakref.finalize(self, self._session.close)
        self._session.headers["User-Agent"] = _USER_AGENT
        if settings.api_key:
            # Exactly this spelling: requests-cache redacts only "X-API-Key" from stored requests.
            self._session.headers["X-API-Key"] = settings.api_key
        if settings.auth is not None:  # from user:password@ in the URL, never stored
            self._session.auth = settings.auth
        self._keys: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}  # ``_key``
        self.frames = FrameCache.beside(settings.cache_path)
        self.cache = ResponseCache(
            self._session, offline=settings.offline, companions=(self.frames,)
        )
        self._sender = Sender(self._session, self.base_url, settings, self.cache)
        self._budget = Budget(self._sender, settings)

    # ----- public surface -----

    @property
    def quota(self) -> Quota:
        """The daily quota as last reported by the service (``Quota()`` before any request)."""
        return self._sender.quota

    def get(
        self, endpoint: str, params: Params | None = None, *, decode: Decode | None = None
    ) -> Fetched:
        """GET one endpoint (``{name}`` in the path is filled from ``params``); cache first.

        ``decode`` turns the answer's bytes into its body in place of ``orjson``.
        """
        wire = wire_params(params)
        path, query = _split_path(endpoint, wire)
        one = self._fetch_one(endpoint, path, query, decode)
        if one.stale:
            self._warn_stale(endpoint, 1, 1)
        if one.key is None and one.from_cache:  # served by the session, which sets no key
            one.key = self._key(path, query)
        prov = self._provenance(endpoint, wire, [one])
        return Fetched(one.body, prov, self._entries_of([one])[0])

    def get_many(
        self,
        endpoint: str,
        param_sets: Iterable[Params],
        *,
        desc: str | None = None,
        decode: Decode | None = None,
        spend: Spend | None = None,
    ) -> FetchedMany:
        """GET ``endpoint`` once per parameter set, quota-aware (see the module docstring).

        With ``Spend(partial=True)`` the result may be incomplete: ``missing`` lists the
        parameter sets not loaded.
        """
        wires = [wire_params(p) for p in param_sets]
        requests_ = [_split_path(endpoint, w) for w in wires]
        results, refusal = self._fetch_batch(
            endpoint, requests_, desc=desc or endpoint, decode=decode, spend=spend or Spend()
        )
        loaded = [r for r in results if r is not None]
        prov = self._provenance(endpoint, wires, loaded)
        fetched = tuple(
            Fetched(
                r.body,
                replace(
                    prov,
                    params=w,
                    pages=1,
                    requests=r.spent,
                    from_cache=r.from_cache,
                    fetched_at=r.fetched_at,
                    stale=r.stale,
                ),
            )
            if r is not None
            else None
            for r, w in zip(results, wires, strict=True)
        )
        missing = tuple(i for i, r in enumerate(results) if r is None)
        many = FetchedMany(fetched, prov, missing, self._entries_of(loaded))
        if refusal is not None:
            refusal.partial = many
            raise refusal
        return many

    def get_pages(
        self,
        endpoint: str,
        params: Params | None = None,
        *,
        paging: PageNumberPaging | OffsetPaging,
        max_pages: int | None = None,
        desc: str | None = None,
        decode: Decode | None = None,
        spend: Spend | None = None,
        fold: Fold | None = None,
    ) -> FetchedPages:
        """Every page of a paginated endpoint, quota-aware; cached pages cost nothing.

        The first page gives the total; the rest are counted against the quota before any is
        sent (module docstring). ``max_pages`` caps the load. Page parameters in ``params``
        are overridden. ``decode``, when given, turns each page's bytes into its body in place
        of ``orjson`` (``_typed.decode.page_decoder``: typed items plus the keys paging reads; plain
        JSON for a page of another shape). The result's ``entries`` are the loaded pages'
        cache entries in page order (None for a page without one, e.g. an expired copy
        standing in for a failed request). With ``Spend(partial=True)`` it may be incomplete:
        ``missing`` lists the pages not loaded.

        ``fold``, when given, is applied to each page's body as soon as the page is loaded
        (and its items counted), before the next one is asked for: the result's ``pages`` are
        what it made of them, and ``items`` lists only the items of pages it left as they
        were (``loaders._fold``: pages' items become typed columns a batch of pages at a
        time, so a load holds at most a batch's decoded items, never every page's). ``fold``
        sees the pages in the order they are loaded (cached ones first). A page of another
        shape is never folded: the checks above judge it as it came.

        Before it is folded, each page is checked against the load's other pages
        (``_http.pagecheck``, docs/service-contract.md "How answers are checked"): a page that
        brings no new item stops the load with ``InvalidResponseError`` (the service is not
        paging); items seen twice are dropped from the later page; those and totals the
        pages disagree with are the result's ``checks``, in one ``InconsistentAnswerWarning``.
        """
        return load_pages(
            self,
            endpoint,
            params,
            paging=paging,
            max_pages=max_pages,
            desc=desc,
            decode=decode,
            spend=spend or Spend(),
            fold=fold,
        )

    def put(self, endpoint: str, json: Any, params: Params | None = None) -> Fetched:
        """PUT a JSON body; never cached; invalidates the cached GETs it changes."""
        return self._write("PUT", endpoint, json, params)

    def post(self, endpoint: str, json: Any = None, params: Params | None = None) -> Fetched:
        """POST (optionally a JSON body); never cached; invalidates the cached GETs it changes."""
        return self._write("POST", endpoint, json, params)

    def close(self) -> None:
        """Close the HTTP session and the cache file."""
        self._session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = ", offline" if self.settings.offline else ""
        where = f"{self.settings.service} at {self.base_url}{mode}"
        return f"<quantscope.Client {where}; {self._sender.quota!r}>"

    def _repr_html_(self) -> str:
        return client_html(self)

    # ----- sending, with the retry policy -----

    # ----- one GET: cache, offline, stale fallback, lifetimes -----

    def _prepare(
        self, method: str, path: str, query: Mapping[str, str]
    ) -> requests.PreparedRequest:
        """The request as far as its cache key reads it (method, URL, body; headers are not
        matched): the session's cookies, headers and netrc auth are not merged in, which cost
        more than the key itself and were paid on every look-up before a send.
        """
        prepared = requests.PreparedRequest()
        prepared.prepare_method(method)
        prepared.prepare_url(self.base_url + path, query_string(query))
        prepared.prepare_headers(None)
        prepared.prepare_body(None, None)
        return prepared

    def _key(self, path: str, query: Mapping[str, str]) -> str:
        """The cache key of GET ``path`` with ``query``, computed once per client for each
        (pricing, the look-up before a load and the send ask for the same keys).
        """
        memo = (path, tuple(query.items()))
        key = self._keys.get(memo)
        if key is None:
            if len(self._keys) >= _KEY_MEMO:
                self._keys.clear()
            key = self._keys[memo] = self.cache.create_key(self._prepare("GET", path, query))
        return key

    def _cached(
        self,
        path: str,
        query: Mapping[str, str],
        endpoint: str,
        decode: Decode | None,
        *,
        expired_ok: bool,
    ) -> One | None:
        """The stored 200 answer to GET ``path``, if there is one (and it is fresh enough)."""
        stored = self.cache.lookup_key(self._key(path, query))
        return self._usable(stored, endpoint, decode, expired_ok)

    def _usable(
        self, cached: Any, endpoint: str, decode: Decode | None, expired_ok: bool
    ) -> One | None:
        """A stored answer as the load's, if it is a 200 fresh enough and decodes."""
        if cached is None or cached.status_code != 200:
            return None
        if cached.is_expired and not expired_ok:
            return None
        try:
            body = self._decode(cached, endpoint, decode)
        except InvalidResponseError:
            self._forget(cached)  # stored before quantscope checked bodies: ask again
            return None
        self.cache.count_hit()
        return One(
            body,
            from_cache=True,
            fetched_at=cached.created_at or datetime.now(UTC),
            spent=0,
            stale=cached.is_expired and not self.settings.offline,
            key=cached.cache_key,
        )

    def _probe(
        self, path: str, query: Mapping[str, str], endpoint: str, decode: Decode | None
    ) -> One | None:
        """A cached answer usable without the service: fresh (offline: any), else None."""
        return self._cached(path, query, endpoint, decode, expired_ok=self.settings.offline)

    def _stored(
        self, requests_: Sequence[tuple[str, Mapping[str, str]]], besides: Sequence[str] | None
    ) -> Iterator[tuple[str | None, Any]]:
        """The keys and stored answers of GET ``requests_``, in order (None where there is
        none; the key None where the look-up was skipped).

        With ``besides`` (the requests are distinct, and no cache entry under those keys is
        one of theirs: a paged load's later pages, besides its first), the cache is counted
        first and the look-ups stop once each other entry was found: the rest cannot be
        stored, so a page count of 100,000 from a bogus total costs no look-up per page (each one
        prepares, keys and looks up a request). The count stays exact: every stored
        page is found, fresh or not.
        """
        left = None if besides is None else self.cache.count_besides(besides)
        for n in range(len(requests_)):
            if left == 0:
                yield from itertools.repeat((None, None), len(requests_) - n)
                return
            key = self._key(*requests_[n])
            stored = self.cache.lookup_key(key)
            if stored is not None and left is not None:
                left -= 1
            yield key, stored

    # ----- pricing: what a plan of requests would cost, from the cache alone (``_http.prices``)

    def estimate_for(
        self,
        endpoint: str,
        *,
        requests: int,
        cached: int,
        exact: bool = True,
        write: bool = False,
        probed: int = 0,
    ) -> Estimate:
        """What a load would cost, with the quota as last reported."""
        return prices.estimate_for(
            self._budget,
            endpoint,
            requests=requests,
            cached=cached,
            exact=exact,
            write=write,
            probed=probed,
        )

    def _request_plan(self, method: str, /, *args: Any, **kwargs: Any) -> Requests:
        """The requests ``getattr(self, method)(*args, **kwargs)`` would send, as a plan
        (``_http.prices.request_plan``; ``_http.estimate.RequestPlanner``).
        """
        return prices.request_plan(self, method, *args, **kwargs)

    def _price(self, plan: Requests, *, probe: bool = False) -> Estimate:
        """What ``plan`` would cost now (``_http.prices.price``; ``_http.plan.Pricer``)."""
        return prices.price(self, plan, probe=probe)

    def _stale(
        self, path: str, query: Mapping[str, str], endpoint: str, decode: Decode | None
    ) -> One | None:
        """Any cached answer, to fall back on when the service failed; None when there is none."""
        return self._cached(path, query, endpoint, decode, expired_ok=True)

    def _fetch_one(
        self,
        endpoint: str,
        path: str,
        query: Mapping[str, str],
        decode: Decode | None,
        extend_to: datetime | None = None,
        miss_key: str | None = None,
    ) -> One:
        """GET one request (cache, offline, stale fallback, lifetimes). ``miss_key``: its key,
        when the caller found no entry under it: sent past requests-cache and stored here once
        its body is checked, with the lifetime that body calls for (``ResponseCache.store``).
        """
        if self.settings.offline:
            hit = self._probe(path, query, endpoint, decode)
            if hit is None:
                raise self._offline_miss(endpoint, [query])
            return hit
        try:
            response, attempts, spent = self._sender.send(
                "GET", path, query, None, endpoint, miss_key
            )
        except APIConnectionError:
            stale = self._stale(path, query, endpoint, decode)
            if stale is None:
                raise
            return stale
        if response.status_code >= 400:
            error = self._sender.status_error(response, "GET", endpoint, path, query, attempts)
            stale = (
                self._stale(path, query, endpoint, decode)
                if isinstance(error, ServerError)
                else None
            )
            if stale is None:
                raise error
            return stale
        try:
            body = self._decode(response, endpoint, decode)
        except InvalidResponseError:
            self._forget(response)
            raise
        from_cache = bool(getattr(response, "from_cache", False))
        if miss_key is not None:
            if response.status_code == 200:
                lifetime = lifetime_until(path, query, body, extend_to)
                self.cache.store(response, miss_key, lifetime)
        elif not from_cache:
            self._apply_lifetime(response, path, query, body, extend_to)
        fetched_at = getattr(response, "created_at", None) or datetime.now(UTC)
        key = getattr(response, "cache_key", None)
        return One(body, from_cache, fetched_at, spent, key=key)

    def _entries_of(self, loaded: Sequence[One]) -> tuple[CacheEntry | None, ...]:
        """The cache entries ``loaded`` were read from or stored as, in order; None for one
        without an entry (a stale stand-in) or whose stored answer is no longer the one
        loaded (fetched again since). A cached answer keeps its ``created_at``; the entries of
        fetched ones are read back from the cache in one query.
        """
        fresh = self.cache.entries_of(
            [(o.key, o.fetched_at) for o in loaded if o.key and not o.stale and not o.from_cache]
        )
        stored = iter(fresh)
        out: list[CacheEntry | None] = []
        for one in loaded:
            if one.key is None or one.stale:
                out.append(None)
            elif one.from_cache:
                out.append(CacheEntry(one.key, one.fetched_at))
            else:
                out.append(next(stored))
        return tuple(out)

    def _keep_until(
        self, path: str, query: Mapping[str, str], body: Any, extend_to: datetime
    ) -> None:
        """Store GET ``path``'s copy again, kept at least until ``extend_to`` (a load that stops
        early keeps what it fetched for the resume: ``_http.budget.extend_fetched``).
        """
        stored = self.cache.lookup_key(self._key(path, query))
        if stored is not None:
            self._apply_lifetime(stored, path, query, body, extend_to)

    def _apply_lifetime(
        self,
        response: Any,
        path: str,
        query: Mapping[str, str],
        body: Any,
        extend_to: datetime | None,
    ) -> None:
        """Store again when the body (or a partial load) calls for another lifetime than the
        rule's, which requests-cache applied when it stored the answer.
        """
        wanted = lifetime_until(path, query, body, extend_to)
        if wanted != rule_for(path).expire_after:
            self.cache.restore(response, wanted)

    def _decode(self, response: Any, endpoint: str, decode: Decode | None = None) -> Any:
        content = response.content
        if not content:
            return None
        if getattr(response, "from_cache", False) and self.settings.api_key:
            # Answers arriving now are scrubbed before they are stored (_http.transport); one stored
            # by an earlier quantscope, which scrubbed only the literal key, may spell it
            # escaped. Linear in the body, on HTTP-cache hits only (the frame cache's skip this).
            content = scrubber(self.settings.api_key).scrub_bytes(content)
        try:
            return orjson.loads(content) if decode is None else decode(content)
        except orjson.JSONDecodeError:
            shown = redact(repr(content[:60]), [self.settings.api_key or ""])
            raise InvalidResponseError(
                f"{endpoint}: the service answered {response.status_code} with a body that is "
                f"not JSON ({shown}...); is QUANTSCOPE_URL the API's base address?",
                endpoint=endpoint,
                status_code=response.status_code,
            ) from None

    def _forget(self, *responses: Any) -> None:
        """Drop the cached copies of answers that could not be used (``ResponseCache.forget``)."""
        self.cache.forget([k for r in responses if (k := getattr(r, "cache_key", None))])

    def _warn_stale(self, endpoint: str, stale: int, total: int) -> None:
        part = (
            "an expired cached copy"
            if total == 1
            else f"expired cached copies for {stale} of {total} requests"
        )
        warnings.warn(
            f"quantscope: the service failed for {endpoint}; using {part} (see provenance "
            "fetched_at)",
            StaleDataWarning,
            stacklevel=3,
        )

    def _offline_miss(
        self, endpoint: str, queries: Sequence[Mapping[str, str]]
    ) -> OfflineCacheMissError:
        shown = "; ".join(
            "&".join(f"{k}={v}" for k, v in q.items()) or "(no params)" for q in queries[:3]
        )
        more = f" and {len(queries) - 3} more" if len(queries) > 3 else ""
        return OfflineCacheMissError(
            Said(
                "offline, and the cache has no copy of {endpoint} with {shown}: connect online "
                "once to fetch it{online}",
                values={"endpoint": endpoint, "shown": f"{shown}{more}"},
            ),
            endpoint=endpoint,
            params=queries[0] if queries else {},
        )

    # ----- several GETs: cache first, then what the quota allows -----

    def _fetch_batch(
        self,
        endpoint: str,
        requests_: Sequence[tuple[str, Mapping[str, str]]],
        *,
        desc: str,
        decode: Decode | None,
        spend: Spend,
        spent: int = 0,
        unit: str = "answers",
        stop: Callable[[One], bool] | None = None,
        settle: Callable[[One], None] | None = None,
        besides: Sequence[str] | None = None,
    ) -> tuple[list[One | None], Refusal | None]:
        """Cached answers first, then what the plan allows (``_http.plan``) of the rest, in order.

        ``spent``: requests this load already sent (the first page). ``stop``: sends nothing
        more after an answer it holds true of (an empty page). ``settle``: applied to each
        answer as soon as it is loaded (``get_pages``' fold). ``besides``: the requests are
        distinct and stored under none of these keys, so the cache is looked up only until
        every other entry was found (``_stored``). Returns the answers (None where not
        loaded) and the refusal to raise when the plan sent nothing more.
        """
        results: list[One | None] = []
        offline = self.settings.offline
        absent: dict[int, str | None] = {}  # stored under no key: sent past the cache's look-up
        for key, stored in self._stored(requests_, besides):
            if stored is None:
                absent[len(results)] = key
            cached = None if stored is None else self._usable(stored, endpoint, decode, offline)
            if cached is not None and settle is not None:
                settle(cached)
            results.append(cached)
        misses = [i for i, r in enumerate(results) if r is None]
        if misses and self.settings.offline:
            raise self._offline_miss(endpoint, [requests_[i][1] for i in misses])
        refusal: Refusal | None = None
        extend_to: datetime | None = None
        allowed: int | None = None  # misses this load may fetch, once the quota is known
        stale = 0
        with progress(spent + len(misses), desc, enabled=self.settings.progress, done=spent) as bar:
            for n, i in enumerate(misses):
                if allowed is None and self._budget.left() is not None:
                    fits, refusal = self._budget.plan(
                        endpoint, len(misses) - n, spent + n, spend, unit
                    )
                    if refusal is not None:
                        break
                    allowed = n + fits
                    if allowed < len(misses):  # partial: keep what it fetches for the resume
                        bar.total = spent + allowed
                        extend_to = self._budget.resume_until()
                        extend_fetched(results, misses[:n], requests_, extend_to, self._keep_until)
                if allowed is not None and n >= allowed:
                    break
                path, query = requests_[i]
                try:
                    miss = self._key(path, query) if absent.get(i, "") is None else absent.get(i)
                    one = self._fetch_one(endpoint, path, query, decode, extend_to, miss)
                except RateLimitError:  # spent elsewhere meanwhile: keep what we have for later
                    if extend_to is None:
                        until = self._budget.resume_until()
                        extend_fetched(results, misses[:n], requests_, until, self._keep_until)
                    raise
                if settle is not None:
                    settle(one)
                results[i] = one
                stale += one.stale
                bar.update(1)
                if stop is not None and stop(one):
                    bar.total = bar.n
                    break
        if stale:
            self._warn_stale(endpoint, stale, len(requests_))
        return results, refusal

    def _provenance(
        self,
        endpoint: str,
        params: dict[str, str] | Sequence[dict[str, str]],
        loaded: Sequence[One],
        pages: int | None = None,
    ) -> Provenance:
        times = [o.fetched_at for o in loaded]
        return Provenance(
            endpoint=endpoint,
            params=params if isinstance(params, dict) else list(params),
            fetched_at=min(times) if times else datetime.now(UTC),
            from_cache=bool(loaded) and all(o.from_cache for o in loaded),
            pages=len(loaded) if pages is None else pages,
            requests=sum(o.spent for o in loaded),
            service=self.settings.service,
            stale=any(o.stale for o in loaded),
        )

    # ----- writes -----

    def _write(self, method: str, endpoint: str, json_body: Any, params: Params | None) -> Fetched:
        if self.settings.offline:
            raise ConfigurationError(
                Said(
                    "{method} {endpoint} changes the service and needs it: "
                    "connect{without_offline}",
                    values={"method": method, "endpoint": endpoint},
                )
            )
        wire = wire_params(params)
        path, query = _split_path(endpoint, wire)
        try:
            response, attempts, spent = self._sender.send(method, path, query, json_body, endpoint)
        except APIConnectionError:
            self.cache.invalidate(method, path)  # it may have been applied
            raise
        if not 400 <= response.status_code < 500:
            self.cache.invalidate(method, path)
        if response.status_code >= 400:
            raise self._sender.status_error(response, method, endpoint, path, query, attempts)
        body = self._decode(response, endpoint)
        now = datetime.now(UTC)
        prov = Provenance(endpoint, wire, now, False, 1, spent, self.settings.service)
        return Fetched(body, prov)


_KEY_MEMO = 4096  # keys remembered per client (``Client._key``; a 2,000-id details load asks 2,000)


# --- the default client -------------------------------------------------------------------

_DEFAULT: Client | None = None
_DEFAULT_LOCK = threading.Lock()


def connect(
    url: str | None = None,
    api_key: str | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    offline: bool = False,
    progress: bool | None = None,
    timeout_s: float = 30.0,
    quota_reserve: int = 0,
    retry: RetryPolicy | None = None,
    quota_share: float | None = None,
    catalog: str | os.PathLike[str] | None = None,
    transport: Callable[[Any], Any] | None = None,
) -> Client:
    """Connect to the service and make the client the loaders' default.

    Each setting comes from the argument, else its ``QUANTSCOPE_*`` variable, else the default
    (``Options``, the one declaration of them). With no URL at all, the embedded sandbox is
    started (once per process) with its Enterprise key, and one line says so.
    """
    client = Client(**passed(locals()))
    set_default_client(client)
    return client


connect.__doc__ = f"{connect.__doc__}{OPTIONS_HELP}"
Client.__doc__ = f"{Client.__doc__}{OPTIONS_HELP}"


def set_default_client(client: Client | None) -> None:
    """Make ``client`` the one loaders use (None: forget it)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        _DEFAULT = client


def get_default_client() -> Client:
    """The client ``connect()`` made; ConfigurationError telling what to do when there is none."""
    client = _DEFAULT
    if client is None:
        raise ConfigurationError(
            "not connected: call qsc.connect() first (with no QUANTSCOPE_URL it starts the "
            "embedded sandbox)"
        )
    return client


def cache_info() -> CacheInfo:
    """Size and hits/misses of the default client's cache."""
    return get_default_client().cache.info()
