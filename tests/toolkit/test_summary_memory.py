"""summary() allocates at most twice its frame at its peak (issue 22; 3.3x before).

Measured with tracemalloc (numpy reports its buffers to it) over 300,000 synthetic trades:
the ratio is the same at 1e6 and 1e7 (benchmarks/bench_summary_memory.py), so a small frame
tells. The numbers are unchanged: the one-group path (a broadcast code) equals the
many-group one.
"""

from __future__ import annotations

import tracemalloc

import pandas as pd

from benchmarks.bench_summary import synthetic_trades
from quantscope import analytics as A

N = 300_000


def test_summary_peak_memory_is_at_most_twice_the_frame() -> None:
    frame = synthetic_trades(N, seed=3)
    size = int(frame.memory_usage(deep=True).sum())
    A.summary(frame.head(1000))  # imports and caches warmed outside the measurement
    tracemalloc.start()
    try:
        A.summary(frame)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 2.0 * size, f"summary() peaked at {peak / size:.2f}x its frame"


def test_one_group_path_equals_the_many_group_path() -> None:
    """summary() of one quant's rows (one group: no per-row codes) is by()'s row of that
    quant (several groups: the general path)."""
    frame = synthetic_trades(20_000, seed=5)
    per = A.by(frame, "quant_name")
    for quant, rows in frame.groupby("quant_name", observed=True):
        alone = A.summary(rows.reset_index(drop=True))
        pd.testing.assert_series_equal(
            per.loc[quant].rename(None), alone.rename(None), check_names=False, rtol=1e-12
        )
