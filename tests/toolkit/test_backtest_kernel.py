"""The sweep kernel (``_kernel``) against brute force, on random frames: counts exactly, sums to
1e-9, every operator, ties at the threshold, infinities (the replay's always-passing values).

Issue 22: "``_kernel.buckets`` calls ``np.argsort`` 6 times per call where the floor needs 2
``searchsorted`` over the thresholds". The kernel now sorts no row array at all.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantscope import backtest as bt
from quantscope.backtest import _kernel
from quantscope.backtest._kernel import (
    Outcomes,
    buckets,
    group_sums,
    masked_sums,
    positions,
    sweep,
    sweep_one,
)
from quantscope.backtest._rules import OPERATORS

OPS = tuple(OPERATORS)


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values with many ties (one decimal), a few infinities, as a replay moves them."""
    values = np.round(rng.normal(0.0, 2.0, n), 1)
    values[rng.random(n) < 0.02] = np.inf
    values[rng.random(n) < 0.02] = -np.inf
    return values


def _outcomes(rng: np.random.Generator, n: int, simulated: bool = True) -> Outcomes:
    pnl = np.round(rng.normal(0.0, 50.0, n), 2)
    pnl[rng.random(n) < 0.05] = 0.0
    return Outcomes(
        win=pnl > 0,
        pnl=pnl,
        cost=np.round(rng.uniform(10.0, 500.0, n), 2),
        simulated=(rng.random(n) < 0.1) if simulated else np.zeros(n, dtype=bool),
    )


def _brute(values: list[np.ndarray], cell: tuple[float, ...], ops: list[str], o: Outcomes):
    kept = np.ones(len(o.pnl), dtype=bool)
    for v, t, op in zip(values, cell, ops, strict=True):
        kept &= OPERATORS[op](v, t)
    pnl = o.pnl[kept]
    return {
        "trades": int(kept.sum()),
        "simulated": int((kept & o.simulated).sum()),
        "wins": int((kept & o.win).sum()),
        "pnl": float(pnl.sum()),
        "gross_profit": float(pnl[pnl > 0].sum()),
        "gross_loss": float(pnl[pnl <= 0].sum()),
        "cost": float(o.cost[kept].sum()),
    }


def _assert_cell(sums: _kernel.Sums, index: tuple[int, ...], expected: dict) -> None:
    for name in ("trades", "simulated", "wins"):
        assert int(getattr(sums, name)[index]) == expected[name], name
    for name in ("pnl", "gross_profit", "gross_loss", "cost"):
        np.testing.assert_allclose(getattr(sums, name)[index], expected[name], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [50, 9_000])  # below and above positions' SMALL
@pytest.mark.parametrize("side", ["left", "right"])
def test_positions_equal_searchsorted_with_ties_infinities_and_crowded_cells(
    n: int, side: str
) -> None:
    rng = np.random.default_rng(n)
    values = _values(rng, n)
    # Thresholds at observed values (ties), duplicates, two closer than a cell, the extremes.
    thresholds = np.sort(
        np.concatenate([rng.choice(values[np.isfinite(values)], 40), [0.1, 0.1, 1e-9, 2e-9]])
    )
    found = positions(values, thresholds, side)  # type: ignore[arg-type]
    assert found.tolist() == np.searchsorted(thresholds, values, side=side).tolist()  # type: ignore[call-overload]


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=False, width=32) | st.sampled_from([0.0, 1.0, -1.0]), min_size=1
    ),
    thresholds=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1),
    side=st.sampled_from(["left", "right"]),
)
def test_positions_equal_searchsorted_for_any_floats(
    values: list[float], thresholds: list[float], side: str
) -> None:
    v = np.resize(np.array(values, dtype=np.float64), _kernel.SMALL)  # the table's path
    t = np.sort(np.array(thresholds, dtype=np.float64))
    found = positions(v, t, side)  # type: ignore[arg-type]
    assert found.tolist() == np.searchsorted(t, v, side=side).tolist()  # type: ignore[call-overload]


def test_positions_of_thresholds_a_subnormal_apart_search_without_a_warning() -> None:
    """Thresholds whose span is subnormal make no cell table (its scale would be infinite,
    and ``0 * inf`` warns): the values are searched (found by hypothesis at the chunk's
    size, where the table is built)."""
    values = np.resize(np.array([0.0, 1e-310, 5e-324, -1.0, 2.0]), _kernel.SMALL)
    t = np.array([0.0, 2.22507386e-309])
    for side in ("left", "right"):
        found = positions(values, t, side)  # type: ignore[arg-type]
        assert found.tolist() == np.searchsorted(t, values, side=side).tolist()  # type: ignore[call-overload]


