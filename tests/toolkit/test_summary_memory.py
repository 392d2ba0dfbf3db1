"""summary() allocates at most twice its frame at its peak (issue 22; 3.3x before).

Measured with tracemalloc (numpy reports its buffers to it) over 300,000 synthetic trades:
the ratio is the same at 1e6 and 1e7 (benchmarks/bench_summary_memory.py), so a small frame
tells. The numbers are unchanged: the one-group path (a broadcast code) equals the
many-group one, and the drawdown found among the peaks equals the row scans it replaced on
random accounts and periods.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from benchmarks.bench_summary import synthetic_trades
from quantscope import analytics as A
from quantscope.analytics._kernel import _drawdown, running_equity, segment_starts

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


def _scan_drawdown(
    time_ms: np.ndarray,
    open_ms: np.ndarray,
    pnl: np.ndarray,
    capital: np.ndarray,
    account: np.ndarray,
    starts: np.ndarray,
) -> dict[str, np.ndarray]:
    """The drawdown as it was computed before (row-sized scans), the reference."""
    n = pnl.size
    acc_starts = segment_starts(account)
    acc_ends = np.append(acc_starts[1:], n)
    acc_counts = acc_ends - acc_starts
    cum, peak = running_equity(pnl, acc_starts)
    fall = cum - peak
    seg_counts = np.diff(np.append(starts, n))
    max_usd = np.minimum.reduceat(fall, starts)
    max_fraction = np.minimum.reduceat(fall / (capital[account] + peak), starts)
    idx = np.arange(n)
    trough = np.minimum.reduceat(np.where(fall == np.repeat(max_usd, seg_counts), idx, n), starts)
    at_peak = fall == 0.0
    last_peak = np.maximum.accumulate(np.where(at_peak, idx, np.repeat(acc_starts - 1, acc_counts)))
    next_peak = np.minimum.accumulate(
        np.where(at_peak, idx, np.repeat(acc_ends, acc_counts))[::-1]
    )[::-1]
    trough_acc = np.searchsorted(acc_starts, trough, side="right") - 1
    first, end = acc_starts[trough_acc], acc_ends[trough_acc]
    peak_at, regained_at = last_peak[trough], next_peak[trough]
    peak_ms = np.where(
        peak_at >= first,
        time_ms[np.maximum(peak_at, 0)],
        np.minimum.reduceat(open_ms, acc_starts)[trough_acc],
    )
    end_ms = np.where(regained_at < end, time_ms[np.minimum(regained_at, n - 1)], time_ms[end - 1])
    return {
        "max_drawdown_usd": max_usd,
        "max_drawdown": max_fraction,
        "max_drawdown_ms": np.where(max_usd < 0, end_ms - peak_ms, 0),
    }


@pytest.mark.parametrize("seed", range(40))
def test_drawdown_from_the_peaks_equals_the_row_scans(seed: int) -> None:
    """Random accounts of random periods (all-winning, all-losing, ties, one-row segments):
    the drawdown found among the peaks is the row scans' exactly."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    accounts = np.sort(rng.integers(0, int(rng.integers(1, 6)), n))
    periods = np.sort(rng.integers(0, int(rng.integers(1, 8)), n))
    codes = accounts * 100 + periods  # each account a run of whole segments
    kind = seed % 4
    pnl = np.round(rng.normal(0, 10, n), 0 if kind == 3 else 2)
    if kind == 1:
        pnl = np.abs(pnl) + 1.0
    elif kind == 2:
        pnl = -np.abs(pnl) - 1.0
    time_ms = np.sort(rng.integers(0, 50, n)) * 3_600_000
    open_ms = time_ms - rng.integers(0, 10, n) * 60_000
    order = np.lexsort((time_ms, codes))
    codes, accounts, pnl, time_ms, open_ms = (
        a[order] for a in (codes, accounts, pnl, time_ms, open_ms)
    )
    starts = segment_starts(codes)
    capital = np.full(int(accounts.max()) + 1, 1000.0)
    got = _drawdown(time_ms, open_ms, pnl, capital, accounts, starts)
    want = _scan_drawdown(time_ms, open_ms, pnl, capital, accounts, starts)
    for name, values in want.items():
        np.testing.assert_array_equal(got[name], values, err_msg=name)
