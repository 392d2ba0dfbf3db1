"""Plots draw the analytics' numbers: read back what each figure drew and compare.

Headless (Agg). Every figure is checked on its data (line ydata, bar heights, histogram counts,
marker positions), on ``ax=`` being honoured, on rendering to PNG, and through
``df.quant.plot`` on hand frames and on real sandbox frames.
"""

from __future__ import annotations

import ast
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from _helpers import EVALS, HAND, at, details_frame, trades_frame
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.lines import Line2D

import quantscope.loaders as L
from quantscope import analytics as A
from quantscope import plots as P
from quantscope._errors import MissingColumnsError
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

PLOTS_SRC = Path(P.__file__).parent


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


# --------------------------------------------------------------------------------------------
# Hand frames and helpers
# --------------------------------------------------------------------------------------------


def utc(values: Any) -> np.ndarray:
    """Naive UTC datetime64[ms], as the plots hand times to matplotlib."""
    return pd.DatetimeIndex(values).tz_convert(None).to_numpy(dtype="datetime64[ms]")


def num(values: Any) -> np.ndarray:
    return np.asarray(mdates.date2num(utc(values)))


def line(ax: Axes, label: str) -> Line2D:
    found = [ln for ln in ax.lines if ln.get_label() == label]
    assert len(found) == 1, [ln.get_label() for ln in ax.lines]
    return found[0]


def bars(ax: Axes) -> dict[str, np.ndarray]:
    """Bar heights per histogram group (its label sits on the group's first bar)."""
    return {
        c.patches[0].get_label(): np.array([p.get_height() for p in c.patches])
        for c in ax.containers
    }


def png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=60)
    data = buffer.getvalue()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 2_000
    return data


def roi_frame() -> pd.DataFrame:
    """HAND with its ROI (pnl over cost) and a result for the breakeven trade."""
    return HAND.assign(roi=HAND["pnl_usd"] / HAND["buy_cost_usd"])


def outcome_trades() -> pd.DataFrame:
    """Trades bought by the evaluations of ``details_frame()``: 11 and 12 win, 13 loses."""
    return trades_frame(
        [
            {"id": 1, "opened": at(1), "closed": at(2), "pnl": 10.0, "evaluation_id": 11},
            {"id": 2, "opened": at(1), "closed": at(2), "pnl": 20.0, "evaluation_id": 12},
            {"id": 3, "opened": at(1), "closed": at(2), "pnl": -5.0, "evaluation_id": 13},
            {"id": 4, "opened": at(1), "closed": None, "pnl": 50.0, "evaluation_id": 14},
        ]
    )


T = pd.Timestamp("2026-09-01 00:00", tz="UTC")
HOUR = pd.Timedelta(hours=1)


def ohlcv_frame() -> pd.DataFrame:
    """Four hourly candles of token 5 from 2026-09-01 00:00 UTC; the third is a doji."""
    frame = pd.DataFrame(
        {
            "open": [1.0, 1.2, 1.1, 1.1],
            "high": [1.3, 1.25, 1.2, 1.4],
            "low": [0.9, 1.0, 1.05, 1.0],
            "close": [1.2, 1.1, 1.1, 1.35],
            "volume": [10.0, 20.0, 30.0, 40.0],
        },
        index=pd.DatetimeIndex([T + i * HOUR for i in range(4)], name="timestamp").as_unit("ms"),
    )
    frame.attrs["quantscope"] = {"endpoint": "/api/eval-ohlcv", "token_id": 5, "timeframe": "1h"}
    return frame


def candle_evaluations() -> pd.DataFrame:
    """Token 5 inside the span (passed, failed, no verdict), token 6 inside, token 5 outside."""
    return pd.DataFrame(
        {
            "evaluation_id": [1, 2, 3, 4, 5],
            "token_id": [5, 5, 5, 6, 5],
            "token_symbol": ["FIVE", "FIVE", "FIVE", "SIX", "FIVE"],
            "evaluation_type": ["TOKEN_STATUS"] * 5,
            "created_at": [
                T + 10 * pd.Timedelta(minutes=1),
                T + 90 * pd.Timedelta(minutes=1),
                T + 2 * HOUR,
                T + HOUR,
                T + 30 * HOUR,
            ],
            "passed": [True, False, None, True, True],
            "detection_price_usd": [1.05, 1.15, 1.1, 9.0, 2.0],
        }
    ).astype(
        {
            "evaluation_id": "Int64",
            "token_id": "Int64",
            "created_at": "datetime64[ms, UTC]",
            "passed": "boolean",
        }
    )