def test_positions_with_nan_values_fall_back_to_searchsorted() -> None:
    values = np.linspace(-3.0, 3.0, _kernel.SMALL + 10)
    values[::7] = np.nan
    t = np.array([-1.0, 0.0, 2.5])
    assert positions(values, t, "left").tolist() == np.searchsorted(t, values, "left").tolist()


@pytest.mark.parametrize("op", OPS)
def test_buckets_count_the_sorted_thresholds_each_value_passes(op: str) -> None:
    rng = np.random.default_rng(3)
    values = _values(rng, 6_000)
    thresholds = np.concatenate([rng.choice(values[np.isfinite(values)], 30), [0.0, 0.0]])
    found, size = buckets(values, thresholds, op)
    assert size == len(thresholds) + 1
    passes = OPERATORS[op](values[:, None], np.sort(thresholds)[None, :])
    # V_GTE_T/V_GT_T: the passed sorted thresholds are the first `bucket`; else the last.
    expected = passes.sum(axis=1) if op in ("V_GTE_T", "V_GT_T") else (~passes).sum(axis=1)
    assert found.tolist() == expected.tolist()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [300, 7_000])
def test_sweep_one_equals_brute_force_at_every_threshold(op: str, n: int) -> None:
    rng = np.random.default_rng(n + len(op))
    values = [_values(rng, n)]
    outcomes = _outcomes(rng, n)
    finite = values[0][np.isfinite(values[0])]
    thresholds = np.concatenate([rng.choice(finite, 25), [finite.min(), finite.max(), 0.0]])
    sums = sweep_one(values[0], thresholds, op, outcomes)
    for j, t in enumerate(thresholds):
        _assert_cell(sums, (j,), _brute(values, (t,), [op], outcomes))


@pytest.mark.parametrize("ops", [("V_GTE_T", "V_LT_T"), ("V_GT_T", "V_LTE_T")])
def test_the_grid_equals_brute_force_in_every_cell(ops: tuple[str, str]) -> None:
    rng = np.random.default_rng(11)
    n = 6_000
    values = [_values(rng, n), np.round(rng.uniform(0, 100, n))]
    outcomes = _outcomes(rng, n)
    grids = [rng.choice(v[np.isfinite(v)], 9) for v in values]
    sums = sweep(values, grids, list(ops), outcomes)
    assert sums.trades.shape == (9, 9)
    for i, a in enumerate(grids[0]):
        for j, b in enumerate(grids[1]):
            _assert_cell(sums, (i, j), _brute(values, (a, b), list(ops), outcomes))


def test_masked_and_group_sums_equal_brute_force() -> None:
    rng = np.random.default_rng(5)
    n = 5_000
    values = _values(rng, n)
    outcomes = _outcomes(rng, n)
    kept = rng.random(n) < 0.4
    pnl = outcomes.pnl[kept]
    got = masked_sums(kept, outcomes)
    assert int(got.trades) == kept.sum()
    assert int(got.wins) == (kept & outcomes.win).sum()
    assert int(got.simulated) == (kept & outcomes.simulated).sum()
    np.testing.assert_allclose(got.gross_profit, pnl[pnl > 0].sum(), rtol=1e-9)
    np.testing.assert_allclose(got.gross_loss, pnl[pnl < 0].sum(), rtol=1e-9)
    np.testing.assert_allclose(got.cost, outcomes.cost[kept].sum(), rtol=1e-9)
    groups = rng.integers(0, 7, n)
    grid = np.array([1.0, -0.5, 0.0])
    counts, pnls = group_sums([values], [grid], ["V_GTE_T"], groups, 7, [None, outcomes.pnl])
    for g in range(7):
        for j, t in enumerate(grid):
            mask = (groups == g) & (values >= t)
            assert counts[g, j] == mask.sum()
            np.testing.assert_allclose(pnls[g, j], outcomes.pnl[mask].sum(), rtol=1e-9, atol=1e-9)


def test_a_filter_grid_sorts_no_row_array(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows' buckets come from the thresholds (``positions``), not from sorting the rows:
    before, ``buckets`` ran ``np.argsort`` over every criterion's column."""
    from benchmarks import bench_replay

    features = bench_replay.synthetic_features(6_000)
    sorted_lengths: list[int] = []
    real = np.argsort

    def counting(a: np.ndarray, *args: object, **kwargs: object) -> np.ndarray:
        sorted_lengths.append(len(a))
        return real(a, *args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(np, "argsort", counting)
    bt.what_if_grid(
        features,
        (bench_replay.CRITERION, bench_replay.AI),
        (12, 12),
        rule="filter",
        bootstrap=False,
    )
    assert not [k for k in sorted_lengths if k >= 1_000], sorted_lengths
