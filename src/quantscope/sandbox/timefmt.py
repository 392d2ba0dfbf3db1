"""Wire formats of time (docs/service-contract.md): one place, used by every router.

The formats are computed without strftime (but for the date of a day, cached): a 1,000-trade
page formats 4,000 of them, and strftime parses its format string again for each. Tests hold
them equal to strftime's.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import lru_cache

from quantscope.sandbox.catalog import WORLD_NOW_MS

_EPOCH = datetime(1970, 1, 1)


@lru_cache(maxsize=8192)
def _day_text(days: int) -> str:
    """``YYYY-MM-DD`` of a day counted from 1970-01-01 (UTC); the year has 4 digits always
    (strftime writes year 1 as ``1``).
    """
    day = _EPOCH + timedelta(days=days)
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds: ``2026-09-30T12:00:00.000Z``."""
    seconds, millis = divmod(ms, 1000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_day_text(days)}T{hours:02d}:{minutes:02d}:{seconds:02d}.{millis:03d}Z"


def trade_date(ms: int | None) -> str:
    """Trade ``open_date``/``close_date``: ``YYYY-MM-DD HH:MM:SS`` UTC; ``""`` when absent."""
    if ms is None:
        return ""
    days, seconds = divmod(ms // 1000, 86_400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    return f"{_day_text(days)} {hours:02d}:{minutes:02d}:{seconds:02d}"


def world_now_iso() -> str:
    """The world's fixed "now" as an ISO timestamp with milliseconds."""
    return iso_ms(WORLD_NOW_MS)
