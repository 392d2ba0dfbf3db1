"""The trade figures of issue 13 draw the analytics' numbers: rolling metrics, the worst
drawdowns on the equity curve, the PnL calendar, metric_by's grouped bars, grey candles.

Headless (Agg), hand frames (``HAND``: tests/_helpers/frames.py). Each figure is read back
(line points, span extents, image cells) and compared with the analytics function it draws;
empty inputs draw an empty figure that still has its title and axis labels.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from _helpers import HAND, at, trades_frame
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from quantscope import analytics as A
from quantscope import plots as P
from quantscope._errors import MissingColumnsError
from quantscope.plots import market


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def utc(values: Any) -> np.ndarray:
    return pd.DatetimeIndex(values).tz_convert(None).to_numpy(dtype="datetime64[ms]")


def line(ax: Axes, label: str) -> Line2D:
    found = [ln for ln in ax.lines if ln.get_label() == label]
    assert len(found) == 1, [ln.get_label() for ln in ax.lines]
    return found[0]


def png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=60)
    data = buffer.getvalue()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 2_000
    return data


def cells(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts if t.get_gid() == "cell"]


def falls() -> pd.DataFrame:
    """One quant's closes: -10, +20, -30, -5, +50, -100 on Sept 1..6 at 06:00 (three falls)."""
    pnl = [-10.0, 20.0, -30.0, -5.0, 50.0, -100.0]
    return trades_frame(
        [
            {"id": i + 1, "opened": at(i + 1), "closed": at(i + 1, 6), "pnl": p}
            for i, p in enumerate(pnl)
        ]
    )


# --------------------------------------------------------------------------------------------
# Rolling
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("window", [3, "2D"])
def test_rolling_lines_are_the_rolling_table(window: Any) -> None:
    win, pnl, sharpe = P.rolling(HAND, window)
    table = A.rolling(HAND, window)
    unit = "trades" if isinstance(window, int) else "days"
    words = f"last {3 if unit == 'trades' else 2} {unit}"
    for ax, name, short in ((win, "win_rate", "win rate"), (pnl, "pnl_usd", "pnl")):
        drawn = line(ax, f"{short}, {words}")
        np.testing.assert_array_equal(drawn.get_ydata(), table[name].to_numpy(np.float64))
        np.testing.assert_array_equal(drawn.get_xdata(), utc(table.index))
    np.testing.assert_array_equal(
        line(sharpe, f"sharpe, {words}").get_ydata(), table["sharpe"].to_numpy(np.float64)
    )
    overall = A.win_rate(HAND)  # 3 of 8 closed executed trades
    assert list(line(win, f"all trades ({overall:.1%})").get_ydata()) == [overall] * 2
    assert win.get_title() == f"Rolling metrics, {words} (8 closed executed trades)"
    assert sharpe.get_ylabel().startswith(
        "Sharpe\n(per trade" if unit == "trades" else "Sharpe\n(daily"
    )
    png(win.figure)


def test_a_short_days_window_says_why_it_has_no_sharpe() -> None:
    *_, sharpe = P.rolling(HAND, "2D")
    [note] = [t.get_text() for t in sharpe.texts if t.get_gid() == "empty"]
    assert note.startswith("Sharpe NaN: a window of 2 days is shorter than MIN_RATIO_DAYS")


# --------------------------------------------------------------------------------------------
# Worst drawdowns
# --------------------------------------------------------------------------------------------


def spans(ax: Axes) -> dict[str, tuple[float, float, str]]:
    """Each drawdown span's (left, right, label) by gid."""
    found = {}
    for patch in ax.patches:
        gid = patch.get_gid() or ""
        if gid.startswith("drawdown-"):
            x = patch.get_x()  # axvspan draws a Rectangle in data x
            found[gid] = (x, x + patch.get_width(), patch.get_label())
    return found


def test_the_shaded_spans_are_the_drawdown_tables_dates() -> None:
    frame = falls()
    ax = P.drawdowns(frame, 3)
    table = A.worst_drawdowns(frame, 3)
    drawn = spans(ax)
    assert sorted(drawn) == ["drawdown-1", "drawdown-2", "drawdown-3"]
    for rank, row in table.iterrows():
        left, right, label = drawn[f"drawdown-{rank}"]
        end = row["recovery"] if row["recovered"] else frame["closed_at"].max()
        np.testing.assert_allclose(
            [left, right], matplotlib.dates.date2num(utc([row["start"], end]))
        )
        assert label.startswith(f"#{rank} {row['depth']:.1%} (")
    assert drawn["drawdown-1"][2].endswith("not recovered)")  # the last fall, still open
    curve = A.equity_curve(frame)
    np.testing.assert_array_equal(line(ax, "realised equity").get_ydata(), curve["equity_usd"])
    assert ax.get_title() == "Worst 3 of 3 drawdowns (6 closed executed trades)"
    png(ax.figure)


