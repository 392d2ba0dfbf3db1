"""The two-threshold heatmap: one metric of ``backtest.what_if_grid`` over both thresholds.

The cells are ``backtest.pivot_grid(grid, metric)`` as it is (rows the first criterion's
thresholds, upwards; columns the second's), each annotated with its value and the trades it
keeps; cells flagged ``small_sample`` are hatched, and the current pair of thresholds (the
row flagged ``is_current``) is outlined. The title names the question the grid answers
(``backtest.questions``: effect for the replayed rule, signal for the hard filter) and, given
``subject``, the class the trades are of; a metric with an interval (``<metric>_lo``/``_hi``
columns) shows it in every cell, and the legend names it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle

from quantscope.backtest import pivot_grid
from quantscope.backtest.questions import question_of
from quantscope.plots import _style as S

CURRENT_CELL = "current thresholds"
SMALL_CELL = "small sample"  # the gid of a hatched cell
# How each metric of a sweep is shown; others are plain numbers.
_UNITS: dict[str, S.Unit] = {
    "win_rate": S.PERCENT,
    "kept_share": S.PERCENT,
    "roi": S.PERCENT,
    "d_win_rate": S.PERCENT,
    "d_roi": S.PERCENT,
    "total_pnl_usd": S.USD,
    "d_total_pnl_usd": S.USD,
    "gross_profit_usd": S.USD,
    "gross_loss_usd": S.USD,
}


def _tick(value: float) -> str:
    return f"{value:g}"


def threshold_heatmap(
    grid: pd.DataFrame,
    metric: str = "win_rate",
    *,
    annotate: bool = True,
    subject: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """``pivot_grid(grid, metric)`` as a heatmap over the two criteria's thresholds.

    Args:
        grid: ``backtest.what_if_grid(features, (first, second), ...)``.
        metric: a metric or change column of the grid (``win_rate``, ``total_pnl_usd``,
            ``d_win_rate``...); changes (``d_...``) are coloured around zero.
        annotate: write each cell's value, its interval (when the grid has one) and kept
            trades in it.
        subject: what the trades are (a market-cap class: ``"MID_CAP"``), named in the title.

    Returns:
        The Axes: an image whose array is the pivot table, texts (gid ``cell``) of the
        values, hatched Rectangles labelled ``"small sample"`` and a Rectangle labelled
        ``"current thresholds"`` around the current cell (when it is on the grid).
    """
    ax = S.new_axes(ax, figsize=(8.0, 5.5))
    info: dict[str, Any] = dict(grid.attrs.get("what_if", {}))
    criteria = info.get("criteria") or ("first criterion", "second criterion")
    ops = info.get("operators") or ("", "")
    table = pivot_grid(grid, metric) if info and not grid.empty else pd.DataFrame()
    unit = _UNITS.get(metric, S.PLAIN)
    question = question_of(str(info.get("rule", "replay")))
    where = f" in {subject}" if subject else ""
    ax.set_title(f"{metric} over two thresholds{where} ({question})")
    ax.set_ylabel(f"{criteria[0]} threshold ({S.OPERATOR_SYMBOLS.get(ops[0], '')})")
    ax.set_xlabel(f"{criteria[1]} threshold ({S.OPERATOR_SYMBOLS.get(ops[1], '')})")
    if table.empty:
        S.empty_note(ax, "no threshold pair to draw")
        return ax
    values = table.to_numpy(dtype=np.float64, na_value=np.nan)
    kept = pivot_grid(grid, "trades").to_numpy(dtype=np.float64, na_value=np.nan)
    bounds = _bounds(grid, metric)
    texts = np.full(values.shape, "", dtype=object)
    if annotate:
        for (i, j), value in np.ndenumerate(values):
            shown = unit.text(value) if np.isfinite(value) else "n/a"
            if bounds is not None and np.isfinite(bounds[0][i, j]):
                lo, hi = float(bounds[0][i, j]), float(bounds[1][i, j])
                shown += f"\n[{unit.text(lo)}, {unit.text(hi)}]"
            texts[i, j] = f"{shown}\nn={kept[i, j]:,.0f}" if np.isfinite(kept[i, j]) else shown
    finite = values[np.isfinite(values)]
    norm = None
    if metric.startswith("d_") and finite.size and finite.min() < 0 < finite.max():
        norm = TwoSlopeNorm(vcenter=0.0, vmin=float(finite.min()), vmax=float(finite.max()))
    image = S.heatmap_cells(
        ax, values, texts, cmap="RdBu" if norm is not None else "viridis", norm=norm
    )
    ax.figure.colorbar(image, ax=ax, format=unit.axis(), label=metric)
    ax.set_xticks(range(len(table.columns)), [_tick(v) for v in table.columns])
    ax.set_yticks(range(len(table.index)), [_tick(v) for v in table.index])
    _hatch_small(ax, grid, table)
    _outline_current(ax, grid, table)
    if bounds is not None and annotate:
        ax.add_patch(
            Rectangle((0, 0), 0, 0, fill=False, linewidth=0, label=_interval_label(info, metric))
        )
    S.legend(ax, loc="upper left", bbox_to_anchor=(0.0, -0.12), ncols=2)
    return ax


def _bounds(grid: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The pivoted ``<metric>_lo`` and ``_hi`` of the grid, when it has them."""
    if f"{metric}_lo" not in grid.columns or f"{metric}_hi" not in grid.columns or grid.empty:
        return None
    lo = pivot_grid(grid, f"{metric}_lo").to_numpy(dtype=np.float64, na_value=np.nan)
    hi = pivot_grid(grid, f"{metric}_hi").to_numpy(dtype=np.float64, na_value=np.nan)
    return lo, hi


