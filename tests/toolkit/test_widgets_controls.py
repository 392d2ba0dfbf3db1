"""The threshold control's value lists and text, on hand-made playbook rows (no service).

The panel-level facts (every class x criterion of the sandbox's playbook, a browser's
snapping rule, writes) are in ``test_widgets_threshold_browser.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from quantscope.widgets._controls import (
    MAX_WHOLE,
    ThresholdControl,
    exact_text,
    is_whole,
    parse_value,
    stops,
)

OPTIONS = {"options": [{"id": i, "label": str(i)} for i in range(4)]}


def row(threshold: float, low: float | None = 0.0, high: float | None = 50.0, **extra: Any):
    return pd.Series(
        {
            "criterion": "c",
            "market_cap_class": "DEGEN_CAP",
            "config_type": "BUYING",
            "threshold": threshold,
            "range_min": np.nan if low is None else low,
            "range_max": np.nan if high is None else high,
            "extra_info": extra.get("extra_info", {"operator": "V_GTE_T"}),
        }
    )


def test_exact_text_reads_back_as_the_same_float() -> None:
    for value in (2.0, 0.9, -8.0, 1.23457, 0.1 + 0.2, 2.045, 15000.0, -0.2, 1e-7, 3.09):
        assert float(exact_text(value)) == value
    assert (exact_text(2.0), exact_text(0.9), exact_text(15000.0)) == ("2", "0.9", "15000")
    assert exact_text(0.1 + 0.2) == "0.30000000000000004"  # exact: never a rounded stand-in


def test_parse_value_is_exact_and_refuses_in_one_line() -> None:
    assert parse_value(" 2.045 ") == 2.045
    assert parse_value("1e3") == 1000.0
    for text, why in (("abc", "not a number"), ("", "not a number"), ("inf", "not a finite")):
        with pytest.raises(ValueError, match=why):
            parse_value(text)
    with pytest.raises(ValueError, match="not a number"):
        parse_value("1,5")  # a decimal comma is not silently read as 15


def test_whole_numbers_are_decided_by_options_or_by_every_observed_value() -> None:
    counts = pd.Series([2.0, 9.0, 0.0, 3.0, np.nan])
    assert is_whole(counts, row(2.0))
    assert is_whole(counts, row(3.09))  # a fraction written earlier does not make it continuous
    assert not is_whole(pd.Series([2.0, 9.5]), row(2.0))
    assert not is_whole(counts, row(2.0, 0.0, 0.5))  # a fractional range bound
    assert not is_whole(pd.Series([], dtype="float64"), row(2.0))  # no evidence: continuous
    assert is_whole(pd.Series([], dtype="float64"), row(2.0, None, None, extra_info=OPTIONS))


def test_stops_hold_the_threshold_exactly() -> None:
    # options: the ids, whatever the values
    assert stops([], row(2.0, None, None, extra_info=OPTIONS), whole=True) == (0.0, 1.0, 2.0, 3.0)
    # whole numbers: every one of a small range, so a key press moves by exactly 1
    assert stops([1.0, 2.0, 7.0], row(2.0), whole=True) == tuple(float(v) for v in range(51))
    # a fraction already in the playbook is kept exactly among the whole numbers
    held = stops([1.0, 2.0, 7.0], row(3.09), whole=True)
    assert 3.09 in held
    assert held[:5] == (0.0, 1.0, 2.0, 3.0, 3.09)
    assert len(held) == 52
    # continuous: rounded quantiles (3 significant digits) within the range, plus the value
    values = np.random.default_rng(7).lognormal(10, 1.5, 500)
    found = stops(values, row(15157.4, 0.0, 5e6), whole=False)
    assert 15157.4 in found
    assert list(found) == sorted(found)
    assert all(v == float(f"{v:.3g}") for v in found if v != 15157.4)
    assert all(0.0 <= v <= 5e6 for v in found)
    assert 50 < len(found) <= 202
    # no values: the range, evenly
    assert stops([], row(0.9, 0.0, 10.0), whole=False)[:3] == (0.0, 0.05, 0.1)
    # a wide whole-number span falls back to rounded quantiles, whole
    wide = stops(np.arange(0.0, 10 * MAX_WHOLE), row(800.0, 0.0, 1e6), whole=True)
    assert 800.0 in wide
    assert all(v.is_integer() for v in wide)
    assert len(wide) <= 202


def test_the_control_moves_by_index_and_refuses_typed_values_it_is_told_to() -> None:
    moved: list[float] = []
    errors: list[str] = []
    control = ThresholdControl(moved.append, lambda v: "too big" if v > 10 else None, errors.append)
    control.reset((0.0, 0.5, 1.0), 0.5)
    assert (control.slider.min, control.slider.max, control.slider.step) == (0, 2, 1)
    assert control.slider.value == 1
    assert control.text.value == "0.5"
    assert moved == []
    control.slider.value = 2  # the user moves the handle one stop right
    assert moved == [1.0]
    assert control.text.value == "1"
    control.text.value = "0.75"  # typed: joins the list, exactly
    assert moved == [1.0, 0.75]
    assert control.values == (0.0, 0.5, 0.75, 1.0)
    assert control.value == 0.75
    assert control.slider.value == 2
    control.text.value = "12"
    assert errors == ["too big"]
    assert control.text.value == "0.75"
    assert moved[-1] == 0.75
    control.text.value = "x"
    assert errors[-1] == "'x' is not a number"
    assert control.value == 0.75
    control.set(0.5)  # from code: no on_change, and the typed value leaves the list
    assert control.values == (0.0, 0.5, 1.0)
    assert control.value == 0.5
    assert len(moved) == 2
    with pytest.raises(ValueError, match="not among"):
        control.reset((0.0, 1.0), 0.5)
    assert "qs-threshold-slider" in control.slider._dom_classes
    assert "qs-threshold-text" in control.text._dom_classes
