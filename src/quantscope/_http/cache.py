"""The on-disk HTTP cache: how long each endpoint's answers live, what writes invalidate, and
how cache keys are scoped. The cache is the researcher's quota (100 requests a day on Basic).

* **Lifetimes** are one table, ``CACHE_RULES``, derived from the endpoint registry
  (``_endpoints``: each GET route's lifetime): glob over the endpoint path -> lifetime,
  first match wins, optionally refined from the parameters or the body once the answer is in
  (a closed trade never changes; an open one does, and ``/api/trades/{id}`` serves both).
* **Writes** are never cached; ``INVALIDATIONS`` (from each write route's ``invalidates``)
  names the cached GETs each write changes.
  A write that failed with a 4xx changed nothing and invalidates nothing; any other outcome
  (including "no answer") may have changed the state, so it invalidates.
* **Cache keys.** requests-cache's key (method, URL, sorted params, body) with two changes:
  the base URL is replaced by the *service identity* (the configured URL, or the sandbox's
  seed and scale, whose port changes on every start), and the key is mixed with a digest of
  the API key. Two keys may see different data for the same URL (Basic sees one chain,
  Enterprise all), and the client cannot know a key's plan before its first answer (nor ever,
  offline), so entries are scoped per key, never per guessed plan. The key itself is never in
  a cache key or on disk: requests-cache redacts the ``X-API-Key`` header (exact spelling) from
  stored requests, and only a one-way digest of a digest enters the key. Cost of the choice:
  a new key starts with a cold cache.
* **The session** (``_Session``) reads the environment's proxy and CA-bundle settings once
  per origin (requests reads them on every request): set them before ``connect()``.
* **Redirects** to another origin are refused before anything is sent there, and no
  request of any hop is stored with its credential headers (``_http.transport``,
  ``_http.cacheformat``).
* **Storage.** Answers are stored in quantscope's format (``_http.cacheformat``: a JSON head and the
  body's bytes, never a pickle), bodies of 256 kB or more in files beside the SQLite file
  (``_http.cachestore``). A file an older quantscope filled with pickles is set aside unread
  (``open_session``).
"""

from __future__ import annotations

import fnmatch
import glob
import os
import sqlite3
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from hashlib import blake2b
from pathlib import Path
from typing import Any, NamedTuple, Protocol
from urllib.parse import urlsplit

from requests import PreparedRequest, Request, Response
from requests_cache import DO_NOT_CACHE, EXPIRE_IMMEDIATELY, NEVER_EXPIRE, CachedSession
from requests_cache.cache_keys import create_key
from requests_cache.models.response import CachedResponse
from requests_cache.policy import ExpirationPatterns
from requests_cache.policy.expiration import get_expiration_datetime, utcnow

from quantscope._endpoints import API_PREFIX, ROUTES, by_key
from quantscope._errors import CacheRecoveredWarning, CacheWriteWarning
from quantscope._http.cacheformat import FORMAT_VERSION
from quantscope._http.cachestore import WRITE_ERRORS, BodyFileCache, bodies_dir, warn_unwritable
from quantscope._http.inprocess import Handler, InProcessTransport
from quantscope._http.transport import WholeBodyAdapter, guard_redirect

__all__ = [
    "CACHE_RULES",
    "INVALIDATIONS",
    "NEVER_EXPIRE",
    "CacheEntry",
    "CacheInfo",
    "CacheRule",
    "ResponseCache",
    "endpoint_matches",
    "key_scope",
    "lifetime_for",
    "lifetime_until",
    "make_key_fn",
    "rule_for",
    "urls_expire_after",
]

MINUTE = 60
Lifetime = int | timedelta | datetime  # seconds, a span, or an absolute time; NEVER_EXPIRE = -1
Refiner = Callable[[Mapping[str, str], Any, datetime], Lifetime | None]


@dataclass(frozen=True)
class CacheRule:
    """How long answers of endpoints matching ``pattern`` live, and why.

    ``refine(params, body, now)`` may return a different lifetime once the answer is known
    (``body`` is None before the request is sent); None keeps ``expire_after``.
    """

    pattern: str
    expire_after: Lifetime
    why: str
    refine: Refiner | None = None


