"""What the client's loads return, with provenance, and the paging styles of the service.

``Fetched`` (one answer), ``FetchedPages`` (every page of a paginated endpoint) and
``FetchedMany`` (several requests of one endpoint) carry a ``Provenance`` that loaders put in
``df.attrs["quantscope"]`` (``with_provenance``), and the cache entries of the answers
(``CacheEntry``: None for an answer the cache does not hold as loaded) that the frame cache
keeps a frame beside. ``PageNumberPaging`` and ``OffsetPaging`` tell ``get_pages`` how an
endpoint pages, as the endpoint registry declares it (``of``; their defaults are the
declarations of ``/api/trades`` and ``/api/eval-results``). ``cached_provenance`` is what a
frame served by the frame cache says of itself. These are plain data with no I/O, kept apart
from the HTTP client so loaders and tests can see the result shapes at a glance; ``_http.client``
re-exports them all. ``One`` is one answer inside the client (and the paging and budget it is
built from) before it becomes a ``Fetched``; ``Decode`` and ``Fold`` are what a load's
``decode=`` and ``fold=`` take.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self, TypeVar

import pandas as pd

from quantscope._errors import InvalidResponseError
from quantscope._http.cache import CacheEntry
from quantscope._routes import EVALUATIONS, TRADES, Endpoint, Paging
from quantscope._wire import Wire


@dataclass(frozen=True)
class Provenance:
    """Where a loaded result came from; loaders put ``as_dict()`` in ``df.attrs["quantscope"]``.

    ``fetched_at`` is when the oldest part was fetched from the service (a cache hit keeps
    its original time); ``requests`` counts answers from the service, i.e. quota spent;
    ``stale`` is True when an expired copy stood in for a failed request.

    ``as_dict()`` is JSON-safe, so frames travel (``df.to_parquet``/``to_feather`` store
    attrs as JSON): ``fetched_at`` there is ISO-8601 text in UTC (``fetched_at_of`` reads
    it back as a datetime), ``params`` plain dicts of text.
    """

    endpoint: str
    params: dict[str, str] | list[dict[str, str]]
    fetched_at: datetime
    from_cache: bool
    pages: int
    requests: int
    service: str = ""
    stale: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "params": self.params,
            "fetched_at": _iso_utc(self.fetched_at),
            "from_cache": self.from_cache,
            "pages": self.pages,
            "requests": self.requests,
            "service": self.service,
            "stale": self.stale,
        }


def _iso_utc(when: datetime) -> str:
    """ISO-8601 text in UTC (a naive time is taken as UTC, as requests-cache stores them)."""
    return (when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)).isoformat()


def cached_provenance(
    endpoint: str,
    params: dict[str, str] | list[dict[str, str]],
    entries: Sequence[CacheEntry],
    service: str,
) -> Provenance:
    """The provenance of a result served whole from the cache (the frame cache): no request,
    ``fetched_at`` when the oldest answer it came from was fetched.
    """
    return Provenance(
        endpoint=endpoint,
        params=params,
        fetched_at=min(e.created_at for e in entries),
        from_cache=True,
        pages=len(entries),
        requests=0,
        service=service,
        stale=False,
    )


def fetched_at_of(attrs: Mapping[str, Any]) -> datetime | None:
    """``fetched_at`` of a frame's ``attrs["quantscope"]`` as a UTC datetime (the attrs hold
    ISO-8601 text, as written by ``Provenance.as_dict`` or read back from Parquet/Feather);
    None when absent or unreadable.
    """
    value = attrs.get("fetched_at")
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


_Loaded = TypeVar("_Loaded", pd.DataFrame, pd.Series)


def with_provenance(obj: _Loaded, provenance: Provenance | None, **extra: Any) -> _Loaded:
    """``obj`` with ``attrs["quantscope"]``: the provenance, over the loader's extras (a
    summary, the quant id...) already there or given. Returns ``obj`` itself.
    """
    held = obj.attrs.get("quantscope")
    attrs = dict(held) if isinstance(held, Mapping) else {}
    attrs.update(extra)
    if provenance is not None:
        attrs.update(provenance.as_dict())
    obj.attrs["quantscope"] = attrs
    return obj


Decode = Callable[[bytes], Any]  # an answer's bytes -> its body (``_typed.decode.page_decoder``)
Fold = Callable[[Any], Any]  # a page's body -> what a load keeps of it (``get_pages(fold=)``)


@dataclass
class One:
    """One answer inside the client, before it becomes a Fetched."""

    body: Any
    from_cache: bool
    fetched_at: datetime
    spent: int
    stale: bool = False
    key: str | None = None  # its cache entry's key, when known
    count: int | None = None  # a page's items as served (its body may list fewer, or none)


@dataclass(frozen=True)
class Fetched:
    """One answer: parsed JSON, its provenance and its cache entry."""

    data: Any
    provenance: Provenance
    entry: CacheEntry | None = None


@dataclass(frozen=True)
class FetchedPages:
    """Every page of a paginated endpoint: bodies in order, their items joined, the total.

    ``missing`` lists page indices (0-based) not loaded; non-empty only for a
    ``Spend(partial=True)`` load or on ``.partial`` of a ``QuotaError`` refusal. ``entries``
    are the loaded pages' cache entries in order. ``checks`` is what the pages' checks found
    (``_http.pagecheck``: items seen twice, totals that disagree; empty when nothing), which
    loaders put in ``attrs["quantscope"]["checks"]``.
    """

    pages: tuple[Any, ...]
    items: list[Any]
    total: int | None
    provenance: Provenance
    missing: tuple[int, ...] = ()
    entries: tuple[CacheEntry | None, ...] = ()
    checks: Mapping[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.missing


@dataclass(frozen=True)
class FetchedMany:
    """Answers to several requests of one endpoint, in order (None where not loaded), and the
    loaded answers' cache entries in order.
    """

    results: tuple[Fetched | None, ...]
    provenance: Provenance
    missing: tuple[int, ...] = ()
    entries: tuple[CacheEntry | None, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.missing


class _Paging:
    """Shared logic of the paging styles: how many pages, where the items and total are."""

    page_size: int
    items: str
    total_path: tuple[str, ...]
    key: str | None  # the field that identifies an item (None: the whole item does)

    def params_for(self, index: int) -> dict[str, str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def names(self) -> tuple[str, str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def without_paging(self, wire: Mapping[str, str]) -> Wire:
        """The wire parameters of a paged load: the page parameters are the paging's."""
        names = self.names()
        return Wire({k: v for k, v in wire.items() if k not in names})

    def total_of(self, body: Any) -> int | None:
        value = body
        for key in self.total_path:
            value = value.get(key) if isinstance(value, Mapping) else None
        # A count or nothing: a negative, fractional or textual total is not trusted (the
        # client then pages until a short page, as for an answer without a total).
        is_count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return value if is_count else None

    def items_of(self, body: Any) -> list[Any]:
        items = body.get(self.items) if isinstance(body, Mapping) else None
        return list(items) if isinstance(items, list) else []

    def check(self, body: Any, endpoint: str) -> None:
        """Raise ``InvalidResponseError`` naming ``endpoint`` unless ``body`` is a page: an
        object whose ``items`` is a list (a missing list is an error, never an empty page).
        """
        items = body.get(self.items) if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            raise InvalidResponseError(
                f"{endpoint}: expected '{self.items}' (a list) in each page, got {body!r:.200}",
                endpoint=endpoint,
                status_code=200,
            )

    def page_count(self, total: int) -> int:
        return max(1, math.ceil(total / self.page_size))


