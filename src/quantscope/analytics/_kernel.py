"""The grouped trade-metrics kernel: every summary number for many groups in one vectorised pass.

Input arrays hold one row per trade, sorted by (group, time, trade id), so each group is one
contiguous segment and each segment is in time order. Every statistic is a segment reduction
(``np.add.reduceat`` and friends) or a scan with a reset at segment starts, so the cost is a
few passes over the arrays whatever the number of groups; there is no Python loop over trades
or groups. ``summary()`` is this kernel with one group; ``by()`` with many.

Definitions: docs/metrics.md. Reference versions for one series: ``_stats.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from quantscope.analytics._stats import (
    MIN_LOSING_DAYS,
    MIN_RATIO_DAYS,
    PERIODS_PER_YEAR,
    SHORT_SAMPLE_DAYS,
    TINY,
)

DAY_MS = 86_400_000
_I64_MAX = np.iinfo(np.int64).max


def sort_order(codes: np.ndarray, time_ms: np.ndarray, trade_id: np.ndarray) -> np.ndarray:
    """The permutation that sorts rows by (group code, time, trade id).

    One int64 key and a quicksort when the three spans fit in 63 bits (always, for real
    data), else ``np.lexsort`` (one sort pass per key: slower).
    """
    if time_ms.size == 0:
        return np.zeros(0, dtype=np.int64)
    t0, id0 = int(time_ms.min()), int(trade_id.min())
    t_span = int(time_ms.max()) - t0 + 1
    id_span = int(trade_id.max()) - id0 + 1
    groups = int(codes.max()) + 1
    if groups * t_span * id_span <= _I64_MAX:
        # (codes * t_span + (time_ms - t0)) * id_span + (trade_id - id0), built in place: one
        # array beside the inputs, none for a single group (``codes`` may be a broadcast 0)
        key = time_ms - t0
        key *= id_span
        key += trade_id
        key -= id0
        if groups > 1:
            key += codes * (t_span * id_span)
        return np.argsort(key)
    return np.lexsort((trade_id, time_ms, codes))


def segment_starts(codes: np.ndarray) -> np.ndarray:
    """Start index of each run of equal codes (codes sorted, at least one row)."""
    return np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))


def running_equity(
    pnl: np.ndarray, starts: np.ndarray, account: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative PnL and its running peak (never below the flat start, 0) per account.

    ``starts`` are the first rows of the accounts (runs of rows in time order); ``account``,
    when the caller has it, the account code of each row (it saves building one). The sums are
    pandas' grouped, compensated (Kahan) running sums, so an account's figures are the same
    bits whichever other accounts are computed beside it: ``drawdown()`` of one quant and
    ``by("quant_name", freq=...)`` read identical equity.
    """
    if account is None:
        account = np.repeat(np.arange(starts.size), np.diff(np.append(starts, pnl.size)))
    cum = pd.Series(pnl).groupby(account, sort=False).cumsum().to_numpy()
    peak = pd.Series(cum).groupby(account, sort=False).cummax().to_numpy()
    return cum, np.maximum(peak, 0.0)


