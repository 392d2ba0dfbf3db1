"""The pass rule as the toolkit implements it (docs/service-contract.md, "The pass rule")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantscope.backtest import _rules
from quantscope.backtest._rules import (
    RuleSlice,
    decide,
    is_looser,
    market_cap_class,
    playbook_slices,
    playbooks_by_quant,
    searchsorted_side,
)


def slice_of(**overrides: object) -> RuleSlice:
    """Three criteria: a >= 2 (weight 3, required), b <= 10 (weight 1), c > 0 (weight 1)."""
    base: dict[str, object] = {
        "criteria": ("a", "b", "c"),
        "thresholds": np.array([2.0, 10.0, 0.0]),
        "weights": np.array([3.0, 1.0, 1.0]),
        "required": np.array([True, False, False]),
        "disabled": np.array([False, False, False]),
        "operators": ("V_GTE_T", "V_LTE_T", "V_GT_T"),
        "pass_mark": 80.0,
    }
    base.update(overrides)
    return RuleSlice(**base)  # type: ignore[arg-type]


def test_score_is_the_weighted_share_of_passed_criteria_rounded_to_two_decimals() -> None:
    values = np.array(
        [
            [2.0, 10.0, 1.0],  # all pass: 100
            [2.0, 11.0, 1.0],  # b fails: 4/5 = 80, passes the mark exactly
            [2.0, 11.0, 0.0],  # b and c fail: 60
            [1.0, 10.0, 1.0],  # required a fails: 40, and fails whatever the score
        ]
    )
    verdict = decide(slice_of(), values)
    assert verdict.internal_score.tolist() == [100.0, 80.0, 60.0, 40.0]
    assert verdict.required_ok.tolist() == [True, True, True, False]
    assert verdict.passed.tolist() == [True, True, False, False]
    thirds = decide(slice_of(weights=np.array([1.0, 1.0, 1.0]), pass_mark=0.0), values[2:3])
    assert thirds.internal_score.tolist() == [33.33]


def test_disabled_criteria_neither_score_nor_require() -> None:
    rules = slice_of(disabled=np.array([True, False, False]))
    verdict = decide(rules, np.array([[-5.0, 10.0, 1.0], [-5.0, 11.0, 1.0]]))
    assert verdict.internal_score.tolist() == [100.0, 50.0]
    assert verdict.passed.tolist() == [True, False]
    nothing = slice_of(disabled=np.array([True, True, True]), pass_mark=0.0)
    assert decide(nothing, np.array([[0.0, 0.0, 0.0]])).internal_score.tolist() == [0.0]


def test_missing_values_fail_and_forced_criteria_pass() -> None:
    values = np.array([[np.nan, 10.0, 1.0]])
    assert decide(slice_of(), values).passed.tolist() == [False]
    assert decide(slice_of(), values, forced=[0]).passed.tolist() == [True]


@pytest.mark.parametrize(
    ("market_cap", "expected"),
    [(0.0, "DEGEN_CAP"), (999_999.99, "DEGEN_CAP"), (1e6, "LOW_CAP"), (1e7, "MID_CAP")],
)
def test_market_cap_class_bounds_are_inclusive_below(market_cap: float, expected: str) -> None:
    assert list(market_cap_class(np.array([market_cap]))) == [expected]


def test_market_cap_class_keeps_missing_values_missing() -> None:
    assert market_cap_class(np.array([np.nan])).isna().tolist() == [True]


@pytest.mark.parametrize(
    ("operator", "side", "looser"),
    [
        ("V_GTE_T", "left", [True, False, False]),
        ("V_GT_T", "right", [True, False, False]),
        ("V_LTE_T", "right", [False, False, True]),
        ("V_LT_T", "left", [False, False, True]),
    ],
)
def test_operator_direction(operator: str, side: str, looser: list[bool]) -> None:
    assert searchsorted_side(operator) == side
    assert is_looser(operator, np.array([1.0, 2.0, 3.0]), 2.0).tolist() == looser


def playbook_frame(quant_id: int | None = 1) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "market_cap_class": ["DEGEN_CAP", "DEGEN_CAP", "DEGEN_CAP"],
            "config_type": ["BUYING", "BUYING", "SCANNING"],
            "criterion": ["a", "b", "a"],
            "interval": ["noTime"] * 3,
            "threshold": [2.0, 10.0, 1.0],
            "weight": [3.0, 1.0, 1.0],
            "required": pd.array([True, None, False], dtype="boolean"),
            "disabled": pd.array([False, False, False], dtype="boolean"),
            "operator": ["V_GTE_T", "V_LTE_T", None],
            "pass_mark": [70.0, 70.0, 50.0],
        }
    )
    if quant_id is not None:
        frame.attrs["quantscope"] = {"quant_id": quant_id}
    return frame


def test_playbook_frame_becomes_slices_with_defaults_for_missing_flags() -> None:
    slices = playbook_slices(playbook_frame())
    buying = slices["DEGEN_CAP", "BUYING"]
    assert buying.criteria == ("a", "b")
    assert buying.required.tolist() == [True, False]
    assert buying.pass_mark == 70.0
    assert slices["DEGEN_CAP", "SCANNING"].operators == ("V_GTE_T",)


def test_playbook_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="several entries"):
        playbook_slices(pd.concat([playbook_frame(), playbook_frame()]))
    with pytest.raises(ValueError, match="lacks the columns"):
        playbook_slices(playbook_frame().drop(columns="pass_mark"))
    with pytest.raises(ValueError, match="unknown operator"):
        playbook_slices(playbook_frame().assign(operator="V_EQ_T"))
    with pytest.raises(ValueError, match="quant 1's, but the rows include quants \\[2\\]"):
        playbooks_by_quant(playbook_frame(), {1, 2})
    with pytest.raises(ValueError, match="no playbook given for quants \\[3\\]"):
        playbooks_by_quant({1: playbook_frame()}, {1, 3})
    assert set(playbooks_by_quant(playbook_frame(None), {5, 6})) == {5, 6}


# A playbook is compiled once and reused while its rule columns are unchanged (issue 22:
# research replays the same playbook hundreds of times; compiling it was ~45 % of a ranking).


def test_the_same_playbook_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rules, "_COMPILED", {})
    calls: list[int] = []
    real = _rules._compile

    def counted(frame):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(frame)

    monkeypatch.setattr(_rules, "_compile", counted)
    first = playbook_slices(playbook_frame())
    again = playbook_slices(playbook_frame())  # another frame, equal rule columns
    assert len(calls) == 1
    assert again.keys() == first.keys()
    assert again is not first
    buying = again["DEGEN_CAP", "BUYING"]
    assert buying.thresholds.tolist() == [2.0, 10.0]
    with pytest.raises(ValueError, match="read-only"):
        buying.thresholds[0] = 99.0  # a shared compiled slice cannot be edited in place


@pytest.mark.parametrize(
    ("column", "value"),
    [("threshold", 3.0), ("weight", 2.0), ("required", False), ("operator", "V_LTE_T")],
)
def test_an_edited_playbook_is_compiled_anew(
    monkeypatch: pytest.MonkeyPatch, column: str, value: object
) -> None:
    monkeypatch.setattr(_rules, "_COMPILED", {})
    before = playbook_slices(playbook_frame())["DEGEN_CAP", "BUYING"]
    edited = playbook_frame()
    edited.loc[0, column] = value
    after = playbook_slices(edited)["DEGEN_CAP", "BUYING"]
    field = {"threshold": "thresholds", "weight": "weights"}.get(column, column)
    if field == "operator":
        assert after.operators[0] == "V_LTE_T" != before.operators[0]
    else:
        got = getattr(after, field if field != "required" else "required")
        assert not np.array_equal(got, getattr(before, field))


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_rules, "_COMPILED", {})
    for t in range(_rules._COMPILED_MAX + 5):
        frame = playbook_frame()
        frame.loc[0, "threshold"] = float(t)
        playbook_slices(frame)
    assert len(_rules._COMPILED) == _rules._COMPILED_MAX
