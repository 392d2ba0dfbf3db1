"""The optimizer's math on small hand-made arrays, checked against hand computation.

docs/service-contract.md ("Strategy optimisation") defines every figure; these tests pin each one
on data small enough to count by eye, and compare the vectorised code with brute force.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from quantscope.sandbox.catalog import OPERATORS
from quantscope.sandbox.optimizer_math import (
    auc_ascending,
    candidate_thresholds,
    confidence,
    evaluate_criterion,
    f1_scores,
    kept_counts,
    reasoning,
    value_difference_ratio,
)

VALUES = np.arange(1.0, 11.0)  # 1..10
WON = np.array([0, 0, 1, 0, 1, 1, 0, 1, 1, 1], dtype=bool)  # profitable: 3, 5, 6, 8, 9, 10


def counts(values: np.ndarray, won: np.ndarray, thresholds: list[float], op: str):
    order = np.argsort(values, kind="stable")
    cum = np.concatenate(([0], np.cumsum(won[order])))
    return kept_counts(values[order], cum, np.array(thresholds), op)


def brute_auc(values: np.ndarray, won: np.ndarray) -> float:
    pos, neg = values[won], values[~won]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


# --- kept counts and F1 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "kept", "kept_won"),
    [
        ("V_GTE_T", 6, 5),  # 5..10 kept; 5, 6, 8, 9, 10 won
        ("V_GT_T", 5, 4),  # 6..10
        ("V_LTE_T", 5, 2),  # 1..5: 3, 5
        ("V_LT_T", 4, 1),  # 1..4: 3
    ],
)
def test_kept_counts_at_threshold_5_by_hand(op, kept, kept_won):
    k, tp = counts(VALUES, WON, [5.0], op)
    assert (int(k[0]), int(tp[0])) == (kept, kept_won)


def test_f1_is_precision_recall_harmonic_mean_by_hand():
    # threshold >= 5: kept 6, 5 of them won, 6 winners in all -> precision 5/6, recall 5/6
    f1 = f1_scores(np.array([6]), np.array([5]), 6)
    assert f1[0] == pytest.approx(5 / 6)
    # kept 4 with 4 winners of 6: precision 1, recall 2/3 -> F1 0.8
    assert f1_scores(np.array([4]), np.array([4]), 6)[0] == pytest.approx(0.8)
    assert f1_scores(np.array([0]), np.array([0]), 0)[0] == 0.0


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_kept_counts_equal_brute_force_with_ties(op):
    rng = np.random.default_rng(3)
    values = rng.integers(0, 12, 200).astype(float)  # many ties
    won = rng.random(200) < 0.45
    thresholds = [-1.0, 0.0, 3.0, 5.5, 7.0, 11.0, 12.0]
    kept, kept_won = counts(values, won, thresholds, op)
    for i, t in enumerate(thresholds):
        mask = OPERATORS[op](values, t)
        assert kept[i] == mask.sum()
        assert kept_won[i] == (mask & won).sum()


# --- AUC, confidence, value difference ---------------------------------------------------------


def test_auc_with_ties_by_hand():
    # winners 3, 5, 5 against losers 1, 5: 4 wins + 2 ties of 6 pairs -> (4 + 1) / 6
    values = np.array([1.0, 3.0, 5.0, 5.0, 5.0])
    won = np.array([False, True, True, True, False])
    assert auc_ascending(values, won) == pytest.approx(4 / 6)
    assert brute_auc(values, won) == pytest.approx(4 / 6)


def test_auc_equals_brute_force_and_is_half_without_both_classes():
    rng = np.random.default_rng(11)
    values = np.sort(rng.integers(0, 30, 150).astype(float))
    won = rng.random(150) < 0.5
    assert auc_ascending(values, won) == pytest.approx(brute_auc(values, won), abs=1e-12)
    assert auc_ascending(values, np.ones(150, dtype=bool)) == 0.5
    assert auc_ascending(values, np.zeros(150, dtype=bool)) == 0.5


def test_confidence_by_hand():
    assert confidence(100, 0.75) == pytest.approx(100 / 150 * 0.5)
    assert confidence(100, 0.25) == confidence(100, 0.75)  # separation either way
    assert confidence(50, 0.5) == 0.0
    assert confidence(0, 1.0) == 0.0


def test_value_difference_ratio_by_hand():
    assert value_difference_ratio(3.0, -2.0) == pytest.approx(2.5)
    assert value_difference_ratio(3.0, 2.0) == pytest.approx(0.5)
    assert value_difference_ratio(1.0, 0.0) == 0.0


# --- candidates ---------------------------------------------------------------------------------


def test_candidates_are_percentiles_stricter_than_current_least_strict_first():
    values = np.arange(1.0, 101.0)
    every = np.percentile(values, np.arange(5, 100, 5))  # 5.95, 10.9, ..., 95.05
    up = candidate_thresholds(values, 50.0, "V_GTE_T")
    assert list(up) == [pytest.approx(x) for x in every if x > 50]
    down = candidate_thresholds(values, 50.0, "V_LTE_T")
    assert list(down) == [pytest.approx(x) for x in every[::-1] if x < 50]
    assert len(candidate_thresholds(values, 1000.0, "V_GT_T")) == 0
    assert len(candidate_thresholds(values, -5.0, "V_LT_T")) == 0


def test_candidates_are_rounded_to_stored_precision_and_unique():
    values = np.array([1.0] * 50 + [1 / 3] * 50)
    cands = candidate_thresholds(values, 0.0, "V_GTE_T")
    assert list(cands) == [0.333333, 0.666667, 1.0]  # the median interpolates


# --- the whole search ---------------------------------------------------------------------------


def test_perfect_separator_by_hand():
    values = np.arange(1.0, 21.0)
    won = values > 10
    f = evaluate_criterion(values, won, 0.0, "V_GTE_T")
    assert f is not None
    assert f.recommended
    assert f.new_threshold == 10.5  # the median: keeps exactly the ten winners
    assert (f.sample_size, f.kept, f.trade_difference) == (20, 10, -10)
    assert (f.before_win_rate, f.after_win_rate, f.actual_impact) == (0.5, 1.0, 0.5)
    assert (f.profitable_accuracy, f.unprofitable_accuracy, f.f1_score) == (1.0, 1.0, 1.0)
    assert f.auc == 1.0
    assert f.confidence == pytest.approx(20 / 70)
    assert (f.profitable_avg, f.unprofitable_avg) == (15.5, 5.5)
    assert f.value_difference_ratio == pytest.approx(10 / 5.5)


def test_lower_is_better_operator_mirrors():
    values = -np.arange(1.0, 21.0)
    won = values < -10
    f = evaluate_criterion(values, won, 0.0, "V_LTE_T")
    assert f is not None
    assert f.new_threshold == -10.5
    assert (f.kept, f.after_win_rate, f.auc) == (10, 1.0, 1.0)


def test_best_f1_must_keep_at_least_30_percent():
    values = np.arange(1.0, 21.0)
    won = values >= 17  # the top 4 (20 %) won
    f = evaluate_criterion(values, won, 0.0, "V_GTE_T")
    assert f is not None
    # 16.2 (80th pct) would keep exactly the 4 winners (F1 1.0) but only 20 % of the trades;
    # the best allowed is 14.3 (70th pct): 6 kept (30 %), 4 won -> F1 8/10.
    assert counts(values, won, [16.2], "V_GTE_T")[0][0] == 4
    assert f.new_threshold == 14.3
    assert (f.kept, f.f1_score) == (6, pytest.approx(0.8))
    assert f.after_win_rate == pytest.approx(4 / 6)
    assert f.unprofitable_accuracy == pytest.approx(14 / 16)


def test_only_stricter_candidates_are_tried():
    values = np.arange(1.0, 21.0)
    won = values >= 17
    # current 15: the stricter candidates keep at most 5 of 20 trades (< 30 %): nothing
    assert evaluate_criterion(values, won, 15.0, "V_GTE_T") is None
    # current 14.3 itself is not a candidate; 10 leaves 14.3 as the best
    assert evaluate_criterion(values, won, 14.3, "V_GTE_T") is None
    f = evaluate_criterion(values, won, 10.0, "V_GTE_T")
    assert f is not None
    assert f.new_threshold == 14.3


def test_equal_f1_prefers_the_least_strict():
    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    won = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1], dtype=bool)
    f = evaluate_criterion(values, won, 0.0, "V_GTE_T")
    assert f is not None
    # 5.05 (45th pct) and 5.5 (50th) both keep 6..10: the same F1 1.0; the lower one wins
    assert f.new_threshold == 5.05
    assert f.kept == 5


def test_nothing_to_learn_without_both_outcomes():
    values = np.arange(1.0, 11.0)
    assert evaluate_criterion(values, np.ones(10, dtype=bool), 0.0, "V_GTE_T") is None
    assert evaluate_criterion(values, np.zeros(10, dtype=bool), 0.0, "V_GTE_T") is None


def test_recommended_needs_two_points_of_win_rate():
    values = np.arange(1.0, 21.0)
    f = evaluate_criterion(values, values > 10, 0.0, "V_GTE_T")
    assert f is not None
    assert not dataclasses.replace(f, after_win_rate=f.before_win_rate + 0.0199).recommended
    assert dataclasses.replace(f, after_win_rate=f.before_win_rate + 0.02).recommended


def test_search_equals_brute_force_on_noise():
    rng = np.random.default_rng(5)
    for op, current in itertools.product(sorted(OPERATORS), (-0.5, 0.0, 0.4)):
        values = np.round(rng.normal(size=300), 2)
        won = rng.random(300) < 0.5 + 0.15 * np.tanh(values)
        f = evaluate_criterion(values, won, current, op)
        stricter = [
            float(t)
            for t in np.unique(np.round(np.percentile(values, np.arange(5, 100, 5)), 6))
            if (t > current if op in ("V_GTE_T", "V_GT_T") else t < current)
        ]
        scored = []
        for t in stricter:
            kept = OPERATORS[op](values, t)
            if kept.sum() * 10 >= 3 * len(values):
                tp = (kept & won).sum()
                scored.append((2 * tp / (kept.sum() + won.sum()), -abs(t - current), t))
        if not scored:
            assert f is None
            continue
        assert f is not None
        best = max(scored)
        assert f.f1_score == pytest.approx(best[0])
        assert f.new_threshold == pytest.approx(best[2])


def test_reasoning_quotes_the_figures():
    values = np.arange(1.0, 21.0)
    f = evaluate_criterion(values, values > 10, 0.0, "V_GTE_T")
    assert f is not None
    text = reasoning("Smart-money buys", "V_GTE_T", 0.0, f, "MID_CAP")
    for part in ("from ≥ 0 to ≥ 10.5", "MID_CAP", "10 of 20", "50.0% to 100.0%", "+50.0 points"):
        assert part in text, part
    assert "15.5 against 5.5" in text
    assert "AUC 1.000" in text
