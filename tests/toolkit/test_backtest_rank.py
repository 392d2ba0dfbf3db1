"""rank_criteria: per market-cap class, the signal tested by flipping whole tokens over the
whole search (family-wise), the replayed effect beside it.

Hand-made frames with a known signal; the sandbox world's planted criteria are checked in
test_backtest_rank_sandbox.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantscope import backtest as bt
from quantscope.backtest.questions import QUESTION_LABELS


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


def clustered_frame(seed: int, tokens: int = 30, per: int = 20) -> pd.DataFrame:
    """Trades that cluster by token: each token has its own luck (a shared random effect on
    every trade's outcome), ``signal`` predicts the outcome trade by trade, ``followers`` and
    ``members`` are token traits drawn independently of everything (noise)."""
    rng = np.random.default_rng(seed)
    n = tokens * per
    token = np.repeat(np.arange(tokens), per)
    luck = rng.normal(0.0, 1.0, tokens)[token]
    signal = rng.normal(size=n)
    pnl = np.where(0.8 * signal + luck + rng.normal(size=n) > 0, 10.0, -10.0)
    frame = pd.DataFrame(
        {
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "token_id": pd.array(token, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(["DEGEN_CAP"] * n),
            "buy_cost_usd": 100.0,
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "signal": signal,
            "followers": rng.lognormal(size=tokens)[token],
            "members": rng.lognormal(size=tokens)[token],
        }
    )
    ops = {"signal": "V_GTE_T", "followers": "V_GTE_T", "members": "V_GTE_T"}
    frame.attrs["backtest"] = {"criteria": tuple(ops), "operators": ops}
    return frame


def test_a_token_trait_is_not_significant_when_trades_cluster_by_token() -> None:
    """Trade-by-trade permutations took a trait that lines up with a few lucky tokens for a
    signal: the noise traits were significant at 5 % in 14 of 20 such families (7 of these
    10). Flipping whole tokens, in 2 of 20 (0 of these 10); the real signal always is."""
    tables = [bt.rank_criteria(clustered_frame(s), rule="filter", points=21) for s in range(10)]
    noise = planted = 0
    for ranked in tables:
        rows = ranked.set_index("criterion")
        noise += int((rows.loc[["followers", "members"], "p_value"] < 0.05).any())
        planted += int(rows.loc["signal", "p_value"] < 0.05)
    assert noise <= 1
    assert planted == 10
    for ranked in tables:  # the simultaneous interval says what the test says
        assert (ranked["significant"] == (ranked["signal_lo"] > 0)).all()


def test_rank_criteria_states_its_question_search_and_test() -> None:
    frame = one_signal_frame(600, 4, inverse=False)
    ranked = bt.rank_criteria(frame, flips=199)
    info = ranked.attrs["rank_criteria"]
    assert info["question"] == "signal"
    assert info["rule"] == "filter"
    assert info["label"] == QUESTION_LABELS["signal"]
    assert "sign flip of whole tokens" in info["test"]
    assert "max-T" in info["test"]
    assert info["hypotheses"] == len(ranked) == 2
    assert info["combos_searched"] == ranked["thresholds_searched"].sum() > 2
    assert (ranked["hypotheses"] == 2).all()
    assert (ranked["combos_searched"] == info["combos_searched"]).all()
    assert not info["effect_available"]  # no playbook: the effect columns are NaN
    assert info["untested"] == []
    assert ranked["effect_d_win_rate"].isna().all()
    assert "upper" not in repr(info).lower()
    best = ranked.iloc[0]
    assert best["criterion"] == "signal"
    assert best["significant"]
    assert best["signal_lo"] > 0
    assert best["signal_lo"] < best["signal"] < best["signal_hi"]
    # One quant: the signal is the kept trades' win rate less the dropped ones'.
    rows = frame[frame["signal"].notna()]
    kept = rows["signal"] >= best["threshold"]
    wins = rows["profitable"].astype(bool)
    assert best["signal"] == pytest.approx(wins[kept].mean() - wins[~kept].mean(), abs=1e-12)
    assert best["win_rate"] == pytest.approx(wins[kept].mean(), abs=1e-12)
    assert best["win_rate_lo"] < best["win_rate"] < best["win_rate_hi"]


def test_rank_criteria_puts_the_informative_criterion_first() -> None:
    frame = one_signal_frame(2000, 3, inverse=True)
    ranked = bt.rank_criteria(frame, rule="filter", flips=200, resamples=200)
    assert set(ranked["criterion"][:2]) == {"signal", "inverse"}
    assert ranked["criterion"].iloc[-1] == "noise"
    best = ranked.iloc[0]
    assert best["kept_share"] >= 0.3
    assert best["mean_gain"] > 0.1 > ranked["mean_gain"].iloc[-1]


def test_rank_criteria_sorts_by_sort_by_and_the_old_by_warns() -> None:
    frame = one_signal_frame(400, 5, inverse=False)
    best = bt.rank_criteria(frame, sort_by="best_gain", resamples=100)
    assert best["best_gain"].is_monotonic_decreasing
    with pytest.warns(DeprecationWarning, match=r"rank_criteria\(by=\.\.\.\) is deprecated"):
        old = bt.rank_criteria(frame, by="best_gain", resamples=100)
    pd.testing.assert_frame_equal(old, best)
    with pytest.warns(DeprecationWarning, match=r"permutations=\.\.\.\) is deprecated.*flips="):
        old = bt.rank_criteria(frame, permutations=99, resamples=100)
    pd.testing.assert_frame_equal(old, bt.rank_criteria(frame, flips=99, resamples=100))
    with pytest.raises(
        ValueError, match="sort_by must be 'p_value', 'mean_gain' or 'best_gain', got 'x'"
    ):
        bt.rank_criteria(frame, sort_by="x", rule="filter")


def test_rank_criteria_ranks_within_each_class_with_an_adjusted_p_value() -> None:
    frame = signal_frame(1200, 8, ("LOW_CAP", "DEGEN_CAP"))
    ranked = bt.rank_criteria(frame, flips=99, seed=1)
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
    assert ranked["significant"].tolist() == (ranked["p_value"] < 0.05).tolist()
    assert (ranked["signal_lo"] <= ranked["signal"]).all()
    assert (ranked["signal"] <= ranked["signal_hi"]).all()
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
    pd.testing.assert_frame_equal(bt.rank_criteria(frame, flips=99, seed=1), ranked)


def test_rank_criteria_without_permutations_and_via_the_old_module() -> None:
    frame = signal_frame(300, 9)
    ranked = bt.rank_criteria(frame, flips=0)
    assert ranked["p_value"].isna().all()
    assert ranked["signal_lo"].isna().all()
    assert not ranked["significant"].any()
    assert ranked["criterion"].tolist() == ["signal", "noise"]  # ties: by mean gain
    from quantscope.backtest.sweep import rank_criteria

    assert rank_criteria is bt.rank_criteria
