"""Bodies of the evaluations group: eval-results, -timeseries, -count, -details, -history."""

from __future__ import annotations

from pydantic import Field

from quantscope.sandbox.models._common import (
    CategoryName,
    Chain,
    ContractModel,
    Count,
    EvaluationType,
    ExtraInfo,
    Flag,
    Integer,
    Number,
    NumericText,
    Percent100,
    Score,
    Text,
    Timestamp,
    TokenStatus,
    Url,
)


class DataFetcherSnapshot(ContractModel):
    """What one data source reported about the token when it was evaluated."""

    source: Text
    fetchedAt: Timestamp
    priceUsd: Number
    marketCapUsd: Number
    liquidityUsd: Number
    volume24hUsd: Number
    holders: Count


class EvaluationToken(ContractModel):
    """The evaluated token, as embedded in an evaluation result."""

    id: Integer
    symbol: Text
    address: Text
    chainName: Chain
    DataFetcherResponseSnapshots: list[DataFetcherSnapshot] = Field(
        description="One snapshot per data source at evaluation time."
    )
    detectionPrice: Number = Field(description="USD price when evaluated.")
    image: Url


class EvaluationPerformance(ContractModel):
    """How the token's price moved after the evaluation."""

    tokenId: Integer
    entryPriceUsd: Number = Field(description="The detection price, USD.")
    roi: Number = Field(
        description="Percent change from the detection price to the close 24 h later (or to the "
        "last candle before WORLD_NOW)."
    )


class EvaluationResult(ContractModel):
    """One token evaluation, as listed by GET /api/eval-results."""

    id: Integer
    tokenId: Integer
    userQuantId: Integer = Field(description="The quant that evaluated.")
    createdAt: Timestamp
    updatedAt: Timestamp
    evaluationResultType: EvaluationType
    marketCap: Number = Field(description="USD market cap at evaluation.")
    passed: Flag
    avgScore: Score = Field(
        description="0-100: mean of internalScore and aiScore when scored, else internalScore."
    )
    aiScore: Score = Field(description="0-100; 0 when unscored.")
    internalScore: Score = Field(description="Weighted playbook score, 0-100.")
    aiAnalysis: Text = Field(description='Free text; "" when unscored.')
    aiPrompt: Text
    token: EvaluationToken
    performance: EvaluationPerformance


class EvaluationResultList(ContractModel):
    """Response of GET /api/eval-results."""

    results: list[EvaluationResult]
    total: Count = Field(description="Matching evaluations before limit/offset.")


class TimeseriesPoint(ContractModel):
    """Evaluation counts in one UTC-aligned bucket (1 h, 1 day or 1 week)."""

    timestamp: Timestamp = Field(description="Start of the bucket.")
    evaluations: Count
    passed: Count
    failed: Count
    percentPassed: Percent100 = Field(description="Percent (0-100); 0 for an empty bucket.")


class Timeseries(ContractModel):
    """Response of GET /api/eval-timeseries."""

    timeseries: list[TimeseriesPoint]


class EvaluationCount(ContractModel):
    """Response of GET /api/eval-count: evaluation totals over a time window."""

    total: Count
    passed: Count
    failed: Count
    percentPassed: Percent100 = Field(description="Percent (0-100).")


class EvaluationDetailToken(ContractModel):
    """The evaluated token with its market figures."""

    id: Integer
    image: Url
    name: Text
    symbol: Text
    address: Text
    priceSnapshot: Number = Field(description="USD price at evaluation.")
    priceChange24h: Number = Field(description="Percent, signed.")
    mc: Number = Field(description="USD market cap.")
    liquidity: Number = Field(description="USD.")
    volume24h: Number = Field(description="USD.")
    status: TokenStatus
    createdAt: Timestamp
    chainName: Chain


class UserQuant(ContractModel):
    """The quant that made an evaluation."""

    id: Integer
    name: Text


class EvaluationDetailResult(ContractModel):
    """The outcome of an evaluation."""

    id: Integer
    passed: Flag
    evaluationResultType: EvaluationType
    avgScore: Score
    internalScore: Score
    aiScore: Score
    aiAnalysis: Text
    createdAt: Timestamp


class CriterionInfo(ContractModel):
    """Names and descriptions of a criterion."""

    key: Text
    name: Text
    shortDescription: Text
    longDescription: Text


class CriterionCategory(ContractModel):
    """The category a criterion belongs to."""

    id: Integer
    name: CategoryName


class CriterionResult(ContractModel):
    """One criterion's measured value and verdict in an evaluation."""

    id: Integer
    passed: Flag | None = Field(description="null for a disabled criterion.")
    value: NumericText = Field(
        description="Measured value as decimal text (an option id for options criteria)."
    )
    threshold: Number
    weight: Number = Field(ge=0)
    score: Number | None = Field(
        description="Contribution to the weighted score: the weight when passed, else 0; "
        "null for a disabled criterion."
    )
    criteriaScore: Score | None = Field(
        description="Where the value stands in the criterion's range, 0-100, 100 best; "
        "null for a disabled criterion."
    )
    criteriaId: Integer
    createdAt: Timestamp
    extraInfo: ExtraInfo
    criteria: CriterionInfo
    category: CriterionCategory


class EvaluationDetail(ContractModel):
    """Response of GET /api/eval-details."""

    token: EvaluationDetailToken
    userQuant: UserQuant
    evaluationResult: EvaluationDetailResult
    evaluationResultDetails: list[CriterionResult]


class EvaluationHistoryItem(ContractModel):
    """An earlier or later evaluation of the same token by the same quant."""

    id: Integer
    createdAt: Timestamp
    marketCap: Number = Field(description="USD.")
    evaluationResultType: EvaluationType
    aiScore: Score
    internalScore: Score
    price: Number = Field(description="Detection price, USD.")
    passed: Flag


class EvaluationHistoryList(ContractModel):
    """Response of GET /api/eval-history, newest first."""

    total: Count
    results: list[EvaluationHistoryItem]
