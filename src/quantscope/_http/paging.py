"""A paged load's walk, its checks and its result: what ``Client.get_pages`` does.

``load_pages`` sends the first page (it gives the total), then asks for the pages that total
calls for (``pages_to_load``, capped by ``max_pages``; ``PageRequests`` builds each request only
when it is read) in one quota-aware batch, or, when the body gives no total, asks page by page
until one comes back short (``_pages_until_short``). Each page is settled as it arrives
(``settle_page``: checked against the load's other pages by ``_http.pagecheck.PageLedger``, then
folded); a page that repeats an earlier one stops the load with ``InvalidResponseError`` and its
cached copy is dropped; what the checks found is the result's ``checks`` and one
``InconsistentAnswerWarning``. The result is a ``FetchedPages`` (``_http.results``).

The walk asks the client (``Batches``) for its batches of requests (cache first, then what the
quota budget allows), provenance and cache entries; it never imports the client.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, overload

from quantscope._errors import InconsistentAnswerWarning, InvalidResponseError
from quantscope._http.budget import Refusal
from quantscope._http.cache import CacheEntry, ResponseCache
from quantscope._http.pagecheck import PageLedger
from quantscope._http.quota import Spend
from quantscope._http.results import (
    Decode,
    FetchedPages,
    Fold,
    OffsetPaging,
    One,
    PageNumberPaging,
    Provenance,
)
from quantscope._wire import Params, _split_path, wire_params

__all__ = [
    "Batches",
    "PageRequests",
    "fetch_first",
    "load_pages",
    "pages_to_load",
    "settle_page",
]


class Batches(Protocol):
    """What a paged load asks of the client (``Client``): its batches of GETs, cache first
    (``_fetch_batch``), the provenance and cache entries of what it loaded, and its cache (a
    page that is not one is forgotten).
    """

    cache: ResponseCache

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
    ) -> tuple[list[One | None], Refusal | None]: ...

    def _provenance(
        self,
        endpoint: str,
        params: dict[str, str] | Sequence[dict[str, str]],
        loaded: Sequence[One],
        pages: int | None = None,
    ) -> Provenance: ...

    def _entries_of(self, loaded: Sequence[One]) -> tuple[CacheEntry | None, ...]: ...


class PageRequests(Sequence[tuple[str, dict[str, str]]]):
    """The GETs of a paged load's pages ``indices``, each built when it is read: a total of
    1,000,000 items makes no list of 100,000 requests of which the load sends four.
    """

    def __init__(
        self,
        path: str,
        query: Mapping[str, str],
        paging: PageNumberPaging | OffsetPaging,
        indices: range,
    ) -> None:
        self._path, self._query, self._paging, self._indices = path, query, paging, indices

    def __len__(self) -> int:
        return len(self._indices)

    @overload
    def __getitem__(self, i: int) -> tuple[str, dict[str, str]]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[str, dict[str, str]]]: ...

    def __getitem__(
        self, i: int | slice
    ) -> tuple[str, dict[str, str]] | Sequence[tuple[str, dict[str, str]]]:
        if isinstance(i, slice):
            return PageRequests(self._path, self._query, self._paging, self._indices[i])
        return self._path, {**self._query, **self._paging.params_for(self._indices[i])}


def pages_to_load(
    paging: PageNumberPaging | OffsetPaging, total: int, max_pages: int | None
) -> int:
    """How many pages a paged load of ``total`` items fetches, the first included:
    ``max_pages`` caps it, never below the first page. Loading and pricing both count so.
    """
    count = paging.page_count(total)
    return count if max_pages is None else min(count, max(1, max_pages))


def settle_page(
    one: One, *, ledger: PageLedger, paging: PageNumberPaging | OffsetPaging, fold: Fold | None
) -> None:
    """A page as soon as it is loaded: checked against the load's other pages (``_http.pagecheck``:
    items already loaded are dropped from it), then folded (``get_pages(fold=...)``); its item
    count as served is kept for the paging checks. A page whose items are not a list is left
    as it came, for those checks to judge.
    """
    served = ledger.admit(one, one.body)
    if served is None:
        return
    if fold is not None:
        one.body = fold(one.body)
    one.count = served


def fetch_first(
    client: Batches,
    endpoint: str,
    head: tuple[str, Mapping[str, str]],
    *,
    desc: str,
    decode: Decode | None,
    spend: Spend,
) -> tuple[One | None, Refusal | None]:
    """A paged load's first page (it gives the total), cache first, as the client's batch
    loads it (None: the quota refused it), and the refusal: what ``_http.prices``'s probe
    spends.
    """
    first, refusal = client._fetch_batch(endpoint, [head], desc=desc, decode=decode, spend=spend)
    return first[0], refusal


def load_pages(
    client: Batches,
    endpoint: str,
    params: Params | None,
    *,
    paging: PageNumberPaging | OffsetPaging,
    max_pages: int | None,
    desc: str | None,
    decode: Decode | None,
    spend: Spend,
    fold: Fold | None,
) -> FetchedPages:
    """Every page of a paginated endpoint: ``Client.get_pages`` (its docstring says what the
    walk does), with the client's batches, provenance and cache entries (``Batches``).
    """
    ledger = PageLedger(endpoint, paging)
    settle = functools.partial(settle_page, ledger=ledger, paging=paging, fold=fold)
    wire = paging.without_paging(wire_params(params))
    path, query = _split_path(endpoint, wire)
    label = desc or endpoint
    head = (path, {**query, **paging.params_for(0)})
    first, refusal = client._fetch_batch(
        endpoint, [head], desc=label, decode=decode, spend=spend, settle=settle
    )
    if first[0] is None:
        empty = FetchedPages((), [], None, client._provenance(endpoint, wire, []), (0,))
        if refusal is not None:
            refusal.partial = empty
            raise refusal
        return empty  # partial=True, and not even the first page fitted
    spent = int(not first[0].from_cache)  # the first page, sent to learn the total
    is_empty = _page_check(client, paging, endpoint, at_most=0)
    first_empty = is_empty(first[0])  # also checks the page's shape
    total = paging.total_of(first[0].body)
    if total and first_empty:
        checks = ledger.findings(first, total, complete=False, empty_page=1)
        _warn_total(ledger, checks)
        return _pages_result(client, endpoint, wire, first, paging, total, checks)
    if total is None:
        return _pages_until_short(
            client,
            endpoint,
            path,
            query,
            wire,
            first[0],
            paging,
            max_pages,
            label,
            decode,
            spend,
            settle,
            ledger,
        )
    first_keys = [first[0].key] if first[0].key else []  # not one of the later pages
    count = pages_to_load(paging, total, max_pages)
    rest = PageRequests(path, query, paging, range(1, count))
    results, refusal = client._fetch_batch(
        endpoint,
        rest,
        desc=label,
        decode=decode,
        spend=spend,
        spent=spent,
        unit="pages",
        stop=lambda one: is_empty(one) or ledger.repeats(one),
        settle=settle,
        besides=first_keys,
    )
    pages = [first[0], *results]
    _stop_on_repeat(client, ledger, pages)
    # The total is the service's word; the pages are its data. An empty page before the
    # last one ends the load there, whatever the total said. (A short page that is not
    # empty does not: a service may cap the page size below the one asked for; the
    # checks then say the total was not reached.)
    end = next((i for i, p in enumerate(pages[:-1]) if p is not None and is_empty(p)), None)
    if end is not None:
        pages = pages[:end]
        refusal = None  # what the load needed is all here
    whole = count == paging.page_count(total) and refusal is None and None not in pages
    checks = ledger.findings(
        pages, total, complete=whole, empty_page=None if end is None else end + 1
    )
    _warn_total(ledger, checks)
    result = _pages_result(client, endpoint, wire, pages, paging, total, checks)
    if refusal is not None:
        refusal.partial = result
        raise refusal
    return result


def _pages_until_short(
    client: Batches,
    endpoint: str,
    path: str,
    query: Mapping[str, str],
    wire: dict[str, str],
    first: One,
    paging: PageNumberPaging | OffsetPaging,
    max_pages: int | None,
    label: str,
    decode: Decode | None,
    spend: Spend,
    settle: Callable[[One], None] | None = None,
    ledger: PageLedger | None = None,
) -> FetchedPages:
    """Paging when the body gives no total: next page until one comes back short (the
    quota is planned page by page: the cost is not known in advance), or repeats an
    earlier one (``_http.pagecheck``).
    """
    ledger = ledger or PageLedger(endpoint, paging)
    pages: list[One | None] = [first]
    index = 0
    short = _page_check(client, paging, endpoint, at_most=paging.page_size - 1)
    while not short(pages[-1]):
        _stop_on_repeat(client, ledger, pages)
        index += 1
        if max_pages is not None and index >= max_pages:
            break
        got, refusal = client._fetch_batch(
            endpoint,
            [(path, {**query, **paging.params_for(index)})],
            desc=label,
            decode=decode,
            spend=spend,
            spent=sum(int(not p.from_cache) for p in pages if p is not None),
            unit="pages",
            settle=settle,
        )
        if got[0] is None:
            checks = ledger.findings(pages, None, complete=False)
            partial = _pages_result(client, endpoint, wire, [*pages, None], paging, None, checks)
            if refusal is None:  # partial=True: what fitted
                _warn_total(ledger, checks)
                return partial
            refusal.partial = partial
            raise refusal
        pages.append(got[0])
    _stop_on_repeat(client, ledger, pages)
    checks = ledger.findings(pages, None, complete=True)
    _warn_total(ledger, checks)
    return _pages_result(client, endpoint, wire, pages, paging, None, checks)


def _page_check(
    client: Batches, paging: PageNumberPaging | OffsetPaging, endpoint: str, at_most: int
) -> Callable[[One | None], bool]:
    """Whether a loaded page holds ``at_most`` items or fewer (0: empty; page size - 1:
    short, the last one); a page of another shape is an ``InvalidResponseError``, and its
    cached copy is dropped.
    """

    def short(one: One | None) -> bool:
        if one is None:
            return True
        if one.count is not None:  # settled: its shape was a page's
            return one.count <= at_most
        try:
            paging.check(one.body, endpoint)
        except InvalidResponseError:
            client.cache.forget([one.key] if one.key else [])
            raise
        return len(paging.items_of(one.body)) <= at_most

    return short


def _stop_on_repeat(client: Batches, ledger: PageLedger, pages: Sequence[One | None]) -> None:
    """``InvalidResponseError`` when a page of ``pages`` repeats an earlier one (the
    service is not paging, ``_http.pagecheck``); the repeating page's cached copy is dropped,
    so the same load asks for it again.
    """
    try:
        ledger.stop_on_repeat(pages)
    except InvalidResponseError:
        client.cache.forget([p.key for p in pages if p is not None and p.key and ledger.repeats(p)])
        raise


def _warn_total(ledger: PageLedger, checks: Mapping[str, Any]) -> None:
    """The load's one ``InconsistentAnswerWarning`` for what its page checks found
    (items seen twice, a total the pages disagree with: ``_http.pagecheck``), if anything.
    """
    if checks:
        warnings.warn(ledger.message(checks), InconsistentAnswerWarning, stacklevel=5)


def _pages_result(
    client: Batches,
    endpoint: str,
    wire: dict[str, str],
    pages: Sequence[One | None],
    paging: PageNumberPaging | OffsetPaging,
    total: int | None,
    checks: Mapping[str, Any] | None = None,
) -> FetchedPages:
    loaded = [p for p in pages if p is not None]
    items = [item for p in loaded for item in paging.items_of(p.body)]
    missing = tuple(i for i, p in enumerate(pages) if p is None)
    return FetchedPages(
        tuple(p.body for p in loaded),
        items,
        total,
        client._provenance(endpoint, wire, loaded, pages=len(pages)),
        missing,
        client._entries_of(loaded),
        dict(checks or {}),
    )
