"""Eval-details rows pivoted wide, and trades joined to them (no service: frames by hand)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from quantscope import backtest as bt


def details(rows: list[tuple[int, int, float, str, float, str, float]]) -> pd.DataFrame:
    """(evaluation, quant, market cap, criterion, value, operator, threshold) per row."""
    ev, quant, cap, crit, value, op, thr = zip(*rows, strict=True)
    n = len(rows)
    frame = pd.DataFrame(
        {
            "evaluation_id": pd.array(ev, dtype="Int64"),
            "quant_id": pd.array(quant, dtype="Int64"),
            "token_id": pd.array([9] * n, dtype="Int64"),
            "chain": pd.Categorical(["BASE"] * n),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * n),
            "evaluation_passed": pd.array([True] * n, dtype="boolean"),
            "internal_score": [90.0] * n,
            "market_cap_usd": list(cap),
            "criterion": pd.Categorical(crit),
            "value": list(value),
            "operator": pd.Categorical(op),
            "threshold": list(thr),
        }
    )
    frame.attrs["quantscope"] = {"endpoint": "/api/eval-details", "params": [{}] * n}
    return frame


ROWS = [
    (1, 1, 5e5, "smart", 3.0, "V_GTE_T", 2.0),
    (1, 1, 5e5, "top10", 40.0, "V_LTE_T", 45.0),
    (2, 1, 2e7, "smart", 1.0, "V_GTE_T", 2.0),
    (2, 1, 2e7, "top10", 20.0, "V_LTE_T", 50.0),
    (3, 1, 2e7, "smart", 4.0, "V_GTE_T", 3.0),  # a later decision under a raised threshold
]


def test_wide_details_has_one_row_per_evaluation_and_a_column_per_criterion() -> None:
    wide = bt.wide_details(details(ROWS))
    assert wide["evaluation_id"].tolist() == [1, 2, 3]
    assert wide["market_cap_class"].tolist() == ["DEGEN_CAP", "MID_CAP", "MID_CAP"]
    assert wide["smart"].tolist() == [3.0, 1.0, 4.0]
    assert wide["top10"].tolist()[:2] == [40.0, 20.0]
    assert np.isnan(wide["top10"].iloc[2])
    meta = wide.attrs["backtest"]
    assert meta["criteria"] == ("smart", "top10")
    assert meta["operators"] == {"smart": "V_GTE_T", "top10": "V_LTE_T"}
    assert meta["decided_thresholds"] == {  # JSON-safe: quant id text, then class
        "1": {
            "DEGEN_CAP": {"smart": 2.0, "top10": 45.0},
            "MID_CAP": {"smart": 3.0, "top10": 50.0},  # the newest decision wins
        }
    }
    assert "params" not in wide.attrs["quantscope"]  # kept small: pandas copies attrs often


def trades() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "trade_id": pd.array([10, 11, 12, 13], dtype="Int64"),
            "evaluation_id": pd.array([1, 2, 99, 3], dtype="Int64"),
            "quant_name": pd.Categorical(["Atlas"] * 4),
            "token_id": pd.array([9] * 4, dtype="Int64"),
            "chain": pd.Categorical(["BASE"] * 4),
            "evaluation_type": pd.Categorical(["TOKEN_BUY"] * 4),
            "status": pd.Categorical(["Closed", "Closed", "Closed", "Open"]),
            "result": pd.Categorical(["Profit", "Profit", "Loss", "Loss"]),
            "buy_cost_usd": [100.0] * 4,
            "pnl_usd": [0.0, 5.0, -3.0, -1.0],  # 0.00 displayed, yet the service says Profit
            "roi": [0.0, 0.05, -0.03, -0.01],
        }
    )


def test_trade_features_join_values_and_keep_closed_trades_by_default() -> None:
    features = bt.trade_features(trades(), details=details(ROWS))
    assert list(features.columns[: len(bt.features.TRADE_COLUMNS)]) == list(
        bt.features.TRADE_COLUMNS
    )
    assert features["trade_id"].tolist() == [10, 11, 12]
    assert features["quant_id"].tolist()[:2] == [1, 1]
    assert features["quant_id"].isna().iloc[2]
    assert features["smart"].tolist()[:2] == [3.0, 1.0]
    assert np.isnan(features["smart"].iloc[2])
    assert features["profitable"].tolist() == [True, True, False]
    assert not features["simulated"].any()
    assert features.attrs["backtest"]["trades_without_details"] == 1
    with_open = bt.trade_features(trades(), details=details(ROWS), include_open=True)
    assert with_open["trade_id"].tolist() == [10, 11, 12, 13]
    assert with_open["smart"].iloc[3] == 4.0


def test_profitable_falls_back_to_pnl_without_a_result() -> None:
    frame = pd.DataFrame({"pnl_usd": [1.0, -1.0, np.nan], "result": [None, "Profit", None]})
    assert bt.features.profitable(frame).tolist() == [True, True, pd.NA]


def test_a_criterion_named_like_a_trade_column_is_refused() -> None:
    clash = [(1, 1, 5e5, "roi", 3.0, "V_GTE_T", 2.0)]
    with pytest.raises(ValueError, match="clash"):
        bt.trade_features(trades(), details=details(clash))
