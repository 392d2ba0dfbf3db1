"""plots.walk_forward_folds on made-up walk-forward tables: labels that never overlap however
many folds, the question named, an interval bar per fold, the search in the caption.

The figure of a real table (the widget world) is checked in test_plots_research.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from quantscope import plots as P
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.plots import walkforward


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def folds_table(n: int, criteria: tuple[str, ...] = ("smart_money_buys",)) -> pd.DataFrame:
    """``n`` folds per criterion over 3 quants x 3 classes, as ``walk_forward`` lays them out."""
    rng = np.random.default_rng(n)
    rows = []
    for criterion in criteria:
        for i in range(n):
            gain = float(rng.normal(0.0, 0.03))
            rows.append(
                {
                    "criterion": criterion,
                    "quant_id": 1 + i % 3,
                    "market_cap_class": ("DEGEN_CAP", "LOW_CAP", "MID_CAP")[(i // 3) % 3],
                    "fold": 1 + i // 9,
                    "in_sample_gain": gain + 0.02,
                    "out_of_sample_gain": gain,
                    "d_win_rate_lo": gain - 0.05,
                    "d_win_rate_hi": gain + 0.04,
                    "test_kept": 50 + i,
                }
            )
    table = pd.DataFrame(rows)
    table.attrs["walk_forward"] = {
        "criterion": criteria[0] if len(criteria) == 1 else None,
        "criteria": list(criteria),
        "question": "effect",
        "combos_searched": 40 * len(table),
        "train_purged": 292,
        "train_rows_before_purge": 4767,
        "embargo": "0 days 00:00:00",
        "mean_in_sample_gain": float(table["in_sample_gain"].mean()),
        "mean_out_of_sample_gain": float(table["out_of_sample_gain"].mean()),
        "skipped": [],
    }
    return table


def visible_label_boxes(ax) -> list:
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]


@pytest.mark.parametrize(("n", "size"), [(27, (9.0, 4.0)), (120, None)])
def test_fold_labels_never_overlap(n: int, size: tuple[float, float] | None) -> None:
    """On the report's 9 x 4 in figure 27 folds' labels overlapped (each ~0.75 in wide, 0.33
    in apart); on its own figure, the figure grew to 110 in for 120 folds."""
    given = plt.subplots(figsize=size)[1] if size else None
    ax = P.walk_forward_folds(folds_table(n), ax=given)
    boxes = visible_label_boxes(ax)
    assert boxes
    for a, b in itertools.pairwise(boxes):
        assert a.x1 <= b.x0, (n, a, b)  # left to right, apart
    # Each label sits under its own fold: a thinned axis labels every k-th fold.
    ticks = ax.get_xticks()
    step = int(ticks[1] - ticks[0]) if len(ticks) > 1 else 1
    assert len(ticks) == len(range(0, n, step))
    assert ax.figure.get_figwidth() <= walkforward.MAX_WIDTH


def test_the_question_the_intervals_and_the_search_are_drawn() -> None:
    table = folds_table(9)
    ax = P.walk_forward_folds(table)
    title = ax.get_title()
    assert title.splitlines() == [
        "smart_money_buys: threshold chosen on the past, tried ahead",
        QUESTION_LABELS["effect"],
    ]
    assert "upper bound" not in title.lower()
    [bars] = [c for c in ax.containers if c.get_label() == walkforward.INTERVAL]
    segments = bars.lines[2][0].get_segments()
    x = np.arange(9) + 0.2
    assert [s[0][0] for s in segments] == pytest.approx(x)
    assert [s[0][1] for s in segments] == pytest.approx(table["d_win_rate_lo"])
    assert [s[1][1] for s in segments] == pytest.approx(table["d_win_rate_hi"])
    caption = "\n".join(t.get_text() for t in ax.texts)
    assert "360 thresholds searched over 9 fold(s)" in caption
    assert "training purged of 292 of 4,767 trades" in caption
    several = P.walk_forward_folds(folds_table(9, ("smart_money_buys", "ai_confidence")))
    assert several.get_title().startswith("smart_money_buys, ai_confidence: threshold")
    assert several.get_xticklabels()[0].get_text().startswith("smart_money_buys q1 DEGEN")