def candle_trades() -> pd.DataFrame:
    """Token 5: trade 1 wins (opens 00:20, closes 02:30), trade 2 is open (03:10); token 6:
    trade 3."""
    frame = trades_frame(
        [
            {"id": 1, "opened": T + HOUR / 3, "closed": T + 2.5 * HOUR, "pnl": 5.0},
            {"id": 2, "opened": T + 3 * HOUR + HOUR / 6, "closed": None, "pnl": -1.0},
            {"id": 3, "opened": T + HOUR, "closed": T + 2 * HOUR, "pnl": -3.0},
        ]
    )
    return frame.assign(
        token_id=pd.array([5, 5, 6], dtype="Int64"),
        token_symbol=pd.array(["FIVE", "FIVE", "SIX"], dtype="string"),
        detection_price_usd=[1.02, 1.3, 9.0],
    )


# --------------------------------------------------------------------------------------------
# Equity and drawdown
# --------------------------------------------------------------------------------------------


def test_equity_draws_the_analytics_equity_curve_and_drawdown() -> None:
    top, bottom = P.equity(HAND)
    curve, fall = A.equity_curve(HAND), A.drawdown(HAND)
    equity = line(top, "realised equity")
    np.testing.assert_array_equal(equity.get_ydata(), curve["equity_usd"].to_numpy())
    np.testing.assert_array_equal(equity.get_xdata(), utc(curve.index))
    assert equity.get_drawstyle() == "steps-post"
    assert list(line(top, "starting capital").get_ydata()) == [20_000.0] * 2  # two quants
    depth = line(bottom, "drawdown")
    np.testing.assert_array_equal(depth.get_ydata(), fall["drawdown"].to_numpy())
    np.testing.assert_array_equal(depth.get_xdata(), utc(fall.index))
    assert any(isinstance(c, PolyCollection) for c in bottom.collections)  # the filled area
    assert top.get_shared_x_axes().joined(top, bottom)
    assert top.get_ylabel() == "equity (USD)"
    assert bottom.get_xlabel() == "close time (UTC)"
    png(top.figure)


def test_equity_honours_capital_and_the_given_axes() -> None:
    fig, given = plt.subplots(2, 1)
    top, bottom = P.equity(HAND, capital=500, axes=given)
    assert (top, bottom) == (given[0], given[1])
    np.testing.assert_array_equal(
        line(top, "realised equity").get_ydata(), A.equity_curve(HAND, capital=500)["equity_usd"]
    )
    np.testing.assert_array_equal(
        line(bottom, "drawdown").get_ydata(), A.drawdown(HAND, capital=500)["drawdown"]
    )
    assert list(line(top, "starting capital").get_ydata()) == [500.0, 500.0]
    assert len(fig.axes) == 2


def test_equity_of_a_frame_without_closed_trades_is_an_empty_figure() -> None:
    top, _ = P.equity(HAND[HAND["status"] == "Open"])
    assert line(top, "realised equity").get_ydata().size == 0
    png(top.figure)


def test_a_figure_renders_the_same_bytes_twice() -> None:
    first = png(P.equity(HAND)[0].figure)
    assert png(P.equity(HAND)[0].figure) == first


# --------------------------------------------------------------------------------------------
# ROI distribution
# --------------------------------------------------------------------------------------------


def test_roi_distribution_counts_each_results_trades_in_shared_bins() -> None:
    frame = roi_frame()
    ax = P.roi_distribution(frame, bins=5)
    closed = frame[frame["status"] == "Closed"]
    edges = np.histogram_bin_edges(closed["roi"], bins=5)
    drawn = bars(ax)
    assert list(drawn) == ["Breakeven (n=1)", "Loss (n=4)", "Profit (n=3)"]
    for result, label in zip(("Breakeven", "Loss", "Profit"), drawn, strict=True):
        expected, _ = np.histogram(closed.loc[closed["result"] == result, "roi"], bins=edges)
        np.testing.assert_array_equal(drawn[label], expected)
    lefts = [p.get_x() for p in ax.containers[0].patches]
    np.testing.assert_allclose(lefts, edges[:-1])
    assert ax.get_xlabel() == "ROI (% of buy cost)"
    assert ax.get_ylabel() == "trades"
    png(ax.figure)


def test_roi_distribution_with_open_positions_and_another_grouping() -> None:
    frame = roi_frame()
    drawn = bars(P.roi_distribution(frame, include_open=True, by="quant_name"))
    assert list(drawn) == ["Atlas (n=7)", "Borealis (n=2)"]
    assert sum(h.sum() for h in drawn.values()) == len(frame)


