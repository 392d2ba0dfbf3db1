"""rank_criteria: per market-cap class, adjusted for the search by a seeded permutation test.

Hand-made frames with a known signal; the sandbox world's planted criteria are checked in
test_backtest_rank_sandbox.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantscope import backtest as bt


def signal_frame(n: int, seed: int, classes: tuple[str, ...] = ("DEGEN_CAP",)) -> pd.DataFrame:
    """Trades whose outcome follows ``signal`` in the first class only; ``noise`` is noise."""
    rng = np.random.default_rng(seed)
    klass = np.array(classes)[rng.integers(0, len(classes), n)]
    signal = rng.normal(size=n)
    informative = klass == classes[0]
    pnl = np.where(np.where(informative, signal, 0.0) + rng.normal(size=n) > 0, 10.0, -10.0)
    frame = pd.DataFrame(
        {
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "token_id": pd.array(rng.integers(0, n // 4, n), dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(klass),
            "buy_cost_usd": 100.0,
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "signal": signal,
            "noise": rng.normal(size=n),
        }
    )
    frame.attrs["backtest"] = {
        "criteria": ("signal", "noise"),
        "operators": {"signal": "V_GTE_T", "noise": "V_GTE_T"},
        "decided_thresholds": {(1, c): {"signal": 0.0, "noise": 0.0} for c in classes},
    }
    return frame


def one_signal_frame(n: int, seed: int, inverse: bool) -> pd.DataFrame:
    """One class of ``n`` trades: ``signal`` predicts the outcome, ``noise`` does not
    (``inverse``, the signal negated under ``V_LTE_T``, when asked)."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=n)
    pnl = np.where(signal + rng.normal(size=n) > 0, 10.0, -10.0)
    frame = pd.DataFrame(
        {
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(["DEGEN_CAP"] * n),
            "buy_cost_usd": 100.0,
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "signal": signal,
            "noise": rng.normal(size=n),
        }
    )
    operators = {"signal": "V_GTE_T", "noise": "V_GTE_T"}
    if inverse:
        frame["inverse"] = -signal
        operators["inverse"] = "V_LTE_T"
    frame.attrs["backtest"] = {"criteria": tuple(operators), "operators": operators}
    return frame


def test_rank_criteria_puts_the_informative_criterion_first() -> None:
    frame = one_signal_frame(2000, 3, inverse=True)
    ranked = bt.rank_criteria(frame, rule="filter")
    assert set(ranked["criterion"][:2]) == {"signal", "inverse"}
    assert ranked["criterion"].iloc[-1] == "noise"
    best = ranked.iloc[0]
    assert best["kept_share"] >= 0.3
    assert best["mean_gain"] > 0.1 > ranked["mean_gain"].iloc[-1]


def test_rank_criteria_sorts_by_sort_by_and_the_old_by_warns() -> None:
    frame = one_signal_frame(400, 5, inverse=False)
    best = bt.rank_criteria(frame, sort_by="best_gain", rule="filter")
    assert best["best_gain"].is_monotonic_decreasing
    with pytest.warns(DeprecationWarning, match=r"rank_criteria\(by=\.\.\.\) is deprecated"):
        old = bt.rank_criteria(frame, by="best_gain", rule="filter")
    pd.testing.assert_frame_equal(old, best)
    with pytest.raises(
        ValueError, match="sort_by must be 'p_value', 'mean_gain' or 'best_gain', got 'x'"
    ):
        bt.rank_criteria(frame, sort_by="x", rule="filter")


def test_rank_criteria_ranks_within_each_class_with_an_adjusted_p_value() -> None:
    frame = signal_frame(1200, 8, ("LOW_CAP", "DEGEN_CAP"))
    ranked = bt.rank_criteria(frame, permutations=99, seed=1, rule="filter")
    # Classes smallest first, each ranked on its own rows.
    assert ranked["market_cap_class"].tolist() == ["DEGEN_CAP"] * 2 + ["LOW_CAP"] * 2
    assert ranked["rank"].tolist() == [1, 2, 1, 2]
    low = ranked[ranked["market_cap_class"] == "LOW_CAP"].set_index("criterion")
    degen = ranked[ranked["market_cap_class"] == "DEGEN_CAP"].set_index("criterion")
    assert low.index[0] == "signal"
    assert low.loc["signal", "p_value"] == 0.01  # no reshuffle came close: 1 / (99 + 1)
    assert low.loc["noise", "p_value"] > 0.05
    assert degen["p_value"].min() > 0.05  # the signal means nothing there
    # The adjustment: the whole search is the family, so p_value >= p_raw.
    assert (ranked["p_value"] >= ranked["p_raw"]).all()
    assert (ranked["combos_searched"] == ranked["thresholds_searched"].sum()).all()
    assert ranked.attrs["rank_criteria"]["combos_searched"] == ranked["thresholds_searched"].sum()
    # The counts behind the best row, and the current threshold it is measured against.
    for _, row in ranked.iterrows():
        rows = frame[frame["market_cap_class"] == row["market_cap_class"]]
        kept = rows[rows[row["criterion"]] >= row["threshold"]]
        assert row["trades"] == len(kept)
        assert row["tokens"] == kept["token_id"].nunique()
        assert row["win_rate_lo"] <= row["win_rate"] <= row["win_rate_hi"]
        assert row["current"] == 0.0
    # Seeded: the same call, the same p-values; another seed, close ones.
    pd.testing.assert_frame_equal(
        bt.rank_criteria(frame, permutations=99, seed=1, rule="filter"), ranked
    )


def test_rank_criteria_without_permutations_and_via_the_old_module() -> None:
    frame = signal_frame(300, 9)
    ranked = bt.rank_criteria(frame, permutations=0, rule="filter")
    assert ranked["p_value"].isna().all()
    assert ranked["criterion"].tolist() == ["signal", "noise"]  # ties: by mean gain
    from quantscope.backtest.sweep import rank_criteria

    assert rank_criteria is bt.rank_criteria
