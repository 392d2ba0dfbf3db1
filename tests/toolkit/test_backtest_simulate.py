"""Simulated exits against a candle-by-candle loop, and simulated entries' rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantscope import backtest as bt
from quantscope.backtest.simulate import Exits

STOP, TAKE, HORIZON, OPEN = range(4)


def exit_by_loop(
    bars: tuple[np.ndarray, ...], k0: int, entry: float, rule: bt.ExitRule
) -> tuple[int, float, int]:
    """The contract's exit rule, one candle at a time (docs/service-contract.md)."""
    o, h, lo, c = bars
    tp = entry * (1 + rule.take_profit) if rule.take_profit is not None else np.inf
    sl = entry * (1 - rule.stop_loss) if rule.stop_loss is not None else -np.inf
    last = len(c) - 1
    for k in range(k0, min(k0 + rule.horizon_h, last + 1)):
        if k > k0 and o[k] <= sl:
            return k, o[k], STOP
        if lo[k] <= sl:
            return k, sl, STOP
        if k > k0 and o[k] >= tp:
            return k, o[k], TAKE
        if h[k] >= tp:
            return k, tp, TAKE
    end = k0 + rule.horizon_h - 1
    return (end, c[end], HORIZON) if end <= last else (last, c[last], OPEN)


@st.composite
def paths(draw: st.DrawFn) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray, bt.ExitRule]:
    n = draw(st.integers(1, 40))
    steps = np.array(draw(st.lists(st.floats(-0.4, 0.4), min_size=2 * n, max_size=2 * n)))
    close = np.exp(np.cumsum(steps[:n]))
    open_ = np.concatenate(([1.0], close[:-1])) * np.exp(steps[n:] / 4)
    wiggle = np.array(draw(st.lists(st.floats(0.0, 0.5), min_size=2 * n, max_size=2 * n)))
    high = np.maximum(open_, close) * (1 + wiggle[:n])
    low = np.minimum(open_, close) * (1 - wiggle[n:] / 2)
    k = draw(st.integers(1, 8))
    entries = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)))
    prices = open_[entries] * np.array(draw(st.lists(st.floats(0.9, 1.1), min_size=k, max_size=k)))
    rule = bt.ExitRule(
        take_profit=draw(st.one_of(st.none(), st.floats(0.05, 2.0))),
        stop_loss=draw(st.one_of(st.none(), st.floats(0.05, 0.9))),
        horizon_h=draw(st.integers(1, 30)),
    )
    return (open_, high, low, close), entries, prices, rule


@settings(max_examples=200, deadline=None)
@given(paths())
def test_vectorised_exits_equal_the_candle_by_candle_loop(case: tuple) -> None:
    bars, entries, prices, rule = case
    got = bt.simulate_exits(bars, entries, prices, rule)
    assert isinstance(got, Exits)
    for i, (k0, price) in enumerate(zip(entries, prices, strict=True)):
        candle, exit_price, reason = exit_by_loop(bars, int(k0), float(price), rule)
        assert (int(got.candle[i]), int(got.reason[i])) == (candle, reason)
        assert got.price[i] == pytest.approx(exit_price, rel=1e-12)


def test_exit_rule_rejects_impossible_levels() -> None:
    with pytest.raises(ValueError, match="horizon_h"):
        bt.ExitRule(horizon_h=0)
    with pytest.raises(ValueError, match="stop_loss"):
        bt.ExitRule(stop_loss=1.0)
    with pytest.raises(ValueError, match="take_profit"):
        bt.ExitRule(take_profit=-0.1)


def hourly(prices: list[tuple[float, float, float, float]]) -> pd.DataFrame:
    index = pd.date_range("2026-09-01", periods=len(prices), freq="h", tz="UTC", unit="ms")
    frame = pd.DataFrame(prices, columns=["open", "high", "low", "close"], index=index)
    return frame.rename_axis("timestamp").assign(volume=1.0)