# --------------------------------------------------------------------------------------------
# A metric by group
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("by", "freq", "metric"),
    [
        ("quant_name", None, "win_rate"),
        ("quant_name", None, "total_pnl_usd"),
        (None, "D", "total_pnl_usd"),
        ("decision", None, "trades"),
    ],
)
def test_metric_by_bars_are_the_by_table(by: Any, freq: str | None, metric: str) -> None:
    ax = P.metric_by(HAND, by, metric, freq=freq)
    table = A.by(HAND, by, freq=freq)
    heights = [p.get_height() for p in ax.containers[0].patches]
    np.testing.assert_array_equal(heights, table[metric].to_numpy(dtype=np.float64))
    assert len(ax.get_xticklabels()) == len(table)
    png(ax.figure)


def test_metric_by_labels_groups_and_units() -> None:
    ax = P.metric_by(HAND, "quant_name", "win_rate")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Atlas", "Borealis"]
    assert ax.get_ylabel() == "win rate (% of trades)"
    assert [t.get_text() for t in ax.texts] == ["50.0%\nn=6", "0.0%\nn=2"]  # value, trades
    daily = P.metric_by(HAND, freq="D", metric="total_pnl_usd")
    labels = [t.get_text() for t in daily.get_xticklabels()]
    assert labels == [f"2026-09-0{d}" for d in range(1, 7)]  # 09-06: the open position
    assert daily.get_ylabel() == "total pnl (USD)"
    assert daily.get_xlabel() == "day of close (UTC)"


def test_metric_by_draws_durations_in_hours_and_undefined_values_as_missing() -> None:
    ax = P.metric_by(HAND, "quant_name", "avg_holding_time")
    expected = A.by(HAND, "quant_name")["avg_holding_time"] / pd.Timedelta(hours=1)
    np.testing.assert_allclose([p.get_height() for p in ax.containers[0].patches], expected)
    assert ax.get_ylabel() == "avg holding time (hours)"
    # The open book's row has no closed trade: its win rate is undefined and says so.
    status = P.metric_by(HAND, "status", "win_rate")
    assert [t.get_text() for t in status.texts if t.get_text()] == ["37.5%\nn=8", "n/a"]
    png(status.figure)


def test_metric_by_rejects_an_unknown_metric() -> None:
    with pytest.raises(ValueError, match="unknown metric 'winrate'; by\\(\\) has trades, wins"):
        P.metric_by(HAND, "chain", "winrate")


# --------------------------------------------------------------------------------------------
# Candlesticks
# --------------------------------------------------------------------------------------------


def test_candle_bodies_and_wicks_are_the_ohlc_values() -> None:
    ohlcv = ohlcv_frame()
    ax = P.candles(ohlcv)
    x = num(ohlcv.index)
    bodies = ax.containers[0].patches
    o, c = ohlcv["open"].to_numpy(), ohlcv["close"].to_numpy()
    np.testing.assert_allclose([p.get_height() for p in bodies], np.abs(c - o))
    np.testing.assert_allclose([p.get_y() for p in bodies], np.minimum(o, c))
    np.testing.assert_allclose([p.get_x() + p.get_width() / 2 for p in bodies], x)
    np.testing.assert_allclose([p.get_width() for p in bodies], 0.7 / 24)
    up = [tuple(p.get_facecolor()) for p in bodies]
    assert up[0] == up[3] != up[1]  # rising candles in one colour, falling in another
    [wicks] = [c for c in ax.collections if c.get_gid() == "wicks"]
    assert isinstance(wicks, LineCollection)
    segments = np.array(wicks.get_segments())
    np.testing.assert_allclose(segments[:, 0, 0], x)
    np.testing.assert_allclose(segments[:, 1, 0], x)
    np.testing.assert_allclose(segments[:, 0, 1], ohlcv["low"])
    np.testing.assert_allclose(segments[:, 1, 1], ohlcv["high"])
    assert ax.get_title() == "token 5: 1h candles"
    assert ax.get_ylabel() == "price (USD)"
    assert ax.get_xlabel() == "time (UTC)"
    png(ax.figure)