def _closed_trade(params: Mapping[str, str], body: Any, now: datetime) -> Lifetime | None:
    trade = body.get("trade") if isinstance(body, Mapping) else None
    status = trade.get("status") if isinstance(trade, Mapping) else None
    return NEVER_EXPIRE if isinstance(status, str) and status.lower() == "closed" else None


def _parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _closed_window(params: Mapping[str, str], body: Any, now: datetime) -> Lifetime | None:
    """Counts over a window that ended over an hour ago no longer change."""
    end = _parse_iso(params.get("timeTo"))
    return NEVER_EXPIRE if end is not None and end <= now - timedelta(hours=1) else None


_TIMEFRAMES = {"h": 3600, "d": 86400, "w": 7 * 86400}


def _next_candle(params: Mapping[str, str], body: Any, now: datetime) -> Lifetime | None:
    """Candles up to now change when the next window closes: live until then.

    The answer always reaches the newest window, so it is never immutable as a whole. When
    that moment is already past (a frozen or stopped market), keep the rule's short lifetime.
    """
    frame = params.get("timeframe", "1h").strip().lower()
    try:
        step_s = int(frame[:-1]) * _TIMEFRAMES[frame[-1]]
        last_ms = max(int(point["timestamp"]) for point in body["ohlcv"])
    except (KeyError, ValueError, TypeError, IndexError):
        return None
    next_close = datetime.fromtimestamp(last_ms / 1000, UTC) + timedelta(seconds=2 * step_s)
    return next_close if next_close > now + timedelta(minutes=5) else None


_REFINERS: dict[str, Refiner] = {
    "closed_trade": _closed_trade,
    "closed_window": _closed_window,
    "next_candle": _next_candle,
}


def _rules() -> tuple[CacheRule, ...]:
    """One rule per GET route of the registry, longest glob first (so ``/api/trades/stats``
    comes before ``/api/trades/*``, and that before ``/api/trades``), then the catch-all.
    The registry's ``NEVER`` is requests-cache's ``NEVER_EXPIRE`` (-1).
    """
    rules = [
        CacheRule(e.glob, e.lifetime, e.why, _REFINERS[e.refine] if e.refine else None)
        for e in sorted(ROUTES, key=lambda e: -len(e.glob))
        if e.method == "GET" and e.lifetime is not None
    ]
    return (*rules, CacheRule("*", 5 * MINUTE, "anything else: briefly"))


# First match wins; patterns are globs over the path ("*" also crosses "/").
CACHE_RULES: tuple[CacheRule, ...] = _rules()

# Write (METHOD path glob) -> the cached GET endpoints it may change.
INVALIDATIONS: dict[str, tuple[str, ...]] = {
    f"{e.method} {e.glob}": tuple(by_key(k).glob for k in e.invalidates)
    for e in ROUTES
    if e.invalidates
}


def rule_for(path: str) -> CacheRule:
    """The first rule whose pattern matches ``path`` (the catch-all ``*`` always does)."""
    for rule in CACHE_RULES:
        if fnmatch.fnmatchcase(path, rule.pattern):
            return rule
    raise AssertionError("CACHE_RULES must end with a catch-all")  # pragma: no cover


def lifetime_for(
    path: str, params: Mapping[str, str], body: Any = None, now: datetime | None = None
) -> Lifetime:
    """The lifetime of the answer to GET ``path`` with ``params`` (and ``body`` once known)."""
    rule = rule_for(path)
    if rule.refine is not None:
        refined = rule.refine(params, body, now or datetime.now(UTC))
        if refined is not None:
            return refined
    return rule.expire_after


def lifetime_until(
    path: str, query: Mapping[str, str], body: Any, extend_to: datetime | None
) -> Lifetime:
    """How long an answer with ``body`` is kept: its rule's, refined by the body, and at
    least until ``extend_to`` (the pages of a partial load, kept for the resume).
    """
    wanted = lifetime_for(path, query, body)
    if extend_to is not None and wanted != NEVER_EXPIRE:
        wanted = max(extend_to, _as_datetime(wanted))
    return wanted