def test_drawdowns_shade_only_the_n_worst() -> None:
    ax = P.drawdowns(falls(), 1)
    assert list(spans(ax)) == ["drawdown-1"]
    assert ax.get_title().startswith("Worst 1 of 3 drawdowns")


# --------------------------------------------------------------------------------------------
# PnL calendar
# --------------------------------------------------------------------------------------------


def year_end_frame() -> pd.DataFrame:
    closes = [pd.Timestamp(d, tz="UTC") for d in ("2025-12-02", "2025-12-30", "2026-01-14")]
    return trades_frame(
        [
            {"id": i + 1, "opened": c - pd.Timedelta(hours=2), "closed": c, "pnl": p}
            for i, (c, p) in enumerate(zip(closes, [10.0, -4.0, 7.0], strict=True))
        ]
    )


@pytest.mark.parametrize("freq", ["M", "W"])
def test_calendar_cells_are_the_calendar_table(freq: str) -> None:
    frame = year_end_frame()
    ax = P.pnl_calendar(frame, freq)
    table = A.pnl_calendar(frame, freq)
    [image] = ax.images
    np.testing.assert_array_equal(image.get_array().filled(np.nan), table.to_numpy())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2025", "2026"]
    if freq == "M":
        assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["Jan", "Feb"]
        assert cells(ax) == ["$6\nn=2", "$7\nn=1"]  # row 2025 (Dec), then 2026 (Jan)
    else:
        assert sorted(cells(ax)) == ["$10\nn=1", "$7\nn=1", "-$4\nn=1"]
    assert ax.get_title() == f"total pnl per {'month' if freq == 'M' else 'week'} (executed trades)"
    png(ax.figure)


def test_a_calendar_of_another_metric_and_of_all_trades() -> None:
    frame = year_end_frame().assign(decision=pd.Categorical(["APPROVE", "REJECT", "APPROVE"]))
    ax = P.pnl_calendar(frame, metric="win_rate", execution="all")
    np.testing.assert_array_equal(
        ax.images[0].get_array().filled(np.nan),
        A.pnl_calendar(frame, metric="win_rate", execution="all").to_numpy(),
    )
    assert ax.get_title() == "win rate per month (executed and hypothetical trades)"
    assert cells(ax) == ["50.0%\nn=2", "100.0%\nn=1"]
    executed = P.pnl_calendar(frame)  # the rejected trade is hypothetical: not counted
    assert cells(executed) == ["$10\nn=1", "$7\nn=1"]


# --------------------------------------------------------------------------------------------
# metric_by with freq: grouped bars
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("by", "freq", "metric"),
    [
        (["quant_name", "chain"], "W", "max_drawdown"),
        ("quant_name", "D", "total_pnl_usd"),
        ("chain", "M", "win_rate"),
    ],
)
def test_metric_by_with_freq_draws_a_group_per_period_and_a_bar_per_key(
    by: Any, freq: str, metric: str
) -> None:
    ax = P.metric_by(HAND, by, metric, freq=freq)
    table = A.by(HAND, by, freq=freq)
    periods = pd.DatetimeIndex(table.index.get_level_values("period")).unique().sort_values()
    flat = list(table.index.droplevel("period").to_flat_index())
    keys = list(dict.fromkeys(flat))
    assert len(ax.containers) == len(keys)
    assert [t.get_text() for t in ax.get_xticklabels()] == [p.strftime("%Y-%m-%d") for p in periods]
    for container, key in zip(ax.containers, keys, strict=True):
        mine = table[[k == key for k in flat]]
        by_period = mine[metric].set_axis(mine.index.get_level_values("period"))
        expected = by_period.reindex(periods).to_numpy(dtype=np.float64)
        heights = np.array([p.get_height() for p in container.patches])
        np.testing.assert_array_equal(heights, expected)
        label = " / ".join(key) if isinstance(key, tuple) else key
        assert container.get_label() == label
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [c.get_label() for c in ax.containers]
    png(ax.figure)


def test_hands_daily_pnl_by_quant_is_six_groups_of_two_bars() -> None:
    ax = P.metric_by(HAND, "quant_name", "total_pnl_usd", freq="D")
    atlas, borealis = ax.containers
    np.testing.assert_array_equal(
        [p.get_height() for p in atlas.patches], [100.0, -80.0, np.nan, 0.0, 240.0, 0.0]
    )
    np.testing.assert_array_equal(
        [p.get_height() for p in borealis.patches], [np.nan, np.nan, -120.0, np.nan, np.nan, np.nan]
    )
    # 09-06: Atlas's open position, a by() row of 0 closed trades; Borealis has no row there.
    assert len(ax.get_xticklabels()) == 6