def test_candles_mark_the_tokens_evaluations_inside_the_span() -> None:
    ohlcv, evaluations = ohlcv_frame(), candle_evaluations()
    ax = P.candles(ohlcv, evaluations=evaluations)
    passed, failed = line(ax, "evaluation passed"), line(ax, "evaluation failed")
    np.testing.assert_allclose(passed.get_xdata(), num(evaluations["created_at"].iloc[[0]]))
    np.testing.assert_allclose(passed.get_ydata(), [1.05])  # not token 6, not outside the span
    np.testing.assert_allclose(failed.get_xdata(), num(evaluations["created_at"].iloc[[1]]))
    np.testing.assert_allclose(failed.get_ydata(), [1.15])
    assert ax.get_title() == "FIVE: 1h candles"
    # token_id= picks another token's rows (here token 6's, inside the span).
    other = P.candles(ohlcv, evaluations=evaluations, token_id=6)
    np.testing.assert_allclose(line(other, "evaluation passed").get_ydata(), [9.0])


def test_candles_mark_entries_at_detection_price_and_exits_on_the_candle_close() -> None:
    ohlcv, trades = ohlcv_frame(), candle_trades()
    ax = P.candles(ohlcv, trades=trades)
    entry, exit_ = line(ax, "entry"), line(ax, "exit")
    np.testing.assert_allclose(entry.get_xdata(), num(trades["opened_at"].iloc[:2]))
    np.testing.assert_allclose(entry.get_ydata(), [1.02, 1.3])
    # Trade 1 closes at 02:30: the candle of 02:00 holds it, its close is 1.1. Trade 2 is open.
    np.testing.assert_allclose(exit_.get_xdata()[:1], num(trades["closed_at"].iloc[:1]))
    assert exit_.get_ydata()[0] == pytest.approx(1.1)
    assert np.isnan(exit_.get_ydata()[1])
    [won] = [c for c in ax.collections if c.get_label() == "winning trade"]
    np.testing.assert_allclose(
        won.get_segments()[0],
        [[num(trades["opened_at"])[0], 1.02], [num(trades["closed_at"])[0], 1.1]],
    )
    assert not [c for c in ax.collections if c.get_label() == "losing trade"]  # trade 3: token 6
    handles = ax.get_legend().get_texts()
    assert [t.get_text() for t in handles] == ["winning trade", "entry", "exit"]


def test_candles_take_exact_fills_from_transactions() -> None:
    ohlcv, trades = ohlcv_frame(), candle_trades()
    transactions = pd.DataFrame(
        {
            "trade_id": pd.array([1, 1], dtype="Int64"),
            "action": pd.Categorical(["SELL", "BUY"]),
            "timestamp": pd.to_datetime([T + 2.6 * HOUR, T + 0.4 * HOUR], utc=True).as_unit("ms"),
            "price_usd": [1.12, 1.03],
        }
    )
    ax = P.candles(ohlcv, trades=trades, transactions=transactions)
    entry, exit_ = line(ax, "entry"), line(ax, "exit")
    np.testing.assert_allclose(
        entry.get_xdata(), num(pd.DatetimeIndex([T + 0.4 * HOUR, trades["opened_at"].iloc[1]]))
    )
    np.testing.assert_allclose(entry.get_ydata(), [1.03, 1.3])
    np.testing.assert_allclose(exit_.get_xdata()[:1], num(pd.DatetimeIndex([T + 2.6 * HOUR])))
    assert exit_.get_ydata()[0] == pytest.approx(1.12)
    # Transactions alone: entries and exits, no outcome to colour a line with.
    alone = P.candles(ohlcv, transactions=transactions)
    np.testing.assert_allclose(line(alone, "entry").get_ydata(), [1.03])
    np.testing.assert_allclose(line(alone, "exit").get_ydata(), [1.12])
    assert not [c for c in alone.collections if "trade" in str(c.get_label())]
    png(ax.figure)


def test_price_ticks_are_dollars_without_scientific_notation() -> None:
    from quantscope.plots._style import PRICE

    assert [PRICE.text(v) for v in (0.000114, 5e-05, 1234.5, 0.0)] == [
        "$0.000114",
        "$0.00005",
        "$1230",
        "$0",
    ]


# --------------------------------------------------------------------------------------------
# Evaluations: pass rate over time, criterion distributions
# --------------------------------------------------------------------------------------------


def test_pass_rate_line_is_the_analytics_pass_rates() -> None:
    ax = P.pass_rate_over_time(EVALS, "D")
    table = A.pass_rates(EVALS, freq="D")
    drawn = line(ax, "all (n=4)")
    np.testing.assert_array_equal(drawn.get_ydata(), table["pass_rate"].to_numpy())
    np.testing.assert_array_equal(drawn.get_xdata(), utc(table.index))
    assert ax.get_ylabel() == "pass rate (% of verdicts)"
    assert ax.get_title() == "Evaluation pass rate per day"
    png(ax.figure)


