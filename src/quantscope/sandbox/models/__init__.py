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

Layout: ``models/<group>.py`` holds the bodies of one resource group and mirrors
``routers/<group>.py`` (trades, evaluations, market, signals, playbook, optimization); the pieces
they share (formats, strict JSON types, vocabularies, ``ContractModel``, ``extraInfo``, the error
body) live in ``models/_common.py``. Routers import from their own group's module. This package
re-exports every model for the tests and holds the per-endpoint registries and the test helper.
"""

from __future__ import annotations

from typing import Final, TypeVar

from pydantic import BaseModel, ValidationError

from quantscope.sandbox.models._common import (
    COMPACT_MONEY_PATTERN,
    ERROR_STATUS,
    INTEGER_TEXT_PATTERN,
    MONEY_PATTERN,
    NATIVE_AMOUNT_PATTERN,
    NUMERIC_TEXT_PATTERN,
    PATTERNS,
    PRICE_PATTERN,
    SIGNED_MONEY_PATTERN,
    SIGNED_PERCENT_PATTERN,
    TIMESTAMP_PATTERN,
    TRADE_DATE_OR_EMPTY_PATTERN,
    TRADE_DATE_PATTERN,
    URL_PATTERN,
    UUID_PATTERN,
    Action,
    CategoryName,
    Chain,
    CompactMoney,
    ConfigField,
    ConfigId,
    ConfigType,
    ContractModel,
    Count,
    Decision,
    ErrorBody,
    ErrorCode,
    ErrorDetail,
    EvaluationType,
    ExtraInfo,
    ExtraInfoOption,
    ExtraInfoRange,
    Flag,
    Fraction,
    Integer,
    IntegerText,
    Interval,
    MarketCapClass,
    Money,
    NativeAmount,
    Number,
    NumericText,
    Operator,
    Percent100,
    PriceText,
    Score,
    SignedMoney,
    SignedPercent,
    Stage,
    Success,
    Text,
    Timestamp,
    TokenStatus,
    TradeDate,
    TradeDateOrEmpty,
    TradeResult,
    TradeStatus,
    Url,
)
from quantscope.sandbox.models.evaluations import (
    CriterionCategory,
    CriterionInfo,
    CriterionResult,
    DataFetcherSnapshot,
    EvaluationCount,
    EvaluationDetail,
    EvaluationDetailResult,
    EvaluationDetailToken,
    EvaluationHistoryItem,
    EvaluationHistoryList,
    EvaluationPerformance,
    EvaluationResult,
    EvaluationResultList,
    EvaluationToken,
    Timeseries,
    TimeseriesPoint,
    UserQuant,
)
from quantscope.sandbox.models.market import (
    Ohlcv,
    OhlcvPoint,
)
from quantscope.sandbox.models.optimization import (
    AnalyzeRequest,
    AnalyzeResponse,
    AnalyzeResult,
    AppliedRecommendation,
    ApplyResult,
    Dashboard,
    DashboardData,
    HistoricalTrends,
    OverallPerformance,
    Recommendation,
    WeeklyTrend,
)
from quantscope.sandbox.models.playbook import (
    ConfigChange,
    ConfigTypeEntry,
    PlaybookCategories,
    PlaybookConfig,
    PlaybookCriterion,
    PlaybookElement,
    PlaybookUpdateRequest,
    PlaybookUpdateResponse,
    UpdatedConfig,
)
from quantscope.sandbox.models.signals import (
    AlphaSignal,
    AlphaSignalDetail,
    AlphaSignalList,
    ByChain,
    ChainSignals,
    SignalStats,
    TokenDetails,
)
from quantscope.sandbox.models.trades import (
    LlmReasoning,
    LlmValidation,
    Pagination,
    Trade,
    TradeDetail,
    TradeDetailResponse,
    TradeEvaluationSummary,
    TradeGroup,
    TradeList,
    TradeMetadata,
    TradeMetrics,
    TradeStats,
    TradeSummary,
    Transaction,
)

__all__ = [
    "COMPACT_MONEY_PATTERN",
    "ERROR_STATUS",
    "INTEGER_TEXT_PATTERN",
    "MONEY_PATTERN",
    "NATIVE_AMOUNT_PATTERN",
    "NUMERIC_TEXT_PATTERN",
    "PATTERNS",
    "PRICE_PATTERN",
    "REQUEST_MODELS",
    "RESPONSE_MODELS",
    "SIGNED_MONEY_PATTERN",
    "SIGNED_PERCENT_PATTERN",
    "TIMESTAMP_PATTERN",
    "TRADE_DATE_OR_EMPTY_PATTERN",
    "TRADE_DATE_PATTERN",
    "URL_PATTERN",
    "UUID_PATTERN",
    "Action",
    "AlphaSignal",
    "AlphaSignalDetail",
    "AlphaSignalList",
    "AnalyzeRequest",
    "AnalyzeResponse",
    "AnalyzeResult",
    "AppliedRecommendation",
    "ApplyResult",
    "ByChain",
    "CategoryName",
    "Chain",
    "ChainSignals",
    "CompactMoney",
    "ConfigChange",
    "ConfigField",
    "ConfigId",
    "ConfigType",
    "ConfigTypeEntry",
    "ContractModel",
    "Count",
    "CriterionCategory",
    "CriterionInfo",
    "CriterionResult",
    "Dashboard",
    "DashboardData",
    "DataFetcherSnapshot",
    "Decision",
    "ErrorBody",
    "ErrorCode",
    "ErrorDetail",
    "EvaluationCount",
    "EvaluationDetail",
    "EvaluationDetailResult",
    "EvaluationDetailToken",
    "EvaluationHistoryItem",
    "EvaluationHistoryList",
    "EvaluationPerformance",
    "EvaluationResult",
    "EvaluationResultList",
    "EvaluationToken",
    "EvaluationType",
    "ExtraInfo",
    "ExtraInfoOption",
    "ExtraInfoRange",
    "Flag",
    "Fraction",
    "HistoricalTrends",
    "Integer",
    "IntegerText",
    "Interval",
    "LlmReasoning",
    "LlmValidation",
    "MarketCapClass",
    "Money",
    "NativeAmount",
    "Number",
    "NumericText",
    "Ohlcv",
    "OhlcvPoint",
    "Operator",
    "OverallPerformance",
    "Pagination",
    "Percent100",
    "PlaybookCategories",
    "PlaybookConfig",
    "PlaybookCriterion",
    "PlaybookElement",
    "PlaybookUpdateRequest",
    "PlaybookUpdateResponse",
    "PriceText",
    "Recommendation",
    "Score",
    "SignalStats",
    "SignedMoney",
    "SignedPercent",
    "Stage",
    "Success",
    "Text",
    "Timeseries",
    "TimeseriesPoint",
    "Timestamp",
    "TokenDetails",
    "TokenStatus",
    "Trade",
    "TradeDate",
    "TradeDateOrEmpty",
    "TradeDetail",
    "TradeDetailResponse",
    "TradeEvaluationSummary",
    "TradeGroup",
    "TradeList",
    "TradeMetadata",
    "TradeMetrics",
    "TradeResult",
    "TradeStats",
    "TradeStatus",
    "TradeSummary",
    "Transaction",
    "UpdatedConfig",
    "Url",
    "UserQuant",
    "WeeklyTrend",
    "validate_response",
]

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
