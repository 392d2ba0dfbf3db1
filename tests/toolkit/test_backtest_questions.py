"""Issue 21 on synthetic frames: every what-if answer names its question, the two questions
side by side (``rule="both"``), and never-executed trades warn once (``_shadow``).

The sandbox's figures of the same behaviour (the showcase row, the rows where the filter lies
below the replay, Borealis' 683 shadow-holding trades) are in test_backtest_replay_default.
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import quantscope as qsc
from quantscope import backtest as bt
from quantscope.backtest import _shadow
from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES


def frame(n: int = 300, seed: int = 5, decisions: bool = False, driver: str = "x") -> pd.DataFrame:
    """Trades of 30 tokens, criteria ``x`` (what is swept), ``y`` and ``z``; the PnL rises
    with ``driver``."""
    rng = np.random.default_rng(seed)
    token = rng.integers(0, 30, n)
    x, y, z = rng.normal(size=(3, n))
    pnl = np.round(rng.normal(4 * {"x": x, "y": y, "z": z}[driver], 20.0), 2)
    out = pd.DataFrame(
        {
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "token_id": pd.array(token + 500, dtype="Int64"),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "market_cap_class": pd.Categorical(["LOW_CAP"] * n),
            "status": pd.Categorical(["Closed"] * n),
            "buy_cost_usd": np.round(rng.uniform(50, 500, n), 2),
            "pnl_usd": pnl,
            "profitable": pd.array(pnl > 0, dtype="boolean"),
            "x": x,
            "y": y,
            "z": z,
        }
    )
    if decisions:
        out["decision"] = np.where(
            np.arange(n) % 10 == 0,
            "REJECT",
            np.where(np.arange(n) % 25 == 1, "RECOMMEND", "APPROVE"),
        )
    out.attrs["backtest"] = {"criteria": ("x", "y", "z")}
    return out


def playbook() -> pd.DataFrame:
    """Three criteria of weight 1, none required, pass mark 60: two of three pass."""
    out = pd.DataFrame(
        {
            "market_cap_class": ["LOW_CAP"] * 3,
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
    out.attrs["quantscope"] = {"quant_id": 1}
    return out


GRID = [-1.0, -0.5, 0.0, 0.5, 1.0]


def test_every_what_if_frame_names_its_question_and_no_upper_bound() -> None:
    """The filter was labelled an UPPER BOUND of the replay; it bounds nothing."""
    assert {
        "replay": QUESTION_LABELS["effect"],
        "filter": QUESTION_LABELS["signal"],
    } == bt.RULE_LABELS
    for rule, question in (("replay", "effect"), ("filter", "signal")):
        table = bt.what_if(frame(), "x", GRID, playbook=playbook(), rule=rule)
        info = table.attrs["what_if"]
        assert (info["rule"], info["question"]) == (rule, question)
        assert info["label"] == QUESTION_LABELS[question]
        assert info["note"].startswith(QUESTION_NOTES[question])
        assert "upper_bound" not in info
        grid = bt.what_if_grid(
            frame(), ("x", "y"), ([0.0, 0.5], [0.0]), playbook=playbook(), rule=rule
        )
        assert grid.attrs["what_if"]["question"] == question
    side = bt.compare_playbooks(playbook(), playbook(), frame())
    assert side.attrs["compare_playbooks"]["question"] == "effect"
    for name in ("backtest.sweep", "backtest.crosscheck", "backtest.compare", "plots.whatif"):
        module = importlib.import_module(f"quantscope.{name}")
        text = Path(module.__file__ or "").read_text().lower()
        assert "upper bound" not in text, name
        assert 'upper_bound"' not in text, name


def test_the_filter_keeps_trades_whose_win_rate_lies_below_the_replayed_one() -> None:
    """Neither question bounds the other: when the outcome rides on another criterion of the
    playbook, the trades the filter keeps do worse than those the replayed rule keeps."""
    trades = frame(driver="y")
    effect = bt.what_if(trades, "x", GRID, playbook=playbook())
    signal = bt.what_if(trades, "x", GRID, playbook=playbook(), rule="filter")
    assert (signal["win_rate"] < effect["win_rate"]).all()
    assert (signal["trades"] < effect["trades"]).any()


def test_both_questions_side_by_side_in_one_frame() -> None:
    both = bt.what_if(frame(), "x", GRID, playbook=playbook(), rule="both")
    effect = bt.what_if(frame(), "x", GRID, playbook=playbook())
    signal = bt.what_if(frame(), "x", GRID, playbook=playbook(), rule="filter")
    assert list(both.columns[:3]) == ["threshold", "is_current", "admits_unseen"]
    for question, alone in (("effect", effect), ("signal", signal)):
        for name in ("trades", "tokens", "moved_tokens", "win_rate", "d_win_rate", "d_roi"):
            np.testing.assert_array_equal(both[f"{question}_{name}"], alone[name])
        for name in ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi"):
            for side in ("_lo", "_hi"):
                np.testing.assert_array_equal(both[f"{question}_{name}{side}"], alone[name + side])
                assert both[f"{question}_{name}{side}"].notna().all()
    assert not {"win_rate", "d_win_rate", "trades"} & set(both.columns)
    info = both.attrs["what_if"]
    assert info["question"] == ("effect", "signal")
    assert info["rule"] == "both"
    assert info["questions"]["signal"]["question"] == "signal"
    with pytest.raises(ValueError, match="rule must be one of"):
        bt.what_if(frame(), "x", GRID, playbook=playbook(), rule="upper")


def test_never_executed_trades_warn_once_and_are_recorded() -> None:
    shadowed = frame(decisions=True)
    with pytest.warns(qsc.ShadowOutcomesWarning, match="what_if: 42 of 300 rows") as caught:
        table = bt.what_if(shadowed, "x", GRID, playbook=playbook(), rule="both")
    assert len(caught) == 1
    assert caught[0].filename == __file__
    assert table.attrs["shadow"]["by_decision"] == {"RECOMMEND": 12, "REJECT": 30}
    assert table.attrs["shadow"]["rows"] == 42
    # rank_criteria calls what_if per criterion: still one warning.
    with pytest.warns(qsc.ShadowOutcomesWarning) as caught:
        ranked = bt.rank_criteria(shadowed, ["x", "y"], playbook=playbook(), flips=0)
    assert len(caught) == 1
    assert ranked.attrs["shadow"]["rows"] == 42
    # Simulated entries are the researcher's estimates, not shadow trades.
    simulated = shadowed.assign(simulated=pd.array([True] * len(shadowed), dtype="boolean"))
    assert _shadow.shadow_rows(simulated) is None
    # Executed trades only: silent, no record.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = bt.what_if(frame(decisions=False), "x", GRID, playbook=playbook())
    assert "shadow" not in plain.attrs
    assert issubclass(qsc.ShadowOutcomesWarning, qsc.QuantscopeWarning)
