"""Numbers as the report's table cells: counts, shares, points, dollars, ratios, times.

One formatter per kind, so a value prints the same in every table (a test reads the cells
back and compares them with the analytics). Missing and undefined values print as "n/a".
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

NA = "n/a"


def _number(value: Any) -> float | None:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def number_or_none(value: Any) -> float | None:
    """A value as a float, None when missing or not a number."""
    return _number(value)


def probability(value: Any) -> str:
    """A probability as a percent, never rounded to a certainty: > 99.9% / < 0.1%."""
    v = _number(value)
    if v is None:
        return NA
    if v > 0.999:
        return "> 99.9%"
    if v < 0.001:
        return "< 0.1%"
    return f"{v:.1%}"


def count(value: Any) -> str:
    """1,234."""
    v = _number(value)
    return NA if v is None else f"{round(v):,}"


def signed_count(value: Any) -> str:
    """+12 / -3 / 0."""
    v = _number(value)
    return NA if v is None else f"{round(v):+,}"


def share(value: Any) -> str:
    """A fraction as a percent with one decimal: 53.7%."""
    v = _number(value)
    return NA if v is None else f"{v:.1%}"


def points(value: Any) -> str:
    """A change of a fraction in percentage points: +1.6 pts."""
    v = _number(value)
    return NA if v is None else f"{v * 100:+.1f} pts"


def usd(value: Any) -> str:
    """Dollars with cents: $1,234.56 / -$12.00."""
    v = _number(value)
    if v is None:
        return NA
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    if round(v, 2) == 0:
        return "$0.00"  # never "-$0.00"
    return f"-${-v:,.2f}" if v < 0 else f"${v:,.2f}"


def signed_usd(value: Any) -> str:
    """+$563.02 / -$685.00."""
    v = _number(value)
    return NA if v is None else ("+" if v > 0 else "") + usd(v)


def ratio(value: Any) -> str:
    """A plain ratio with two decimals (inf shown as such)."""
    v = _number(value)
    if v is None:
        return NA
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return f"{v:,.2f}"


def number(value: Any) -> str:
    """A threshold or a value as short as it is exact enough: 2, 0.9, 1.179."""
    v = _number(value)
    return NA if v is None else f"{v:,.6g}"


def interval(lo: Any, hi: Any, kind: str = "share") -> str:
    """``[lo, hi]`` in a format of this module (``share``, ``usd``, ``points``...)."""
    fmt = FORMATS[kind]
    if _number(lo) is None or _number(hi) is None:
        return NA
    return f"[{fmt(lo)}, {fmt(hi)}]"


def duration(value: Any) -> str:
    """A Timedelta in days and hours: 3 d 4.5 h."""
    if value is None or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return NA
    hours = pd.Timedelta(value) / pd.Timedelta(hours=1)
    days, rest = divmod(hours, 24.0)
    return f"{int(days)} d {rest:.1f} h" if days else f"{rest:.1f} h"


def when(value: Any) -> str:
    """A UTC time: 2026-09-30 00:16 UTC."""
    if value is None or value is pd.NaT:
        return NA
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    text: str = stamp.strftime("%Y-%m-%d %H:%M UTC")
    return text


def day(value: Any) -> str:
    """A UTC date: 2026-09-21."""
    return NA if value is None or value is pd.NaT else pd.Timestamp(value).strftime("%Y-%m-%d")


def flag(value: Any) -> str:
    """True -> "yes", False -> "" (a table shows only the raised flags), missing -> n/a."""
    if value is None or value is pd.NA:
        return NA
    return "yes" if bool(value) else ""


def text(value: Any) -> str:
    """Any value as text; missing as n/a."""
    if value is None or value is pd.NA or value is pd.NaT:
        return NA
    if isinstance(value, float) and math.isnan(value):
        return NA
    return str(value)


FORMATS = {
    "count": count,
    "signed_count": signed_count,
    "share": share,
    "points": points,
    "usd": usd,
    "signed_usd": signed_usd,
    "ratio": ratio,
    "number": number,
    "duration": duration,
    "when": when,
    "flag": flag,
    "probability": probability,
    "text": text,
}


def table(frame: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """The columns of ``kinds`` of ``frame``, each formatted by its kind (FORMATS), as text."""
    return pd.DataFrame(
        {name: [FORMATS[kind](v) for v in frame[name]] for name, kind in kinds.items()},
        index=frame.index,
    )