def _as_datetime(lifetime: Lifetime) -> datetime:
    if isinstance(lifetime, datetime):
        return lifetime
    span = lifetime if isinstance(lifetime, timedelta) else timedelta(seconds=lifetime)
    return datetime.now(UTC) + span


def endpoint_matches(url_or_path: str, pattern: str) -> bool:
    """Whether a stored URL's path is ``pattern`` (a glob; ``{id}`` counts as ``*``).

    Matched as a suffix so a base URL with a path prefix (``https://host/v1``) still matches
    ``/api/...``; a pattern without a leading ``/`` is taken under ``/api/``.
    """
    path = urlsplit(url_or_path).path or url_or_path
    glob = pattern if pattern.startswith(("/", "*")) else f"{API_PREFIX}{pattern}"
    while "{" in glob and "}" in glob.split("{", 1)[1]:
        head, rest = glob.split("{", 1)
        glob = head + "*" + rest.split("}", 1)[1]
    return fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, "*" + glob)


def invalidated_by(method: str, path: str) -> tuple[str, ...]:
    """The endpoint globs a write to ``path`` invalidates (itself, when not registered)."""
    for write, targets in INVALIDATIONS.items():
        verb, _, glob = write.partition(" ")
        if verb == method.upper() and fnmatch.fnmatchcase(path, glob):
            return targets
    return (path,)


# --- cache keys ---------------------------------------------------------------------------

_SERVICE = "http://quantscope.service"


def key_scope(service_id: str, api_key: str | None) -> str:
    """A digest naming (service, key): entries of one scope are invisible to another."""
    key_digest = blake2b((api_key or "").encode(), digest_size=16, person=b"qs.api-key").digest()
    return blake2b(service_id.encode() + b"\0" + key_digest, digest_size=16).hexdigest()


def make_key_fn(scope: str, base_url: str) -> Callable[..., str]:
    """A requests-cache ``key_fn``: the standard key of the request rebased onto the service
    identity, mixed with ``scope`` (see the module docstring).
    """
    base = base_url.rstrip("/")

    known: dict[tuple[Any, ...], str] = {}  # memo: a request's key is asked twice a GET

    def key_fn(request: Request | PreparedRequest, **kwargs: Any) -> str:
        memo = _memo_key(request, kwargs)
        if memo is not None and (hit := known.get(memo)) is not None:
            return hit
        prepared = request.prepare() if isinstance(request, Request) else request.copy()
        url = prepared.url or ""
        if base and url.startswith(base):
            prepared.url = _SERVICE + url[len(base) :]
        plain = create_key(prepared, **kwargs)
        key = blake2b(f"{scope}:{plain}".encode(), digest_size=16).hexdigest()
        if memo is not None:
            if len(known) >= _KEY_MEMO:
                known.clear()
            known[memo] = key
        return key

    return key_fn


_KEY_MEMO = 4096  # keys remembered per session (a 2,000-id details load asks 2,000)