def test_pass_rate_by_group_draws_a_line_per_group() -> None:
    ax = P.pass_rate_over_time(EVALS, "D", by="chain")
    table = A.pass_rates(EVALS, "chain", freq="D")
    for chain in ("BASE", "SOLANA"):
        part = table.xs(chain, level="chain")
        drawn = line(ax, f"{chain} (n={part['total'].sum()})")
        np.testing.assert_array_equal(drawn.get_ydata(), part["pass_rate"].to_numpy())
        np.testing.assert_array_equal(drawn.get_xdata(), utc(part.index))
    # A criterion frame has one verdict per enabled criterion result.
    per_criterion = P.pass_rate_over_time(details_frame(), "D", by="criterion")
    assert [ln.get_label() for ln in per_criterion.lines] == ["a (n=3)", "b (n=3)", "c (n=2)"]


def test_the_old_pass_rate_plot_names_warn_and_draw_the_same_lines() -> None:
    new = P.pass_rate_over_time(EVALS, "D", by="chain")
    with pytest.warns(DeprecationWarning, match="use plots.pass_rate_over_time"):
        old = P.pass_rate(EVALS, "D", by="chain")
    with pytest.warns(DeprecationWarning, match=r"use df\.quant\.plot\.pass_rate_over_time"):
        method = EVALS.quant.plot.pass_rate("D", by="chain")
    for ax in (old, method):
        assert [ln.get_label() for ln in ax.lines] == [ln.get_label() for ln in new.lines]
        for drawn, wanted in zip(ax.lines, new.lines, strict=True):
            np.testing.assert_array_equal(drawn.get_ydata(), wanted.get_ydata())
    assert EVALS.quant.pass_rate() == A.pass_rate(EVALS)  # the number keeps its name


def test_criterion_histograms_count_the_winners_and_losers_values() -> None:
    details, trades = details_frame(), outcome_trades()
    ax = P.criterion_distributions(details, trades, "a", bins=4)
    # a: 5.0 (evaluation 11, win), 3.0 (12, win), 1.0 (13, loss); 14 bought an open position.
    edges = np.histogram_bin_edges([5.0, 3.0, 1.0], bins=4)
    drawn = bars(ax)
    assert list(drawn) == ["win (n=2)", "loss (n=1)"]
    np.testing.assert_array_equal(drawn["win (n=2)"], np.histogram([5.0, 3.0], edges)[0])
    np.testing.assert_array_equal(drawn["loss (n=1)"], np.histogram([1.0], edges)[0])
    stats = A.values_by_outcome(details, trades)
    assert drawn["win (n=2)"].sum() == stats.loc[("a", "win"), "count"]
    assert drawn["loss (n=1)"].sum() == stats.loc[("a", "loss"), "count"]
    assert not [ln for ln in ax.lines if ln.get_label() == P.THRESHOLD]
    png(ax.figure)


def test_criterion_values_are_what_values_by_outcome_aggregates() -> None:
    details, trades = details_frame(), outcome_trades()
    stats = A.values_by_outcome(details, trades)
    for criterion in ("a", "b", "c"):
        values = A.criterion_values(details, trades, criterion)
        grouped = values.groupby("outcome", observed=True)["value"]
        np.testing.assert_allclose(grouped.mean(), stats.xs(criterion)["mean"])
        np.testing.assert_array_equal(grouped.count(), stats.xs(criterion)["count"])


def test_the_threshold_line_is_one_named_artist_moved_in_place() -> None:
    details, trades = details_frame(), outcome_trades()
    ax = P.criterion_distributions(details, trades, "b", threshold=2.5)
    first = line(ax, "threshold")
    assert list(first.get_xdata()) == [2.5, 2.5]
    assert P.set_threshold(ax, 3.5) is first
    assert list(line(ax, "threshold").get_xdata()) == [3.5, 3.5]
    P.set_threshold(ax, 40.0)  # outside the view: the x axis grows to show it
    assert ax.get_xlim()[1] >= 40.0
    assert P.set_threshold(ax, None) is None
    assert not [ln for ln in ax.lines if ln.get_label() == "threshold"]
    added = P.set_threshold(ax, 1.5)
    assert added is line(ax, "threshold")
    assert "threshold" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_an_unknown_criterion_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="no criterion 'z' in the frame; it has a, b, c"):
        P.criterion_distributions(details_frame(), outcome_trades(), "z")


