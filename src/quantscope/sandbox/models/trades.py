"""Bodies of the trades group: GET /api/trades, /api/trades/stats, /api/trades/{id}."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Strict

from quantscope.sandbox.models._common import (
    Action,
    Chain,
    CompactMoney,
    ContractModel,
    Count,
    Decision,
    EvaluationType,
    Flag,
    Integer,
    IntegerText,
    Money,
    NativeAmount,
    Number,
    NumericText,
    Percent100,
    PriceText,
    Score,
    SignedMoney,
    SignedPercent,
    Text,
    Timestamp,
    TradeDate,
    TradeDateOrEmpty,
    TradeResult,
    TradeStatus,
    Url,
)


class LlmReasoning(ContractModel):
    """The validation model's reasoning, as three free-text sections."""

    marketAnalysis: Text
    riskAssessment: Text
    technicalEvaluation: Text


class LlmValidation(ContractModel):
    """The model validation that decided whether a trade ran (``metadata.llmValidation``)."""

    decision: Decision = Field(
        description="APPROVE and elapsed DELAY are executed; REJECT, RECOMMEND and active DELAY "
        "are not (see the tradingStatus filter)."
    )
    waitUntil: Timestamp = Field(
        description="End of the wait timer of a DELAY decision; equal to validatedAt for the "
        "decisions that do not wait."
    )
    confidence: Number = Field(description="Confidence of the validation model in its decision.")
    validatedAt: Timestamp
    reasoning: LlmReasoning


class TradeMetadata(ContractModel):
    """Extra data of a trade; the sandbox always includes the model validation."""

    llmValidation: LlmValidation


class TradeEvaluationSummary(ContractModel):
    """The evaluation behind a trade (``latest_evaluation``)."""

    id: Integer
    type: EvaluationType
    passed: Flag
    ai_score: Score = Field(description="AI score, 0-100; 0 when the evaluation was not scored.")
    internal_score: Score = Field(description="Weighted playbook score, 0-100.")
    timestamp: Timestamp
    summary: Text = Field(description="Free-text summary of the evaluation.")
    detection_price: Number = Field(description="Token price in USD when evaluated.")
    token_image: Url


class Trade(ContractModel):
    """One trade, as listed by GET /api/trades; display strings, not numbers."""

    id: IntegerText = Field(description="Trade id as decimal text.")
    token_id: IntegerText = Field(description="Token id as decimal text.")
    token_name: Text
    token_symbol: Text
    token_image: Url
    token_chain: Chain
    token_address: Text = Field(description="Token contract address.")
    open_date: TradeDate = Field(description="UTC, YYYY-MM-DD HH:MM:SS.")
    close_date: TradeDateOrEmpty = Field(
        description='UTC, YYYY-MM-DD HH:MM:SS; "" while the position is open.'
    )
    duration: NumericText = Field(
        description="Duration as plain decimal text; counts up to WORLD_NOW while open."
    )
    buy_cost_usd: Money = Field(description='USD, e.g. "$1,234.50".')
    sell_revenue_usd: Money = Field(description='USD, e.g. "$1,234.50"; "$0.00" while open.')
    pnl_usd: SignedMoney = Field(description='Signed USD, e.g. "+$12.34", "-$3.40".')
    roi: SignedPercent = Field(description='Signed percent, e.g. "+12.50%".')
    eth_sol_spent: NativeAmount = Field(
        description="Native coin spent, 6 decimals and unit (SOL, ETH on BASE, BNB on BSC), "
        'e.g. "0.523400 SOL".'
    )
    eth_sol_received: NativeAmount = Field(description="Native coin received, as eth_sol_spent.")
    tokens_bought: NumericText = Field(description="Token amount as plain decimal text.")
    tokens_sold: NumericText = Field(
        description='Token amount as plain decimal text; "0" while open.'
    )
    avg_buy_price_solOrEth: NumericText = Field(
        description="Average buy price per token in the native coin, plain decimal text."
    )
    status: TradeStatus
    result: TradeResult = Field(
        description="Sign of the pnl; open positions are marked to the last candle."
    )
    price: PriceText = Field(
        description='Current token price in USD, 4 significant digits, e.g. "$0.00001234".'
    )
    price_change: SignedPercent = Field(description="Signed 24 h price change in percent.")
    volume24h: CompactMoney = Field(description='24 h volume in USD, e.g. "$1.23M".')
    quant_name: Text
    metadata: TradeMetadata
    latest_evaluation: TradeEvaluationSummary


