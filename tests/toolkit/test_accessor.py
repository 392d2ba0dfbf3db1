"""The ``df.quant`` accessor: which frame it is on, what it needs, and that it changes nothing."""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _helpers import EVALS, HAND, details_frame

import quantscope.accessor  # registers df.quant
from quantscope import analytics as A
from quantscope._errors import MissingColumnsError, QuantscopeError
from quantscope._kinds import FRAME_KINDS, frame_kind
from quantscope.accessor import QuantAccessor

SIGNALS = pd.DataFrame({"chain": ["SOLANA", "BASE"], "stage": ["BUY", "WATCH"]}).astype("category")


def snapshot(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    return frame.copy(deep=True), dict(frame.attrs)


def test_the_accessor_is_registered_and_rebuilt_on_every_access() -> None:
    assert isinstance(HAND.quant, QuantAccessor)
    assert HAND.quant is not HAND.quant  # pandas makes a new one each time: nothing to keep
    assert quantscope.accessor.__all__ == sorted(quantscope.accessor.__all__)


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (HAND, "trades"),
        (EVALS, "evaluations"),
        (details_frame().assign(evaluation_type="TOKEN_BUY"), "criteria"),  # not evaluations
        (SIGNALS, "signals"),
        (pd.DataFrame({"x": [1]}), None),
    ],
)
def test_the_kind_comes_from_the_columns(frame: pd.DataFrame, kind: str | None) -> None:
    assert frame.quant.kind == kind == frame_kind(frame)


def test_trade_methods_delegate_to_analytics() -> None:
    pd.testing.assert_series_equal(HAND.quant.summary(), A.summary(HAND))
    pd.testing.assert_series_equal(
        HAND.quant.summary(capital=1_000, include_open=True),
        A.summary(HAND, capital=1_000, include_open=True),
    )
    pd.testing.assert_frame_equal(
        HAND.quant.by(["quant_name", "chain"], freq="W"),
        A.by(HAND, ["quant_name", "chain"], freq="W"),
    )
    assert HAND.quant.win_rate() == A.win_rate(HAND) == 3 / 8
    assert HAND.quant.roi(include_open=True) == A.roi(HAND, include_open=True)
    pd.testing.assert_frame_equal(HAND.quant.equity_curve(), A.equity_curve(HAND))
    pd.testing.assert_frame_equal(HAND.quant.drawdown(capital=500), A.drawdown(HAND, capital=500))
    pd.testing.assert_series_equal(HAND.quant.daily_pnl(), A.daily_pnl(HAND))
    pd.testing.assert_series_equal(HAND.quant.daily_returns(), A.daily_returns(HAND))


def test_evaluation_and_signal_methods_delegate_to_analytics() -> None:
    details = details_frame()
    assert EVALS.quant.pass_rate() == A.pass_rate(EVALS)
    assert details.quant.pass_rate() == A.pass_rate(details)
    pd.testing.assert_frame_equal(
        EVALS.quant.pass_rates("chain", freq="D"), A.pass_rates(EVALS, "chain", freq="D")
    )
    pd.testing.assert_frame_equal(
        details.quant.pass_rates(["category"]), A.pass_rates(details, "category")
    )
    trades = HAND.assign(evaluation_id=pd.array([11, 12, 13, 14, 15, 16, 17, 18, 19], "Int64"))
    pd.testing.assert_frame_equal(
        details.quant.values_by_outcome(trades), A.values_by_outcome(details, trades)
    )
    pd.testing.assert_frame_equal(SIGNALS.quant.stage_counts(), A.stage_counts(SIGNALS))