# --------------------------------------------------------------------------------------------
# Every plot: ax= honoured, renders; the accessor's door and its column checks
# --------------------------------------------------------------------------------------------

DRAWERS: dict[str, Callable[[Axes], Axes]] = {
    "roi_distribution": lambda ax: P.roi_distribution(roi_frame(), ax=ax),
    "metric_by": lambda ax: P.metric_by(HAND, "quant_name", ax=ax),
    "candles": lambda ax: P.candles(
        ohlcv_frame(), evaluations=candle_evaluations(), trades=candle_trades(), ax=ax
    ),
    "pass_rate_over_time": lambda ax: P.pass_rate_over_time(EVALS, ax=ax),
    "criterion_distributions": lambda ax: P.criterion_distributions(
        details_frame(), outcome_trades(), "a", threshold=2.0, ax=ax
    ),
}


@pytest.mark.parametrize("name", sorted(DRAWERS))
def test_each_plot_draws_into_the_given_axes_and_renders(name: str) -> None:
    fig, (left, right) = plt.subplots(1, 2)
    assert DRAWERS[name](right) is right
    assert left.has_data() is False
    assert right.has_data()
    png(fig)


@pytest.mark.parametrize(
    "draw",
    [
        lambda: P.candles(ohlcv_frame().iloc[:0], evaluations=candle_evaluations()),
        lambda: P.candles(ohlcv_frame().iloc[:1], trades=candle_trades()),  # width: timeframe
        lambda: P.roi_distribution(roi_frame().iloc[:0]),
        lambda: P.metric_by(HAND.iloc[:0], "chain"),
        lambda: P.pass_rate_over_time(EVALS.iloc[:0]),
        lambda: P.criterion_distributions(details_frame(), outcome_trades().iloc[3:], "a"),
    ],
)
def test_empty_inputs_draw_empty_figures(draw: Callable[[], Axes]) -> None:
    png(draw().figure)


def test_each_plot_function_is_a_method_of_df_quant_plot() -> None:
    functions = {
        "candles",
        "criterion_distributions",
        "equity",
        "metric_by",
        "pass_rate",  # the deprecated old name of pass_rate_over_time, one release
        "pass_rate_over_time",
        "pnl_calendar",
        "roi_distribution",
        "rolling",
        "drawdowns",
    }
    # Figures of backtest frames (what_if, what_if_grid, walk_forward): functions only.
    research = {"threshold_heatmap", "walk_forward_folds", "what_if_curve"}
    assert functions | research | {"QuantPlots", "THRESHOLD", "set_threshold"} == set(P.__all__)
    for name in functions:
        assert callable(getattr(P.QuantPlots, name)), name


def test_the_accessor_draws_the_same_figures() -> None:
    top, _ = HAND.quant.plot.equity()
    np.testing.assert_array_equal(
        line(top, "realised equity").get_ydata(), HAND.quant.equity_curve()["equity_usd"]
    )
    ax = HAND.quant.plot.metric_by("quant_name", "roi")
    np.testing.assert_array_equal(
        [p.get_height() for p in ax.containers[0].patches], HAND.quant.by("quant_name")["roi"]
    )
    given = plt.subplots()[1]
    assert ohlcv_frame().quant.plot.candles(trades=candle_trades(), ax=given) is given
    assert EVALS.quant.plot.pass_rate_over_time("D", by="chain") is not None
    hist = details_frame().quant.plot.criterion_distributions(outcome_trades(), "a")
    assert list(bars(hist)) == ["win (n=2)", "loss (n=1)"]
    assert list(bars(roi_frame().quant.plot.roi_distribution())) == [
        "Breakeven (n=1)",
        "Loss (n=4)",
        "Profit (n=3)",
    ]


