"""The loaders reach a catalog only through the source the catalog plugs in (loaders._source)."""

from __future__ import annotations

import pytest

from quantscope import _endpoints as E
from quantscope._errors import ConfigurationError
from quantscope.catalog import answer
from quantscope.loaders import _source


def test_the_catalog_plugs_its_answer_in_when_quantscope_is_imported() -> None:
    source = _source.catalog_source()
    assert isinstance(source, answer._CatalogSource)
    with pytest.raises(ConfigurationError, match=r"trades, evaluations"):
        source.kept("/nowhere", E.STATS.path, "trade_stats", many=False)
    source.kept("/nowhere", E.TRADES.path, "trades", many=False)  # kept: no refusal


def test_no_catalog_source_is_one_line_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_source, "_PLUGGED", [])
    with pytest.raises(ConfigurationError, match="no catalog source"):
        _source.catalog_source()
