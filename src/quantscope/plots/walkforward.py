"""Walk-forward folds: each fold's in-sample gain against its out-of-sample gain.

It draws a ``backtest.walk_forward`` table as it is: per (quant, market-cap class, fold), the
win-rate change the chosen threshold made on the trades it was chosen on (``in_sample_gain``)
next to what the same threshold did on the later trades it never saw
(``out_of_sample_gain``), and the means ``attrs["walk_forward"]`` reports as dashed lines. A
criterion that carries signal keeps its bars on the right; one that fitted noise does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from quantscope.plots import _style as S

IN_SAMPLE = "in sample (chosen on these trades)"
OUT_OF_SAMPLE = "out of sample (never seen)"


def _fold_label(row: pd.Series) -> str:
    return f"q{row['quant_id']} {row['market_cap_class']}\nfold {row['fold']}"


def walk_forward_folds(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """In-sample and out-of-sample win-rate gain of each walk-forward fold, side by side.

    Args:
        table: ``backtest.walk_forward(features, criterion, ...)``.

    Returns:
        The Axes: two bar containers labelled ``IN_SAMPLE`` and ``OUT_OF_SAMPLE`` whose
        heights are the table's ``in_sample_gain`` and ``out_of_sample_gain`` in row order
        (the out-of-sample bars labelled with the test trades kept), and the two means as
        horizontal lines labelled ``"mean in sample"`` / ``"mean out of sample"``.
    """
    ax = S.new_axes(ax, figsize=(max(6.0, 0.9 * len(table) + 2.0), 4.0))
    info: dict[str, Any] = dict(table.attrs.get("walk_forward", {}))
    positions = np.arange(len(table))
    width = 0.4
    ins, outs = S.column(table, "in_sample_gain"), S.column(table, "out_of_sample_gain")
    ax.bar(positions - width / 2, ins, width, color=S.NEUTRAL, label=IN_SAMPLE)
    out_bars = ax.bar(positions + width / 2, outs, width, color=S.LINE, label=OUT_OF_SAMPLE)
    if len(table) and "test_kept" in table.columns:
        kept = [f"n={int(k):,}" for k in table["test_kept"]]
        ax.bar_label(out_bars, labels=kept, fontsize="x-small", padding=2)
    for name, style, color in (("in_sample", "--", S.NEUTRAL), ("out_of_sample", "--", S.LINE)):
        mean = info.get(f"mean_{name}_gain")
        if mean is not None and np.isfinite(mean):
            words = name.replace("_", " ")
            ax.axhline(
                mean,
                linestyle=style,
                color=color,
                linewidth=1,
                label=f"mean {words} ({S.PERCENT.text(mean)})",
            )
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xticks(positions, [_fold_label(row) for _, row in table.iterrows()])
    ax.tick_params(axis="x", labelsize="x-small")
    criterion = info.get("criterion", "threshold")
    rule = "upper bound: hard filter" if info.get("upper_bound") else "replayed rule"
    ax.set_title(f"{criterion}: threshold chosen on the past, tried ahead ({rule})")
    ax.set_ylabel("win-rate change vs current\n(percentage points)")
    ax.yaxis.set_major_formatter(S.PERCENT.axis())
    ax.set_xlabel("quant, market-cap class and fold")
    ax.grid(axis="y", alpha=0.3)
    skipped = info.get("skipped") or []
    if skipped:
        ax.text(
            0.99,
            0.02,
            f"left out (too few trades): {len(skipped)} quant/class group(s)",
            transform=ax.transAxes,
            ha="right",
            fontsize="x-small",
            color=S.NEUTRAL,
        )
    if table.empty:
        S.empty_note(ax, "no fold to draw")
    S.legend(ax, loc="best")
    return ax