@pytest.mark.parametrize(
    ("draw", "message"),
    [
        (
            lambda: HAND.drop(columns=["pnl_usd"]).quant.plot.equity(),
            r"^plot\.equity\(\) needs a trades frame: missing columns pnl_usd; "
            r"load one with qsc\.load_trades\(\)$",
        ),
        (
            lambda: HAND.quant.plot.roi_distribution(),
            r"^plot\.roi_distribution\(\) needs a trades frame: missing columns roi",
        ),
        (
            lambda: HAND.quant.plot.metric_by("chian"),
            r"^plot\.metric_by\(\) needs a trades frame: missing columns chian",
        ),
        (
            lambda: EVALS.quant.plot.candles(),
            r"^plot\.candles\(\) needs an OHLCV frame: missing columns open, high, low, close; "
            r"load one with qsc\.load_ohlcv\(\)$",
        ),
        (
            lambda: ohlcv_frame().quant.plot.candles(evaluations=EVALS),
            r"^plot\.candles\(\) needs an evaluations frame as its evaluations: "
            r"missing columns detection_price_usd",
        ),
        (
            lambda: ohlcv_frame().quant.plot.candles(trades=HAND),
            r"^plot\.candles\(\) needs a trades frame as its trades: "
            r"missing columns detection_price_usd",
        ),
        (
            lambda: ohlcv_frame().quant.plot.candles(transactions=EVALS),
            r"^plot\.candles\(\) needs a transactions frame as its transactions: missing "
            r"columns trade_id, action, timestamp, price_usd; load one with qsc\.load_trade",
        ),
        (
            lambda: HAND.quant.plot.pass_rate_over_time(),
            r"^plot\.pass_rate_over_time\(\) needs an evaluations frame or a criterion frame: "
            r"missing "
            r"columns passed, created_at",
        ),
        (
            lambda: EVALS.quant.plot.criterion_distributions(HAND, "a"),
            r"^plot\.criterion_distributions\(\) needs a criterion frame: missing columns "
            r"criterion, value",
        ),
        (
            lambda: details_frame().quant.plot.criterion_distributions(EVALS, "a"),
            r"^plot\.criterion_distributions\(\) needs a trades frame as its trades: missing "
            r"columns status, pnl_usd",
        ),
    ],
)
def test_a_missing_column_is_the_accessors_error(draw: Callable[[], Any], message: str) -> None:
    with pytest.raises(MissingColumnsError, match=message) as caught:
        draw()
    assert caught.value.method.startswith("plot.")
    assert not plt.get_fignums()  # checked before any figure was made


def test_plots_never_show_and_never_stamp_the_time() -> None:
    for path in PLOTS_SRC.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not names & {"show", "now", "today", "utcnow"}, path.name


# --------------------------------------------------------------------------------------------
# Real frames from the sandbox, over HTTP
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Quant 1's trades, its most traded token's candles, evaluations and one trade's fills."""
    cache = tmp_path_factory.mktemp("plots-cache")
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        trades = L.load_trades(1, client=c)
        closed = trades[trades["status"] == "Closed"]
        token = int(closed["token_id"].value_counts().index[0])
        ohlcv = L.load_ohlcv(token, "1h", client=c)
        evaluations = L.load_evaluations(1, start="2026-09-17", end="2026-10-01", client=c)
        ids = closed["evaluation_id"].dropna().astype(int).tolist()[:40]
        details = L.load_eval_details(ids, client=c)
        last = closed[closed["token_id"] == token].sort_values("closed_at").iloc[-1]
        fills = L.load_trade(int(last["trade_id"]), client=c).transactions
    return {
        "trades": trades,
        "token": token,
        "ohlcv": ohlcv,
        "evaluations": evaluations,
        "details": details,
        "transactions": fills,
    }


def test_the_accessor_plots_real_sandbox_frames(real: dict[str, Any]) -> None:
    trades = real["trades"]
    top, bottom = trades.quant.plot.equity()
    np.testing.assert_array_equal(
        line(top, "realised equity").get_ydata(), trades.quant.equity_curve()["equity_usd"]
    )
    np.testing.assert_array_equal(
        line(bottom, "drawdown").get_ydata(), trades.quant.drawdown()["drawdown"]
    )
    png(top.figure)

    drawn = bars(trades.quant.plot.roi_distribution())
    closed = trades[trades["status"] == "Closed"]
    assert sum(h.sum() for h in drawn.values()) == len(closed)

    by_chain = trades.quant.plot.metric_by("chain", "total_pnl_usd")
    np.testing.assert_allclose(
        [p.get_height() for p in by_chain.containers[0].patches],
        trades.quant.by("chain")["total_pnl_usd"],
    )
    png(by_chain.figure)


