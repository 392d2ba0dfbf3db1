"""A paged load looks its pages up in the cache no further than the cache could answer.

Fact (issue 22): a ``pagination.total`` of 1,000,000 at 10 items a page made the client
prepare, key and look up 99,999 page requests (70-84 s of CPU) before it sent page 2, although
the cache held nothing but the first page. The cost of a load is still counted exactly
("validate, then price, then spend"): pages another load left in the cache are found and not
paid for, the refusal and ``qsc.estimate`` name the exact number of requests. The work is
counted here (the client's cache look-ups), never timed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _helpers import FakeService, Seen, fake_client, ok

from quantscope._errors import QuotaWouldBeExceededError
from quantscope._http.client import Client, PageNumberPaging
from quantscope._http.estimate import estimate
from quantscope._http.quota import Spend

BOGUS = 1_000_000  # items: 100,000 pages of 10


def pages_of(total: int, served: int) -> Callable[[Seen], Any]:
    """Pages of 10 ids, ``served`` items in all (then empty pages), each saying ``total``."""

    def handler(seen: Seen) -> Any:
        page = int(seen.query["page"])
        ids = range((page - 1) * 10, min(served, page * 10))  # pages count from 1
        return ok({"trades": [{"id": i} for i in ids], "pagination": {"total": total}})

    return handler


def count_lookups(client: Client, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The requests ``client`` looks up in its cache from now on."""
    seen: list[object] = []
    lookup = client.cache.lookup_key

    def counted(key: Any) -> Any:
        seen.append(key)
        return lookup(key)

    monkeypatch.setattr(client.cache, "lookup_key", counted)
    return seen


def test_a_bogus_total_costs_no_lookup_per_page(
    serve: Callable[..., FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = serve(pages_of(BOGUS, served=24), limit=100, remaining=100)
    client = fake_client(service, tmp_path)
    lookups = count_lookups(client, monkeypatch)
    with pytest.warns(Warning, match="said 1000000 items in all, but page 4 came back empty"):
        loaded = client.get_pages(
            "/api/trades", paging=PageNumberPaging(10), spend=Spend(confirm=True, partial=True)
        )
    assert len(loaded.items) == 24
    assert service.count() == 4
    assert len(lookups) == 1  # the first page's; was 100,000 (one per page of the total)


def test_a_bogus_total_is_refused_with_its_exact_count_without_a_lookup_per_page(
    serve: Callable[..., FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = serve(pages_of(BOGUS, served=24), limit=100, remaining=100)
    client = fake_client(service, tmp_path)
    lookups = count_lookups(client, monkeypatch)
    with pytest.raises(QuotaWouldBeExceededError) as refused:
        client.get_pages("/api/trades", paging=PageNumberPaging(10))
    assert (refused.value.needed, refused.value.fetched, service.count()) == (99_999, 1, 1)
    assert len(lookups) == 1


def test_estimate_of_a_bogus_total_is_exact_without_a_lookup_per_page(
    serve: Callable[..., FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = serve(pages_of(BOGUS, served=24), limit=100, remaining=100)
    client = fake_client(service, tmp_path)
    lookups = count_lookups(client, monkeypatch)
    cost = estimate(client.get_pages, "/api/trades", paging=PageNumberPaging(10), probe=True)
    assert (cost.requests, cost.cached, cost.probed, cost.exact) == (99_999, 1, 1, True)
    assert service.count() == 1
    assert len(lookups) == 1


def test_pages_left_in_the_cache_are_found_and_cost_nothing(
    serve: Callable[..., FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = serve(pages_of(300, served=300), limit=1000, remaining=1000)
    fake_client(service, tmp_path).get_pages(
        "/api/trades", paging=PageNumberPaging(10), max_pages=5
    )  # pages 1-5 of 30 in the cache
    client = fake_client(service, tmp_path)
    lookups = count_lookups(client, monkeypatch)
    cost = estimate(client.get_pages, "/api/trades", paging=PageNumberPaging(10))
    assert (cost.requests, cost.cached, cost.exact) == (25, 5, True)
    assert len(lookups) == 6  # the first page (twice), pages 2-5: no other entry is left to find
    before = service.count()
    loaded = client.get_pages("/api/trades", paging=PageNumberPaging(10))
    assert len(loaded.items) == 300
    assert service.count() - before == 25
    assert loaded.provenance.requests == 25
