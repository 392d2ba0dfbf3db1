"""The catalog's side of the load path: where a client connected to a catalog is answered.

A plan runs over HTTP (``_base.run_recipe``), or, for a client connected to a catalog
(``qsc.connect(catalog=path)``), is answered by the catalog source that ``quantscope.catalog``
plugs in here when it is imported (``plug_catalog``; ``catalog.answer`` does it, and
``quantscope`` imports the catalog, so the source is there whenever a loader can be called).
The loaders never import the catalog: it stands above them (its sync runs them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pandas as pd

from quantscope._errors import ConfigurationError

__all__ = ["CatalogSource", "catalog_source", "plug_catalog"]


class CatalogSource(Protocol):
    """What answers a recipe from a catalog, and says first whether it keeps the resource."""

    def answer(
        self,
        path: str,
        endpoint: str,
        spec: str,
        params: Mapping[str, Any] | None,
        many: Sequence[Mapping[str, Any]] | None,
        keep: Sequence[str],
    ) -> pd.DataFrame:
        """The frame of the recipe's endpoint and spec for ``params`` (``many``: per set)."""
        ...

    def kept(self, path: str, endpoint: str, spec: str, many: bool) -> None:
        """Nothing when the catalog keeps that resource; its one-line refusal otherwise."""
        ...


_PLUGGED: list[CatalogSource] = []


def plug_catalog(source: CatalogSource) -> None:
    """Make ``source`` the one that answers clients connected to a catalog."""
    _PLUGGED[:] = [source]


def catalog_source() -> CatalogSource:
    """The catalog source plugged in (``quantscope.catalog.answer``)."""
    if not _PLUGGED:
        raise ConfigurationError(
            "no catalog source: import quantscope (which plugs quantscope.catalog in) before "
            "loading from a catalog"
        )
    return _PLUGGED[0]