def test_a_method_on_the_wrong_frame_names_what_is_missing_and_the_loader() -> None:
    with pytest.raises(MissingColumnsError) as caught:
        EVALS.quant.summary()
    assert str(caught.value) == (
        "summary() needs a trades frame: missing columns trade_id, status, opened_at, "
        "closed_at, duration_s, pnl_usd, buy_cost_usd; load one with qsc.load_trades()"
    )
    assert caught.value.method == "summary"
    assert caught.value.missing == A.TRADE_COLUMNS
    with pytest.raises(MissingColumnsError) as caught:
        HAND.drop(columns=["pnl_usd", "opened_at"]).quant.win_rate()
    assert str(caught.value) == (
        "win_rate() needs a trades frame: missing columns opened_at, pnl_usd; "
        "load one with qsc.load_trades()"
    )
    with pytest.raises(MissingColumnsError, match=r"^stage_counts\(\) needs a signals frame"):
        HAND.quant.stage_counts()
    with pytest.raises(
        MissingColumnsError,
        match=r"^pass_rate\(\) needs an evaluations frame or a criterion frame: missing columns "
        r"passed; load one with qsc.load_evaluations\(\) or qsc.load_eval_details\(\)$",
    ):
        HAND.quant.pass_rate()
    with pytest.raises(MissingColumnsError, match="missing columns created_at"):
        details_frame().drop(columns="created_at").quant.pass_rates(freq="D")
    with pytest.raises(MissingColumnsError, match=r"^values_by_outcome\(\) needs a criterion"):
        EVALS.quant.values_by_outcome(HAND)


def test_a_wrong_argument_frame_is_named_as_the_argument() -> None:
    with pytest.raises(MissingColumnsError) as caught:
        details_frame().quant.values_by_outcome(EVALS)
    assert str(caught.value) == (
        "values_by_outcome() needs a trades frame as its trades: missing columns status, "
        "pnl_usd; load one with qsc.load_trades()"
    )


def test_grouping_by_a_missing_column_names_it() -> None:
    message = r"^by\(\) cannot group by missing columns chian, tokn; the frame has trade_id, "
    with pytest.raises(MissingColumnsError, match=message):
        HAND.quant.by(["chian", "chain", "tokn"])
    with pytest.raises(MissingColumnsError, match="cannot group by missing columns kind"):
        EVALS.quant.pass_rates("kind")


def test_missing_columns_error_is_in_the_tree_and_a_key_error() -> None:
    with pytest.raises(QuantscopeError):
        EVALS.quant.roi()
    with pytest.raises(KeyError):
        EVALS.quant.roi()


def test_every_kind_names_a_loader() -> None:
    for name, kind in FRAME_KINDS.items():
        assert kind.name == name
        assert kind.loader.startswith("qsc.load_")
        assert kind.description.startswith(("a ", "an "))


def test_methods_never_modify_the_frame_and_return_new_objects() -> None:
    trades = HAND.assign(evaluation_id=pd.array(range(11, 20), "Int64"))
    trades.attrs["quantscope"] = {"endpoint": "/api/trades"}
    before, attrs = snapshot(trades)
    results = [
        trades.quant.summary(include_open=True),
        trades.quant.by("chain", freq="D"),
        trades.quant.equity_curve(),
        trades.quant.drawdown(),
        trades.quant.daily_pnl(),
        trades.quant.daily_returns(),
        details_frame().quant.values_by_outcome(trades),
    ]
    trades.quant.win_rate()
    trades.quant.roi()
    pd.testing.assert_frame_equal(trades, before)
    assert trades.attrs == attrs
    for result in results:  # writing into a result leaves the frame alone
        target = result.iloc[:, 0] if isinstance(result, pd.DataFrame) else result
        if len(target) and np.issubdtype(np.asarray(target).dtype, np.number):
            target.iloc[0] = -1
    pd.testing.assert_frame_equal(trades, before)


def test_plot_imports_the_plots_module_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[pd.DataFrame] = []

    class QuantPlots:
        def __init__(self, frame: pd.DataFrame) -> None:
            made.append(frame)

    fake = types.ModuleType("quantscope.plots")
    fake.QuantPlots = QuantPlots  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "quantscope.plots", fake)
    plots = HAND.quant.plot
    assert isinstance(plots, QuantPlots)
    assert made[0] is HAND
