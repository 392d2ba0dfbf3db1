"""Calendar periods for ``freq=`` groupings: the UTC start of the period holding each time."""

from __future__ import annotations

import numpy as np
import pandas as pd

# Grouper/resample spellings that mean the same calendar period.
_ALIASES = {"ME": "M", "MS": "M", "QE": "Q", "QS": "Q", "YE": "Y", "YS": "Y", "A": "Y"}


def period_start(time_ms: np.ndarray, freq: str) -> pd.Series:
    """``datetime64[ms, UTC]`` start of the ``freq`` period of each epoch-ms time.

    Periods, not ``pd.Grouper`` bins: every row is labelled by the start of its period (weeks
    start on Monday, months on the 1st), whatever pandas' resample label conventions, and only
    periods that occur appear in a groupby.
    """
    naive = pd.Series(np.asarray(time_ms, dtype=np.int64).astype("datetime64[ms]"))
    start = naive.dt.to_period(_ALIASES.get(freq, freq)).dt.start_time.dt.as_unit("ms")
    return start.dt.tz_localize("UTC")
