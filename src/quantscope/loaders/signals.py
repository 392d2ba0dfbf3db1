"""Alpha signals: the list, the per-chain stage counts, and one token's signal."""

from __future__ import annotations

from typing import Any, NamedTuple

import pandas as pd

from quantscope import _endpoints as E
from quantscope._http.client import Client, Fetched
from quantscope._ids import IdArg
from quantscope._typed import schemas as _schemas
from quantscope.loaders._base import Frames, Recipe, field, records, typed_frame
from quantscope.loaders._planned import LoadPlan, frame_plan, parts_plan, planned

SIGNALS = E.SIGNALS.path
SIGNAL = E.SIGNAL.path


def _params(
    quant_id: IdArg | None, chain: str | None, search: str | None, limit: int
) -> dict[str, Any]:
    return E.query(E.SIGNALS, locals())


@planned
def load_signals(
    quant_id: IdArg | None = None,
    *,
    chain: str | None = None,
    search: str | None = None,
    limit: int = 500,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """One row per alpha signal (stage, price, change, ROI of an open position...)."""
    recipe = Recipe(SIGNALS, _schemas.SIGNALS, rows=True, by_chain=True)
    return frame_plan(recipe, _params(quant_id, chain, search, limit), client=client)


@planned
def load_signal_stats(
    quant_id: IdArg | None = None,
    *,
    chain: str | None = None,
    search: str | None = None,
    limit: int = 500,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """Signal counts per stage, one row per chain group (``all``, ``solana``, ``base``, ``bsc``).

    Same request as ``load_signals`` with the same arguments: after one, the other is a
    cache hit.
    """
    recipe = Recipe(SIGNALS, _schemas.SIGNAL_STATS, build=_stats_frame, by_chain=True)
    return frame_plan(recipe, _params(quant_id, chain, search, limit), client=client)


def _stats_frame(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    by_chain = field(fetched.data, SIGNALS, "byChain")
    rows = [
        {"chain": name, **(group.get("stats") or {})}
        for name, group in by_chain.items()
        if isinstance(group, dict)
    ]
    return typed_frame(rows, recipe.spec, fetched.provenance)


class SignalDetail(NamedTuple):
    """One token's signal (a one-row frame) and the criterion results behind it."""

    signal: pd.DataFrame
    criteria: pd.DataFrame


@planned
def load_signal(
    token_id: IdArg, quant_id: IdArg | None = None, *, client: Client | None = None
) -> LoadPlan[SignalDetail]:
    """The alpha signal of one token, with its newest evaluation's criterion results."""
    recipe = Recipe(SIGNAL, _schemas.SIGNALS, build=_signal_frames, parts=(_schemas.EVAL_DETAILS,))
    return parts_plan(recipe, E.query(E.SIGNAL, locals()), _signal_detail, client=client)


def _signal_detail(frames: Frames, c: Client) -> SignalDetail:
    signal, criteria = frames
    return SignalDetail(signal, criteria)


def _signal_frames(recipe: Recipe, fetched: Fetched) -> tuple[pd.DataFrame, pd.DataFrame]:
    body: Any = fetched.data
    if not isinstance(body, dict):
        body = field({"signal": body}, SIGNAL, "signal")
    details = records(body.get("evaluationDetails") or [], SIGNAL)
    eid = body.get("evaluationId")
    crit = [
        {**d, "evaluation_id": eid, "evaluation_type": body.get("evaluationResultType")}
        for d in details
    ]
    return (
        typed_frame([body], recipe.spec, fetched.provenance),
        typed_frame(crit, _schemas.EVAL_DETAILS, fetched.provenance),
    )
