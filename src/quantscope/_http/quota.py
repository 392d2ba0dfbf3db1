"""The daily quota and the rate-limit headers it is read from.

``X-RateLimit-Reset`` and ``Retry-After`` come in several units depending on the service
(epoch seconds or milliseconds, delta seconds, ISO 8601, HTTP-date); the parsing lives here,
apart from the HTTP client, so it can be tested without a connection. ``_http.client`` keeps the
last reported ``Quota`` and re-exports ``Quota``, ``parse_reset`` and ``quota_from_headers``.

No header value raises: whatever a server sends is read as a bounded value or as unknown
(None). ``Retry-After`` (``_retry_after_s``) is delay seconds (a finite number >= 0; decimals
accepted) or a date, and is bounded to ``[0, MAX_RETRY_AFTER_S]`` (a day: the quota is daily,
so no wait the service asks for is longer); a date in the past is 0; ``inf``, ``nan``, a
negative number, an unreadable date or any other text is None, as if the header were absent.
``X-RateLimit-Limit``/``-Remaining`` are counts (finite, >= 0) or None; a reset that is not a
representable time is None (docs/service-contract.md, "How answers are checked").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from quantscope._errors import format_reset
from quantscope._plans import plan_for_limit
from quantscope._reprs import quota_html

MAX_RETRY_AFTER_S = 86_400.0  # the longest wait a Retry-After is read as: one day


def parse_reset(value: str | None, now: datetime | None = None) -> datetime | None:
    """``X-RateLimit-Reset`` as a UTC datetime, whatever the service's unit.

    Accepted: epoch seconds, epoch milliseconds (> 1e11), seconds from now (< 1e9, as some
    services send), ISO 8601 text, HTTP-date. Anything else: None.
    """
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    now = now or datetime.now(UTC)
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    try:  # a time no datetime can hold (year 10000, 1e300 s) is not a reset: unknown
        if math.isfinite(number):
            if number > 1e11:
                return datetime.fromtimestamp(number / 1000, UTC)
            if number >= 1e9:
                return datetime.fromtimestamp(number, UTC)
            if number >= 0:
                return now + timedelta(seconds=number)
            return None
        if text.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            return None
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            parsed = parsedate_to_datetime(text)
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _parse_int(value: str | None) -> int | None:
    """A count header: a finite number >= 0 (its integer part), else None."""
    try:
        number = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number >= 0 else None


def _retry_after_s(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """``Retry-After`` in seconds, bounded to ``[0, MAX_RETRY_AFTER_S]``: delay seconds (a
    finite number >= 0) or a date (in the past: 0); None when absent or anything else (``inf``,
    ``nan``, negative, text), as if absent (module docstring).
    """
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        when = parse_reset(value, now)
        if when is None:
            return None
        seconds = max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, MAX_RETRY_AFTER_S)


@dataclass(frozen=True)
class Quota:
    """The daily quota as the last real answer reported it (None fields: not known yet)."""

    limit: int | None = None
    remaining: int | None = None
    reset: datetime | None = None
    updated_at: datetime | None = None

    @property
    def plan(self) -> str | None:
        """The plan whose daily limit this is (spec's table), when it is one."""
        return plan_for_limit(self.limit)

    def __repr__(self) -> str:
        if self.updated_at is None:
            return "Quota(unknown: no request has reached the service yet)"
        of = f" of {self.limit}" if self.limit is not None else ""
        return f"Quota({self.remaining}{of} requests left, resets {format_reset(self.reset)})"

    def _repr_html_(self) -> str:
        return quota_html(self)


def quota_from_headers(headers: Mapping[str, str], now: datetime | None = None) -> Quota | None:
    """The ``X-RateLimit-*`` headers as a Quota; None when the answer carries none."""
    now = now or datetime.now(UTC)
    limit = _parse_int(headers.get("X-RateLimit-Limit"))
    remaining = _parse_int(headers.get("X-RateLimit-Remaining"))
    reset = parse_reset(headers.get("X-RateLimit-Reset"), now)
    if limit is None and remaining is None and reset is None:
        return None
    return Quota(limit, remaining, reset, now)


@dataclass(frozen=True)
class Spend:
    """What one multi-request load may spend, as the caller said (loaders' keywords).

    By default a load whose requests do not fit in the quota left sends nothing more, and a
    load needing more than the client's share of the quota left (``Settings.quota_share``) is
    refused with its cost. ``confirm`` lifts the share rule; ``max_requests`` replaces it with
    an explicit ceiling; ``partial`` fetches what fits (within the ceiling) and returns an
    incomplete result instead of refusing.
    """

    confirm: bool = False
    max_requests: int | None = None
    partial: bool = False

    def __post_init__(self) -> None:
        if self.max_requests is not None and self.max_requests < 0:
            raise ValueError(f"max_requests must be >= 0, got {self.max_requests}")


def share_limit(share: float, remaining: int) -> int:
    """Requests one load may send without ``confirm=True``: ``share`` of the quota left,
    rounded down, and never less than 1 (a single request is never refused by this rule).
    """
    return max(1, math.floor(share * remaining))
