"""The threshold-research figures draw the backtest frames as they are, on sandbox trades.

``what_if_curve`` (``bt.what_if``), ``threshold_heatmap`` (``bt.what_if_grid`` /
``bt.pivot_grid``) and ``walk_forward_folds`` (``bt.walk_forward``), on the widget tests'
quant (``widget_data``: its executed trades and their eval details, loaded over HTTP once per
session) with its playbook. Each figure is read back and compared with its frame; the
current-threshold marks sit at the playbook's buying threshold.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from _helpers import QUANT, WidgetData
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

import quantscope.loaders as L
from quantscope import IncompleteDataWarning
from quantscope import backtest as bt
from quantscope import plots as P
from quantscope._http.client import Client
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.plots import walkforward, whatif

CRITERION, SECOND = "smart_money_buys", "buy_sell_ratio"
THRESHOLDS = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0]
EFFECT, SIGNAL = QUESTION_LABELS["effect"], QUESTION_LABELS["signal"]


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def playbook(module_client: Client) -> pd.DataFrame:
    return L.load_playbook(QUANT, client=module_client)


@pytest.fixture(scope="module")
def features(widget_data: WidgetData, playbook: pd.DataFrame) -> pd.DataFrame:
    return bt.trade_features(widget_data.trades, details=widget_data.details, playbook=playbook)


def buying(playbook: pd.DataFrame, criterion: str) -> float:
    """The criterion's buying threshold, the same in every class of this playbook."""
    rows = playbook[(playbook["criterion"] == criterion) & (playbook["config_type"] == "BUYING")]
    [value] = rows["threshold"].unique()
    return float(value)


def lines(ax: Axes, label: str) -> list[Line2D]:
    return [ln for ln in ax.lines if ln.get_label() == label]


def png(fig: Any) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=50)
    assert buffer.getvalue().startswith(b"\x89PNG")


# --------------------------------------------------------------------------------------------
# The what-if curve
# --------------------------------------------------------------------------------------------


def test_the_what_if_curve_draws_the_sweep_its_bands_and_the_current_threshold(
    features: pd.DataFrame, playbook: pd.DataFrame
) -> None:
    order = [4.0, 0.0, 12.0, 1.0, 2.0, 3.0, 5.0, 6.0, 8.0]  # any order: drawn by threshold
    table = bt.what_if(features, CRITERION, order)
    win, pnl, kept = P.what_if_curve(table)
    rows = table.sort_values("threshold")
    for ax, name in ((win, "win_rate"), (pnl, "d_total_pnl_usd"), (kept, "trades")):
        [drawn] = lines(ax, EFFECT)
        np.testing.assert_array_equal(drawn.get_xdata(), THRESHOLDS)
        np.testing.assert_array_equal(drawn.get_ydata(), rows[name].to_numpy(np.float64))
        assert drawn.get_linestyle() == "-"
        current = buying(playbook, CRITERION)
        [mark] = lines(ax, f"current threshold ({current:g})")
        assert list(mark.get_xdata()) == [current, current]
    # The intervals are bands between the frame's bounds, named for what they are (issue 21:
    # the legend said "Wilson" over a bootstrap band).
    band = f"effect: {whatif.BAND}"
    assert "token-cluster bootstrap" in band
    assert "Wilson" not in band
    [rate] = [c for c in win.collections if c.get_label() == band]
    ys = np.concatenate([p.vertices[:, 1] for p in rate.get_paths()])
    for bound in ("win_rate_lo", "win_rate_hi"):
        assert np.isin(rows[bound].to_numpy(), ys).all()
    [boot] = [c for c in pnl.collections if c.get_label() == band]
    ys = np.concatenate([p.vertices[:, 1] for p in boot.get_paths()])
    assert np.isin(rows["d_total_pnl_usd_hi"].to_numpy(), ys).all()
    # Thresholds looser than the current one are shaded: their counts miss failed evaluations.
    [unseen] = [p for p in win.patches if p.get_label() == whatif.UNSEEN]
    looser = rows.loc[rows["admits_unseen"].to_numpy(bool), "threshold"]
    assert (unseen.get_x(), unseen.get_x() + unseen.get_width()) == (looser.min(), looser.max())
    assert win.get_title().startswith(
        f"What if {CRITERION} moved (effect: replayed rule; {len(features):,}"
    )
    assert kept.get_xlabel() == f"{CRITERION} threshold (trade kept when value ≥ threshold)"
    png(win.figure)


