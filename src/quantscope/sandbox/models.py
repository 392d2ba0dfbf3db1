"""Pydantic models of every request and response body of the service, as the sandbox serves them.

The models are the sandbox's wire contract written as code. They serve two purposes:

* FastAPI's ``response_model=`` and request bodies, so that ``/openapi.json`` describes every
  endpoint with its field types, formats (regex ``pattern``), units and scales;
* test oracles: ``validate_response`` checks a real JSON answer of the sandbox against its model.

They are not the serialisation path (routers return plain dicts through a fast JSON response), so
they are deliberately strict: every model forbids undocumented fields, and every field accepts
exactly its JSON type (a spec "integer" is a JSON integer, a "number" an integer or a finite float
but never a string or a boolean, a "string" a JSON string). Format-bearing strings carry the
regexes of ``docs/service-contract.md`` (collected in ``PATTERNS``); the fixed vocabularies are
``Literal`` types that a test keeps equal to ``catalog.py``.

Field names follow the JSON. Where the JSON name is not an identifier ("Technical Analysis") the
field has an alias; models accept both names and serialise by alias.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal, TypeVar

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    Strict,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from quantscope.sandbox.errors import ERROR_CODES

# --------------------------------------------------------------------------------------------
# Formats: the regexes of the contract, in one place. [0-9] rather than \d: \d also matches
# non-ASCII digits, and the patterns are published in /openapi.json for other regex engines.
# --------------------------------------------------------------------------------------------

TIMESTAMP_PATTERN: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$"
TRADE_DATE_PATTERN: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$"
TRADE_DATE_OR_EMPTY_PATTERN: Final = r"^([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})?$"
NUMERIC_TEXT_PATTERN: Final = r"^-?[0-9]+(\.[0-9]+)?$"
INTEGER_TEXT_PATTERN: Final = r"^[0-9]+$"
MONEY_PATTERN: Final = r"^\$[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2}$"
SIGNED_MONEY_PATTERN: Final = r"^[+-]\$[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2}$"
SIGNED_PERCENT_PATTERN: Final = r"^[+-][0-9]+\.[0-9]{2}%$"
NATIVE_AMOUNT_PATTERN: Final = r"^[0-9]+\.[0-9]{6} (SOL|ETH|BNB)$"
COMPACT_MONEY_PATTERN: Final = r"^\$[0-9]{1,3}(,[0-9]{3})*\.[0-9]{2}[KMB]?$"
PRICE_PATTERN: Final = r"^\$[0-9]{1,3}(,[0-9]{3})*(\.[0-9]+)?$"
UUID_PATTERN: Final = (
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
URL_PATTERN: Final = r"^https?://[^\s]+$"

PATTERNS: Final[dict[str, str]] = {
    "timestamp": TIMESTAMP_PATTERN,
    "trade_date": TRADE_DATE_PATTERN,
    "trade_date_or_empty": TRADE_DATE_OR_EMPTY_PATTERN,
    "numeric_text": NUMERIC_TEXT_PATTERN,
    "integer_text": INTEGER_TEXT_PATTERN,
    "money": MONEY_PATTERN,
    "signed_money": SIGNED_MONEY_PATTERN,
    "signed_percent": SIGNED_PERCENT_PATTERN,
    "native_amount": NATIVE_AMOUNT_PATTERN,
    "compact_money": COMPACT_MONEY_PATTERN,
    "price": PRICE_PATTERN,
    "uuid": UUID_PATTERN,
    "url": URL_PATTERN,
}
"""Every format regex by name: the display-string table of docs/service-contract.md and more."""


def _parses_as(fmt: str) -> AfterValidator:
    """A validator that rejects well-shaped but impossible dates (2026-02-30, 25:00:00)."""

    def check(value: str) -> str:
        if value:
            datetime.strptime(value, fmt)  # raises ValueError, which pydantic reports
        return value

    return AfterValidator(check)


def _text(pattern: str) -> StringConstraints:
    """A JSON string (never a number or null) that matches ``pattern``."""
    return StringConstraints(strict=True, pattern=pattern)


def _forbid_null(value: object) -> object:
    """Used on fields that may be absent: when present they must hold a value, never null."""
    if value is None:
        raise ValueError("may be absent but never null")
    return value


def _is_none(value: object) -> bool:
    """Absent fields stay absent when a model is serialised (FastAPI's response_model path)."""
    return value is None


# JSON types. Strict everywhere: no str -> number, no bool -> int, no int-valued float -> int.
Integer = Annotated[int, Strict()]
Count = Annotated[int, Strict(), Field(ge=0)]
Number = Annotated[float, Strict(), AllowInfNan(False)]
Score = Annotated[float, Strict(), AllowInfNan(False), Field(ge=0, le=100)]
Percent100 = Annotated[float, Strict(), AllowInfNan(False), Field(ge=0, le=100)]
Fraction = Annotated[float, Strict(), AllowInfNan(False), Field(ge=0, le=1)]
Text = Annotated[str, Strict()]
Flag = Annotated[bool, Strict()]

# Format-bearing strings.
Timestamp = Annotated[str, _text(TIMESTAMP_PATTERN), _parses_as("%Y-%m-%dT%H:%M:%S.%fZ")]
TradeDate = Annotated[str, _text(TRADE_DATE_PATTERN), _parses_as("%Y-%m-%d %H:%M:%S")]
TradeDateOrEmpty = Annotated[
    str, _text(TRADE_DATE_OR_EMPTY_PATTERN), _parses_as("%Y-%m-%d %H:%M:%S")
]
NumericText = Annotated[str, _text(NUMERIC_TEXT_PATTERN)]
IntegerText = Annotated[str, _text(INTEGER_TEXT_PATTERN)]
Money = Annotated[str, _text(MONEY_PATTERN)]
SignedMoney = Annotated[str, _text(SIGNED_MONEY_PATTERN)]
SignedPercent = Annotated[str, _text(SIGNED_PERCENT_PATTERN)]
NativeAmount = Annotated[str, _text(NATIVE_AMOUNT_PATTERN)]
CompactMoney = Annotated[str, _text(COMPACT_MONEY_PATTERN)]
PriceText = Annotated[str, _text(PRICE_PATTERN)]
ConfigId = Annotated[str, _text(UUID_PATTERN)]
Url = Annotated[str, _text(URL_PATTERN)]

# Vocabularies fixed by the contract (a test keeps them equal to catalog.py).
Chain = Literal["SOLANA", "BASE", "BSC"]
EvaluationType = Literal["TOKEN_STATUS", "TOKEN_BUY", "TOKEN_SELL"]
ConfigType = Literal["SCANNING", "BUYING"]
Interval = Literal["noTime"]
MarketCapClass = Literal["DEGEN_CAP", "LOW_CAP", "MID_CAP"]
Operator = Literal["V_GTE_T", "V_GT_T", "V_LTE_T", "V_LT_T"]
CategoryName = Literal["Security", "Market", "Social", "AI", "Technical Analysis", "Onchain"]
TradeStatus = Literal["Open", "Closed"]
TradeResult = Literal["Profit", "Loss", "Breakeven"]
Decision = Literal["APPROVE", "DELAY", "REJECT", "RECOMMEND"]
Action = Literal["BUY", "SELL"]
Stage = Literal["SCREENING", "BUY", "SELL", "WATCH"]
TokenStatus = Literal["ACTIVE", "DORMANT", "RUGGED"]
ConfigField = Literal["threshold", "weight", "required", "disabled", "extraInfo"]
Success = Literal[True]

ErrorCode = Literal[
    "missing_api_key",
    "invalid_api_key",
    "plan_not_allowed",
    "chain_not_allowed",
    "not_found",
    "method_not_allowed",
    "already_applied",
    "stale_recommendation",
    "invalid_parameter",
    "invalid_body",
    "insufficient_trades",
    "rate_limited",
    "internal_error",
]
ERROR_STATUS: Final[dict[str, int]] = ERROR_CODES
"""The HTTP status of each error code (docs/service-contract.md, Errors): the registry the
sandbox's errors use (``errors.ERROR_CODES``)."""


class ContractModel(BaseModel):
    """Base of every body: strict JSON types, no undocumented fields, aliases both ways."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        populate_by_name=True,
        serialize_by_alias=True,
    )


# --------------------------------------------------------------------------------------------
# Trades
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Evaluations and market data
# --------------------------------------------------------------------------------------------


class ExtraInfoOption(ContractModel):
    """One option of an options criterion; options are listed worst to best."""

    id: Integer
    label: Text


class ExtraInfoRange(ContractModel):
    """The range a criterion's value and threshold lie in."""

    min: Number
    max: Number


class ExtraInfo(ContractModel):
    """Criterion-specific settings: its operator, and options or a range when it has them."""

    operator: Operator = Field(
        description="V_GTE_T value >= threshold, V_GT_T >, V_LTE_T <=, V_LT_T <."
    )
    options: Annotated[
        list[ExtraInfoOption] | SkipJsonSchema[None], BeforeValidator(_forbid_null)
    ] = Field(
        default=None,
        exclude_if=_is_none,
        description="Present on options criteria; value and threshold are ids.",
    )
    range: Annotated[ExtraInfoRange | SkipJsonSchema[None], BeforeValidator(_forbid_null)] = Field(
        default=None,
        exclude_if=_is_none,
        description="Present on numeric criteria with a bounded value.",
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


# --------------------------------------------------------------------------------------------
# Alpha signals
# --------------------------------------------------------------------------------------------


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
    tokenDetails: Annotated[TokenDetails | SkipJsonSchema[None], BeforeValidator(_forbid_null)] = (
        Field(
            default=None,
            exclude_if=_is_none,
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


# --------------------------------------------------------------------------------------------
# Trading playbook
# --------------------------------------------------------------------------------------------


class ConfigTypeEntry(ContractModel):
    """A criterion's settings for one config type, each a map keyed by interval name."""

    thresholds: dict[Interval, Number]
    weights: dict[Interval, Annotated[float, Strict(), AllowInfNan(False), Field(ge=0)]]
    requireds: dict[Interval, Flag]
    disableds: dict[Interval, Flag]
    extraInfos: dict[Interval, ExtraInfo]
    delegates: dict[Interval, Flag]
    configIdsByInterval: dict[Interval, ConfigId] = Field(
        description="Config entry ids (UUID text), the configId of PUT /api/degen/config."
    )
    configKeys: dict[Interval, Text]


class PlaybookCriterion(ContractModel):
    """One criterion of a playbook with its settings per config type."""

    rootKey: Text
    criteriaName: Text
    shortDescription: Text
    longDescription: Text
    isHumanCriteria: Flag
    configTypes: dict[ConfigType, ConfigTypeEntry] = Field(
        description="SCANNING decides TOKEN_STATUS evaluations, BUYING TOKEN_BUY and TOKEN_SELL."
    )


class PlaybookCategories(ContractModel):
    """The criteria of a playbook, by category."""

    security: list[PlaybookCriterion] = Field(alias="Security")
    market: list[PlaybookCriterion] = Field(alias="Market")
    social: list[PlaybookCriterion] = Field(alias="Social")
    ai: list[PlaybookCriterion] = Field(alias="AI")
    technical_analysis: list[PlaybookCriterion] = Field(alias="Technical Analysis")
    onchain: list[PlaybookCriterion] = Field(alias="Onchain")


class PlaybookElement(ContractModel):
    """The playbook of one market-cap class."""

    marketCap: MarketCapClass = Field(
        description="DEGEN_CAP < $1M, LOW_CAP $1M-$10M, MID_CAP >= $10M (at evaluation time)."
    )
    categories: PlaybookCategories
    passMark: dict[ConfigType, Score] = Field(
        description=(
            "Extension: per config type (SCANNING, BUYING), the weighted score (0-100) an "
            "evaluation of this class must reach."
        )
    )
    configGroupId: Text = Field(description="Extension: the quant's config group.")


class PlaybookConfig(RootModel[list[PlaybookElement]]):
    """Response of GET /api/degen/config: one element per market-cap class."""

    model_config = ConfigDict(strict=True)


class ConfigChange(ContractModel):
    """One change of a PUT /api/degen/config request."""

    configId: ConfigId = Field(description="A configIdsByInterval value.")
    field: ConfigField
    newValue: Number | Flag | ExtraInfo = Field(
        description="A number for threshold and weight, a boolean for required and disabled, "
        "an Extra info object for extraInfo."
    )

    @model_validator(mode="after")
    def _value_fits_field(self) -> ConfigChange:
        """Reject a newValue whose JSON type does not fit the field it changes."""
        expected: dict[str, type | tuple[type, ...]] = {
            "threshold": (int, float),
            "weight": (int, float),
            "required": bool,
            "disabled": bool,
            "extraInfo": ExtraInfo,
        }
        want = expected[self.field]
        value = self.newValue
        is_bool = isinstance(value, bool)
        if (want is bool) != is_bool or not isinstance(value, want):
            raise ValueError(f"newValue of {self.field!r} has the wrong type")
        return self


class PlaybookUpdateRequest(ContractModel):
    """Body of PUT /api/degen/config: all changes are validated, then applied together."""

    quantId: Integer
    newConfigs: list[ConfigChange] = Field(min_length=1)


class UpdatedConfig(ContractModel):
    """A config entry as it is after a PUT."""

    id: ConfigId
    criteriaId: Integer
    criteriaKey: Text
    threshold: Number
    weight: Number = Field(ge=0)
    required: Flag
    disabled: Flag
    configType: ConfigType
    extraInfo: ExtraInfo


class PlaybookUpdateResponse(ContractModel):
    """Response of PUT /api/degen/config."""

    success: Success
    updatedConfigs: list[UpdatedConfig]


# --------------------------------------------------------------------------------------------
# Strategy optimisation
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class ErrorDetail(ContractModel):
    """What went wrong, and which parameter caused it."""

    status: Integer = Field(description="The HTTP status, repeated.")
    code: ErrorCode
    message: Text = Field(description="Says what happened and what to do.")
    param: Text | None = Field(description="The offending parameter or body field, else null.")

    @model_validator(mode="after")
    def _status_matches_code(self) -> ErrorDetail:
        """Each code belongs to one status (docs/service-contract.md, Errors)."""
        if ERROR_STATUS[self.code] != self.status:
            raise ValueError(
                f"code {self.code!r} goes with status {ERROR_STATUS[self.code]}, not {self.status}"
            )
        return self


class ErrorBody(ContractModel):
    """The body of every non-2xx answer."""

    error: ErrorDetail


# --------------------------------------------------------------------------------------------
# Registries and the test helper
# --------------------------------------------------------------------------------------------

RESPONSE_MODELS: Final[dict[tuple[str, str], type[BaseModel]]] = {
    ("GET", "/api/trades/stats"): TradeStats,
    ("GET", "/api/trades"): TradeList,
    ("GET", "/api/trades/{id}"): TradeDetailResponse,
    ("GET", "/api/eval-results"): EvaluationResultList,
    ("GET", "/api/eval-timeseries"): Timeseries,
    ("GET", "/api/eval-count"): EvaluationCount,
    ("GET", "/api/eval-details"): EvaluationDetail,
    ("GET", "/api/eval-history"): EvaluationHistoryList,
    ("GET", "/api/eval-ohlcv"): Ohlcv,
    ("GET", "/api/alpha-signals"): AlphaSignalList,
    ("GET", "/api/alpha-signals/{tokenId}"): AlphaSignalDetail,
    ("GET", "/api/degen/config"): PlaybookConfig,
    ("PUT", "/api/degen/config"): PlaybookUpdateResponse,
    ("GET", "/api/refine-eval/dashboard"): Dashboard,
    ("POST", "/api/refine-eval/analyze"): AnalyzeResponse,
    ("POST", "/api/refine-eval/recs/{id}/apply"): ApplyResult,
}
"""The 200 response model of every endpoint, by (method, FastAPI path)."""

REQUEST_MODELS: Final[dict[tuple[str, str], type[BaseModel]]] = {
    ("PUT", "/api/degen/config"): PlaybookUpdateRequest,
    ("POST", "/api/refine-eval/analyze"): AnalyzeRequest,
}
"""The JSON body model of every endpoint that takes one."""

M = TypeVar("M", bound=BaseModel)


def _path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as ``trades[0].metadata.llmValidation``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def validate_response(model: type[M], payload: object) -> M:
    """Validate a decoded JSON payload against ``model``; fail with every offending path.

    Args:
        model: the documented model of the body (``RESPONSE_MODELS`` has them by endpoint).
        payload: the body as decoded JSON (``response.json()``).

    Returns:
        The validated model instance.

    Raises:
        AssertionError: listing each failing path, what is wrong, and the offending value.
    """
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            value = repr(err.get("input"))
            if len(value) > 80:
                value = value[:77] + "..."
            lines.append(f"  {_path(tuple(err['loc']))}: {err['msg']} (got {value})")
        raise AssertionError(
            f"{len(lines)} contract violation(s) against {model.__name__}:\n" + "\n".join(lines)
        ) from None
