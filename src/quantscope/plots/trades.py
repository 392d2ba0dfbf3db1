"""Trade figures: equity with drawdown, ROI distribution by result, a metric by group (and period).

Each draws numbers that ``quantscope.analytics`` computed (``equity_curve``, ``drawdown``,
``by``) or columns of the trades frame as they are (``roi``); docs/metrics.md defines them.
Like the analytics, each draws the executed trades unless ``execution=`` asks otherwise, and a
figure of hypothetical trades (never executed) says so in its title and legend.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from quantscope import analytics
from quantscope.plots import _style as S

Keys = str | Sequence[str] | None

# The y axis of each summary metric: (unit in the label, how values are shown). Metrics not
# listed are plain ratios; Timedelta metrics are drawn in hours.
_COUNTS = ("trades", "wins", "losses", "breakeven", "max_win_streak", "max_loss_streak")
_METRIC_AXES: dict[str, tuple[str, S.Unit]] = {
    "win_rate": ("% of trades", S.PERCENT),
    "roi": ("% of buy cost", S.PERCENT),
    "max_drawdown": ("% of peak equity", S.PERCENT),
    "avg_holding_time": ("hours", S.PLAIN),
    "max_drawdown_duration": ("hours", S.PLAIN),
    "days": ("days", S.PLAIN),
    "open_trades": ("positions", S.PLAIN),
    **{name: ("trades", S.PLAIN) for name in _COUNTS},
    **{name: ("USD", S.USD) for name in analytics.SUMMARY_METRICS if name.endswith("_usd")},
}
_HOUR = pd.Timedelta(hours=1)
# The equity line's legend label and the title's opening words, per execution basis.
_EQUITY_WORDS = {
    "executed": ("realised equity", "Realised equity and drawdown"),
    "hypothetical": ("hypothetical equity", "Hypothetical equity and drawdown"),
    "all": ("equity, hypothetical trades included", "Equity and drawdown, hypothetical included"),
}


def equity(
    trades: pd.DataFrame,
    *,
    capital: float | None = None,
    execution: analytics.Execution | None = None,
    axes: Sequence[Axes] | None = None,
) -> tuple[Axes, Axes]:
    """Realised equity after each closed trade, with its drawdown underneath.

    Args:
        trades: a trades frame (``load_trades``); open positions are not in the curve.
        capital: starting capital in USD (default 10,000 per quant, as in ``summary()``).
        execution: which trades, as in ``summary()`` (default the executed ones); any other
            curve is labelled hypothetical in the legend and title.
        axes: two Axes (equity, drawdown) to draw in; default a new figure, x shared.

    Returns:
        ``(ax_equity, ax_drawdown)``: ``analytics.equity_curve()["equity_usd"]`` as a step
        line, and ``analytics.drawdown()["drawdown"]`` (fraction of peak equity) as a filled
        step line, both against the close time.
    """
    curve = analytics.equity_curve(trades, capital=capital, execution=execution)
    fall = analytics.drawdown(trades, capital=capital, execution=execution)
    note = curve.attrs["execution"]
    line_label, title = _EQUITY_WORDS[note["basis"]]
    start = analytics.default_capital(trades) if capital is None else capital
    if axes is None:
        _, made = plt.subplots(
            2, 1, sharex=True, figsize=(9.0, 5.5), height_ratios=[3, 1], layout="constrained"
        )
        top, bottom = made[0], made[1]
    else:
        top, bottom = axes
    x = S.utc_naive(curve.index)

    top.axhline(start, color=S.NEUTRAL, linestyle="--", linewidth=1, label="starting capital")
    top.plot(
        x,
        curve["equity_usd"].to_numpy(),
        drawstyle="steps-post",
        color=S.LINE,
        label=line_label,
    )
    top.set_title(f"{title} ({len(curve):,} closed {note['label']})")
    top.set_ylabel("equity (USD)")
    top.yaxis.set_major_formatter(S.USD.axis())
    top.grid(alpha=0.3)
    S.legend(top, loc="upper left")

    depth = fall["drawdown"].to_numpy()
    bottom.fill_between(x, depth, 0.0, step="post", color=S.LOSS, alpha=0.3, linewidth=0)
    bottom.plot(x, depth, drawstyle="steps-post", color=S.LOSS, linewidth=1, label="drawdown")
    bottom.set_ylabel("drawdown\n(% of peak)")
    bottom.yaxis.set_major_formatter(S.PERCENT.axis())
    bottom.grid(alpha=0.3)
    S.date_axis(bottom, "close time (UTC)")
    return top, bottom


def roi_distribution(
    trades: pd.DataFrame,
    *,
    by: str = "result",
    bins: int | Sequence[float] = 30,
    include_open: bool = False,
    execution: analytics.Execution | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Histogram of the trades' ``roi``, stacked by the value of ``by`` (default ``result``).

    Closed trades only unless ``include_open`` (an open position's ROI is marked, not final);
    executed trades only unless ``execution`` says otherwise (as in ``summary()``; the title
    names the basis). Every group shares the same bins; a missing ``by`` value is a group of
    its own; trades without a ROI are not counted.

    Returns:
        The Axes: one bar container per group (bar heights are the group's own counts),
        labelled ``"<group> (n=<count>)"``.
    """
    chosen = analytics.select_execution(trades, execution)
    closed = (chosen["status"] == "Closed").to_numpy(dtype=bool, na_value=False)
    rows = chosen if include_open else chosen[closed]
    roi = rows["roi"].to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(roi)
    edges = np.histogram_bin_edges(roi[finite], bins=bins)
    keys = rows[by].reset_index(drop=True)[finite]
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    groups = [
        (
            f"{S.group_label(name)} (n={values.size:,})",
            values.to_numpy(),
            S.outcome_color(name, cycle[i % len(cycle)]),
        )
        for i, (name, values) in enumerate(
            pd.Series(roi[finite]).groupby(keys.to_numpy(), dropna=False, sort=True)
        )
    ]
    ax = S.new_axes(ax)
    S.histograms(ax, groups, edges, stacked=True)
    ax.axvline(0.0, color=S.NEUTRAL, linewidth=1)
    which = "open ones marked" if include_open else "closed only"
    ax.set_title(f"ROI by {by} ({chosen.attrs['execution']['label']}; {which})")
    ax.set_xlabel("ROI (% of buy cost)")
    ax.set_ylabel("trades")
    ax.xaxis.set_major_formatter(S.PERCENT.axis())
    ax.grid(axis="y", alpha=0.3)
    S.legend(ax, title=by)
    return ax


