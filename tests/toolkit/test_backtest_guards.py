"""Guard rails on research rows: tokens, the intervals from ``uncertainty``, flags.

Each figure is checked against a direct computation on the kept trades (a mask per
threshold), and the kernels behind them against brute-force loops.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from quantscope import backtest as bt
from quantscope.backtest import _guards
from quantscope.backtest._kernel import group_sums, permuted_wins
from quantscope.backtest._rules import OPERATORS

OPS = sorted(OPERATORS)


def test_wilson_interval_known_values() -> None:
    lo, hi = _guards.wilson(np.array([1, 3, 50, 0, 0]), np.array([1, 3, 100, 10, 0]))
    # 1 win in 1 trade is no proof: the interval reaches down to 0.21.
    assert lo[:4].round(4).tolist() == [0.2065, 0.4385, 0.4038, 0.0]
    assert hi[:4].round(4).tolist() == [1.0, 1.0, 0.5962, 0.2775]
    assert np.isnan(lo[4])
    assert np.isnan(hi[4])


def test_small_sample_flags_few_trades_or_few_tokens() -> None:
    flags = _guards.small_sample(np.array([29, 30, 500, 500]), np.array([29, 10, 9, 10]))
    assert flags.tolist() == [True, False, True, False]
    assert _guards.small_sample(np.array([29, 30]), None).tolist() == [True, False]


def test_group_sums_equal_a_loop_over_groups_and_thresholds() -> None:
    rng = np.random.default_rng(1)
    n = 300
    values = [rng.integers(0, 6, n).astype(float), rng.integers(0, 4, n).astype(float)]
    grids = [np.array([3.0, 0.5, 5.0]), np.array([1.0, 2.0])]
    groups = rng.integers(0, 7, n)
    pnl = rng.normal(size=n)
    for ops in itertools.product(OPS, repeat=2):
        counts, sums = group_sums(values, grids, list(ops), groups, 7, [None, pnl])
        for g, i, j in itertools.product(range(7), range(3), range(2)):
            kept = (groups == g) & OPERATORS[ops[0]](values[0], grids[0][i])
            kept &= OPERATORS[ops[1]](values[1], grids[1][j])
            assert counts[g, i, j] == kept.sum()
            assert sums[g, i, j] == pytest.approx(pnl[kept].sum(), abs=1e-9)


def test_permuted_wins_equal_a_loop_over_rows_of_outcomes() -> None:
    rng = np.random.default_rng(2)
    values = rng.integers(0, 9, 200).astype(float)
    wins = rng.integers(0, 2, (5, 200)).astype(np.int8)
    grid = np.array([4.0, 0.0, 8.0, 9.5])
    for op in OPS:
        got = permuted_wins(values, grid, op, wins)
        want = [[int(w[OPERATORS[op](values, t)].sum()) for t in grid] for w in wins]
        assert got.tolist() == want


def token_frame(n: int = 400, seed: int = 4) -> pd.DataFrame:
    """Trades of 25 tokens (some tokens all wins), one criterion, current threshold 2."""
    rng = np.random.default_rng(seed)
    token = rng.integers(0, 25, n)
    x = rng.normal(size=n) + token / 25
    pnl = np.round(rng.normal(5 * (x - 0.5), 20.0), 2)
    frame = pd.DataFrame(
        {
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "token_id": pd.array(token + 1000, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(["DEGEN_CAP"] * n),
            "buy_cost_usd": np.round(rng.uniform(50, 500, n), 2),
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "x": x,
        }
    )
    frame.attrs["backtest"] = {
        "criteria": ("x",),
        "operators": {"x": "V_GTE_T"},
        "decided_thresholds": {(1, "DEGEN_CAP"): {"x": 0.0}},
    }
    return frame


@pytest.mark.parametrize("rule", ["filter", "replay"])
def test_what_if_rows_carry_tokens_flags_and_the_intervals_of_the_one_interval_module(
    rule: str,
) -> None:
    """Issue 21: every decision number of a what-if row, d_win_rate included, has its
    interval from ``uncertainty`` (tokens resampled), the same as ``what_if_intervals``; the
    row where nothing moved gets the rule of three, never [0, 0]; no Wilson interval."""
    frame = token_frame()
    grid = [-1.0, 0.0, 1.0, 2.2, 2.6]
    options = {} if rule == "filter" else {"playbook": playbook_of(frame)}
    table = bt.what_if(frame, "x", grid, rule=rule, **options)
    x, token = frame["x"].to_numpy(), frame["token_id"].to_numpy()
    if rule == "filter":
        for i, t in enumerate(grid):
            kept = x >= t
            assert table["tokens"].iloc[i] == len(set(token[kept]))
            small = kept.sum() < 30 or len(set(token[kept])) < 10
            assert table["small_sample"].iloc[i] == small
        assert table["small_sample"].tolist()[-2:] == [True, True]
        wilson_lo, _ = _guards.wilson(table["wins"].to_numpy(), table["trades"].to_numpy())
        assert not np.allclose(table["win_rate_lo"], wilson_lo)
    reference = bt.what_if_intervals(frame, "x", grid, rule=rule, **options)
    for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
        np.testing.assert_allclose(table[name], reference[name], rtol=1e-12, atol=1e-12)
        for side in ("_lo", "_hi"):
            np.testing.assert_allclose(table[name + side], reference[name + side], rtol=1e-12)
    assert table["moved_tokens"].tolist() == reference["moved_tokens"].tolist()
    assert table["interval"].tolist() == reference["interval"].tolist()
    current = table[table["is_current"]].iloc[0]
    assert current["interval"] == _guards.NO_MOVE
    assert current["moved_tokens"] == 0
    for name in ("d_win_rate", "d_total_pnl_usd", "d_roi"):
        assert current[name + "_lo"] < 0 < current[name + "_hi"], name
    info = table.attrs["what_if"]["guards"]
    assert info["bootstrap_unit"] == "token"
    assert info["bootstrap_resamples"] == 1000
    assert "Poisson bootstrap over whole tokens" in info["method"]
    assert (info["min_trades"], info["min_tokens"]) == (30, 10)
    # Seeded: the same call gives the same intervals.
    pd.testing.assert_frame_equal(bt.what_if(frame, "x", grid, rule=rule, **options), table)


def playbook_of(frame: pd.DataFrame) -> pd.DataFrame:
    """A playbook for ``token_frame``'s quant: ``x``, ``y`` and ``z`` (``y``, ``z`` made up
    here) of weight 1, none required, pass mark 60: two of three pass. A trade passing ``y``
    and ``z`` is kept whatever ``x``; one passing neither never is."""
    rng = np.random.default_rng(9)
    frame["y"], frame["z"] = rng.normal(size=len(frame)), rng.normal(size=len(frame))
    playbook = pd.DataFrame(
        {
            "market_cap_class": ["DEGEN_CAP"] * 3,
            "config_type": ["BUYING"] * 3,
            "criterion": ["x", "y", "z"],
            "threshold": [0.0, 0.0, 0.0],
            "weight": [1.0, 1.0, 1.0],
            "required": [False, False, False],
            "disabled": [False, False, False],
            "operator": ["V_GTE_T"] * 3,
            "pass_mark": [60.0] * 3,
        }
    )
    playbook.attrs["quantscope"] = {"quant_id": 1}
    return playbook


def test_grid_rows_count_tokens_too_and_big_sweeps_skip_the_bootstrap() -> None:
    frame = token_frame().assign(y=lambda f: np.round(f["pnl_usd"] % 7, 1))
    frame.attrs["backtest"] = {"operators": {"x": "V_GTE_T", "y": "V_LTE_T"}}
    grid = bt.what_if_grid(frame, ("x", "y"), ([-1.0, 0.5, 2.0], [1.0, 3.0, 6.0]), rule="filter")
    for row in grid.itertuples():
        kept = (frame["x"] >= row.x) & (frame["y"] <= row.y)
        assert row.tokens == frame.loc[kept, "token_id"].nunique()
    assert grid["d_total_pnl_usd_lo"].notna().all()
    big = bt.what_if(frame, "x", np.linspace(-3, 3, 600), rule="filter")
    assert big["d_roi_lo"].isna().all()
    assert big["win_rate_lo"].isna().all()
    assert big["tokens"].notna().all()
    assert big["interval"].isna().all()
    assert "600 threshold cells" in big.attrs["what_if"]["guards"]["bootstrap_skipped"]
    # A caller that reads few of many rows skips it explicitly; the rest is the same.
    grid_values = [-1.0, 0.0, 1.0]
    full = bt.what_if(frame, "x", grid_values, rule="filter")
    lean = bt.what_if(frame, "x", grid_values, rule="filter", bootstrap=False)
    assert lean["d_total_pnl_usd_lo"].isna().all()
    assert full["d_total_pnl_usd_lo"].notna().all()
    assert lean.attrs["what_if"]["guards"]["bootstrap_skipped"].endswith("(bootstrap=False)")
    left_out = (*_guards.INTERVAL_COLUMNS, "moved_tokens", "interval")
    assert lean[list(left_out)].isna().all().all()
    same = [c for c in full.columns if c not in left_out]
    pd.testing.assert_frame_equal(lean[same], full[same])


def test_without_token_ids_trades_are_the_bootstrap_unit() -> None:
    frame = token_frame().drop(columns="token_id")
    table = bt.what_if(frame, "x", [0.0, 1.0], rule="filter")
    assert table["tokens"].isna().all()
    assert table.attrs["what_if"]["guards"]["bootstrap_unit"] == "trade"
    assert table["d_total_pnl_usd_hi"].iloc[1] > table["d_total_pnl_usd_lo"].iloc[1]


def test_a_replayed_grid_has_intervals_where_rows_pass_on_either_criterion() -> None:
    """Issue 21: the replayed two-criterion grid (rows kept when either criterion passes) gets
    tokens and intervals too, their estimates the frame's own figures."""
    frame = token_frame()
    playbook = playbook_of(frame)
    grid = bt.what_if_grid(
        frame, ("x", "y"), ([-0.5, 0.0, 0.7], [-0.3, 0.0, 0.4]), playbook=playbook
    )
    assert grid.attrs["what_if"]["guards"]["bootstrap_resamples"] == 1000
    for name in _guards.INTERVAL_COLUMNS:
        assert grid[name].notna().all(), name
    inside = (grid["d_win_rate_lo"] <= grid["d_win_rate"]) & (
        grid["d_win_rate"] <= grid["d_win_rate_hi"]
    )
    assert inside.all()
    current = grid[grid["is_current"]].iloc[0]
    assert current["interval"] == _guards.NO_MOVE
    # Tokens by brute force: replay the playbook with both thresholds moved.
    from quantscope.backtest.replay import decide_rows

    for row in grid.itertuples():
        moved = playbook.copy()
        moved.loc[moved["criterion"] == "x", "threshold"] = row.x
        moved.loc[moved["criterion"] == "y", "threshold"] = row.y
        kept = decide_rows(moved, frame)["passed"].to_numpy(dtype=bool)
        assert row.trades == kept.sum()
        assert row.tokens == frame.loc[kept, "token_id"].nunique()