# --------------------------------------------------------------------------------------------
# Candles: greys, so the trade lines' outcome colours stand out
# --------------------------------------------------------------------------------------------


def test_candle_colours_never_match_the_trade_colours() -> None:
    start = pd.Timestamp("2026-09-01", tz="UTC")
    hours = pd.DatetimeIndex([start + pd.Timedelta(hours=i) for i in range(4)], name="timestamp")
    ohlcv = pd.DataFrame(
        {
            "open": [1.0, 1.2, 1.1, 1.1],
            "high": [1.3, 1.25, 1.2, 1.4],
            "low": [0.9, 1.0, 1.05, 1.0],
            "close": [1.2, 1.1, 1.1, 1.35],
        },
        index=hours.as_unit("ms"),
    )
    trades = trades_frame(
        [
            {"id": 1, "opened": start, "closed": start + pd.Timedelta(hours=2), "pnl": 5.0},
            {"id": 2, "opened": start, "closed": start + pd.Timedelta(hours=3), "pnl": -2.0},
        ]
    ).assign(detection_price_usd=[1.02, 1.21])
    ax = P.candles(ohlcv, trades=trades)
    bodies = {mcolors.to_hex(p.get_facecolor()) for p in ax.containers[0].patches}
    assert bodies == {market.CANDLE_UP, market.CANDLE_DOWN}
    trade_colors = {
        mcolors.to_hex(c.get_color()[0]) for c in ax.collections if "trade" in str(c.get_label())
    }
    trade_colors |= {mcolors.to_hex(line(ax, name).get_color()) for name in ("entry", "exit")}
    assert trade_colors
    assert not bodies & trade_colors
    for rgb in bodies:  # greys: no hue to confuse with a winning or losing trade
        r, g, b = mcolors.to_rgb(rgb)
        assert r == g == b


# --------------------------------------------------------------------------------------------
# Every new trade figure: ax= honoured, empty inputs, the accessor
# --------------------------------------------------------------------------------------------

DRAWERS: dict[str, Callable[[Axes], Any]] = {
    "drawdowns": lambda ax: P.drawdowns(HAND, ax=ax),
    "pnl_calendar": lambda ax: P.pnl_calendar(HAND, ax=ax),
    "metric_by": lambda ax: P.metric_by(HAND, "quant_name", freq="D", ax=ax),
}


@pytest.mark.parametrize("name", sorted(DRAWERS))
def test_each_figure_draws_into_the_given_axes(name: str) -> None:
    fig, (left, right) = plt.subplots(1, 2)
    assert DRAWERS[name](right) is right
    assert left.has_data() is False
    assert right.has_data()
    png(fig)


def test_rolling_draws_into_the_given_axes() -> None:
    fig, given = plt.subplots(3, 1)
    assert P.rolling(HAND, 2, axes=given) == tuple(given)
    assert len(fig.axes) == 3


NO_CLOSED = HAND[HAND["status"] == "Open"]


@pytest.mark.parametrize(
    ("draw", "title"),
    [
        (lambda: P.rolling(NO_CLOSED, 5)[0], "Rolling metrics, last 5 trades (0 closed "),
        (lambda: P.rolling(NO_CLOSED, "30D")[0], "Rolling metrics, last 30 days (0 closed "),
        (lambda: P.drawdowns(NO_CLOSED), "Worst 0 of 0 drawdowns (0 closed executed trades)"),
        (lambda: P.pnl_calendar(HAND.iloc[:0]), "total pnl per month (executed trades)"),
        (lambda: P.pnl_calendar(HAND.iloc[:0], "W"), "total pnl per week (executed trades)"),
        (lambda: P.metric_by(HAND.iloc[:0], "chain", freq="W"), "win rate by chain / week"),
    ],
)
def test_empty_inputs_draw_an_empty_labelled_figure(draw: Callable[[], Axes], title: str) -> None:
    ax = draw()
    assert ax.get_title().startswith(title)
    assert ax.get_xlabel() or ax.figure.axes[-1].get_xlabel()
    assert not ax.images
    assert not [p for p in ax.patches if p.get_gid()]
    assert all(len(ln.get_ydata()) in (0, 2) for ln in ax.lines)  # no data; reference lines
    png(ax.figure)


def test_the_accessor_draws_the_same_figures_and_checks_columns() -> None:
    win, _, _ = HAND.quant.plot.rolling(3)
    np.testing.assert_array_equal(
        line(win, "win rate, last 3 trades").get_ydata(), HAND.quant.rolling(3)["win_rate"]
    )
    ax = falls().quant.plot.drawdowns(2)
    assert sorted(spans(ax)) == ["drawdown-1", "drawdown-2"]
    calendar = year_end_frame().quant.plot.pnl_calendar("W")
    np.testing.assert_array_equal(
        calendar.images[0].get_array().filled(np.nan),
        year_end_frame().quant.pnl_calendar("W").to_numpy(),
    )
    for method in ("rolling", "drawdowns", "pnl_calendar"):
        with pytest.raises(MissingColumnsError, match=rf"^plot\.{method}\(\) needs a trades frame"):
            getattr(HAND.drop(columns=["pnl_usd"]).quant.plot, method)()