def metric_by(
    trades: pd.DataFrame,
    by: Keys = None,
    metric: str = "win_rate",
    *,
    freq: str | None = None,
    capital: float | None = None,
    include_open: bool = False,
    execution: analytics.Execution | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One bar per group of ``analytics.by(trades, by, freq=...)[metric]``.

    Args:
        by: column(s) to group by (chain, quant_name, result, decision...).
        metric: a column of ``by()`` (``analytics.SUMMARY_METRICS``); durations in hours.
        freq: add a period of the close (``D``, ``W``, ``M``...), as in ``by()``.
        capital, include_open, execution: as in ``by()``; a table of other than executed
            trades says which in the title.

    Returns:
        The Axes. With ``by`` and ``freq``: grouped bars, one group per period (x ticks, in
        time order) and one bar per group key (a bar container per key, labelled with it;
        NaN where the key has no trade in that period). Otherwise one bar per row of
        ``by()`` in its order (blue, or orange below zero), each labelled with its value and
        the trades it rests on (``n=``) when there are few.
    """
    if metric not in analytics.SUMMARY_METRICS:
        known = ", ".join(analytics.SUMMARY_METRICS)
        raise ValueError(f"unknown metric {metric!r}; by() has {known}")
    table = analytics.by(
        trades, by, freq=freq, capital=capital, include_open=include_open, execution=execution
    )
    values = table[metric]
    if pd.api.types.is_timedelta64_dtype(values.dtype):
        values = values / _HOUR
    heights = values.to_numpy(dtype=np.float64, na_value=np.nan)
    label, unit = metric_unit(metric)
    ax = S.new_axes(ax)
    names = [by] if isinstance(by, str) else list(by or [])
    if freq is not None and names and len(table):
        _grouped_bars(ax, table, heights)
    else:
        _flat_bars(ax, table, heights, unit)
    ax.axhline(0.0, color=S.NEUTRAL, linewidth=0.8)
    name = metric.removesuffix("_usd").replace("_", " ")
    grouping = _grouping(by, freq)
    note = table.attrs["execution"]
    basis = "" if note["basis"] == "executed" else f" ({note['label']})"
    ax.set_title(f"{name} by {grouping}{basis}")
    ax.set_ylabel(f"{name} ({label})")
    ax.set_xlabel(grouping)
    ax.yaxis.set_major_formatter(unit.axis())
    ax.grid(axis="y", alpha=0.3)
    return ax


def metric_unit(metric: str) -> tuple[str, S.Unit]:
    """The unit words of a ``by()`` metric in an axis label, and how its values are shown."""
    return _METRIC_AXES.get(metric, ("ratio", S.PLAIN))


def _flat_bars(ax: Axes, table: pd.DataFrame, heights: np.ndarray, unit: S.Unit) -> None:
    """One bar per row of ``table`` (blue, or orange below zero), labelled when few."""
    labels = [S.group_label(key) for key in table.index]
    colors = [S.LOSS if h < 0 else S.LINE for h in heights]
    positions = np.arange(len(labels))
    bars = ax.bar(positions, heights, color=colors, tick_label=labels)
    if len(labels) <= 12:
        counts = table["trades"].to_numpy(dtype=np.float64, na_value=np.nan)
        texts = [
            (unit.text(h) if np.isfinite(h) else "") + (f"\nn={n:,.0f}" if np.isfinite(n) else "")
            for h, n in zip(heights, counts, strict=True)
        ]
        ax.bar_label(bars, labels=texts, fontsize="small", padding=2)
    for x in positions[~np.isfinite(heights)]:  # an undefined metric says so, not a zero bar
        ax.annotate("n/a", (x, 0.0), ha="center", va="bottom", fontsize="small", color=S.NEUTRAL)
    _rotate(ax, labels)


def _grouped_bars(ax: Axes, table: pd.DataFrame, heights: np.ndarray) -> None:
    """One group per period, one bar per key (a BarContainer per key, labelled with it, its
    heights the key's rows of ``table`` by period; NaN where the key has no trade then).
    """
    periods = pd.DatetimeIndex(table.index.get_level_values("period"))
    order = periods.unique().sort_values()
    key_codes, groups = pd.factorize(
        table.index.droplevel("period").to_flat_index(), use_na_sentinel=False
    )
    matrix = np.full((len(groups), len(order)), np.nan)
    matrix[key_codes, order.get_indexer(periods)] = heights
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(groups)
    positions = np.arange(len(order))
    for i, key in enumerate(groups):
        ax.bar(
            positions + (i - (len(groups) - 1) / 2) * width,
            matrix[i],
            width,
            color=cycle[i % len(cycle)],
            label=S.group_label(key),
        )
    labels = [S.group_label(p) for p in order]
    ax.set_xticks(positions, labels)
    _rotate(ax, labels)
    S.legend(ax, title=" / ".join(map(str, table.index.names[:-1])), ncols=min(len(groups), 4))


def _rotate(ax: Axes, labels: list[str]) -> None:
    if len(labels) > 6 or max((len(s) for s in labels), default=0) > 10:
        ax.tick_params(axis="x", labelrotation=45)
        for text in ax.get_xticklabels():
            text.set_horizontalalignment("right")


def _grouping(by: Keys, freq: str | None) -> str:
    names = [by] if isinstance(by, str) else list(by or [])
    if freq is not None:
        names.append(f"{S.PERIOD_WORDS.get(freq, freq)} of close (UTC)")
    return " / ".join(names)
