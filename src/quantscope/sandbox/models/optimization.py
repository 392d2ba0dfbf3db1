"""Bodies of the strategy-optimisation group: /api/refine-eval/dashboard, analyze, apply."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from quantscope.sandbox.models._common import (
    ConfigId,
    ContractModel,
    Count,
    ExtraInfo,
    Flag,
    Fraction,
    Integer,
    MarketCapClass,
    Number,
    Success,
    Text,
    Timestamp,
)


class OverallPerformance(ContractModel):
    """Performance of a quant's executed trades."""

    totalTrades: Count
    completedTrades: Count
    activeTrades: Count
    winningTrades: Count
    losingTrades: Count
    winRate: Fraction = Field(description="Fraction (0-1) of closed trades with pnl > 0.")
    avgProfitWinningTrades: Number = Field(description="USD.")
    avgLossLosingTrades: Number = Field(description="USD, negative.")
    totalPnL: Number = Field(description="Realised USD.")


class Recommendation(ContractModel):
    """A suggested stricter BUYING threshold for one criterion, with its evidence."""

    id: Integer
    criteriaId: Integer
    criteriaKey: Text
    criteriaName: Text
    oldThreshold: Number
    newThreshold: Number
    oldExtraInfo: ExtraInfo
    newExtraInfo: ExtraInfo
    confidence: Fraction = Field(description="Fraction 0-1: n/(n+50) × |2·AUC − 1|.")
    reasoning: Text
    applied: Flag
    appliedAt: Timestamp | None = Field(description="null until applied.")
    beforeWinRate: Fraction = Field(description="Fraction (0-1) over all sampled trades.")
    afterWinRate: Fraction = Field(description="Fraction (0-1) over the trades kept.")
    tradeDifference: Annotated[int, Strict(), Field(le=0)] = Field(
        description="Trades kept minus all trades (<= 0)."
    )
    configType: Literal["BUY"]
    isDegenConfig: Flag
    userQuantId: Integer
    profitableAccuracy: Fraction = Field(description="Share (0-1) of profitable trades kept.")
    unprofitableAccuracy: Fraction = Field(description="Share (0-1) of losing trades excluded.")
    f1Score: Fraction
    sampleSize: Count = Field(description="Closed trades analysed.")
    profitableAvg: Number = Field(description="Mean criterion value among profitable trades.")
    unprofitableAvg: Number = Field(description="Mean criterion value among losing trades.")
    valueDifferenceRatio: Number = Field(
        description="(profitableAvg - unprofitableAvg) / |unprofitableAvg|; 0 when that is 0."
    )
    userFeedback: None = Field(description="Always null in the sandbox.")
    actualImpact: Number = Field(description="afterWinRate - beforeWinRate, a fraction.")
    createdAt: Timestamp
    updatedAt: Timestamp
    configId: ConfigId = Field(description="Extension: the config entry whose threshold changes.")
    marketCap: MarketCapClass = Field(description="Extension: the playbook class concerned.")


class AppliedRecommendation(ContractModel):
    """The subset of a recommendation returned when it is applied."""

    id: Integer
    criteriaId: Integer
    criteriaKey: Text
    criteriaName: Text
    oldThreshold: Number
    newThreshold: Number = Field(description="The config entry's threshold from now on.")
    applied: Literal[True]
    appliedAt: Timestamp
    beforeWinRate: Fraction
    afterWinRate: Fraction
    tradeDifference: Annotated[int, Strict(), Field(le=0)]
    actualImpact: Number = Field(description="afterWinRate - beforeWinRate, a fraction.")


class WeeklyTrend(ContractModel):
    """Closed-trade results of one week (by close week, weeks start on Monday)."""

    weekStart: Timestamp = Field(description="Monday 00:00 UTC.")
    trades: Count
    closedTrades: Count
    winRate: Fraction = Field(description="Fraction (0-1) of the week's closed trades won.")
    pnl: Number = Field(description="USD.")


class HistoricalTrends(ContractModel):
    """Extension: the dashboard's week-by-week history."""

    weekly: list[WeeklyTrend]


class DashboardData(ContractModel):
    """The optimisation dashboard of a quant (or of all quants)."""

    overallPerformance: OverallPerformance
    recentRecommendations: list[Recommendation] = Field(
        description="The 20 newest unapplied recommendations."
    )
    appliedRecommendations: list[Recommendation] = Field(
        description="The 20 newest applied recommendations."
    )
    historicalTrends: HistoricalTrends


class Dashboard(ContractModel):
    """Response of GET /api/refine-eval/dashboard."""

    success: Success
    data: DashboardData


class AnalyzeRequest(ContractModel):
    """Body of POST /api/refine-eval/analyze; every field is optional."""

    quantId: Integer | None = Field(default=None, description="Absent: every quant.")
    apply: Literal["true", "false"] | None = Field(
        default=None,
        description='Text, not a boolean: "true" applies every generated recommendation.',
    )
    minCompletedTrades: Count | None = Field(
        default=None, description="Closed trades a quant needs to be analysed (default 20)."
    )


class AnalyzeResult(ContractModel):
    """What an analysis run did."""

    tradesAnalyzed: Count
    recommendationsGenerated: Count
    recommendationsApplied: Count


class AnalyzeResponse(ContractModel):
    """Response of POST /api/refine-eval/analyze."""

    success: Success
    data: AnalyzeResult


class ApplyResult(ContractModel):
    """Response of POST /api/refine-eval/recs/{id}/apply."""

    success: Success
    data: AppliedRecommendation
