"""A ``Catalog`` queried directly refuses a value the spec does not allow as the loaders and
the command line do before any request (``Param.choices``): one ``InvalidChoiceError``, the
same message, before anything is read (an empty catalog is enough to show it)."""

from __future__ import annotations

from typing import Any

import pytest

import quantscope as qsc
from quantscope import _endpoints as E
from quantscope.catalog.manifest import Manifest, Store
from quantscope.catalog.read import Catalog

#: (catalog method, its route's keyword with choices): every one a catalog method takes
ENUMERATED = [
    (e.catalog, p)
    for e in E.ROUTES
    if e.catalog is not None
    for p in e.params
    if p.choices and p.where in ("query", "path")
]
#: the keywords a method needs besides the refused one (a snapshot is one quant's)
REQUIRED: dict[str, dict[str, Any]] = {"signals": {"quant_id": 1}}


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    store = Store(tmp_path_factory.mktemp("choices") / "cat")
    store.save(Manifest.new())
    return Catalog(store.url)


@pytest.mark.parametrize(
    ("method", "param"), ENUMERATED, ids=[f"{m}-{p.name}" for m, p in ENUMERATED]
)
def test_a_catalog_refuses_a_value_the_spec_does_not_allow(
    method: str, param: E.Param, empty: Catalog
) -> None:
    with pytest.raises(qsc.InvalidChoiceError) as refused:
        getattr(empty, method)(**REQUIRED.get(method, {}), **{param.name: "bogus"})
    with pytest.raises(qsc.InvalidChoiceError) as loader_s:  # what the loader's query raises
        E.checked_choice(param, "bogus")
    assert str(refused.value) == str(loader_s.value)
    assert (refused.value.param, refused.value.value) == (param.name, "bogus")


def test_every_enumerated_keyword_of_a_catalog_method_is_tried() -> None:
    tried = {(m, p.name) for m, p in ENUMERATED}
    assert ("trades", "chain") in tried
    assert {m for m, _ in tried} == {"trades", "evaluations", "signals"}
    assert len(tried) == 9


def test_a_value_the_spec_allows_in_any_case_reads_on(empty: Catalog) -> None:
    assert len(empty.trades(chain="Solana", position_closed="TRUE")) == 0
