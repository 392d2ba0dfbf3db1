"""Bodies of the market-data group: GET /api/eval-ohlcv."""

from __future__ import annotations

from pydantic import Field

from quantscope.sandbox.models._common import ContractModel, Integer, Number


class OhlcvPoint(ContractModel):
    """One candle."""

    timestamp: Integer = Field(description="Candle open time, epoch milliseconds UTC.")
    open: Number = Field(description="USD.")
    high: Number = Field(description="USD.")
    low: Number = Field(description="USD.")
    close: Number = Field(description="USD.")
    volume: Number = Field(description="USD traded in the candle.")


class Ohlcv(ContractModel):
    """Response of GET /api/eval-ohlcv, oldest candle first."""

    ohlcv: list[OhlcvPoint]
