"""Calendar periods for ``freq=``: the accepted spellings and the UTC start of each period.

``FREQS`` is the one registry of ``freq`` values (``by()``, ``pass_rates()`` and the plots'
titles read it): each spelling names a calendar period and the word for it. Anything else is
refused with one line that lists the spellings, before pandas sees it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd


class Period(NamedTuple):
    """A calendar period: its pandas period code and its name in words."""

    code: str
    word: str


_HOUR, _DAY, _WEEK = Period("h", "hour"), Period("D", "day"), Period("W", "week")
_MONTH, _QUARTER, _YEAR = Period("M", "month"), Period("Q", "quarter"), Period("Y", "year")

# Each accepted spelling of ``freq``; resample spellings (ME, MS, ...) mean the same period.
FREQS: dict[str, Period] = {
    "h": _HOUR,
    "D": _DAY,
    "W": _WEEK,
    "M": _MONTH,
    "ME": _MONTH,
    "MS": _MONTH,
    "Q": _QUARTER,
    "QE": _QUARTER,
    "QS": _QUARTER,
    "Y": _YEAR,
    "YE": _YEAR,
    "YS": _YEAR,
    "A": _YEAR,
}


def check_freq(freq: str) -> Period:
    """The period ``freq`` names, or ValueError in one line listing the accepted spellings."""
    period = FREQS.get(freq) if isinstance(freq, str) else None
    if period is None:
        spellings = ", ".join(f"{name} ({p.word})" for name, p in FREQS.items())
        raise ValueError(f"freq={freq!r} is not a calendar period; use one of {spellings}")
    return period


def period_start(time_ms: np.ndarray, freq: str) -> pd.Series:
    """``datetime64[ms, UTC]`` start of the ``freq`` period of each epoch-ms time.

    Periods, not ``pd.Grouper`` bins: every row is labelled by the start of its period (weeks
    start on Monday, months on the 1st), whatever pandas' resample label conventions, and only
    periods that occur appear in a groupby.
    """
    code = check_freq(freq).code
    naive = pd.Series(np.asarray(time_ms, dtype=np.int64).astype("datetime64[ms]"))
    start = naive.dt.to_period(code).dt.start_time.dt.as_unit("ms")
    return start.dt.tz_localize("UTC")