def _interval_label(info: dict[str, Any], metric: str) -> str:
    """The legend entry naming the cells' interval: its confidence and its method. Grids take
    every interval from ``backtest.uncertainty`` (``guards["method"]``: a bootstrap over whole
    tokens, the rule of three where nothing moved); a grid made before that carried a Wilson
    win rate, named as such.
    """
    guards = info.get("guards") or {}
    level = float(guards.get("confidence", 0.95))
    unit = guards.get("bootstrap_unit")
    if guards.get("method") and unit:
        method = f"whole-{unit} bootstrap"  # rule of three where nothing moved: metrics.md
    elif metric == "win_rate" or not unit:
        method = "Wilson, trades taken as independent"
    else:
        method = f"bootstrap over {unit}s"
    return f"[ ]: {level:.0%} interval ({method})"


def _cell(table: pd.DataFrame, first: float, second: float) -> tuple[int, int] | None:
    rows, cols = np.flatnonzero(table.index == first), np.flatnonzero(table.columns == second)
    return (int(rows[0]), int(cols[0])) if rows.size and cols.size else None


def _hatch_small(ax: Axes, grid: pd.DataFrame, table: pd.DataFrame) -> None:
    info = grid.attrs["what_if"]
    first, second = info["criteria"]
    guards = info.get("guards", {})
    label = S.SMALL_SAMPLE.format(
        trades=guards.get("min_trades", 30), tokens=guards.get("min_tokens", 10)
    )
    small = grid[S.flags(grid, "small_sample")]
    for n, (a, b) in enumerate(zip(small[first], small[second], strict=True)):
        found = _cell(table, a, b)
        if found is not None:
            i, j = found
            ax.add_patch(
                Rectangle(
                    (j - 0.5, i - 0.5),
                    1,
                    1,
                    fill=False,
                    hatch="//",
                    edgecolor=S.NEUTRAL,
                    linewidth=0,
                    label=label if n == 0 else None,
                    gid=SMALL_CELL,
                )
            )


def _outline_current(ax: Axes, grid: pd.DataFrame, table: pd.DataFrame) -> None:
    first, second = grid.attrs["what_if"]["criteria"]
    current = grid[S.flags(grid, "is_current")]
    if current.empty:
        known = grid.attrs["what_if"].get("current") or {}
        values = [known.get(first), known.get(second)]
        if all(v is not None and len(v) == 1 for v in values):
            a, b = (float(v[0]) for v in values if v is not None)
            ax.set_title(f"{ax.get_title()}\ncurrent thresholds ({a:g}, {b:g}) not on this grid")
        return
    a, b = float(current[first].iloc[0]), float(current[second].iloc[0])
    found = _cell(table, a, b)
    if found is not None:
        i, j = found
        ax.add_patch(
            Rectangle(
                (j - 0.5, i - 0.5),
                1,
                1,
                fill=False,
                edgecolor=S.CURRENT_CELL,
                linewidth=3,
                label=f"{CURRENT_CELL} ({a:g}, {b:g})",
                gid=CURRENT_CELL,
            )
        )
