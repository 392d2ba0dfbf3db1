"""Market data: OHLCV candles as a frame any OHLCV library accepts."""

from __future__ import annotations

import pandas as pd

from quantscope import _schemas
from quantscope._client import Client
from quantscope.loaders._base import client_or_default, field, records, typed_frame

OHLCV = "/api/eval-ohlcv"


def load_ohlcv(
    token_id: int,
    timeframe: str = "1h",
    *,
    limit: int = 5000,
    client: Client | None = None,
) -> pd.DataFrame:
    """Candles of a token, oldest first, on a UTC ``DatetimeIndex`` named ``timestamp``.

    Columns ``open``, ``high``, ``low``, ``close`` (USD) and ``volume`` (USD), all float64.
    ``limit`` is the number of newest candles (the service's maximum is the default).
    """
    fetched = client_or_default(client).get(
        OHLCV, {"tokenId": token_id, "timeframe": timeframe, "limit": limit}
    )
    points = records(field(fetched.data, OHLCV, "ohlcv", list), OHLCV)
    frame = typed_frame(
        points, _schemas.OHLCV, fetched.provenance, token_id=token_id, timeframe=timeframe
    )
    return frame.sort_index()
