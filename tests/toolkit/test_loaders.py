"""Every loader against the real sandbox over HTTP: dtypes as declared, values as served."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope._typed import schemas as _schemas
from quantscope._typed.frames import FrameSpec
from quantscope.sandbox.serve import SandboxServer


def assert_typed(frame: pd.DataFrame, spec: FrameSpec) -> None:
    expected = {n: d for n, d in spec.dtypes().items() if n != spec.index}
    assert list(frame.columns) == list(expected)
    assert {c: str(t) for c, t in frame.dtypes.items()} == expected


def test_trades_agree_with_the_service_summary(client: Client) -> None:
    df = L.load_trades(1, trading_status="all", page_size=250, client=client)
    assert_typed(df, _schemas.TRADES)
    summary = df.attrs["quantscope"]["summary"]
    assert len(df) == summary["totalTrades"] > 250  # more than one page
    assert df["trade_id"].is_unique
    # Display strings are rounded to the cent: the sum agrees within half a cent per trade.
    net = summary["totalProfit"] + summary["totalLoss"]
    assert df["pnl_usd"].sum() == pytest.approx(net, abs=0.005 * len(df))
    assert int((df["pnl_usd"] > 0).sum()) == summary["profitableTrades"]
    assert (df["quant_name"] == "Atlas").all()
    prov = df.attrs["quantscope"]
    assert prov["pages"] == prov["requests"] == -(-len(df) // 250)
    assert prov["from_cache"] is False
    assert set(df["decision"].dropna().unique()) <= {"APPROVE", "DELAY", "REJECT", "RECOMMEND"}


def test_second_load_is_served_from_cache_without_spending_quota(client: Client) -> None:
    first = L.load_trades(2, client=client)
    remaining = client.quota.remaining
    again = L.load_trades(2, client=client)
    assert again.attrs["quantscope"]["from_cache"] is True
    assert again.attrs["quantscope"]["requests"] == 0
    assert client.quota.remaining == remaining
    pd.testing.assert_frame_equal(first, again)


def test_trade_detail_raw_values_match_the_list(client: Client) -> None:
    listed = L.load_trades(3, position_closed=True, max_pages=1, page_size=5, client=client)
    row = listed.iloc[0]
    trade, txs = L.load_trade(int(row["trade_id"]), client=client)
    assert_typed(trade, _schemas.TRADE_DETAIL)
    assert_typed(txs, _schemas.TRANSACTIONS)
    detail = trade.iloc[0]
    assert detail["pnl_usd"] == pytest.approx(row["pnl_usd"], abs=0.005)
    assert detail["roi"] == pytest.approx(row["roi"], abs=0.00005)
    assert detail["duration_s"] == row["duration_s"]
    assert list(txs["action"]) == ["BUY", "SELL"]
    buy, sell = txs.iloc[0], txs.iloc[1]
    assert buy["input_value_usd"] == pytest.approx(detail["buy_cost_usd"])
    assert sell["output_value_usd"] == pytest.approx(detail["sell_revenue_usd"])
    assert (txs["trade_id"] == row["trade_id"]).all()


def test_trade_stats_count_executed_trades(client: Client) -> None:
    stats = L.load_trade_stats(2, client=client)
    executed = L.load_trades(2, client=client)
    assert stats["total_trades"] == len(executed)
    volume = (executed["buy_cost_usd"] + executed["sell_revenue_usd"]).sum()
    assert stats["total_volume_usd"] == pytest.approx(volume, abs=0.01 * len(executed))
    assert -10 < stats["trades_weekly_change"] < 10  # a fraction, not percent


def test_evaluations_filters_and_counts(client: Client) -> None:
    start, end = "2026-09-20T00:00:00Z", "2026-09-22T00:00:00Z"
    evals = L.load_evaluations(1, start=start, end=end, page_size=200, client=client)
    assert_typed(evals, _schemas.EVALUATIONS)
    assert len(evals) > 200
    assert evals["evaluation_id"].is_unique
    assert (evals["quant_id"] == 1).all()
    assert evals["created_at"].between(pd.Timestamp(start), pd.Timestamp(end)).all()
    count = L.load_eval_count(1, start=start, end=end, client=client)
    assert count["total"] == len(evals)
    assert count["passed"] == int(evals["passed"].sum())
    assert count["pass_rate"] == pytest.approx(count["passed"] / count["total"], abs=1e-4)
    series = L.load_eval_timeseries(1, start=start, end=end, client=client)
    assert_typed(series, _schemas.EVAL_TIMESERIES)
    assert series.index.name == "timestamp"
    assert str(series.index.tz) == "UTC"
    assert int(series["evaluations"].sum()) == len(evals)
    passed = L.load_evaluations(1, start=start, end=end, passed=True, client=client)
    assert len(passed) == count["passed"]
    assert passed["passed"].all()


def test_window_loaders_take_quant_id_first_and_the_old_order_for_one_release(
    client: Client,
) -> None:
    start, end = "2026-09-20T00:00:00Z", "2026-09-22T00:00:00Z"
    count = L.load_eval_count(1, start=start, end=end, client=client)
    series = L.load_eval_timeseries(1, start=start, end=end, client=client)
    old_calls: list[tuple[Any, Callable[[], Any]]] = [
        (count, lambda: L.load_eval_count(start, end, 1, client=client)),
        (series, lambda: L.load_eval_timeseries(start, end, 1, client=client)),
    ]
    for old, call in old_calls:
        with pytest.warns(DeprecationWarning, match=r"\(quant_id, start=\.\.\., end=\.\.\.\)"):
            got = call()
        if isinstance(old, pd.Series):
            pd.testing.assert_series_equal(got, old)
        else:
            pd.testing.assert_frame_equal(got, old)
    everyone = L.load_eval_count(start=start, end=end, client=client)
    with pytest.warns(DeprecationWarning, match=r"load_eval_count\(start, end, quant_id\)"):
        pd.testing.assert_series_equal(L.load_eval_count(start, end, client=client), everyone)
    assert everyone["total"] > count["total"]
    with pytest.raises(TypeError, match=r"start=\.\.\. and end="):
        L.load_eval_count(1, start=start, client=client)
    with pytest.raises(TypeError, match="keywords"):
        L.load_eval_timeseries(1, start, end, client=client)  # type: ignore[misc]


def test_one_record_answers_are_typed_series(client: Client) -> None:
    stats = L.load_trade_stats(1, client=client)
    assert stats.name == "trade_stats"
    assert str(stats.dtype) == "float64"
    assert list(stats.index) == _schemas.TRADE_STATS.names
    assert stats["total_trades"] > 0
    assert abs(stats["trades_weekly_change"]) < 50
    assert stats.attrs["quantscope"]["endpoint"] == "/api/trades/stats"
    count = L.load_eval_count(1, start="2026-09-20", end="2026-09-22", client=client)
    assert list(count.index) == _schemas.EVAL_COUNT.names
    assert str(count.dtype) == "float64"
    assert count["total"] == count["passed"] + count["failed"]
    assert 0 <= count["pass_rate"] <= 1


def test_eval_details_long_frame(client: Client) -> None:
    trades = L.load_trades(1, max_pages=1, page_size=3, client=client)
    ids = trades["evaluation_id"].astype(int).tolist()
    details = L.load_eval_details(ids, client=client)
    assert_typed(details, _schemas.EVAL_DETAILS)
    assert len(details) == 18 * len(ids)
    assert details.groupby("evaluation_id").size().eq(18).all()
    assert details["category"].nunique() == 6
    assert (details["evaluation_type"] == "TOKEN_BUY").all()
    assert details["evaluation_passed"].all()  # they bought
    np.testing.assert_array_equal(details["value"], details["value_text"].astype(float))
    enabled = details["passed"].notna()
    assert (
        details.loc[enabled, "score"]
        == np.where(
            details.loc[enabled, "passed"].astype(bool), details.loc[enabled, "weight"], 0.0
        )
    ).all()
    assert details.attrs["quantscope"]["requests"] == len(ids)
    again = L.load_eval_details(ids, client=client)
    assert again.attrs["quantscope"]["requests"] == 0  # details are cached for good


def test_eval_history_same_token(client: Client) -> None:
    evals = L.load_evaluations(2, max_pages=1, page_size=1, client=client)
    eid = int(evals["evaluation_id"].iloc[0])
    history = L.load_eval_history(eid, exclude_types=["TOKEN_STATUS"], client=client)
    assert_typed(history, _schemas.EVAL_HISTORY)
    assert len(history) > 0
    assert "TOKEN_STATUS" not in set(history["evaluation_type"])
    assert history["created_at"].is_monotonic_decreasing


def test_ohlcv_is_ready_for_any_ohlcv_library(client: Client) -> None:
    hourly = L.load_ohlcv(5, client=client)
    assert isinstance(hourly.index, pd.DatetimeIndex)
    assert hourly.index.name == "timestamp"
    assert str(hourly.index.tz) == "UTC"
    assert list(hourly.columns) == ["open", "high", "low", "close", "volume"]
    assert (hourly.dtypes == "float64").all()
    assert len(hourly) == 70 * 24
    assert hourly.index.is_monotonic_increasing
    assert (hourly.index.to_series().diff().dropna() == pd.Timedelta(hours=1)).all()
    assert (hourly["low"] <= hourly[["open", "close"]].min(axis=1)).all()
    daily = L.load_ohlcv(5, "1d", client=client)
    day = daily.index[10]
    chunk = hourly.loc[day : day + pd.Timedelta(hours=23)]
    assert daily.loc[day, "high"] == pytest.approx(chunk["high"].max())
    assert daily.loc[day, "volume"] == pytest.approx(chunk["volume"].sum())


def test_signals_and_stats_come_from_one_request(client: Client) -> None:
    signals = L.load_signals(1, limit=500, client=client)
    assert_typed(signals, _schemas.SIGNALS)
    stats = L.load_signal_stats(1, limit=500, client=client)
    assert stats.attrs["quantscope"]["from_cache"] is True
    assert stats.loc["all", "total"] == len(signals)
    counts = signals["stage"].value_counts()
    for stage in ("screening", "buy", "sell", "watch"):
        assert stats.loc["all", stage] == counts.get(stage.upper(), 0)
    one, criteria = L.load_signal(int(signals["token_id"].iloc[0]), 1, client=client)
    assert len(one) == 1
    assert len(criteria) == 18


def test_playbook_long_frame(client: Client) -> None:
    playbook = L.load_playbook(1, client=client)
    assert_typed(playbook, _schemas.PLAYBOOK)
    assert len(playbook) == 3 * 18 * 2
    assert playbook["config_id"].is_unique
    assert set(playbook["config_type"]) == {"SCANNING", "BUYING"}
    assert playbook["threshold"].notna().all()
    assert playbook["pass_mark"].notna().all()
    ranged = playbook["range_min"].notna()
    assert (playbook.loc[ranged, "range_min"] <= playbook.loc[ranged, "threshold"]).all()


def test_update_playbook_invalidates_the_cached_read(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    with Client(
        server.url, server.keys["enterprise"], cache_dir=str(tmp_path), progress=False
    ) as c:
        before = L.load_playbook(2, client=c)
        entry = before[
            (before["criterion"] == "smart_money_buys") & (before["config_type"] == "BUYING")
        ].iloc[0]
        updated = L.update_playbook(
            2, [{"config_id": entry["config_id"], "value": entry["threshold"] + 1}], client=c
        )
        assert updated["threshold"].tolist() == [entry["threshold"] + 1]
        after = L.load_playbook(2, client=c)
        assert after.attrs["quantscope"]["from_cache"] is False
        row = after[after["config_id"] == entry["config_id"]].iloc[0]
        assert row["threshold"] == entry["threshold"] + 1


def test_recommendations_analysis_and_apply(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    with Client(
        server.url, server.keys["enterprise"], cache_dir=str(tmp_path), progress=False
    ) as c:
        dash = L.load_dashboard(1, client=c)
        assert 0 <= dash.performance["win_rate"] <= 1
        recs = L.load_recommendations(1, client=c)
        assert_typed(recs, _schemas.RECOMMENDATIONS)
        assert len(recs) == len(dash.recent) + len(dash.applied) > 0
        result = L.run_analysis(1, client=c)
        assert result["recommendations_generated"] > 0
        recs = L.load_recommendations(1, applied=False, client=c)  # invalidated by the POST
        assert len(recs) == result["recommendations_generated"]
        top = recs.sort_values("confidence", ascending=False).iloc[0]
        L.apply_recommendation(int(top["recommendation_id"]), client=c)
        playbook = L.load_playbook(1, client=c)
        entry = playbook[playbook["config_id"] == top["config_id"]].iloc[0]
        assert entry["threshold"] == top["new_threshold"]
        assert len(L.load_recommendations(1, applied=True, client=c)) == 1
