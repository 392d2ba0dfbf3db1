"""Walk-forward folds: each fold's in-sample gain against its out-of-sample gain and interval.

It draws a ``backtest.walk_forward`` table as it is: per (criterion, quant, market-cap class,
fold), the win-rate change the chosen threshold made on the trades it was chosen on
(``in_sample_gain``) next to what the same threshold did on the later trades it never saw
(``out_of_sample_gain``) with its interval (``d_win_rate_lo``/``d_win_rate_hi``, from
``backtest.uncertainty``), and the means ``attrs["walk_forward"]`` reports as dashed lines.
The title names the question the table answers (``questions.QUESTION_LABELS``), the caption
the size of the search. With many folds, the fold labels are turned upright and thinned so
that none overlaps another.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.plots import _style as S

IN_SAMPLE = "in sample (chosen on these trades)"
OUT_OF_SAMPLE = "out of sample (never seen)"
INTERVAL = "95 % interval out of sample (token bootstrap; rule of three where nothing moved)"
#: Widest figure drawn (inches); more folds than fit are labelled every k-th.
MAX_WIDTH = 16.0
#: Room one upright fold label needs along the axis (inches, x-small text).
_LABEL_ROOM = 0.2
_FLAT_LABELS = 10


def _fold_label(row: pd.Series, several: bool, upright: bool) -> str:
    klass = str(row["market_cap_class"]).removesuffix("_CAP")
    head = f"{row['criterion']} " if several and "criterion" in row.index else ""
    sep = " " if upright else "\n"
    return f"{head}q{row['quant_id']} {klass}{sep}fold {row['fold']}"


def _ticks(ax: Axes, table: pd.DataFrame) -> None:
    """Fold labels that do not overlap: flat for a few folds, upright and every k-th for many."""
    n = len(table)
    positions = np.arange(n)
    upright = n > _FLAT_LABELS
    several = "criterion" in table.columns and table["criterion"].nunique() > 1
    labels = [_fold_label(row, several, upright) for _, row in table.iterrows()]
    if upright:
        width = ax.bbox.width / ax.figure.dpi  # inches along the axis
        step = max(1, math.ceil(n / max(1, int(width / _LABEL_ROOM))))
        ax.set_xticks(positions[::step], labels[::step], rotation=90, fontsize="x-small")
    else:
        ax.set_xticks(positions, labels, fontsize="x-small")


def walk_forward_folds(table: pd.DataFrame, *, ax: Axes | None = None) -> Axes:
    """In-sample and out-of-sample win-rate gain of each walk-forward fold, side by side.

    Args:
        table: ``backtest.walk_forward(features, criteria, ...)``.

    Returns:
        The Axes: two bar containers labelled ``IN_SAMPLE`` and ``OUT_OF_SAMPLE`` whose
        heights are the table's ``in_sample_gain`` and ``out_of_sample_gain`` in row order
        (the out-of-sample bars labelled with the test trades kept while 30 folds or fewer),
        the out-of-sample intervals as error bars labelled ``INTERVAL``, and the two means as
        horizontal lines labelled ``"mean in sample"`` / ``"mean out of sample"``.
    """
    n = len(table)
    ax = S.new_axes(ax, figsize=(min(max(6.0, 0.6 * n + 2.0), MAX_WIDTH), 4.5))
    info: dict[str, Any] = dict(table.attrs.get("walk_forward", {}))
    positions = np.arange(n)
    width = 0.4
    ins, outs = S.column(table, "in_sample_gain"), S.column(table, "out_of_sample_gain")
    ax.bar(positions - width / 2, ins, width, color=S.NEUTRAL, label=IN_SAMPLE)
    out_bars = ax.bar(positions + width / 2, outs, width, color=S.LINE, label=OUT_OF_SAMPLE)
    if n and {"d_win_rate_lo", "d_win_rate_hi"} <= set(table.columns):
        lo, hi = S.column(table, "d_win_rate_lo"), S.column(table, "d_win_rate_hi")
        ax.errorbar(
            positions + width / 2,
            outs,
            yerr=np.vstack([np.maximum(outs - lo, 0.0), np.maximum(hi - outs, 0.0)]),
            fmt="none",
            ecolor="black",
            elinewidth=0.8,
            capsize=2,
            label=INTERVAL,
        )
    if n and n <= 30 and "test_kept" in table.columns:
        kept = [f"n={int(k):,}" for k in table["test_kept"]]
        upright = 90 if n > _FLAT_LABELS else 0
        ax.bar_label(out_bars, labels=kept, fontsize="x-small", padding=2, rotation=upright)
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
    _ticks(ax, table)
    criteria = info.get("criteria") or ([info["criterion"]] if info.get("criterion") else [])
    named = ", ".join(criteria) if 0 < len(criteria) <= 3 else f"{len(criteria)} criteria"
    asked = QUESTION_LABELS.get(info.get("question"), "question not recorded")  # type: ignore[arg-type]  # attrs are Any; unknown -> the default
    ax.set_title(
        f"{named or 'threshold'}: threshold chosen on the past, tried ahead\n{asked}",
        fontsize="medium",
    )
    ax.set_ylabel("win-rate change vs current\n(percentage points)")
    ax.yaxis.set_major_formatter(S.PERCENT.axis())
    ax.set_xlabel("criterion, quant, market-cap class and fold")
    ax.grid(axis="y", alpha=0.3)
    notes = []
    if info.get("combos_searched"):
        notes.append(
            f"{info['combos_searched']:,} thresholds searched over {n} fold(s): the best "
            "fold is a search result"
        )
    if info.get("train_purged") is not None and info.get("train_rows_before_purge"):
        notes.append(
            f"training purged of {info['train_purged']:,} of "
            f"{info['train_rows_before_purge']:,} trades still open at the test block "
            f"(embargo {info.get('embargo', '0')})"
        )
    skipped = info.get("skipped") or []
    if skipped:
        notes.append(f"left out (too few trades): {len(skipped)} quant/class group(s)")
    if notes:
        ax.text(
            0.99,
            0.02,
            "\n".join(notes),
            transform=ax.transAxes,
            ha="right",
            fontsize="x-small",
            color=S.NEUTRAL,
        )
    if table.empty:
        S.empty_note(ax, "no fold to draw")
    S.legend(ax, loc="best")
    return ax
