"""Paging is declared once (issue 23, item 1): each paged route's ``Paging`` in the registry
names its page parameters and items key, and the client's paging objects are built from it
(``PageNumberPaging.of``/``OffsetPaging.of``); their defaults are the declarations of
``/api/trades`` and ``/api/eval-results``."""

from __future__ import annotations

import pytest

from quantscope import _endpoints as E
from quantscope._http.results import OffsetPaging, PageNumberPaging

PAGED = [e for e in E.ROUTES if e.paging is not None]


@pytest.mark.parametrize("route", PAGED, ids=[e.key for e in PAGED])
def test_a_paged_route_pages_by_its_declaration(route: E.Endpoint) -> None:
    declared = route.paged()
    style = PageNumberPaging if declared.style == "page" else OffsetPaging
    paging = style.of(route, 250)
    assert paging.names() == (declared.first, declared.size)
    assert paging.items == declared.items == route.items
    first, second = paging.params_for(0), paging.params_for(1)
    if declared.style == "page":
        assert (first, second) == (
            {declared.first: "1", declared.size: "250"},
            {declared.first: "2", declared.size: "250"},
        )
    else:
        assert (first, second) == (
            {declared.first: "0", declared.size: "250"},
            {declared.first: "250", declared.size: "250"},
        )


def test_the_defaults_are_the_declarations() -> None:
    assert PageNumberPaging() == PageNumberPaging.of(E.TRADES, 1000)
    assert PageNumberPaging().names() == ("page", "pageSize")
    assert OffsetPaging() == OffsetPaging.of(E.EVALUATIONS, 1000)
    assert OffsetPaging.of(E.HISTORY, 5).names() == ("skip", "take")


def test_a_route_that_pages_otherwise_is_refused() -> None:
    with pytest.raises(ValueError, match="pages by offset"):
        PageNumberPaging.of(E.HISTORY, 10)
    with pytest.raises(ValueError, match="does not page"):
        OffsetPaging.of(E.SIGNALS, 10)
