"""What the routers' query and path parameters share: decimal integers and id ranges, booleans
and vocabularies in any case, ISO date-times, and the WHERE clause their filters build.

The rules are docs/service-contract.md, Query values. Put an integer's bounds in the type
(``Field(ge=..., le=...)`` as in ``Id``), not in ``Query(ge=...)``, and the ``DECIMAL`` check
after them: FastAPI then shows the bounds as minimum/maximum in the OpenAPI schema.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, get_args

from fastapi import Query
from pydantic import BeforeValidator, Field, WithJsonSchema

from quantscope.sandbox.errors import invalid_parameter

MAX_ID = 2**63 - 1  # SQLite's INTEGER range: larger ids cannot exist
MAX_SEARCH = 200  # characters of ``search`` (docs/service-contract.md, Query values)

# --- the OpenAPI patterns of checked text ------------------------------------------------------
# The routers check these values with their own code (and messages); the patterns only tell
# /openapi.json exactly which texts pass, so a schema-driven client (or fuzzer) agrees with
# the server. Every pattern is anchored and uses no inline flags (JSON Schema regexes have none).


def any_case(word: str) -> str:
    """A regex for ``word`` in any ASCII case: ``sol`` -> ``[Ss][Oo][Ll]``."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


def any_case_pattern(words: tuple[str, ...] | list[str]) -> str:
    """An anchored regex accepting exactly one of ``words``, in any ASCII case."""
    return "^(?:" + "|".join(any_case(word) for word in words) + ")$"


def comma_list_pattern(words: tuple[str, ...] | list[str]) -> str:
    """A comma list of ``words`` (any case); items may be blank and carry surrounding spaces."""
    item = r"\s*(?:" + "|".join(any_case(word) for word in words) + r")?\s*"
    return f"^{item}(?:,{item})*$"


_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"  # 0001-9999
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_TIME = (
    "(?:[T ](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,3})?"
    "(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?)?"
)
#: Exactly the dates and date-times ``parse_iso_ms`` accepts (real calendar days only).
ISO_PATTERN = f"^(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29){_TIME}$"
CHAIN_PATTERN = any_case_pattern(("SOLANA", "BASE", "BSC"))


def text_schema(
    pattern: str | None = None, *, optional: bool, max_length: int | None = None
) -> WithJsonSchema:
    """The OpenAPI schema of a checked text query value (``optional``: may be absent)."""
    text: dict[str, Any] = {"type": "string"}
    if pattern is not None:
        text["pattern"] = pattern
    if max_length is not None:
        text["maxLength"] = max_length
    return WithJsonSchema({"anyOf": [text, {"type": "null"}]} if optional else text)


# --- integers ----------------------------------------------------------------------------------


def decimal_text(value: object) -> object:
    """Integers on the wire are decimal digits only: ``1.0``, ``1e3`` or ``0x1`` are refused
    (pydantic alone would take "1.0" for 1).
    """
    text = value[1:] if isinstance(value, str) and value.startswith("-") else value
    if isinstance(text, str) and not (text.isascii() and text.isdigit()):
        raise ValueError("must be an integer written in decimal digits")
    return value


DECIMAL = BeforeValidator(decimal_text)
ID_RANGE = Field(ge=1, le=MAX_ID)

Id = Annotated[int, ID_RANGE, DECIMAL]
OptionalId = Annotated[int | None, ID_RANGE, DECIMAL]  # one check over the whole ``| None``
Offset = Annotated[int, Field(ge=0, le=MAX_ID), DECIMAL]
PageSize = Annotated[int, Field(ge=1, le=1000), DECIMAL]

# --- booleans and vocabularies -----------------------------------------------------------------


def lower_text(value: object) -> object:
    """Vocabulary query values are accepted in any case."""
    return value.lower() if isinstance(value, str) else value


def case_insensitive(vocabulary: Any) -> BeforeValidator:
    """Accept any case of a value of the ``Literal`` and hand on its canonical spelling."""
    by_lower = {value.lower(): value for value in get_args(vocabulary)}

    def canon(value: object) -> object:
        return by_lower.get(value.lower(), value) if isinstance(value, str) else value

    return BeforeValidator(canon)


