"""summary() allocates at most twice its frame at its peak (issue 22; 3.3x before).

Measured with tracemalloc (numpy reports its buffers to it) over 300,000 synthetic trades:
the ratio is the same at 1e6 and 1e7 (benchmarks/bench_summary_memory.py), so a small frame
tells. The numbers are unchanged: the one-group path (a broadcast code) equals the
many-group one, and the drawdown found among the peaks equals its definition, row by row
in plain Python, on random accounts and periods.
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


def _loop_drawdown(
    time_ms: np.ndarray,
    open_ms: np.ndarray,
    pnl: np.ndarray,
    capital: np.ndarray,
    account: np.ndarray,
    starts: np.ndarray,
) -> dict[str, np.ndarray]:
    """The drawdown by its definition (``_kernel._drawdown``'s docstring), segment by
    segment in plain Python over the account's equity: the reference."""
    cum, peak = running_equity(pnl, segment_starts(account))
    fall = cum - peak
    out: dict[str, list[float]] = {
        "max_drawdown_usd": [],
        "max_drawdown": [],
        "max_drawdown_ms": [],
    }
    for start, stop in zip(starts, [*starts[1:], pnl.size], strict=True):
        mine = np.flatnonzero(account == account[start])
        first, last = int(mine[0]), int(mine[-1])
        trough = start + int(np.argmin(fall[start:stop]))  # the first deepest row
        ratio = fall[start:stop] / (capital[account[start]] + peak[start:stop])
        before = [i for i in range(first, trough + 1) if fall[i] == 0.0]
        after = [i for i in range(trough, last + 1) if fall[i] == 0.0]
        peak_ms = time_ms[before[-1]] if before else open_ms[first : last + 1].min()
        end_ms = time_ms[after[0]] if after else time_ms[last]
        out["max_drawdown_usd"].append(fall[trough])
        out["max_drawdown"].append(ratio.min())
        out["max_drawdown_ms"].append(end_ms - peak_ms if fall[trough] < 0 else 0)
    return {name: np.array(values) for name, values in out.items()}


@pytest.mark.parametrize("seed", range(40))
def test_drawdown_from_the_peaks_equals_its_definition(seed: int) -> None:
    """Random accounts of random periods (all-winning, all-losing, ties, one-row segments):
    the drawdown found among the peaks is the definition's, exactly."""
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
    want = _loop_drawdown(time_ms, open_ms, pnl, capital, accounts, starts)
    for name, values in want.items():
        np.testing.assert_array_equal(got[name], values, err_msg=name)
