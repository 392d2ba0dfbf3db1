"""Bodies of the alpha-signals group: GET /api/alpha-signals and /api/alpha-signals/{tokenId}."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from quantscope.sandbox.models._common import (
    Chain,
    ContractModel,
    Count,
    EvaluationType,
    Flag,
    Integer,
    Number,
    Percent100,
    Score,
    Stage,
    Text,
    Timestamp,
    TokenStatus,
    Url,
    forbid_null,
    is_none,
)
from quantscope.sandbox.models.evaluations import CriterionResult


class TokenDetails(ContractModel):
    """Extra token information, present when ``includeTokenDetails=true``."""

    name: Text
    createdAt: Timestamp
    status: TokenStatus
    holders: Count
    ageHours: Number = Field(description="Hours from token creation to WORLD_NOW.")


class _SignalFields(ContractModel):
    """Fields shared by a listed alpha signal and the signal detail."""

    tokenId: Integer
    evaluationId: Integer = Field(description="The newest evaluation of the token.")
    token: Text = Field(description="Token name.")
    symbol: Text
    image: Url | None
    address: Text
    chainName: Chain
    price: Number = Field(description="USD.")
    change: Number = Field(description="24 h price change, percent.")
    volume: Number = Field(description="24 h volume, USD.")
    marketCap: Number = Field(description="USD.")
    liquidity: Number = Field(description="USD.")
    stage: Stage = Field(
        description="BUY: open position; SELL: closed in the last 48 h; SCREENING: newest "
        "evaluation passed; WATCH: otherwise."
    )
    alert: Annotated[str, StringConstraints(strict=True, max_length=140)] = Field(
        description="At most 140 characters; a truncated alert ends with '…'."
    )
    updatedAt: Timestamp
    entryPriceUsd: Number | None = Field(description="USD; set for BUY and SELL, else null.")
    roi: Number | None = Field(description="Percent; set for BUY and SELL, else null.")
    passed: Flag
    evaluationResultType: EvaluationType


class AlphaSignal(_SignalFields):
    """One token's signal, as listed by GET /api/alpha-signals."""

    analysisProgress: Percent100 = Field(
        description="Percent: WATCH 25, SCREENING 50, BUY/SELL 100."
    )
    volume24h: Number = Field(description="24 h volume, USD.")
    tokenDetails: Annotated[TokenDetails | SkipJsonSchema[None], BeforeValidator(forbid_null)] = (
        Field(
            default=None,
            exclude_if=is_none,
            description="Present only with includeTokenDetails=true.",
        )
    )


class SignalStats(ContractModel):
    """Signals per stage, counted before ``limit``."""

    total: Count
    screening: Count
    buy: Count
    sell: Count
    watch: Count


class ChainSignals(ContractModel):
    """The signals of one chain (or of all) with their stage counts."""

    signals: list[AlphaSignal]
    stats: SignalStats


class ByChain(ContractModel):
    """Signals grouped by chain; chains outside the plan are empty."""

    all: ChainSignals
    solana: ChainSignals
    base: ChainSignals
    bsc: ChainSignals


class AlphaSignalList(ContractModel):
    """Response of GET /api/alpha-signals."""

    signals: list[AlphaSignal]
    byChain: ByChain


class AlphaSignalDetail(_SignalFields):
    """Response of GET /api/alpha-signals/{tokenId}."""

    aiScore: Score
    internalScore: Score
    aiAnalysis: Text
    evaluationDetails: list[CriterionResult] = Field(
        description="Criterion results of the newest evaluation, shaped as in eval-details."
    )
