"""Wire formats of time (docs/service-contract.md): one place, used by every router."""

from __future__ import annotations

from datetime import UTC, datetime

from quantscope.sandbox.catalog import WORLD_NOW_MS


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds: ``2026-09-30T12:00:00.000Z``."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def trade_date(ms: int | None) -> str:
    """Trade ``open_date``/``close_date``: ``YYYY-MM-DD HH:MM:SS`` UTC; ``""`` when absent."""
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms // 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def world_now_iso() -> str:
    return iso_ms(WORLD_NOW_MS)