def _declared(endpoint: Endpoint, style: str) -> Paging:
    paging = endpoint.paged()
    if paging.style != style:
        raise ValueError(f"{endpoint.path} pages by {paging.style}, not by {style}")
    return paging


_PAGES = _declared(TRADES, "page")
_OFFSETS = _declared(EVALUATIONS, "offset")


@dataclass(frozen=True)
class PageNumberPaging(_Paging):
    """``page``/``pageSize`` paging with ``pagination.total`` (``/api/trades``)."""

    page_size: int = 1000
    items: str = _PAGES.items
    page_param: str = _PAGES.first
    size_param: str = _PAGES.size
    total_path: tuple[str, ...] = ("pagination", "total")
    key: str | None = "id"

    @classmethod
    def of(cls, endpoint: Endpoint, page_size: int) -> Self:
        """The paging ``endpoint`` declares (``_routes``), ``page_size`` items a page."""
        paging = _declared(endpoint, "page")
        return cls(page_size, paging.items, page_param=paging.first, size_param=paging.size)

    def params_for(self, index: int) -> dict[str, str]:
        return {self.page_param: str(index + 1), self.size_param: str(self.page_size)}

    def names(self) -> tuple[str, str]:
        return self.page_param, self.size_param


@dataclass(frozen=True)
class OffsetPaging(_Paging):
    """``offset``/``limit`` paging with a top-level ``total`` (``/api/eval-results``; for
    ``/api/eval-history``, ``skip``/``take``: ``OffsetPaging.of(E.HISTORY, ...)``).
    """

    page_size: int = 1000
    items: str = _OFFSETS.items
    offset_param: str = _OFFSETS.first
    limit_param: str = _OFFSETS.size
    total_path: tuple[str, ...] = ("total",)
    key: str | None = "id"

    @classmethod
    def of(cls, endpoint: Endpoint, page_size: int) -> Self:
        """The paging ``endpoint`` declares (``_routes``), ``page_size`` items a page."""
        paging = _declared(endpoint, "offset")
        return cls(page_size, paging.items, offset_param=paging.first, limit_param=paging.size)

    def params_for(self, index: int) -> dict[str, str]:
        return {
            self.offset_param: str(index * self.page_size),
            self.limit_param: str(self.page_size),
        }

    def names(self) -> tuple[str, str]:
        return self.offset_param, self.limit_param