def grouped_metrics(
    codes: np.ndarray,
    time_ms: np.ndarray,
    open_ms: np.ndarray,
    pnl: np.ndarray,
    cost: np.ndarray,
    capital: np.ndarray,
    periods_per_year: int = PERIODS_PER_YEAR,
    *,
    accounts: np.ndarray | None = None,
    min_days: int = 2,
) -> dict[str, np.ndarray]:
    """Trade metrics per segment of rows sorted by (code, time, trade id).

    Args:
        codes: int64 group code per row, sorted ascending (non-empty).
        time_ms: int64 close time (epoch ms, UTC) per row, ascending within a code.
        open_ms: int64 open time per row.
        pnl, cost: float64 PnL and buy cost in USD per row.
        capital: float64 starting capital per account code (> 0), for the drawdown fraction.
        periods_per_year: annualisation of the daily Sharpe and Sortino ratios.
        accounts: int64 account code per row, non-decreasing, each account a run of whole
            segments (a quant's periods); the drawdown is the account's equity below its own
            running peak, read over each segment's rows. None: each segment is its own account.
        min_days: fewer daily values than this and Sharpe and Sortino are NaN (``few_days``).

    Returns:
        ``{"code": codes of the segments, metric name: array per segment}``, names as in
        ``trades.SUMMARY_METRICS``; times as int64 ms (holding and drawdown durations).
    """
    n = pnl.size
    starts = segment_starts(codes)
    ends = np.append(starts[1:], n)
    counts = ends - starts

    win, loss = pnl > 0, pnl < 0
    wins = np.add.reduceat(win, starts, dtype=np.int64)
    losses = np.add.reduceat(loss, starts, dtype=np.int64)
    gross_profit = np.add.reduceat(np.where(win, pnl, 0.0), starts)
    gross_loss = np.add.reduceat(np.where(loss, pnl, 0.0), starts)
    total = np.add.reduceat(pnl, starts)
    total_cost = np.add.reduceat(cost, starts)
    mean = total / counts
    dev = pnl - np.repeat(mean, counts)
    np.square(dev, out=dev)  # in place: one row-sized array at a time (summary() of 1e7 rows)
    std = np.sqrt(np.add.reduceat(dev, starts) / np.maximum(counts - 1, 1))
    del dev
    scale = np.maximum.reduceat(np.abs(pnl), starts)

    with np.errstate(divide="ignore", invalid="ignore"):
        out: dict[str, np.ndarray] = {
            "code": codes[starts],
            "trades": counts.astype(np.int64),
            "wins": wins,
            "losses": losses,
            "breakeven": counts - wins - losses,
            "win_rate": wins / counts,
            "total_pnl_usd": total,
            "gross_profit_usd": gross_profit,
            "gross_loss_usd": gross_loss,
            "avg_pnl_usd": mean,
            "avg_win_usd": np.where(wins > 0, gross_profit / wins, np.nan),
            "avg_loss_usd": np.where(losses > 0, gross_loss / losses, np.nan),
            "payoff_ratio": _payoff(gross_profit, gross_loss, wins, losses),
            "profit_factor": _profit_factor(gross_profit, gross_loss),
            # win_rate * avg_win + loss_rate * avg_loss, an empty side contributing 0
            "expectancy_usd": (gross_profit + gross_loss) / counts,
            "sqn": _ratio(np.sqrt(counts) * mean, std, scale, counts >= 2),
            "roi": np.where(total_cost != 0, total / total_cost, np.nan),
            "best_trade_usd": np.maximum.reduceat(pnl, starts),
            "worst_trade_usd": np.minimum.reduceat(pnl, starts),
            "avg_holding_ms": np.add.reduceat(time_ms - open_ms, starts) / counts,
        }
    out.update(_streaks(codes, win, loss, n))
    account = codes if accounts is None else accounts
    out.update(_drawdown(time_ms, open_ms, pnl, capital, account, starts))
    out.update(_daily_ratios(codes, time_ms, pnl, total, starts, ends, periods_per_year, min_days))
    return out