def test_small_samples_are_flagged_and_the_signal_is_a_dashed_second_question(
    features: pd.DataFrame,
) -> None:
    """Issue 21: the filter is drawn as the other question (the signal), never as an "upper
    bound" (it lies below the replayed line in the PnL and trades panels)."""
    replayed = bt.what_if(features, CRITERION, THRESHOLDS)
    signal = bt.what_if(features, CRITERION, THRESHOLDS, rule="filter")
    win, _, kept = P.what_if_curve(replayed, signal=signal)
    [dashed] = lines(kept, SIGNAL)
    assert dashed.get_linestyle() == "--"
    np.testing.assert_array_equal(dashed.get_ydata(), signal["trades"].to_numpy(np.float64))
    small = signal[signal["small_sample"].to_numpy(bool)]
    assert len(small), "the strictest filter keeps few trades in few tokens"
    flagged = lines(win, f"{whatif.S.SMALL_SAMPLE.format(trades=30, tokens=10)} (signal)")
    [marks] = flagged
    np.testing.assert_array_equal(marks.get_xdata(), small["threshold"])
    np.testing.assert_array_equal(marks.get_ydata(), small["win_rate"])
    legend = [t.get_text() for t in win.get_legend().get_texts()]
    assert EFFECT in legend
    assert SIGNAL in legend
    assert f"signal: {whatif.BAND}" in legend
    assert f"effect: {whatif.BAND}" in legend
    assert not [t for t in legend if "upper bound" in t.lower() or "wilson" in t.lower()]
    # A filter frame alone is drawn as what it is: dashed, labelled the signal.
    alone, _, _ = P.what_if_curve(signal)
    [drawn] = lines(alone, SIGNAL)
    assert drawn.get_linestyle() == "--"
    assert alone.get_title().startswith(f"What if {CRITERION} moved (signal: hard filter;")
    # The former keyword still draws the same.
    old, _, _ = P.what_if_curve(replayed, upper_bound=signal)
    assert len(lines(old, SIGNAL)) == 1


def test_a_sweep_without_bootstrap_says_so_on_the_pnl_panel(features: pd.DataFrame) -> None:
    _, pnl, _ = P.what_if_curve(bt.what_if(features, CRITERION, THRESHOLDS, bootstrap=False))
    assert not [c for c in pnl.collections if isinstance(c, PolyCollection) and c.get_label()]
    [note] = [t.get_text() for t in pnl.texts if t.get_gid() == "bootstrap-note"]
    assert note == "no interval: skipped by the caller (bootstrap=False)"


# --------------------------------------------------------------------------------------------
# The two-threshold heatmap
# --------------------------------------------------------------------------------------------


def test_heatmap_cells_are_pivot_grid_and_the_current_cell_is_outlined(
    features: pd.DataFrame, playbook: pd.DataFrame
) -> None:
    grid = bt.what_if_grid(
        features,
        (CRITERION, SECOND),
        ([1, 2, 3, 4, 6, 9], [0.6, 0.9, 1.2, 1.6, 2.2]),
        rule="filter",
    )
    for metric in ("win_rate", "d_total_pnl_usd"):
        ax = P.threshold_heatmap(grid, metric)
        table = bt.pivot_grid(grid, metric)
        [image] = ax.images
        np.testing.assert_array_equal(image.get_array().filled(np.nan), table.to_numpy())
        assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "3", "4", "6", "9"]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0.6", "0.9", "1.2", "1.6", "2.2"]
        first, second = buying(playbook, CRITERION), buying(playbook, SECOND)
        [current] = [p for p in ax.patches if p.get_gid() == "current thresholds"]
        row, col = table.index.get_loc(first), table.columns.get_loc(second)
        assert isinstance(current, Rectangle)
        assert (current.get_x(), current.get_y()) == (col - 0.5, row - 0.5)
        assert current.get_label() == f"current thresholds ({first:g}, {second:g})"
        hatched = [p for p in ax.patches if p.get_gid() == "small sample"]
        assert len(hatched) == int(grid["small_sample"].sum()) > 0
        texts = [t.get_text() for t in ax.texts if t.get_gid() == "cell"]
        kept = bt.pivot_grid(grid, "trades").to_numpy()
        assert len(texts) == table.size
        assert texts[0].endswith(f"\nn={kept[0, 0]:,.0f}")
    assert ax.get_title() == "d_total_pnl_usd over two thresholds (signal)"
    png(ax.figure)