# --------------------------------------------------------------------------------------------
# Issue 21: fills at their price, n per bar, the heatmap's class and interval
# --------------------------------------------------------------------------------------------


def test_candles_draw_a_trades_exit_at_its_fill_price_not_the_candle_close() -> None:
    """ZUMDE was drawn at its candle's close ($0.000326) against a fill of $0.000249."""
    start = pd.Timestamp("2026-09-01", tz="UTC")
    hours = pd.DatetimeIndex([start + pd.Timedelta(hours=i) for i in range(4)], name="timestamp")
    ohlcv = pd.DataFrame(
        {
            "open": [1.0, 1.2, 1.1, 1.1],
            "high": [1.3, 1.25, 1.2, 1.4],
            "low": [0.9, 1.0, 1.05, 1.0],
            "close": [1.2, 1.1, 1.1, 1.35],
        },
        index=hours.as_unit("ms"),
    )
    trades = trades_frame(
        [
            {
                "id": 1,
                "opened": start,
                "closed": start + pd.Timedelta(hours=2, minutes=5),
                "pnl": 76.4,
            }
        ]
    ).assign(
        detection_price_usd=[1.02],
        tokens_bought=[100.0],
        tokens_sold=[100.0],
    )
    # bought 100 tokens for 100 USD (1.00 each), sold them for 176.40 USD (1.764 each)
    ax = P.candles(ohlcv, trades=trades)
    assert line(ax, "entry").get_ydata()[0] == pytest.approx(1.0)
    assert line(ax, "exit").get_ydata()[0] == pytest.approx(1.764)  # not the close, 1.1
    exit_y, entry_y = line(ax, "exit").get_ydata()[0], line(ax, "entry").get_ydata()[0]
    assert exit_y / entry_y - 1 == pytest.approx(0.764)  # the line's rise is the trade's ROI


def test_win_rate_by_chain_shows_the_trades_of_each_bar() -> None:
    ax = P.metric_by(HAND, "chain", "win_rate")
    table = A.by(HAND, "chain")
    texts = [t.get_text() for t in ax.containers[0].datavalues and ax.texts]
    for (_, row), text in zip(table.iterrows(), texts, strict=True):
        assert text.endswith(f"n={row['trades']:,}"), texts
        assert text.startswith(f"{row['win_rate']:.1%}".rstrip("%")[:2]), texts


def test_the_heatmap_names_its_class_question_and_interval() -> None:
    grid = _two_criteria_grid()
    ax = P.threshold_heatmap(grid, "win_rate", subject="MID_CAP")
    assert "in MID_CAP" in ax.get_title()
    assert "(signal)" in ax.get_title()
    drawn = cells(ax)
    lo = grid["win_rate_lo"].to_numpy()
    assert len(drawn) == len(grid)
    assert all("[" in text and "n=" in text for text in drawn)
    assert any(f"{100 * v:.1f}%" in "".join(drawn) or f"{v:.1%}" in "".join(drawn) for v in lo)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # the cells' intervals come from backtest.uncertainty (whole tokens), not Wilson
    assert grid.attrs["what_if"]["guards"]["bootstrap_unit"] == "token"
    assert any("95% interval (whole-token bootstrap" in t for t in legend), legend
    assert not any("Wilson" in t for t in legend), legend


def _two_criteria_grid() -> pd.DataFrame:
    from quantscope import backtest as bt

    rng = np.random.default_rng(5)
    n = 80
    frame = pd.DataFrame(
        {
            "trade_id": np.arange(1, n + 1),
            "quant_id": 1,
            "token_id": rng.integers(1, 25, n),
            "market_cap_class": pd.Categorical(["MID_CAP"] * n),
            "status": pd.Categorical(["Closed"] * n),
            "opened_at": pd.date_range("2026-09-01", periods=n, freq="h", tz="UTC"),
            "pnl_usd": rng.normal(1, 10, n),
            "buy_cost_usd": 100.0,
            "a": rng.integers(0, 5, n).astype(float),
            "b": rng.integers(0, 5, n).astype(float),
        }
    )
    frame["closed_at"] = frame["opened_at"] + pd.Timedelta(hours=1)
    frame["profitable"] = frame["pnl_usd"] > 0
    frame["roi"] = frame["pnl_usd"] / frame["buy_cost_usd"]
    return bt.what_if_grid(
        frame, ("a", "b"), ([1.0, 2.0], [1.0, 3.0]), rule="filter", operators=("V_GTE_T", "V_GTE_T")
    )