def _memo_key(request: Any, kwargs: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What a request's cache key is a function of, when that is its method, URL and body
    alone (prepared, headers not matched: quantscope's case); None otherwise (computed anew).

    The client looks a GET up before sending it (cached answers first) and requests-cache
    computes the key again when it is sent: one URL normalization per look-up, twice a request
    without this.
    """
    if not isinstance(request, PreparedRequest) or kwargs.get("match_headers"):
        return None
    body = request.body
    if body is not None and not isinstance(body, bytes | str):
        return None
    ignored = kwargs.get("ignored_parameters")
    memo = (
        request.method,
        request.url,
        body,
        bool(kwargs.get("verify", True)),
        str(kwargs.get("serializer")),
        kwargs.get("content_root_key"),
        tuple(ignored) if ignored else None,
    )
    try:
        hash(memo)
    except TypeError:  # something unhashable: no memo
        return None
    return memo


# --- the cache object users see -----------------------------------------------------------


@dataclass(frozen=True)
class CacheInfo:
    """Size and use of the cache: on disk, and hits/misses of this client."""

    path: Path
    size_bytes: int
    entries: int
    hits: int
    misses: int

    def __repr__(self) -> str:
        return (
            f"CacheInfo({self.entries} entries, {self.size_bytes / 1e6:.1f} MB, "
            f"{self.hits} hits / {self.misses} misses this session, path={str(self.path)!r})"
        )


def urls_expire_after(base_url: str) -> ExpirationPatterns:
    """``CACHE_RULES`` as requests-cache URL patterns under ``base_url`` (catch-all excluded).

    Lifetimes go in by URL rather than per request: a per-request ``expire_after`` is sent to
    the service as a ``Cache-Control: max-age`` request header (``max-age=-1`` for "never").
    requests-cache matches a pattern as a prefix (it appends ``**``); the rules are ordered so
    that this agrees with ``rule_for`` on every path of the spec.
    """
    parts = urlsplit(base_url)
    prefix = glob.escape(parts.netloc + parts.path.rstrip("/"))
    return {prefix + rule.pattern: rule.expire_after for rule in CACHE_RULES if rule.pattern != "*"}


_KEY_HEADERS = frozenset({"x-api-key", "authorization"})


def _drop_key_from_vary(response: Any, *args: Any, **kwargs: Any) -> Any:
    """Response hook: remove the key header from ``Vary`` before requests-cache stores it.

    A service may answer ``Vary: X-API-Key``; requests-cache then treats every lookup as a
    miss (the header is redacted, so it can never match). Entries are scoped per key already
    (``key_scope``), which is exactly what that Vary asks for.
    """
    vary = response.headers.get("Vary")
    if vary:
        kept = [v.strip() for v in vary.split(",") if v.strip().lower() not in _KEY_HEADERS]
        if kept:
            response.headers["Vary"] = ", ".join(kept)
        else:
            del response.headers["Vary"]
    return response


class _Session(CachedSession):
    """``CachedSession`` reading the environment's proxy and CA-bundle settings once per
    origin, not on every request.

    requests reads them again for each request (``merge_environment_settings``: the whole
    environment walked by ``urllib.request.getproxies_environment``, once per request of a paged
    load). The settings in force when the client made its first request to an
    origin are kept for its life: proxies set in the environment before ``connect()`` are
    used; a change made afterwards needs a new client (``connect()`` again). A call passing its
    own ``proxies`` is merged anew, as requests does.

    ``origin`` is the configured service's URL: a redirect that leaves its origin loses its
    credential headers and is refused (``_http.transport.guard_redirect``).
    """

    def __init__(self, *args: Any, origin: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._environment: dict[tuple[Any, ...], Any] = {}
        self.origin = origin

    def rebuild_auth(self, prepared_request: PreparedRequest, response: Response) -> None:
        guard_redirect(prepared_request, response, self.origin)
        super().rebuild_auth(prepared_request, response)

    def merge_environment_settings(
        self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any
    ) -> Any:
        if proxies:
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        parts = urlsplit(str(url))
        try:
            memo = (
                parts.scheme,
                parts.netloc,
                stream,
                verify,
                cert,
                self.trust_env,
                tuple(sorted((self.proxies or {}).items())),
                self.stream,
                self.verify,
                self.cert,
            )
            settings = self._environment.get(memo)
        except TypeError:  # an unhashable setting: merged anew
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        if settings is None:
            settings = super().merge_environment_settings(url, {}, stream, verify, cert)
            self._environment[memo] = settings
        return {**settings, "proxies": dict(settings["proxies"] or {})}


def build_session(
    cache_path: Path, scope: str, base_url: str, transport: Handler | None = None
) -> CachedSession:
    """A CachedSession over SQLite at ``cache_path`` with quantscope's keys and lifetimes.

    Only 200 answers to GET are stored, in quantscope's own format (``_http.cacheformat``: no
    pickle; large bodies in files beside the database, ``_http.cachestore``). ``stale_if_error``
    stays off: the client serves stale copies itself, with one warning instead of
    requests-cache's logged traceback.

    ``transport``: a handler that answers in-process (``_http.inprocess``) instead of the network,
    for ``base_url``'s origin only; both schemes are mounted on it, so nothing leaves.
    """
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    session = _Session(
        # WAL: a commit per cached answer is a sequential log append instead of a rollback
        # journal written and synced per page; loaders fetch details one request per evaluation.
        backend=BodyFileCache(cache_path, wal=True),
        expire_after=rule_for("*").expire_after,
        urls_expire_after=urls_expire_after(base_url),
        allowable_methods=("GET",),
        allowable_codes=(200,),
        key_fn=make_key_fn(scope, base_url),
        stale_if_error=False,
        origin=base_url,
    )
    session.hooks["response"].append(_drop_key_from_vary)
    for prefix in ("http://", "https://"):
        session.mount(
            prefix,
            WholeBodyAdapter() if transport is None else InProcessTransport(transport, base_url),
        )
    return session


def _older_format(cache_path: Path) -> str | None:
    """Why the file at ``cache_path`` cannot be used as it is (answers stored in another
    format), or None: then it is quantscope's (a new or empty file is made so).

    The format is the file's ``PRAGMA user_version``; a file without it that holds answers
    was written by a quantscope that stored pickles (requests-cache's default serializer).
    Nothing of those answers is read. A file that is not a database raises
    ``sqlite3.DatabaseError``.
    """
    with closing(sqlite3.connect(cache_path, timeout=5.0, isolation_level=None)) as db:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version == FORMAT_VERSION:
            return None
        tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "responses" in tables and db.execute("SELECT 1 FROM responses LIMIT 1").fetchone():
            if version == 0:
                return (
                    "holds answers pickled by an older quantscope (requests-cache's default "
                    "format), which this version never unpickles"
                )
            return f"holds answers in another storage format ({version}; this is {FORMAT_VERSION})"
        db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
    return None


def open_session(
    cache_path: Path, scope: str, base_url: str, transport: Handler | None = None
) -> CachedSession:
    """``build_session``; a cache file that is not a database (corrupt, truncated, another
    format) or holds answers stored in another format (an older quantscope's pickles) is set
    aside under ``<name>.corrupt-<UTC time>`` or ``<name>.old-format-<UTC time>`` (with its
    WAL and body files) with one ``CacheRecoveredWarning``, and a new cache is started: the
    cache is the researcher's quota, never a reason the toolkit cannot start. An unwritable
    directory still raises.
    """
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        older = _older_format(cache_path)
        if older is None:
            return build_session(cache_path, scope, base_url, transport)
        reason, kind = older, "old-format"
    except sqlite3.DatabaseError as exc:
        if type(exc) is not sqlite3.DatabaseError:  # OperationalError: locked, read-only...
            raise
        reason, kind = f"could not be read ({exc})", "corrupt"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = cache_path.with_name(f"{cache_path.name}.{kind}-{stamp}")
    for part, moved in (
        (cache_path, aside),
        (Path(f"{cache_path}-wal"), Path(f"{aside}-wal")),
        (Path(f"{cache_path}-shm"), Path(f"{aside}-shm")),
        (bodies_dir(cache_path), bodies_dir(aside)),
    ):
        if part.exists():
            part.replace(moved)
    warnings.warn(
        f"quantscope: the cache file {cache_path} {reason}; it was set aside as {aside.name} "
        "and a new, empty cache started (cached answers will be asked again; the old file can "
        "be deleted)",
        CacheRecoveredWarning,
        stacklevel=3,
    )
    _older_format(cache_path)
    return build_session(cache_path, scope, base_url, transport)


class CacheEntry(NamedTuple):
    """An answer as stored in the HTTP cache: its key and when it was stored.

    What a load returns about the answers it was built from (``Fetched.entry``,
    ``FetchedPages.entries``, ``FetchedMany.entries``), so that the frame cache can later tell,
    without decoding them again, whether they are still the same (``ResponseCache.unchanged``).
    """

    key: str
    created_at: datetime


class Clearable(Protocol):
    """A store kept beside the HTTP cache that is emptied with it (the frame cache)."""

    def clear(self) -> int: ...


class ResponseCache:
    """``client.cache``: what is stored, how much it is used, whether answers are unchanged,
    and clearing it.

    The client reads and writes the HTTP cache only through this object: ``lookup`` and
    ``create_key`` for requests, ``entry_of`` / ``unchanged`` for what the frame cache keeps,
    ``restore`` for lifetimes, ``invalidate`` after writes, and ``count_hit`` / ``count_miss``
    for the counters ``info()`` shows. ``offline`` is the client's: offline, an expired answer
    still counts as usable.
    """

    def __init__(
        self,
        session: CachedSession,
        *,
        offline: bool = False,
        companions: Sequence[Clearable] = (),
    ) -> None:
        if not isinstance(session.cache, BodyFileCache):
            raise TypeError("quantscope's cache is _cachestore.BodyFileCache (SQLite + files)")
        self._session = session
        self._store: BodyFileCache = session.cache
        self.offline = offline
        self._companions = tuple(companions)
        self.hits = 0
        self.misses = 0

    @property
    def path(self) -> Path:
        return Path(str(self._store.db_path))

    def count_hit(self, n: int = 1) -> None:
        """Count ``n`` answers served from the cache."""
        self.hits += n

    def count_miss(self) -> None:
        """Count one answer the service had to give."""
        self.misses += 1

    def create_key(self, request: PreparedRequest) -> str:
        """The cache key of ``request`` (quantscope's scoped key)."""
        return str(self._store.create_key(request))

    def lookup(self, request: PreparedRequest) -> CachedResponse | None:
        """The stored answer to ``request``, fresh or expired; None when there is none."""
        return self.lookup_key(self.create_key(request))

    def lookup_key(self, key: str) -> CachedResponse | None:
        """The answer stored under ``key``, fresh or expired; None when there is none."""
        response = self._store.get_response(key)
        if response is not None:
            response.cache_key = key
        return response

    def store(self, response: Response, key: str, expire_after: Lifetime) -> None:
        """Store a just-fetched 200 answer to a GET under ``key`` for ``expire_after``, as
        requests-cache would have (``save_response``: the key header redacted, redirects
        aliased), and stamp it as the cache's answers are (``cache_key``, ``created_at`` after
        the write: ``entries_of`` finds it). A lifetime of 0 or "do not cache" stores nothing,
        as requests-cache does not. A full disk leaves it unstored (``BodyFileCache``).

        The client's cold path (``Sender.send`` with ``miss_key``): the request was looked up
        and found in no entry, sent past requests-cache's second look-up, and stored here once,
        with the lifetime its body calls for, instead of once by the rule and again refined.
        """
        if expire_after in (EXPIRE_IMMEDIATELY, DO_NOT_CACHE):
            return
        self._store.save_response(response, key, get_expiration_datetime(expire_after))
        response.cache_key = key  # type: ignore[attr-defined]  # requests-cache's attributes
        response.created_at = utcnow()  # type: ignore[attr-defined]  # on a plain Response

    def held(self, keys: Sequence[str]) -> int | None:
        """How many of ``keys`` have a usable stored answer now (fresh; offline: any), in
        one query over the rows' stamps, no answer decoded; None when that cannot be told
        so (the cache holds redirect aliases, which only a full look-up follows).
        """
        if len(self._store.redirects):
            return None
        stamps = self._stamps(keys)
        if self.offline:
            return sum(key in stamps for key in keys)
        now = utcnow()
        return sum(
            (stamp := stamps.get(key)) is not None and (stamp[1] is None or stamp[1] > now)
            for key in keys
        )

    def restore(self, response: Any, expire_after: Lifetime) -> None:
        """Store a just-fetched ``response`` again with another lifetime, as fetched: its
        ``created_at`` kept (a plain ``Response`` would be stamped now, and the entry would no
        longer be the one the load read: ``entries_of``, and so the frame cache, skip it).
        """
        key = getattr(response, "cache_key", None)
        if key:
            created = getattr(response, "created_at", None)
            if created is not None and not isinstance(response, CachedResponse):
                response = CachedResponse.from_response(response, created_at=created)
            self._store.save_response(response, key, get_expiration_datetime(expire_after))

    def count_besides(self, keys: Sequence[str]) -> int:
        """How many answers are stored under keys other than ``keys`` (one query): at most
        that many other requests can be answered from the cache (``Client._stored``).
        """
        return self._store.responses.count_besides(keys)

    def entries_of(self, fetched: Sequence[tuple[str, datetime]]) -> list[CacheEntry | None]:
        """The stored entries of answers just fetched, as ``(key, fetched_at)``: None for one
        no longer stored, or stored again since (another fetch, or a later lifetime change;
        the next load records that one). requests-cache stores an answer before handing it
        back, so the stored ``created_at`` is never later than ``fetched_at`` for the same.
        """
        stamps = self._stamps([k for k, _ in fetched])
        out: list[CacheEntry | None] = []
        for key, fetched_at in fetched:
            stamp = stamps.get(key)
            ok = stamp is not None and stamp[0] <= fetched_at
            out.append(CacheEntry(key, stamp[0]) if ok and stamp is not None else None)
        return out

    def unchanged(self, entries: Sequence[CacheEntry]) -> bool:
        """Whether every entry is still in the cache as it was stored, and usable as a load
        would use it: fresh, or of any age offline. Counted as cache hits when so.

        One SQL query over the stored rows, never a decoded body. An entry that expired, was
        invalidated by a write, removed by ``clear()`` or fetched again is not unchanged.
        """
        stamps = self._stamps([e.key for e in entries])
        now = datetime.now(UTC)
        for entry in entries:
            stamp = stamps.get(entry.key)
            if stamp is None or stamp[0] != entry.created_at:
                return False
            expires = stamp[1]
            if expires is not None and expires <= now and not self.offline:
                return False
        self.count_hit(len(entries))
        return True

    def _stamps(self, keys: Sequence[str]) -> dict[str, tuple[datetime, datetime | None]]:
        """``key -> (created_at, expires)`` of the stored answers among ``keys``, without
        building a response (``_http.cachestore._Responses.stamps``).
        """
        return self._store.responses.stamps(keys)

    def info(self) -> CacheInfo:
        """Entries and bytes on disk (the SQLite file and its body files), and this client's
        hits and misses.
        """
        size = sum(
            os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal")) if os.path.exists(p)
        )
        size += self._store.responses.bodies_size()
        return CacheInfo(self.path, size, len(self._store.responses), self.hits, self.misses)

    def clear(self, endpoint: str | None = None) -> int:
        """Remove every entry, or those of ``endpoint`` (a glob, e.g. ``/api/trades*``), and
        shrink the file. Returns the number of entries removed.

        Entries of every key and service are matched (the path decides), since over-clearing
        costs requests and under-clearing costs correctness. Clearing everything also empties
        the stores kept beside the cache (``companions``: the frame cache), whose frames would
        never be served again but whose space the user asked back.
        """
        cache = self._store
        if endpoint is None:
            count = len(cache.responses)
            cache.clear()
            for companion in self._companions:
                companion.clear()
        else:
            count = self._delete_matching((endpoint,))
        cache.responses.vacuum()  # give the space back: a user asked for it
        return count

    def forget(self, keys: Sequence[str]) -> None:
        """Drop the answers stored under ``keys``: bodies quantscope could not decode, or
        whose shape was not the documented one, are never served again from the cache.
        """
        if keys:
            try:
                self._store.delete(*keys, vacuum=False)
            except WRITE_ERRORS as exc:  # a full disk: they are checked again when served
                warn_unwritable(self.path.parent, "HTTP cache", exc)

    def invalidate(self, method: str, path: str) -> int:
        """Drop the cached GETs that a write ``method path`` may have changed.

        When they cannot be dropped (a full disk), the write stands (it was the service's) and
        a ``CacheWriteWarning`` says which answers may be served stale and how to clear them;
        returns 0 then.
        """
        patterns = invalidated_by(method, path)
        try:
            return self._delete_matching(patterns)
        except WRITE_ERRORS as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            warnings.warn(
                f"quantscope: {method} {path} was written, but the cached answers it changed "
                f"({', '.join(patterns)}) could not be dropped from {self.path} ({reason}): "
                "they may be served stale until they expire; free space there, then run "
                "`quantscope cache clear`",
                CacheWriteWarning,
                stacklevel=3,
            )
            return 0

    def _delete_matching(self, patterns: tuple[str, ...]) -> int:
        cache = self._store
        keys = [
            response.cache_key
            for response in cache.filter(valid=True, expired=True)
            if any(endpoint_matches(response.url, p) for p in patterns)
        ]
        if keys:
            cache.delete(*keys, vacuum=False)  # VACUUM rewrites the whole file: not per write
        return len(keys)

    def __repr__(self) -> str:
        return repr(self.info())
