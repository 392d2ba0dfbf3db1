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
from pydantic import BeforeValidator, Field

from quantscope.sandbox.errors import invalid_parameter

MAX_ID = 2**63 - 1  # SQLite's INTEGER range: larger ids cannot exist

# --- integers ----------------------------------------------------------------------------------


def decimal_text(value: object) -> object:
    """Integers on the wire are decimal digits only: ``1.0``, ``1e3`` or ``0x1`` are refused
    (pydantic alone would take "1.0" for 1)."""
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
    Query(description="SOLANA, BASE or BSC (any case); default: every chain of the plan."),
]
TokenSearch = Annotated[
    str | None,
    Query(
        description="Case-insensitive substring of the token name or symbol, or the exact "
        "token address; surrounding spaces are ignored."
    ),
]


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

    def one_of(
        self, column: str, values: tuple[str, ...] | list[str], negate: bool = False
    ) -> None:
        marks = ", ".join("?" * len(values))
        self.add(f"{column} {'NOT IN' if negate else 'IN'} ({marks})", *values)

    def token_search(self, search: str | None) -> None:
        """``TokenSearch`` on the tokens joined as ``k``: name or symbol contains it (any
        case) or the address is it; blank means no filter."""
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
    return int(moment.timestamp()) * 1000 + millis