@pytest.mark.slow
def test_real_candles_with_evaluations_trades_and_fills(real: dict[str, Any]) -> None:
    ohlcv, evaluations, trades = real["ohlcv"], real["evaluations"], real["trades"]
    ax = ohlcv.quant.plot.candles(
        evaluations=evaluations, trades=trades, transactions=real["transactions"]
    )
    assert len(ax.containers[0].patches) == len(ohlcv)
    mine = evaluations[(evaluations["token_id"] == real["token"]) & evaluations["passed"]]
    passed = line(ax, "evaluation passed")
    np.testing.assert_allclose(passed.get_ydata(), mine["detection_price_usd"])
    entries = line(ax, "entry").get_ydata()
    traded = trades[(trades["token_id"] == real["token"])]
    assert len(entries) == len(traded)  # every trade of the token is inside the candles' span
    buy = real["transactions"].query("action == 'BUY'")["price_usd"].iloc[0]
    assert buy in entries  # the fill replaced that trade's detection price
    symbol = traded["token_symbol"].iloc[0]
    assert ax.get_title() == f"{symbol}: 1h candles"
    png(ax.figure)


def test_real_pass_rate_and_criterion_distributions(real: dict[str, Any]) -> None:
    evaluations, details, trades = real["evaluations"], real["details"], real["trades"]
    ax = evaluations.quant.plot.pass_rate_over_time("D", by="evaluation_type")
    table = evaluations.quant.pass_rates("evaluation_type", freq="D")
    buy = table.xs("TOKEN_BUY", level="evaluation_type")
    drawn = line(ax, f"TOKEN_BUY (n={buy['total'].sum():,})")
    np.testing.assert_array_equal(drawn.get_ydata(), buy["pass_rate"].to_numpy())
    png(ax.figure)

    criterion = str(details["criterion"].iloc[0])
    hist = details.quant.plot.criterion_distributions(trades, criterion, threshold=1.0)
    stats = details.quant.values_by_outcome(trades).xs(criterion)
    counts = {label.split(" ")[0]: h.sum() for label, h in bars(hist).items()}
    assert counts == {o: stats["count"].get(o, 0) for o in ("win", "loss")}
    png(hist.figure)


@pytest.fixture(scope="module")
def cinder(sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Cinder's trades of every decision, and its rejected ones alone."""
    cache = tmp_path_factory.mktemp("plots-cinder-cache")
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(cache), progress=False) as c:
        return {
            "all": L.load_trades(3, trading_status="all", client=c),
            "executed": L.load_trades(3, client=c),
            "rejected": L.load_trades(3, trading_status="rejected", client=c),
        }


def test_equity_draws_the_executed_trades_and_labels_any_other_curve(
    cinder: dict[str, Any],
) -> None:
    everything, executed = cinder["all"], cinder["executed"]
    top, bottom = everything.quant.plot.equity()
    realised = line(top, "realised equity")
    np.testing.assert_array_equal(realised.get_ydata(), executed.quant.equity_curve()["equity_usd"])
    closed = int((executed["status"] == "Closed").sum())
    assert top.get_title() == f"Realised equity and drawdown ({closed:,} closed executed trades)"
    assert line(bottom, "drawdown").get_ydata().min() == pytest.approx(-0.135, abs=5e-4)

    top, bottom = everything.quant.plot.equity(execution="all")
    mixed = line(top, "equity, hypothetical trades included")
    assert len(mixed.get_ydata()) == int((everything["status"] == "Closed").sum())
    assert top.get_title().startswith("Equity and drawdown, hypothetical included (")
    assert line(bottom, "drawdown").get_ydata().min() == pytest.approx(-0.322, abs=5e-4)

    top, _ = cinder["rejected"].quant.plot.equity()  # nothing executed: hypothetical, said so
    line(top, "hypothetical equity")
    assert top.get_title().startswith("Hypothetical equity and drawdown (")
    assert top.get_title().endswith(" closed hypothetical trades, never executed)")
    png(top.figure)


def test_roi_and_metric_plots_name_the_trades_they_draw(cinder: dict[str, Any]) -> None:
    everything, executed = cinder["all"], cinder["executed"]
    ax = everything.quant.plot.roi_distribution()
    assert sum(h.sum() for h in bars(ax).values()) == int((executed["status"] == "Closed").sum())
    assert ax.get_title() == "ROI by result (executed trades; closed only)"
    shadow = everything.quant.plot.roi_distribution(execution="hypothetical")
    assert shadow.get_title() == "ROI by result (hypothetical trades, never executed; closed only)"
    by_decision = everything.quant.plot.metric_by("decision", "trades", execution="all")
    assert by_decision.get_title() == "trades by decision (executed and hypothetical trades)"
    heights = [p.get_height() for p in by_decision.containers[0].patches]
    assert heights == everything.quant.by("decision", execution="all")["trades"].tolist()
    assert everything.quant.plot.metric_by("decision", "trades").get_title() == "trades by decision"
