"""The PnL calendar: a metric per month (or ISO week) as a years x periods heatmap.

The cells are ``analytics.pnl_calendar(trades, freq, metric)`` as it is; each is annotated
with its value and its trades (the same calendar of ``trades``), so a month's number says
what it rests on. PnL-like metrics are coloured around zero (losses red, gains blue).
Executed trades unless ``execution=`` says otherwise, named in the title.
"""

from __future__ import annotations

import calendar as _months

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import TwoSlopeNorm

from quantscope import analytics
from quantscope.plots import _style as S
from quantscope.plots.trades import metric_unit


def pnl_calendar(
    trades: pd.DataFrame,
    freq: str = "M",
    metric: str = "total_pnl_usd",
    *,
    capital: float | None = None,
    include_open: bool = False,
    execution: analytics.Execution | None = None,
    ax: Axes | None = None,
) -> Axes:
    """``analytics.pnl_calendar`` as a heatmap: years upwards, months (or weeks) across.

    Args:
        trades: a trades frame (``load_trades``).
        freq, metric, capital, include_open, execution: as in ``analytics.pnl_calendar``.

    Returns:
        The Axes: an image whose array is the calendar table (NaN: no trade that period),
        one text per period with a trade (gid ``cell``: the value and ``n=<trades>``).
    """
    kwargs = {"capital": capital, "include_open": include_open, "execution": execution}
    table = analytics.pnl_calendar(trades, freq, metric, **kwargs)  # type: ignore[arg-type]  # one dict of three keywords' types
    counts = analytics.pnl_calendar(trades, freq, "trades", **kwargs)  # type: ignore[arg-type]  # one dict of three keywords' types
    info, note = table.attrs["calendar"], table.attrs["execution"]
    label, unit = metric_unit(metric)
    name = metric.removesuffix("_usd").replace("_", " ")
    ax = S.new_axes(ax, figsize=(10.0, 1.6 + 0.7 * max(len(table), 1)))
    ax.set_title(f"{name} per {info['period']} ({note['label']})")
    ax.set_ylabel("year")
    ax.set_xlabel(
        f"{info['period']} of close (UTC{', ISO weeks' if info['period'] == 'week' else ''})"
    )
    if table.empty:
        S.empty_note(ax, "no trade to draw")
        return ax
    values = table.to_numpy(dtype=np.float64, na_value=np.nan)
    n = counts.to_numpy(dtype=np.float64, na_value=np.nan)
    texts = np.full(values.shape, "", dtype=object)
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            texts[i, j] = f"{unit.text(value)}\nn={n[i, j]:,.0f}"
    finite = values[np.isfinite(values)]
    signed = finite.size and finite.min() < 0 < finite.max()
    norm = TwoSlopeNorm(0.0, float(finite.min()), float(finite.max())) if signed else None
    image = S.heatmap_cells(ax, values, texts, cmap="RdBu" if signed else "viridis", norm=norm)
    ax.figure.colorbar(image, ax=ax, format=unit.axis(), label=f"{name} ({label})")
    words = (
        [_months.month_abbr[m] for m in table.columns]
        if info["period"] == "month"
        else [str(w) for w in table.columns]
    )
    ax.set_xticks(range(len(table.columns)), words)
    ax.set_yticks(range(len(table.index)), [str(y) for y in table.index])
    if info["period"] == "week":
        ax.tick_params(axis="x", labelsize="x-small")
    return ax
