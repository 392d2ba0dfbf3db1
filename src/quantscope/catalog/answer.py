"""The loaders' recipes answered from a catalog: what ``qsc.connect(catalog=path)`` does.

``loaders._base.run_recipe`` hands a plan's recipe and Python parameters here when the client
was connected to a catalog (``Settings.catalog``): the one recipe every loader follows asks
the catalog instead of the service, so a notebook written against the service re-runs
unchanged, with no service and no key. ``ANSWERS`` maps an endpoint to the ``Catalog``
method with the loader's signature, derived from the endpoint registry (``_endpoints``: each
parameter's value is read under its wire name and passed as the loader's keyword, as the
loader was given it: nothing is encoded to text and parsed back); anything else (a write, a detail
endpoint, counts) is refused with a one-line error naming what the catalog holds (``kept``:
the same refusal without reading, for ``qsc.estimate``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from quantscope import _endpoints as E
from quantscope._errors import ConfigurationError
from quantscope._typed import schemas as _schemas
from quantscope.catalog.read import Catalog
from quantscope.loaders._source import plug_catalog

__all__ = ["ANSWERS", "answer", "kept"]

#: A plan's parameters: the loader's values under their wire names (``_endpoints.query``).
Params = Mapping[str, Any]
Answer = Callable[[Catalog, Params, Sequence[str]], pd.DataFrame]


def _filtered(endpoint: E.Endpoint) -> Answer:
    """The ``Catalog`` method named by the route, called with every keyword of the loader
    (None where the plan has none), read from the plan's parameters by the registry.
    """
    method = endpoint.catalog
    assert method is not None

    def how(cat: Catalog, params: Params, keep: Sequence[str]) -> pd.DataFrame:
        frame: pd.DataFrame = getattr(cat, method)(**_keywords(endpoint, params))
        return frame

    return how


def _keywords(endpoint: E.Endpoint, params: Params) -> dict[str, Any]:
    """The loader's keywords of ``endpoint``'s query parameters in a plan's ``params`` (None
    where absent), as the loader was given them.
    """
    return {p.name: params.get(p.wire) for p in endpoint.params if p.where == "query"}


def _given(endpoint: E.Endpoint, params: Params) -> dict[str, Any]:
    """The keywords the plan gives (the catalog method's defaults stand for the rest)."""
    return {k: v for k, v in _keywords(endpoint, params).items() if v is not None}


def _ohlcv(cat: Catalog, params: Params, keep: Sequence[str]) -> pd.DataFrame:
    return cat.ohlcv(**_given(E.OHLCV, params))


def _signals(cat: Catalog, params: Params, keep: Sequence[str]) -> pd.DataFrame:
    given = _given(E.SIGNALS, params)
    return cat.signals(_quant(given.pop("quant_id", None), "signals"), **given)


def _playbook(cat: Catalog, params: Params, keep: Sequence[str]) -> pd.DataFrame:
    return cat.playbook(**_given(E.CONFIG, params))


def _recommendations(cat: Catalog, params: Params, keep: Sequence[str]) -> pd.DataFrame:
    applied = None if len(keep) != 1 else keep[0] == "appliedRecommendations"
    quant = _quant(_given(E.DASHBOARD, params).get("quant_id"), "recommendations")
    return cat.recommendations(quant, applied=applied)


def _quant(quant: int | None, name: str) -> int:
    if quant is not None:
        return quant
    raise ConfigurationError(f"catalog.{name}: a catalog keeps snapshots per quant: pass quant_id")


#: The routes whose catalog answer is not a plain call with the loader's keywords.
_SPECIAL: dict[str, Answer] = {
    "ohlcv": _ohlcv,
    "signals": _signals,
    "playbook": _playbook,
    "recommendations": _recommendations,
}

#: (endpoint, frame spec name) -> how the catalog answers that recipe: every registry route
#: with a catalog resource (eval details, one request per id, are answered in ``answer``).
ANSWERS: dict[tuple[str, str], Answer] = {
    (e.path, getattr(_schemas, e.spec).name): _SPECIAL.get(e.catalog) or _filtered(e)
    for e in E.ROUTES
    if e.catalog is not None and e.spec is not None and e is not E.DETAILS
}


@lru_cache(maxsize=8)
def _open(path: str) -> Catalog:
    return Catalog(path)


def answer(
    path: str,
    endpoint: str,
    spec: str,
    params: Params | None,
    many: Sequence[Params] | None = None,
    keep: Sequence[str] = (),
) -> pd.DataFrame:
    """The frame the recipe (``endpoint``, frame ``spec``) would load, from the catalog at
    ``path``; ``params``: the plan's Python parameters; ``many``: the parameter sets of a
    one-request-per-set recipe (eval details).
    """
    kept(path, endpoint, spec, many is not None)
    cat = _open(path)
    if _is_details(endpoint, spec, many is not None):
        assert many is not None
        name = E.DETAILS.param("evaluation_ids").wire
        return cat.eval_details([int(p[name]) for p in many])
    return ANSWERS[(endpoint, spec)](cat, params or {}, keep)


def kept(path: str, endpoint: str, spec: str, many: bool) -> None:
    """Nothing when a catalog answers the recipe (``endpoint``, frame ``spec``; ``many``: one
    request per parameter set), else the one-line ``ConfigurationError`` naming what it keeps.
    Reads nothing: what ``qsc.estimate`` asks before pricing a catalog's answer at 0.
    """
    if _is_details(endpoint, spec, many) or (not many and (endpoint, spec) in ANSWERS):
        return
    raise ConfigurationError(
        f"{endpoint} ({spec}) is not kept in a catalog; connected to the catalog {path}, "
        "the loaders answer trades, evaluations, eval details, candles, signals, "
        "playbooks and recommendations: qsc.connect() (without catalog=) for the rest"
    )


def _is_details(endpoint: str, spec: str, many: bool) -> bool:
    return endpoint == E.DETAILS.path and spec == "eval_details" and many


class _CatalogSource:
    """This module as the loaders' catalog source (``loaders._source``)."""

    def answer(
        self,
        path: str,
        endpoint: str,
        spec: str,
        params: Params | None,
        many: Sequence[Params] | None,
        keep: Sequence[str],
    ) -> pd.DataFrame:
        """``answer`` (above)."""
        return answer(path, endpoint, spec, params, many, keep)

    def kept(self, path: str, endpoint: str, spec: str, many: bool) -> None:
        """``kept`` (above)."""
        kept(path, endpoint, spec, many)


plug_catalog(_CatalogSource())
