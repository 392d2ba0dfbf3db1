"""What every body model shares: format regexes, strict JSON types, vocabularies, the base model.

Also the two pieces more than one group embeds: a criterion's ``extraInfo`` (evaluation details,
the playbook, recommendations) and the error body every non-2xx answer carries. A group module
(``models/<group>.py``, beside ``routers/<group>.py``) imports what it needs from here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
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


def forbid_null(value: object) -> object:
    """Used on fields that may be absent: when present they must hold a value, never null."""
    if value is None:
        raise ValueError("may be absent but never null")
    return value


def is_none(value: object) -> bool:
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
    "bad_request",
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
    "payload_too_large",
    "uri_too_long",
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
        list[ExtraInfoOption] | SkipJsonSchema[None], BeforeValidator(forbid_null)
    ] = Field(
        default=None,
        exclude_if=is_none,
        description="Present on options criteria; value and threshold are ids.",
    )
    range: Annotated[ExtraInfoRange | SkipJsonSchema[None], BeforeValidator(forbid_null)] = Field(
        default=None,
        exclude_if=is_none,
        description="Present on numeric criteria with a bounded value.",
    )


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