def true_or_false(value: object) -> object:
    """Query booleans are ``true`` or ``false`` in any case, nothing else."""
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise ValueError("must be true or false (any case)")
        return value.lower() == "true"
    return value


#: ``true``/``false`` in any case, handed on as the lower-case text.
QueryBool = Annotated[Literal["true", "false"], BeforeValidator(lower_text)]

# --- common filters ----------------------------------------------------------------------------

Chain = Annotated[
    str | None,
    text_schema(CHAIN_PATTERN, optional=True),
    Query(description="SOLANA, BASE or BSC (any case); default: every chain of the plan."),
]
TokenSearch = Annotated[
    str | None,
    Query(
        max_length=MAX_SEARCH,
        description="Case-insensitive substring of the token name or symbol, or the exact "
        f"token address; surrounding spaces are ignored; at most {MAX_SEARCH} characters.",
    ),
]
#: An optional ISO date or date-time query value (checked by ``parse_iso_ms``).
IsoText = Annotated[str | None, text_schema(ISO_PATTERN, optional=True)]
#: A required one.
RequiredIsoText = Annotated[str, text_schema(ISO_PATTERN, optional=False)]


@dataclass
class Where:
    """A WHERE clause built from fixed fragments, the user's values only as parameters."""

    clauses: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)

    def add(self, clause: str, *params: Any) -> None:
        self.clauses.append(clause)
        self.params.extend(params)

    def sql(self) -> str:
        return " WHERE " + " AND ".join(self.clauses) if self.clauses else ""

    def uses(self, alias: str) -> bool:
        """Whether a clause reads a column of the table joined as ``alias`` (e.g. ``"k"``)."""
        column = re.compile(rf"\b{re.escape(alias)}\.")
        return any(column.search(clause) for clause in self.clauses)

    def one_of(
        self, column: str, values: tuple[str, ...] | list[str], negate: bool = False
    ) -> None:
        marks = ", ".join("?" * len(values))
        self.add(f"{column} {'NOT IN' if negate else 'IN'} ({marks})", *values)

    def token_search(self, search: str | None) -> None:
        """``TokenSearch`` on the tokens joined as ``k``: name or symbol contains it (any
        case) or the address is it; blank means no filter.
        """
        needle = (search or "").strip()
        if needle:
            self.add(
                "(instr(lower(k.name), lower(?)) > 0 OR instr(lower(k.symbol), lower(?)) > 0 "
                "OR k.address = ?)",
                needle,
                needle,
                needle,
            )


# --- date-times --------------------------------------------------------------------------------

MIN_MS = int(datetime(1, 1, 1, tzinfo=UTC).timestamp()) * 1000
MAX_MS = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()) * 1000 + 999

_ISO = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,3}))?(Z|[+-][0-9]{2}:[0-9]{2})?)?$"
)


def parse_iso_ms(param: str, text: str) -> int:
    """An ISO date or date-time of the contract as epoch milliseconds (naive values are UTC).

    Raises:
        ApiError: 422 ``invalid_parameter`` naming ``param``.
    """
    match = _ISO.match(text)
    try:
        if match is None:
            raise ValueError("not in an accepted format")
        y, mo, d, h, mi, s, frac, zone = match.groups()
        tz = UTC
        if zone and zone != "Z":
            sign = -1 if zone[0] == "-" else 1
            offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
            tz = timezone(sign * offset)
        moment = datetime(
            int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), tzinfo=tz
        )
    except (ValueError, OverflowError) as exc:
        raise invalid_parameter(
            param,
            f"{param} must be an ISO date or date-time (YYYY-MM-DD or "
            f"YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]), got {text!r} ({exc})",
        ) from None
    millis = int((frac or "0").ljust(3, "0"))
    # an offset can push year 1 or 9999 past the calendar: nothing exists there, so clamp
    return min(max(int(moment.timestamp()) * 1000 + millis, MIN_MS), MAX_MS)