class Transaction(ContractModel):
    """One on-chain swap of a trade."""

    id: Integer
    action: Action
    txHash: Text
    timestamp: Timestamp
    inputToken: Text = Field(description="Address of the token paid.")
    outputToken: Text = Field(description="Address of the token received.")
    inputAmount: Number = Field(description="Amount paid, in units of inputToken.")
    outputAmount: Number = Field(description="Amount received, in units of outputToken.")
    inputValueUsd: Number
    outputValueUsd: Number
    pricePerTokenInUsd: Number


class TradeDetail(Trade):
    """One trade with the detail-only fields: the numbers behind the display strings."""

    duration_seconds: Count
    buy_cost_usd_raw: Number = Field(description="USD.")
    sell_revenue_usd_raw: Number = Field(description="USD.")
    pnl_usd_raw: Number = Field(description="USD, signed.")
    roi_raw: Number = Field(description="Percent, signed (12.5 means +12.5 %).")
    eth_sol_spent_raw: Number = Field(description="Native coin amount.")
    eth_sol_received_raw: Number = Field(description="Native coin amount.")
    tokens_bought_raw: Number
    tokens_sold_raw: Number
    avg_buy_price_solOrEth_raw: Number = Field(description="Native coin per token.")
    price_raw: Number = Field(description="USD per token.")
    price_change_raw: Number = Field(description="Percent, signed.")
    volume24h_raw: Number = Field(description="USD.")
    marketCap: CompactMoney = Field(description='USD, e.g. "$1.23M".')
    marketCap_raw: Number = Field(description="USD.")
    liquidity: CompactMoney = Field(description='USD, e.g. "$1.23M".')
    liquidity_raw: Number = Field(description="USD.")
    transactions: list[Transaction] = Field(
        description="The swaps; empty for trades that were not executed."
    )


class TradeDetailResponse(ContractModel):
    """Response of GET /api/trades/{id}."""

    trade: TradeDetail


class TradeGroup(ContractModel):
    """Totals over the closed (``realized``) or open (``unrealized``) trades of a selection."""

    trades: Count
    volume: Number = Field(description="USD, buy cost plus sell revenue.")
    profitableTrades: Count
    lossTrades: Count
    profit: Number = Field(description="USD, sum of the positive pnl.")
    loss: Number = Field(description="USD, sum of the negative pnl (negative).")
    pnl: Number = Field(description="USD.")
    roi: Number = Field(description="Percent: pnl over buy cost.")
    winRate: Percent100 = Field(description="Percent (0-100) of trades with pnl > 0.")
    avgReturn: Number = Field(description="Mean trade roi in percent.")


class TradeSummary(ContractModel):
    """Totals over every trade that matches the filters, not just the page."""

    totalTrades: Count
    totalVolume: Number = Field(description="USD, sum of buy cost plus sell revenue.")
    profitableTrades: Count
    lossTrades: Count
    totalProfit: Number = Field(description="USD, sum of the positive pnl.")
    totalLoss: Number = Field(description="USD, sum of the negative pnl (negative).")
    winRate: Percent100 = Field(description="Percent (0-100) of trades with pnl > 0.")
    accountValue: Number = Field(
        description="USD: starting capital of the quants in the filter (10,000 each) plus pnl."
    )
    realized: TradeGroup
    unrealized: TradeGroup


class Pagination(ContractModel):
    """Where a page sits in the full result."""

    total: Count
    page: Annotated[int, Strict(), Field(ge=1)]
    pageSize: Annotated[int, Strict(), Field(ge=1)]
    totalPages: Count


class TradeList(ContractModel):
    """Response of GET /api/trades."""

    trades: list[Trade]
    summary: TradeSummary
    pagination: Pagination


class TradeMetrics(ContractModel):
    """Activity of executed trades and its change week over week."""

    totalTrades: Count
    totalVolume: Number = Field(description="USD.")
    tradesWeeklyChange: Number = Field(
        description="Percent change of trades opened in the last 7 days over the 7 before "
        "(0 when that week is empty)."
    )
    volumeWeeklyChange: Number = Field(description="Percent, as tradesWeeklyChange.")


class TradeStats(ContractModel):
    """Response of GET /api/trades/stats."""

    metrics: TradeMetrics