def test_heatmap_annotation_can_be_turned_off_and_ax_is_honoured(features: pd.DataFrame) -> None:
    grid = bt.what_if_grid(features, (CRITERION, SECOND), ([1, 2, 3], [0.9, 1.2]))
    _, (left, right) = plt.subplots(1, 2)
    assert P.threshold_heatmap(grid, "trades", annotate=False, ax=right) is right
    assert not left.has_data()
    assert not [t for t in right.texts if t.get_gid() == "cell"]
    assert right.get_title() == "trades over two thresholds (effect)"


# --------------------------------------------------------------------------------------------
# Walk-forward folds
# --------------------------------------------------------------------------------------------


def test_walk_forward_bars_are_each_folds_gains(features: pd.DataFrame) -> None:
    folds = bt.walk_forward(features, CRITERION, rule="filter", min_trades=60)
    ax = P.walk_forward_folds(folds)
    ins, outs = ax.containers[:2]
    assert (ins.get_label(), outs.get_label()) == (walkforward.IN_SAMPLE, walkforward.OUT_OF_SAMPLE)
    np.testing.assert_array_equal([p.get_height() for p in ins], folds["in_sample_gain"])
    np.testing.assert_array_equal([p.get_height() for p in outs], folds["out_of_sample_gain"])
    info = folds.attrs["walk_forward"]
    [mean_out] = [ln for ln in ax.lines if str(ln.get_label()).startswith("mean out of sample")]
    assert list(mean_out.get_ydata()) == [info["mean_out_of_sample_gain"]] * 2
    assert [t.get_text() for t in ax.texts if t.get_text().startswith("n=")] == [
        f"n={k:,}" for k in folds["test_kept"]
    ]
    assert ax.get_title() == (
        f"{CRITERION}: threshold chosen on the past, tried ahead\n{QUESTION_LABELS['signal']}"
    )
    [bars] = [c for c in ax.containers if c.get_label() == walkforward.INTERVAL]
    assert len(bars.lines[2][0].get_segments()) == len(folds)  # an interval per fold
    png(ax.figure)


# --------------------------------------------------------------------------------------------
# Empty inputs: an empty figure that still says what it is
# --------------------------------------------------------------------------------------------


def test_empty_research_frames_draw_empty_labelled_figures(features: pd.DataFrame) -> None:
    sweep = bt.what_if(features, CRITERION, THRESHOLDS).iloc[:0]
    win, _, kept = P.what_if_curve(sweep)
    assert win.get_title().startswith(f"What if {CRITERION} moved")
    assert kept.get_xlabel().startswith(CRITERION)
    assert [t.get_text() for t in win.texts if t.get_gid() == "empty"] == ["no threshold to draw"]
    assert all(len(ln.get_xdata()) in (0, 2) for ln in win.lines)
    png(win.figure)

    grid = bt.what_if_grid(features, (CRITERION, SECOND), ([1, 2], [0.9])).iloc[:0]
    ax = P.threshold_heatmap(grid)
    assert not ax.images
    assert ax.get_ylabel() == f"{CRITERION} threshold (≥)"
    assert [t.get_text() for t in ax.texts] == ["no threshold pair to draw"]
    png(ax.figure)

    with pytest.warns(IncompleteDataWarning, match="left out"):
        none = bt.walk_forward(features, CRITERION, min_trades=10**6)  # every class left out
    ax = P.walk_forward_folds(none)
    assert ax.get_title().startswith(f"{CRITERION}: threshold chosen on the past")
    texts = [t.get_text() for t in ax.texts]
    assert "no fold to draw" in texts
    assert any(t.startswith("left out (too few trades)") for t in texts)
    png(ax.figure)

    for bare in (P.what_if_curve(pd.DataFrame())[0], P.threshold_heatmap(pd.DataFrame())):
        assert bare.get_title()  # a frame with no attrs at all still draws, labelled
        png(bare.figure)
    assert P.walk_forward_folds(pd.DataFrame()).get_ylabel().startswith("win-rate change")


def test_a_grid_without_the_current_pair_says_so(features: pd.DataFrame) -> None:
    grid = bt.what_if_grid(features, (CRITERION, SECOND), ([3, 4], [1.2, 1.6]), rule="filter")
    ax = P.threshold_heatmap(grid)
    assert not [p for p in ax.patches if p.get_gid() == "current thresholds"]
    assert ax.get_title().endswith("\ncurrent thresholds (2, 0.9) not on this grid")
