"""Pricing: what a client call or a loader's plan would cost, from the caches alone.

``qsc.estimate`` comes down to ``Requests`` (``_http.plan``): a loader's plan, or a client
call's (``request_plan``: the requests ``client.get``/``get_many``/``get_pages``/``post``/
``put`` would send). ``price`` costs them from the HTTP cache: a single GET is held or not
(``holds``: fresh, or offline any copy, ``fresh``); many GETs count the held ones
(``held_of``); a paged load whose first page is held reads the total from it and counts the
later pages held (``_price_pages``); one whose first page is not held is at least 1 request
(``exact=False``) unless ``probe=True`` spends that page. ``estimate_for`` turns counts into
an ``Estimate`` with the quota as last reported (``_http.budget.Budget``). Nothing here sends
anything, except a probe's first page through the client's own batch (``paging.fetch_first``).

It asks the client (``PriceSource``: its cache keys, stored answers, batches and settings) and
never imports it; ``Client.estimate_for``, ``_request_plan`` and ``_price`` delegate here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from quantscope._config import Settings
from quantscope._http.budget import Budget
from quantscope._http.estimate import Estimate
from quantscope._http.paging import Batches, PageRequests, fetch_first, pages_to_load
from quantscope._http.plan import Requests
from quantscope._http.quota import Spend
from quantscope._http.results import OffsetPaging, PageNumberPaging
from quantscope._wire import _split_path, wire_params

__all__ = [
    "REQUEST_METHODS",
    "PriceSource",
    "estimate_for",
    "fresh",
    "held_of",
    "holds",
    "price",
    "request_plan",
]

#: The client's methods whose requests ``request_plan`` plans.
REQUEST_METHODS = ("get", "get_many", "get_pages", "post", "put")


class PriceSource(Batches, Protocol):
    """What prices requests (``Client``): its settings (offline), cache keys and stored
    answers, its batches (a probe's first page), its quota budget and ``_price`` (``Pricer``).
    """

    settings: Settings
    _budget: Budget

    def _key(self, path: str, query: Mapping[str, str]) -> str: ...

    def _stored(
        self, requests_: Sequence[tuple[str, Mapping[str, str]]], besides: Sequence[str] | None
    ) -> Iterator[tuple[str | None, Any]]: ...

    def _price(self, requests: Requests, *, probe: bool = False) -> Estimate: ...


def estimate_for(
    budget: Budget,
    endpoint: str,
    *,
    requests: int,
    cached: int,
    exact: bool = True,
    write: bool = False,
    probed: int = 0,
) -> Estimate:
    """What a load would cost, with the quota as last reported (``Client.estimate_for``)."""
    quota = budget.quota
    known = quota.remaining is not None and budget.left() is not None
    return Estimate(
        endpoint=endpoint,
        requests=requests,
        cached=cached,
        exact=exact,
        remaining=quota.remaining if known else None,
        limit=quota.limit,
        reset=quota.reset,
        share=budget.share,
        reserve=budget.reserve,
        write=write,
        probed=probed,
    )


def request_plan(client: PriceSource, method: str, /, *args: Any, **kwargs: Any) -> Requests:
    """The requests ``getattr(client, method)(*args, **kwargs)`` would send (``get``,
    ``get_many``, ``get_pages``, ``post``, ``put``), as a plan that ``price`` costs
    (``Client._request_plan``).
    """
    if method not in REQUEST_METHODS:
        raise TypeError(f"estimate() takes a quantscope loader; Client.{method} sends nothing")
    bound = inspect.signature(getattr(client, method)).bind(*args, **kwargs)
    bound.apply_defaults()
    given = bound.arguments
    endpoint: str = given["endpoint"]
    if method in ("post", "put"):
        return Requests(endpoint, client, wire_params(given["params"]), write=True)
    spend = given.get("spend") or Spend()
    if method == "get_many":
        wires = tuple(wire_params(p) for p in given["param_sets"])
        return Requests(endpoint, client, many=wires, spend=spend, decode=given["decode"])
    return Requests(
        endpoint,
        client,
        wire_params(given["params"]),
        paging=given.get("paging"),
        max_pages=given.get("max_pages"),
        spend=spend,
        decode=given["decode"],
        desc=given.get("desc"),
    )


def price(client: PriceSource, plan: Requests, *, probe: bool = False) -> Estimate:
    """What ``plan`` would cost now: the requests the cache cannot answer (fresh; offline:
    any) and the ones it can (``_http.plan``). Sends nothing, except with ``probe=True`` the
    first page of a paged plan that the cache does not hold (it then stays in the cache).
    """
    endpoint = plan.endpoint
    cost = functools.partial(estimate_for, client._budget, endpoint)
    if plan.write:
        return cost(requests=1, cached=0, write=True)
    wires = plan.many if plan.many is not None else (plan.wire,)
    if plan.paging is None or plan.many is not None:
        held = 0 if plan.fresh else held_of(client, [_split_path(endpoint, w) for w in wires])
        return cost(requests=len(wires) - held, cached=held)
    return _price_pages(client, plan, plan.paging, probe)


def held_of(client: PriceSource, requests_: Sequence[tuple[str, Mapping[str, str]]]) -> int:
    """How many of GET ``requests_`` the cache can answer now (fresh; offline: any)."""
    held = client.cache.held([client._key(path, query) for path, query in requests_])
    return sum(holds(client, *r) for r in requests_) if held is None else held


def holds(client: PriceSource, path: str, query: Mapping[str, str]) -> bool:
    """Whether the cache can answer GET ``path`` now (fresh; offline: any), no decoding."""
    return fresh(client.cache.lookup_key(client._key(path, query)), client.settings.offline)


def fresh(cached: Any, offline: bool) -> bool:
    """Whether a stored answer (None: none) can answer now (fresh; offline: any)."""
    if cached is None or cached.status_code != 200:
        return False
    return offline or not cached.is_expired


def _price_pages(
    client: PriceSource, plan: Requests, paging: PageNumberPaging | OffsetPaging, probe: bool
) -> Estimate:
    """``price`` of a paged plan: its first page tells the total (``get_pages``)."""
    endpoint = plan.endpoint
    cost = functools.partial(estimate_for, client._budget, endpoint)
    path, query = _split_path(endpoint, paging.without_paging(plan.wire))
    head = (path, {**query, **paging.params_for(0)})
    if not probe and (plan.fresh or not holds(client, *head)):
        return cost(requests=1, cached=0, exact=False)
    label = plan.desc or endpoint
    first, refusal = fetch_first(
        client, endpoint, head, desc=label, decode=plan.decode, spend=plan.spend
    )
    if first is None:  # the quota refused even the first page
        if refusal is not None:
            raise refusal
        return cost(requests=1, cached=0, exact=False)
    spent = int(not first.from_cache)
    total = paging.total_of(first.body)
    if total is None:  # the pages end with a short one: no count ahead
        return cost(requests=0, cached=1, exact=False, probed=spent)
    count = pages_to_load(paging, total, plan.max_pages)
    rest = PageRequests(path, query, paging, range(1, count))
    first_keys = [first.key] if first.key else []
    held = sum(fresh(s, client.settings.offline) for _, s in client._stored(rest, first_keys))
    return cost(requests=len(rest) - held, cached=held + 1, probed=spent)
