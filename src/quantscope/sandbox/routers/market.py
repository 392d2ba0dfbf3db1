"""Market data: GET /api/eval-ohlcv, a token's candles (docs/service-contract.md, OHLCV).

Candles are not stored: ``market.token_path`` regenerates a token's hourly candles from the
world's seed and ``market.aggregate`` builds the longer timeframes (UTC-aligned, weeks from
Monday; first open, max high, min low, last close, summed volume).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, Depends, Query
from pydantic import BeforeValidator, Field

from quantscope.sandbox.deps import Caller, JSONRoute, StoreDep, WorldDep, require
from quantscope.sandbox.errors import not_found
from quantscope.sandbox.models.market import Ohlcv
from quantscope.sandbox.params import DECIMAL, Id, lower_text
from quantscope.sandbox.sim import market

router = APIRouter(route_class=JSONRoute, tags=["Evaluation results"])

Timeframe = Literal["1h", "2h", "4h", "6h", "12h", "1d", "1w"]
if set(get_args(Timeframe)) != set(market.TIMEFRAME_HOURS):  # pragma: no cover
    raise RuntimeError("Timeframe must list market.TIMEFRAME_HOURS")
CandleCount = Annotated[int, Field(ge=1, le=5000), DECIMAL]


@router.get("/api/eval-ohlcv", response_model=Ohlcv)
def eval_ohlcv(
    caller: Annotated[Caller, Depends(require("market"))],
    store: StoreDep,
    world: WorldDep,
    tokenId: Annotated[Id, Query(description="The token.")],
    timeframe: Annotated[
        Annotated[Timeframe, BeforeValidator(lower_text)],
        Query(description="Candle length (any case), aligned to UTC; weeks start on Monday."),
    ] = "1h",
    limit: Annotated[CandleCount, Query(description="Candles to return.")] = 500,
) -> dict[str, Any]:
    """The newest ``limit`` candles before WORLD_NOW, oldest first; timestamps in epoch ms.

    The history starts and ends on a Thursday, so its first and last ``1w`` candles are partial.
    """
    row = store.connect().execute("SELECT chain FROM tokens WHERE id = ?", (tokenId,)).fetchone()
    if row is None:
        raise not_found(f"no token with id {tokenId}", "tokenId")
    caller.check_chain(row["chain"])
    candles = market.aggregate(market.token_path(world.seed, tokenId), timeframe)
    columns = ("timestamp", "open", "high", "low", "close", "volume")
    lists = [candles[name][-limit:].tolist() for name in columns]
    return {
        "ohlcv": [dict(zip(columns, values, strict=True)) for values in zip(*lists, strict=True)]
    }
