"""The vectorised sweep against a brute-force loop over thresholds, and what_if's semantics."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantscope import backtest as bt
from quantscope._errors import MissingColumnsError
from quantscope.backtest._kernel import Outcomes, Sums, sweep
from quantscope.backtest._rules import OPERATORS

OPS = sorted(OPERATORS)
# Few distinct values, so that ties between values and thresholds are common.
VALUE = st.sampled_from([-2.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0, 7.25])
THRESHOLD = st.one_of(VALUE, st.floats(-3.0, 8.0, allow_nan=False))


@st.composite
def samples(draw: st.DrawFn, criteria: int) -> tuple[list, list, list[str], Outcomes]:
    n = draw(st.integers(0, 40))
    values = [np.array(draw(st.lists(VALUE, min_size=n, max_size=n))) for _ in range(criteria)]
    thresholds = [
        np.array(draw(st.lists(THRESHOLD, min_size=1, max_size=12))) for _ in range(criteria)
    ]
    ops = [draw(st.sampled_from(OPS)) for _ in range(criteria)]
    pnl = np.array(
        draw(st.lists(st.sampled_from([-50.0, -1.25, 0.0, 0.5, 30.0]), min_size=n, max_size=n))
    )
    cost = np.array(draw(st.lists(st.floats(1.0, 500.0), min_size=n, max_size=n)))
    win = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    sim = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return values, thresholds, ops, Outcomes(win, pnl, cost, sim)


def brute_force(
    values: list, thresholds: list, ops: list[str], o: Outcomes
) -> dict[str, np.ndarray]:
    """The reference: every threshold combination, its kept rows by a mask, sums by hand."""
    shape = tuple(len(t) for t in thresholds)
    out = {k: np.zeros(shape) for k in ("trades", "simulated", "wins", "pnl", "gp", "gl", "cost")}
    for combo in itertools.product(*(range(s) for s in shape)):
        kept = np.ones(len(o.pnl), dtype=bool)
        for v, t, op, j in zip(values, thresholds, ops, combo, strict=True):
            kept &= OPERATORS[op](v, t[j])
        pnl = o.pnl[kept]
        out["trades"][combo] = kept.sum()
        out["simulated"][combo] = o.simulated[kept].sum()
        out["wins"][combo] = o.win[kept].sum()
        out["pnl"][combo] = pnl.sum()
        out["gp"][combo] = pnl[pnl > 0].sum()
        out["gl"][combo] = pnl[pnl < 0].sum()
        out["cost"][combo] = o.cost[kept].sum()
    return out


def assert_sums_equal(got: Sums, want: dict[str, np.ndarray]) -> None:
    assert got.trades.tolist() == want["trades"].astype(int).tolist()
    assert got.simulated.tolist() == want["simulated"].astype(int).tolist()
    assert got.wins.tolist() == want["wins"].astype(int).tolist()
    for name, ref in (
        ("pnl", "pnl"),
        ("gross_profit", "gp"),
        ("gross_loss", "gl"),
        ("cost", "cost"),
    ):
        np.testing.assert_allclose(getattr(got, name), want[ref], rtol=1e-12, atol=1e-9)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(samples(criteria=1))
def test_one_criterion_sweep_equals_the_brute_force_loop(sample: tuple) -> None:
    values, thresholds, ops, outcomes = sample
    assert_sums_equal(sweep(values, thresholds, ops, outcomes), brute_force(*sample))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(samples(criteria=2))
def test_two_criteria_grid_equals_the_brute_force_loop(sample: tuple) -> None:
    values, thresholds, ops, outcomes = sample
    assert_sums_equal(sweep(values, thresholds, ops, outcomes), brute_force(*sample))


def test_sweep_checks_its_arguments() -> None:
    o = Outcomes(np.zeros(0, bool), np.zeros(0), np.zeros(0), np.zeros(0, bool))
    with pytest.raises(ValueError, match="one operator per criterion"):
        sweep([np.zeros(0)], [np.zeros(1)], [], o)


# --- what_if on a small, hand-made features frame ----------------------------------------------


def features_frame() -> pd.DataFrame:
    """Eight trades of quant 1: smart money 0..7 (>= 2 today), wins from 4 up, plus noise."""
    n = 8
    smart = np.arange(n, dtype=float)
    pnl = np.where(smart >= 4, 10.0, -5.0)
    frame = pd.DataFrame(
        {
            "trade_id": pd.array(range(n), dtype="Int64"),
            "evaluation_id": pd.array(range(100, 100 + n), dtype="Int64"),
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(["DEGEN_CAP"] * n),
            "status": pd.Categorical(["Closed"] * n),
            "buy_cost_usd": np.full(n, 100.0),
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "smart": smart,
            "noise": np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]),
        }
    )
    frame.attrs["backtest"] = {
        "criteria": ("smart", "noise"),
        "operators": {"smart": "V_GTE_T", "noise": "V_GTE_T"},
        "decided_thresholds": {(1, "DEGEN_CAP"): {"smart": 2.0, "noise": 0.0}},
    }
    return frame


def test_what_if_reports_kept_trades_metrics_and_changes_against_the_current_threshold() -> None:
    table = bt.what_if(features_frame(), "smart", [1.0, 2.0, 4.0, 6.0], rule="filter")
    assert table["threshold"].tolist() == [1.0, 2.0, 4.0, 6.0]
    assert table["trades"].tolist() == [7, 6, 4, 2]
    assert table["wins"].tolist() == [4, 4, 4, 2]
    assert table["win_rate"].tolist() == pytest.approx([4 / 7, 4 / 6, 1.0, 1.0])
    assert table["total_pnl_usd"].tolist() == [25.0, 30.0, 40.0, 20.0]
    assert table["roi"].tolist() == pytest.approx([25 / 700, 30 / 600, 0.1, 0.1])
    assert table["profit_factor"].tolist()[:2] == pytest.approx([40 / 15, 40 / 10])
    assert math.isinf(table["profit_factor"].iloc[2])
    assert table["kept_share"].tolist() == pytest.approx([7 / 8, 6 / 8, 4 / 8, 2 / 8])
    # The current threshold (2, as decided) is the baseline of every change.
    assert table["is_current"].tolist() == [False, True, False, False]
    assert table["d_trades"].tolist() == [1, 0, -2, -4]
    assert table["d_total_pnl_usd"].tolist() == [-5.0, 0.0, 10.0, -10.0]
    assert table["d_win_rate"].tolist() == pytest.approx([4 / 7 - 4 / 6, 0.0, 1 / 3, 1 / 3])
    # Loosening admits evaluations that failed and have no trade: flagged.
    assert table["admits_unseen"].tolist() == [True, False, False, False]
    info = table.attrs["what_if"]
    assert info["current"] == {"smart": [2.0]}
    assert info["baseline"]["trades"] == 6
    assert "admits_unseen" in info["note"]


def test_what_if_baseline_without_any_known_current_threshold_is_every_trade() -> None:
    frame = features_frame()
    frame.attrs["backtest"] = {"operators": {"smart": "V_GTE_T"}}
    table = bt.what_if(frame, "smart", [2.0, 4.0], rule="filter")
    assert table["d_trades"].tolist() == [-2, -4]
    assert table["admits_unseen"].isna().all()
    explicit = bt.what_if(frame, "smart", [2.0, 4.0], current=4.0, rule="filter")
    assert explicit["d_trades"].tolist() == [2, 0]
    assert explicit["admits_unseen"].tolist() == [True, False]
    with pytest.raises(ValueError, match="no operator known"):
        bt.what_if(frame, "noise", [1.0], rule="filter")


def test_what_if_default_grid_takes_quantiles_of_the_values() -> None:
    table = bt.what_if(features_frame(), "smart", 5, rule="filter")
    assert table["threshold"].tolist() == [0.0, 1.0, 3.0, 5.0, 7.0]
    assert table["trades"].iloc[0] == 8


def test_what_if_leaves_out_trades_without_a_value_and_counts_them() -> None:
    frame = features_frame()
    frame.loc[0, "smart"] = np.nan
    table = bt.what_if(frame, "smart", [0.0], rule="filter")
    assert table["trades"].tolist() == [7]
    assert table.attrs["what_if"]["dropped_trades"] == 1


def simulated_frame() -> pd.DataFrame:
    """Two failed evaluations: one only smart money blocked (rescued), one blocked twice."""
    frame = pd.DataFrame(
        {
            "evaluation_id": pd.array([200, 201], dtype="Int64"),
            "quant_id": pd.array([1, 1], dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY", "TOKEN_BUY"]),
            "market_cap_class": pd.Categorical(["DEGEN_CAP", "DEGEN_CAP"]),
            "status": pd.Categorical(["Closed", "Closed"]),
            "buy_cost_usd": [100.0, 100.0],
            "pnl_usd": [7.0, 9.0],
            "profitable": pd.array([True, True], dtype="boolean"),
            "simulated": pd.array([True, True], dtype="boolean"),
            "smart": [1.0, 1.0],
            "noise": [5.0, -1.0],
        }
    )
    frame.attrs["backtest"] = {"criteria": ("smart", "noise")}
    return frame


def playbook() -> pd.DataFrame:
    """Both criteria required: smart >= 2, noise >= 0; pass mark 50."""
    frame = pd.DataFrame(
        {
            "market_cap_class": ["DEGEN_CAP", "DEGEN_CAP"],
            "config_type": ["BUYING", "BUYING"],
            "criterion": ["smart", "noise"],
            "threshold": [2.0, 0.0],
            "weight": [1.0, 1.0],
            "required": [True, True],
            "disabled": [False, False],
            "operator": ["V_GTE_T", "V_GTE_T"],
            "pass_mark": [50.0, 50.0],
        }
    )
    frame.attrs["quantscope"] = {"quant_id": 1}
    return frame


def test_simulated_entries_fill_in_only_where_loosening_admits_them() -> None:
    table = bt.what_if(
        features_frame(), "smart", [0.0, 1.0, 2.0], playbook=playbook(), simulated=simulated_frame()
    )
    # Evaluation 201 also fails on noise: loosening smart money alone never admits it.
    assert table["simulated_trades"].tolist() == [1, 1, 0]
    assert table["trades"].tolist() == [9, 8, 6]
    assert table["kept_share"].tolist() == pytest.approx([1.0, 7 / 8, 6 / 8])
    assert table["admits_unseen"].tolist() == [True, True, False]
    assert table.attrs["what_if"]["simulated_candidates"] == 1
    assert "simulated entries" in table.attrs["what_if"]["note"]
    with pytest.raises(ValueError, match="need the playbook"):
        bt.what_if(features_frame(), "smart", [1.0], simulated=simulated_frame(), rule="filter")


def test_grid_equals_what_if_along_each_axis_and_pivots_for_a_heatmap() -> None:
    frame = features_frame()
    grid = bt.what_if_grid(frame, ("smart", "noise"), ([1.0, 4.0], [0.0, 2.0, 5.0]), rule="filter")
    assert list(grid.columns[:2]) == ["smart", "noise"]
    assert len(grid) == 6
    loose_noise = grid[grid["noise"] == 0.0]
    single = bt.what_if(frame, "smart", [1.0, 4.0], rule="filter")
    assert loose_noise["trades"].tolist() == single["trades"].tolist()
    table = bt.pivot_grid(grid, "trades")
    assert table.index.tolist() == [1.0, 4.0]
    assert table.columns.tolist() == [0.0, 2.0, 5.0]
    kept = [
        [int(((frame.smart >= a) & (frame.noise >= b)).sum()) for b in (0, 2, 5)] for a in (1, 4)
    ]
    assert table.to_numpy().tolist() == kept
    assert grid["is_current"].sum() == 0  # neither (2, 0) pair is on the grid
    with pytest.raises(ValueError, match="two different criteria"):
        bt.what_if_grid(frame, ("smart", "smart"), rule="filter")


def test_threshold_grid_is_unique_observed_values() -> None:
    values = np.array([5.0, 1.0, 1.0, np.nan, 3.0])
    assert bt.threshold_grid(values, 5).tolist() == [1.0, 3.0, 5.0]
    assert bt.threshold_grid(np.array([np.nan])).tolist() == []


@settings(max_examples=60, deadline=None)
@given(samples(criteria=1), st.sampled_from([-0.5, 1.0, 2.5]))
def test_what_if_rows_equal_metrics_of_the_masked_trades(sample: tuple, current: float) -> None:
    (values,), (thresholds,), (op,), o = sample
    n = len(values)
    frame = pd.DataFrame(
        {
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(["LOW_CAP"] * n),
            "buy_cost_usd": o.cost,
            "pnl_usd": o.pnl,
            "profitable": pd.array(o.win, dtype="boolean"),
            "x": values,
        }
    )
    table = bt.what_if(frame, "x", thresholds, operator=op, current=current, rule="filter")

    def row(kept: np.ndarray) -> dict[str, float]:
        pnl = o.pnl[kept]
        gp, gl = pnl[pnl > 0].sum(), pnl[pnl < 0].sum()
        return {
            "trades": kept.sum(),
            "win_rate": o.win[kept].mean() if kept.any() else np.nan,
            "total_pnl_usd": pnl.sum(),
            "roi": pnl.sum() / o.cost[kept].sum() if kept.any() else np.nan,
            "profit_factor": gp / -gl if gl else (np.inf if gp > 0 else np.nan),
        }

    base = row(OPERATORS[op](values, current))
    for i, t in enumerate(thresholds):
        want = row(OPERATORS[op](values, t))
        got = table.iloc[i]
        assert got["threshold"] == t
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-9, atol=1e-9)
            with np.errstate(invalid="ignore"):
                delta = value - base[name]
            np.testing.assert_allclose(got[f"d_{name}"], delta, rtol=1e-9, atol=1e-9)
        looser = (t < current) if op in ("V_GTE_T", "V_GT_T") else (t > current)
        assert got["admits_unseen"] == looser
        assert got["is_current"] == (t == current)


def test_a_misspelled_criterion_is_named_with_the_closest_real_ones() -> None:
    frame = pd.DataFrame(
        {
            "quant_id": pd.array([1, 1], dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * 2),
            "market_cap_class": pd.Categorical(["DEGEN_CAP"] * 2),
            "buy_cost_usd": 100.0,
            "pnl_usd": [5.0, -5.0],
            "profitable": pd.array([True, False], dtype="boolean"),
            "smart_money_buys": [1.0, 3.0],
        }
    )
    frame.attrs["backtest"] = {"criteria": ("smart_money_buys",), "operators": {}}
    with pytest.raises(MissingColumnsError, match=r"did you mean 'smart_money_buys'\?"):
        bt.what_if(frame, "smart_mony_buys", [1, 2], rule="filter")
    with pytest.raises(MissingColumnsError, match="no criterion 'whatever'"):
        bt.walk_forward(frame, "whatever", rule="filter")