def details_rows(evaluation_ids: list[int], smart: list[float]) -> pd.DataFrame:
    n = len(evaluation_ids)
    return pd.DataFrame(
        {
            "evaluation_id": pd.array(evaluation_ids, dtype="Int64"),
            "quant_id": pd.array([1] * n, dtype="Int64"),
            "token_id": pd.array([7] * n, dtype="Int64"),
            "chain": pd.Categorical(["SOLANA"] * n),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "evaluation_passed": pd.array([False] * n, dtype="boolean"),
            "internal_score": [50.0] * n,
            "market_cap_usd": [2e6] * n,
            "criterion": pd.Categorical(["smart_money_buys"] * n),
            "value": smart,
            "operator": pd.Categorical(["V_GTE_T"] * n),
            "threshold": [2.0] * n,
        }
    )


def test_simulated_entries_are_labelled_trades_with_the_researchers_fees() -> None:
    candles = {
        7: hourly(
            [
                (1.0, 1.05, 0.95, 1.0),  # 0: evaluation 10 enters here at 1.0
                (1.0, 1.6, 1.0, 1.5),  # 1: take-profit (+50 %) reached at 1.5
                (1.5, 1.5, 0.5, 0.6),  # 2: evaluation 11 enters at 1.5; stop-loss (-20 %) at 1.2
                (0.6, 0.7, 0.55, 0.65),  # 3
            ]
        )
    }
    evaluations = pd.DataFrame(
        {
            "evaluation_id": pd.array([10, 11, 12, 13], dtype="Int64"),
            "quant_id": pd.array([1] * 4, dtype="Int64"),
            "token_id": pd.array([7] * 4, dtype="Int64"),
            "chain": pd.Categorical(["SOLANA"] * 4),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * 4),
            "created_at": pd.to_datetime(
                [
                    "2026-09-01 00:01:30",
                    "2026-09-01 02:30:00",
                    "2026-09-01 03:10:00",
                    "2026-09-01 01:00:00",
                ],
                utc=True,
            ).as_unit("ms"),
            "passed": pd.array([False, False, False, True], dtype="boolean"),
            "market_cap_usd": [2e6] * 4,
            "detection_price_usd": [1.0, 1.5, 0.6, 1.0],
        }
    )
    rule = bt.ExitRule(take_profit=0.5, stop_loss=0.2, horizon_h=24)
    sim = bt.simulated_entries(
        evaluations,
        rule,
        details=details_rows([10, 11, 12], [1.0, 0.0, 1.0]),
        candles=candles,
        fee_rate=0.01,
        size_usd=200.0,
    )
    # 13 passed (it has a trade); 12 is still open at the last candle: left out by default.
    assert sim["evaluation_id"].tolist() == [10, 11]
    assert sim["simulated"].all()
    assert sim["trade_id"].isna().all()
    assert sim["exit_reason"].tolist() == ["take_profit", "stop_loss"]
    assert sim["exit_price_usd"].tolist() == pytest.approx([1.5, 1.2])
    gross = 0.99**2 * np.array([1.5 / 1.0, 1.2 / 1.5])
    assert sim["roi"].tolist() == pytest.approx(gross - 1)
    assert sim["pnl_usd"].tolist() == pytest.approx(200 * (gross - 1))
    assert sim["result"].tolist() == ["Profit", "Loss"]
    assert sim["profitable"].tolist() == [True, False]
    assert sim["market_cap_class"].tolist() == ["LOW_CAP", "LOW_CAP"]
    assert sim["smart_money_buys"].tolist() == [1.0, 0.0]
    assert sim["closed_at"].tolist() == list(candles[7].index[[1, 2]])
    with_open = bt.simulated_entries(
        evaluations,
        rule,
        details=details_rows([10, 11, 12], [1.0, 0.0, 1.0]),
        candles=candles,
        include_open=True,
    )
    assert with_open["status"].tolist() == ["Closed", "Closed", "Open"]
