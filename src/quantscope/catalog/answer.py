"""The loaders' recipes answered from a catalog: what ``qsc.connect(catalog=path)`` does.

``loaders._base.load`` hands a recipe's endpoint and wire parameters here when the client
was connected to a catalog (``Settings.catalog``): the one recipe every loader follows asks
the catalog instead of the service, so a notebook written against the service re-runs
unchanged, with no service and no key. ``ANSWERS`` maps an endpoint to the ``Catalog``
method with the loader's signature; anything else (a write, a detail endpoint, counts) is
refused with a one-line error naming what the catalog holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from quantscope._errors import ConfigurationError
from quantscope.catalog.read import Catalog

__all__ = ["ANSWERS", "answer"]


def _flag(value: str | None) -> bool | None:
    return None if value is None else value == "true"


def _int(value: str | None) -> int | None:
    return None if value is None else int(value)


def _trades(cat: Catalog, w: Mapping[str, str], keep: Sequence[str]) -> pd.DataFrame:
    return cat.trades(
        _int(w.get("quantId")),
        trading_status=w.get("tradingStatus"),
        trading_mode=w.get("tradingMode"),
        position_closed=_flag(w.get("positionClosed")),
        tracking_enabled=_flag(w.get("isTrackingEnabled")),
        status=w.get("filterStatus"),
        chain=w.get("chain"),
        search=w.get("search"),
        start=w.get("startDate"),
        end=w.get("endDate"),
        sort_by=w.get("sortBy"),
        sort_order=w.get("sortOrder"),
    )


def _evaluations(cat: Catalog, w: Mapping[str, str], keep: Sequence[str]) -> pd.DataFrame:
    return cat.evaluations(
        _int(w.get("quantId")),
        evaluation_type=w.get("evaluationResultType"),
        passed=_flag(w.get("passed")),
        chain=w.get("chain"),
        search=w.get("search"),
        unique_tokens_only=_flag(w.get("uniqueTokensOnly")),
        only_scored=_flag(w.get("onlyScored")),
        start=w.get("timeFrom"),
        end=w.get("timeTo"),
    )


def _ohlcv(cat: Catalog, w: Mapping[str, str], keep: Sequence[str]) -> pd.DataFrame:
    return cat.ohlcv(int(w["tokenId"]), w.get("timeframe", "1h"), limit=int(w.get("limit", 5000)))


def _signals(cat: Catalog, w: Mapping[str, str], keep: Sequence[str]) -> pd.DataFrame:
    return cat.signals(
        int(w["quantId"]) if "quantId" in w else _need_quant("signals"),
        chain=w.get("chain"),
        search=w.get("search"),
        limit=int(w.get("limit", 500)),
    )


def _playbook(cat: Catalog, w: Mapping[str, str], keep: Sequence[str]) -> pd.DataFrame:
    return cat.playbook(int(w["quantId"]), config_group_id=w.get("configGroupId"))


def _recommendations(cat: Catalog, w: Mapping[str, str], keep: Sequence[str]) -> pd.DataFrame:
    applied = None if len(keep) != 1 else keep[0] == "appliedRecommendations"
    quant = int(w["quantId"]) if "quantId" in w else _need_quant("recommendations")
    return cat.recommendations(quant, applied=applied)


def _need_quant(name: str) -> Any:
    raise ConfigurationError(f"catalog.{name}: a catalog keeps snapshots per quant: pass quant_id")


Answer = Callable[[Catalog, Mapping[str, str], Sequence[str]], pd.DataFrame]

#: (endpoint, frame spec name) -> how the catalog answers that recipe.
ANSWERS: dict[tuple[str, str], Answer] = {
    ("/api/trades", "trades"): _trades,
    ("/api/eval-results", "evaluations"): _evaluations,
    ("/api/eval-ohlcv", "ohlcv"): _ohlcv,
    ("/api/alpha-signals", "signals"): _signals,
    ("/api/degen/config", "playbook"): _playbook,
    ("/api/refine-eval/dashboard", "recommendations"): _recommendations,
}


@lru_cache(maxsize=8)
def _open(path: str) -> Catalog:
    return Catalog(path)


def answer(
    path: str,
    endpoint: str,
    spec: str,
    wire: Mapping[str, str],
    many: Sequence[Mapping[str, str]] | None = None,
    keep: Sequence[str] = (),
) -> pd.DataFrame:
    """The frame the recipe (``endpoint``, frame ``spec``) would load, from the catalog at
    ``path``; ``many``: the parameter sets of a one-request-per-set recipe (eval details)."""
    cat = _open(path)
    if endpoint == "/api/eval-details" and spec == "eval_details" and many is not None:
        return cat.eval_details([int(p["evaluationId"]) for p in many])
    how = ANSWERS.get((endpoint, spec))
    if how is None or many is not None:
        raise ConfigurationError(
            f"{endpoint} ({spec}) is not kept in a catalog; connected to the catalog {path}, "
            "the loaders answer trades, evaluations, eval details, candles, signals, "
            "playbooks and recommendations: qsc.connect() (without catalog=) for the rest"
        )
    return how(cat, wire, keep)