def _ratio(num: np.ndarray, std: np.ndarray, scale: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``num / std`` where defined: NaN where not ``ok`` or the spread is rounding noise."""
    defined = ok & (std > TINY * scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, num / std, np.nan)


def _payoff(gp: np.ndarray, gl: np.ndarray, wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """avg win / |avg loss|: inf with wins and no loss, NaN with no win."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (gp / np.maximum(wins, 1)) / np.abs(gl / np.maximum(losses, 1))
    return np.where(wins == 0, np.nan, np.where(losses == 0, np.inf, ratio))


def _profit_factor(gp: np.ndarray, gl: np.ndarray) -> np.ndarray:
    """gross profit / |gross loss|: inf with profit and no loss, NaN with neither."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = gp / np.abs(gl)
    return np.where(gl == 0, np.where(gp > 0, np.inf, np.nan), ratio)


def _streaks(codes: np.ndarray, win: np.ndarray, loss: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Longest runs of consecutive wins and losses per segment (a breakeven trade breaks both)."""
    sign = win.astype(np.int8) - loss.astype(np.int8)
    brk = np.concatenate(([True], (sign[1:] != sign[:-1]) | (codes[1:] != codes[:-1])))
    run_start = np.flatnonzero(brk)
    run_len = np.diff(np.append(run_start, n))
    run_sign = sign[run_start]
    seg_runs = segment_starts(codes[run_start])
    return {
        "max_win_streak": np.maximum.reduceat(np.where(run_sign == 1, run_len, 0), seg_runs),
        "max_loss_streak": np.maximum.reduceat(np.where(run_sign == -1, run_len, 0), seg_runs),
    }


def _drawdown(
    time_ms: np.ndarray,
    open_ms: np.ndarray,
    pnl: np.ndarray,
    capital: np.ndarray,
    account: np.ndarray,
    starts: np.ndarray,
) -> dict[str, np.ndarray]:
    """Deepest fall of an account's cumulative PnL below its running peak, per segment.

    The equity is the account's (``account`` codes, a run of whole segments each): it starts
    flat (a peak at 0 PnL, dated at the account's first open) and runs through every segment
    of the account, so a segment that is a period sees the equity and the peak it starts with.
    Each segment reports the deepest fall among its own rows. The duration runs from the last
    peak before that trough to the first later time the peak is regained, or to the account's
    last close when it never is; either may lie outside the segment.
    """
    n = pnl.size
    acc_starts = segment_starts(account)
    acc_ends = np.append(acc_starts[1:], n)
    cum, peak = running_equity(pnl, acc_starts, account)
    fall = cum - peak  # exactly 0.0 at every peak: peak holds a copy of cum there
    del cum
    seg_counts = np.diff(np.append(starts, n))
    max_usd = np.minimum.reduceat(fall, starts)
    ratio = capital[account]  # fall / (capital + peak), in place: one row-sized array
    ratio += peak
    del peak
    np.divide(fall, ratio, out=ratio)
    max_fraction = np.minimum.reduceat(ratio, starts)
    del ratio

    # Row scans reduced to the rows that matter: the first trough of each segment and the
    # peaks (rows where the fall is 0), found by binary search among the peaks' positions.
    hits = np.flatnonzero(fall == np.repeat(max_usd, seg_counts))
    trough = hits[np.searchsorted(hits, starts)]  # each segment holds its minimum
    peaks = np.concatenate(([-1], np.flatnonzero(fall == 0.0), [n]))  # sentinels at both ends
    del fall, hits
    trough_acc = np.searchsorted(acc_starts, trough, side="right") - 1  # account of each trough
    first, end = acc_starts[trough_acc], acc_ends[trough_acc]
    # last peak at or before the trough; the account's start-1 stands for its flat start
    peak_at = np.maximum(peaks[np.searchsorted(peaks, trough, side="right") - 1], first - 1)
    # first peak at or after the trough; the account's end stands for "not regained"
    regained_at = np.minimum(peaks[np.searchsorted(peaks, trough, side="left")], end)
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


def _daily_ratios(
    codes: np.ndarray,
    time_ms: np.ndarray,
    pnl: np.ndarray,
    total: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    periods_per_year: int,
    min_days: int,
) -> dict[str, np.ndarray]:
    """Annualised Sharpe and Sortino of PnL per UTC day, zero days included, per segment,
    with the days lost and the probabilistic Sharpe ratio (``_stats.probabilistic_sharpe_ratio``).

    Only the days with a trade are materialised: the zero days between a segment's first and
    last day enter the central moments in closed form (each contributes ``(-mean)**k``).
    Flags: fewer days than ``min_days`` (both ratios NaN below it), no losing day (no
    downside: Sortino is +inf or NaN) and a short sample (``short_sample``).
    """
    day = time_ms // DAY_MS
    new_day = np.concatenate(([True], (day[1:] != day[:-1]) | (codes[1:] != codes[:-1])))
    day_start = np.flatnonzero(new_day)
    day_pnl = np.add.reduceat(pnl, day_start)
    day_seg = np.searchsorted(starts, day_start, side="right") - 1
    n_seg = starts.size
    days = (day[ends - 1] - day[starts] + 1).astype(np.float64)
    active = np.bincount(day_seg, minlength=n_seg)
    mean = total / days
    dev2 = np.bincount(day_seg, weights=np.square(day_pnl - mean[day_seg]), minlength=n_seg)
    dev2 += (days - active) * np.square(mean)
    std = np.sqrt(dev2 / np.maximum(days - 1, 1))
    quiet = days - active  # days without a close: PnL 0, deviation -mean
    dev3 = np.bincount(day_seg, weights=(day_pnl - mean[day_seg]) ** 3, minlength=n_seg)
    dev3 += quiet * (-mean) ** 3
    dev4 = np.bincount(day_seg, weights=(day_pnl - mean[day_seg]) ** 4, minlength=n_seg)
    dev4 += quiet * mean**4
    losing = np.bincount(day_seg, weights=day_pnl < 0, minlength=n_seg).astype(np.int64)
    down = np.sqrt(
        np.bincount(day_seg, weights=np.square(np.minimum(day_pnl, 0.0)), minlength=n_seg) / days
    )
    scale = np.maximum.reduceat(np.abs(day_pnl), segment_starts(day_seg))
    root = np.sqrt(periods_per_year)
    several = days >= max(min_days, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        sortino = np.where(down > 0, mean / down * root, np.where(mean > 0, np.inf, np.nan))
    per_day = _ratio(mean, std, scale, several)
    return {
        "days": days.astype(np.int64),
        "losing_days": losing,
        "sharpe": per_day * root,
        "sortino": np.where(several, sortino, np.nan),
        "psr": _psr(per_day, days, dev2, dev3, dev4),
        "few_days": days < MIN_RATIO_DAYS,
        "no_losing_day": down == 0,
        "short_sample": (days < SHORT_SAMPLE_DAYS) | (losing < MIN_LOSING_DAYS),
    }


def _psr(
    sr: np.ndarray, n: np.ndarray, m2: np.ndarray, m3: np.ndarray, m4: np.ndarray
) -> np.ndarray:
    """``_stats.psr_from`` per segment, from the per-day Sharpe and the central moment sums
    (pandas' bias-adjusted skewness and excess kurtosis, as ``_stats.moments``).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = m3 / n / (m2 / n) ** 1.5
        skew = np.sqrt(n * (n - 1)) / (n - 2) * g1
        g2 = m4 / n / (m2 / n) ** 2 - 3.0
        kurt = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6.0)
        var = 1.0 - skew * sr + (kurt + 2.0) / 4.0 * sr * sr
        z = sr * np.sqrt(n - 1) / np.sqrt(var)
    ok = (n >= 4) & np.isfinite(z) & (var > 0)
    cdf = np.frompyfunc(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)), 1, 1)
    return np.where(ok, cdf(np.where(ok, z, 0.0)).astype(np.float64), np.nan)
