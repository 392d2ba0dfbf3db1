"""The optimizer's math: the best stricter threshold of one criterion, from its values alone.

Pure numpy, no database (docs/service-contract.md, "Strategy optimisation"). ``evaluate_criterion``
sorts a criterion's values once; binary searches over the sorted values and a cumulative count of
profitable trades give, for every candidate threshold at once, the trades kept and the profitable
trades kept, from which F1, win rates and accuracies follow. AUC is the Mann-Whitney statistic of
the same sorted values (ties count one half). A trade is *profitable* when its pnl is > 0; every
other trade counts as losing.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from quantscope.sandbox.catalog import OPERATOR_DIRECTION, round_value

PERCENTILES = np.arange(5, 100, 5)
MIN_KEEP_SHARE = Fraction(3, 10)  # exact: kept * 10 >= n * 3
MIN_WIN_RATE_GAIN = 0.02
CONFIDENCE_PRIOR_N = 50
_EPS = 1e-12  # float slack on "at least 2 points"

_SYMBOL = {"V_GTE_T": "≥", "V_GT_T": ">", "V_LTE_T": "≤", "V_LT_T": "<"}


# ---------------------------------------------------------------------------------------------
# The math: pure functions of one criterion's values and the trades' outcomes


@dataclass(frozen=True)
class Finding:
    """The best stricter threshold of one criterion and the evidence behind it."""

    new_threshold: float
    sample_size: int
    kept: int
    before_win_rate: float
    after_win_rate: float
    profitable_accuracy: float
    unprofitable_accuracy: float
    f1_score: float
    auc: float
    confidence: float
    profitable_avg: float
    unprofitable_avg: float
    value_difference_ratio: float

    @property
    def trade_difference(self) -> int:
        return self.kept - self.sample_size

    @property
    def actual_impact(self) -> float:
        return self.after_win_rate - self.before_win_rate

    @property
    def recommended(self) -> bool:
        return self.actual_impact >= MIN_WIN_RATE_GAIN - _EPS


def candidate_thresholds(values: np.ndarray, current: float, operator: str) -> np.ndarray:
    """The 5th..95th percentiles stricter than ``current``; least strict first."""
    direction = OPERATOR_DIRECTION[operator]
    qs = np.unique([round_value(q) for q in np.percentile(values, PERCENTILES)])
    stricter = qs[qs * direction > current * direction]
    return stricter if direction > 0 else stricter[::-1]


def kept_counts(
    sorted_values: np.ndarray, cum_profitable: np.ndarray, thresholds: np.ndarray, operator: str
) -> tuple[np.ndarray, np.ndarray]:
    """Trades kept and profitable trades kept at each threshold, by binary search.

    Args:
        sorted_values: the values in ascending order.
        cum_profitable: ``cum[i]`` = profitable trades among the ``i`` smallest values (n + 1).
        thresholds: the thresholds to try.
        operator: the criterion's operator; a trade is kept when ``op(value, threshold)``.
    """
    n = len(sorted_values)
    side: Literal["left", "right"] = "left" if operator in ("V_GTE_T", "V_LT_T") else "right"
    idx = np.searchsorted(sorted_values, thresholds, side=side)
    if OPERATOR_DIRECTION[operator] > 0:  # kept: the values at and above idx
        return n - idx, cum_profitable[n] - cum_profitable[idx]
    return idx, cum_profitable[idx]


def f1_scores(kept: np.ndarray, kept_profitable: np.ndarray, profitable: int) -> np.ndarray:
    """F1 of "kept => profitable": 2·TP / (kept + profitable)."""
    denom = np.asarray(kept, dtype=np.float64) + profitable
    return np.divide(2.0 * kept_profitable, denom, out=np.zeros(len(denom)), where=denom > 0)


def auc_ascending(sorted_values: np.ndarray, sorted_profitable: np.ndarray) -> float:
    """P(a profitable trade's value > a losing one's), ties counting one half (Mann-Whitney).

    Takes values already sorted ascending; 0.5 when either class is empty.
    """
    n_pos = int(sorted_profitable.sum())
    n_neg = len(sorted_values) - n_pos
    if n_pos == 0 or n_neg == 0:
        return 0.5
    _, first, counts = np.unique(sorted_values, return_index=True, return_counts=True)
    ranks = np.repeat(first + (counts + 1) / 2.0, counts)  # 1-based, ties averaged
    rank_sum = float(ranks[sorted_profitable].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def confidence(n: int, auc: float) -> float:
    """n / (n + 50) × |2·AUC − 1|: separation, discounted on small samples."""
    return n / (n + CONFIDENCE_PRIOR_N) * abs(2.0 * auc - 1.0)


def value_difference_ratio(profitable_avg: float, unprofitable_avg: float) -> float:
    """(profitableAvg − unprofitableAvg) / |unprofitableAvg|; 0 when unprofitableAvg is 0."""
    if unprofitable_avg == 0:
        return 0.0
    return (profitable_avg - unprofitable_avg) / abs(unprofitable_avg)


def evaluate_criterion(
    values: np.ndarray, profitable: np.ndarray, current: float, operator: str
) -> Finding | None:
    """The best-F1 stricter threshold of one criterion, or None when no candidate qualifies.

    None also when the trades are all profitable or all losing (nothing to separate). The
    returned Finding may still fall short of the 2-point gain: check ``recommended``.
    """
    values = np.asarray(values, dtype=np.float64)
    profitable = np.asarray(profitable, dtype=bool)
    n = len(values)
    n_pos = int(profitable.sum())
    if n_pos == 0 or n_pos == n:
        return None
    candidates = candidate_thresholds(values, current, operator)
    if not len(candidates):
        return None
    order = np.argsort(values, kind="stable")
    sorted_values, sorted_profitable = values[order], profitable[order]
    cum = np.concatenate(([0], np.cumsum(sorted_profitable)))
    kept, kept_pos = kept_counts(sorted_values, cum, candidates, operator)
    eligible = kept * MIN_KEEP_SHARE.denominator >= n * MIN_KEEP_SHARE.numerator
    if not eligible.any():
        return None
    f1 = np.where(eligible, f1_scores(kept, kept_pos, n_pos), -1.0)
    best = int(np.argmax(f1))  # the first maximum: the least strict
    k, tp = int(kept[best]), int(kept_pos[best])
    n_neg = n - n_pos
    auc = auc_ascending(sorted_values, sorted_profitable)
    if OPERATOR_DIRECTION[operator] < 0:
        auc = 1.0 - auc
    p_avg = float(values[profitable].mean())
    u_avg = float(values[~profitable].mean())
    return Finding(
        new_threshold=float(candidates[best]),
        sample_size=n,
        kept=k,
        before_win_rate=n_pos / n,
        after_win_rate=tp / k,
        profitable_accuracy=tp / n_pos,
        unprofitable_accuracy=(n_neg - (k - tp)) / n_neg,
        f1_score=float(f1[best]),
        auc=auc,
        confidence=confidence(n, auc),
        profitable_avg=p_avg,
        unprofitable_avg=u_avg,
        value_difference_ratio=value_difference_ratio(p_avg, u_avg),
    )


def reasoning(name: str, operator: str, old: float, f: Finding, market_cap: str) -> str:
    """The recommendation's explanation, with its real figures."""
    sym = _SYMBOL[operator]
    verb = "Raising" if OPERATOR_DIRECTION[operator] > 0 else "Lowering"
    old_text, new_text = format_value(old), format_value(f.new_threshold)
    p_avg, u_avg = format_value(f.profitable_avg), format_value(f.unprofitable_avg)
    return (
        f"{verb} the {name} threshold from {sym} {old_text} to {sym} {new_text} on {market_cap} "
        f"buys would have kept {f.kept} of {f.sample_size} closed trades "
        f"({f.kept / f.sample_size:.1%}) and lifted the win rate from {f.before_win_rate:.1%} "
        f"to {f.after_win_rate:.1%} ({100 * f.actual_impact:+.1f} points). Profitable trades "
        f"averaged {p_avg} against {u_avg} for losing ones ({f.value_difference_ratio:+.1%}); "
        f"the filter keeps {f.profitable_accuracy:.1%} of the winners and drops "
        f"{f.unprofitable_accuracy:.1%} of the losers (F1 {f.f1_score:.3f}, AUC {f.auc:.3f})."
    )


def format_value(x: float) -> str:
    """A value or threshold as decimal text at stored precision (6 significant digits)."""
    return str(np.format_float_positional(round_value(x), trim="-"))
