"""Market data: OHLCV candles as a frame any OHLCV library accepts."""

from __future__ import annotations

import pandas as pd

from quantscope import _endpoints as E
from quantscope._http.client import Client, Fetched
from quantscope._ids import IdArg
from quantscope._typed import schemas as _schemas
from quantscope.loaders._base import Recipe, records_of, typed_frame
from quantscope.loaders._planned import LoadPlan, frame_plan, planned

OHLCV = E.OHLCV.path


@planned
def load_ohlcv(
    token_id: IdArg,
    timeframe: str = "1h",
    *,
    limit: int = 5000,
    client: Client | None = None,
) -> LoadPlan[pd.DataFrame]:
    """Candles of a token, oldest first, on a UTC ``DatetimeIndex`` named ``timestamp``.

    Columns ``open``, ``high``, ``low``, ``close`` (USD) and ``volume`` (USD), all float64.
    ``limit`` is the number of newest candles (the service's maximum is the default).
    """
    recipe = Recipe(OHLCV, _schemas.OHLCV, rows=True, build=_candles)
    return frame_plan(recipe, E.query(E.OHLCV, locals()), client=client)


def _candles(recipe: Recipe, fetched: Fetched) -> pd.DataFrame:
    params = fetched.provenance.params
    assert isinstance(params, dict)  # one request's parameters
    frame = typed_frame(
        records_of(recipe, fetched),
        recipe.spec,
        fetched.provenance,
        token_id=int(params["tokenId"]),
        timeframe=params["timeframe"],
    )
    return frame.sort_index()
