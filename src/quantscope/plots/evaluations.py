"""Evaluation figures: pass rate over time, and a criterion's values for winning and losing trades.

``pass_rate_over_time`` draws ``analytics.pass_rates(freq=...)`` (a time series; the number is
``df.quant.pass_rate()``, and ``pass_rate`` here is its deprecated old name);
``criterion_distributions`` draws the values whose statistics ``analytics.values_by_outcome``
reports (an evaluation's outcome is the outcome of the closed trade it bought,
``analytics.trade_outcomes``). ``set_threshold`` moves or adds the threshold line without
redrawing the histograms (the threshold panel's slider).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from quantscope import analytics
from quantscope.plots import _style as S

THRESHOLD = "threshold"  # the label of the threshold line


def pass_rate_over_time(
    evaluations: pd.DataFrame,
    freq: str = "D",
    *,
    by: str | Sequence[str] | None = None,
    time_column: str = "created_at",
    ax: Axes | None = None,
) -> Axes:
    """Pass rate per period of ``time_column``: ``analytics.pass_rates(by, freq=freq)``.

    Works on an evaluations frame (one verdict per evaluation) and on a criterion frame (one
    per enabled criterion result). With ``by`` (``evaluation_type``, ``chain``...), one line
    per group.

    Returns:
        The Axes: one line per group (label ``"<group> (n=<verdicts>)"``, or ``"all"``), a
        point at the start of each period with a verdict.
    """
    names = [by] if isinstance(by, str) else list(by or [])
    table = analytics.pass_rates(evaluations, names, freq=freq, time_column=time_column)
    table = table[table.index.get_level_values("period").notna()]
    ax = S.new_axes(ax)
    parts = table.groupby(level=names, observed=True, sort=True) if names else [("all", table)]
    for key, part in parts:
        series = part.droplevel(names) if names else part
        ax.plot(
            S.utc_naive(series.index),
            series["pass_rate"].to_numpy(dtype=np.float64, na_value=np.nan),
            marker="o",
            markersize=3,
            linewidth=1.2,
            label=f"{S.group_label(key)} (n={int(series['total'].sum()):,})",
        )
    period = S.PERIOD_WORDS.get(freq, freq)
    grouped = f" by {' / '.join(names)}" if names else ""
    ax.set_title(f"Evaluation pass rate per {period}{grouped}")
    ax.set_ylabel("pass rate (% of verdicts)")
    ax.set_ylim(-0.02, 1.02)
    ax.yaxis.set_major_formatter(S.PERCENT.axis())
    S.date_axis(ax, f"{period} of {time_column.replace('_', ' ')} (UTC)")
    ax.grid(alpha=0.3)
    S.legend(ax)
    return ax


def pass_rate(
    evaluations: pd.DataFrame,
    freq: str = "D",
    *,
    by: str | Sequence[str] | None = None,
    time_column: str = "created_at",
    ax: Axes | None = None,
) -> Axes:
    """Deprecated old name of ``pass_rate_over_time`` (kept one release; warns)."""
    warnings.warn(
        "plots.pass_rate is deprecated and will be removed in the next release: use "
        "plots.pass_rate_over_time (pass_rate is the overall number, df.quant.pass_rate())",
        DeprecationWarning,
        stacklevel=2,
    )
    return pass_rate_over_time(evaluations, freq, by=by, time_column=time_column, ax=ax)


def criterion_distributions(
    details: pd.DataFrame,
    trades: pd.DataFrame,
    criterion: str,
    *,
    threshold: float | None = None,
    bins: int | Sequence[float] = 30,
    outcomes: Sequence[str] = ("win", "loss"),
    ax: Axes | None = None,
) -> Axes:
    """Histograms of ``criterion``'s value for evaluations that led to winning and losing trades.

    Args:
        details: a criterion frame (``load_eval_details``) of the evaluations that bought.
        trades: the trades they bought; only closed trades have an outcome.
        criterion: a ``criterion`` key of ``details`` (``liquidity_usd``, ``rsi_14``...).
        threshold: draw it as a vertical line (``set_threshold`` moves it later).
        bins: shared by every outcome (a count, or the edges).
        outcomes: which of ``analytics.OUTCOMES`` to draw.

    Returns:
        The Axes: one bar container per outcome, side by side in each bin, labelled
        ``"<outcome> (n=<count>)"``, and the threshold line labelled ``"threshold"`` when given.
    """
    if not (details["criterion"] == criterion).any():
        known = ", ".join(sorted(map(str, details["criterion"].dropna().unique())))
        raise ValueError(f"no criterion {criterion!r} in the frame; it has {known}")
    values = analytics.criterion_values(details, trades, criterion)
    values = values[np.isfinite(values["value"].to_numpy())]
    edges = np.histogram_bin_edges(values["value"].to_numpy(), bins=bins)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    groups = []
    for i, outcome in enumerate(outcomes):
        chosen = values.loc[(values["outcome"] == outcome).to_numpy(), "value"].to_numpy()
        color = S.outcome_color(outcome, cycle[i % len(cycle)])
        groups.append((f"{outcome} (n={chosen.size:,})", chosen, color))
    ax = S.new_axes(ax)
    S.histograms(ax, groups, edges, stacked=False)
    ax.set_title(f"{criterion}: value at the buy, winning vs losing trades")
    ax.set_xlabel(f"{criterion} (value as evaluated)")
    ax.set_ylabel("evaluations")
    ax.grid(axis="y", alpha=0.3)
    if threshold is not None:
        set_threshold(ax, threshold)
    S.legend(ax)
    return ax


def set_threshold(ax: Axes, threshold: float | None) -> Line2D | None:
    """Move the Axes' threshold line to ``threshold`` (add it if missing; None removes it).

    Cheap enough for a slider: the histograms are not redrawn. Returns the line.
    """
    line = next((ln for ln in ax.lines if ln.get_label() == THRESHOLD), None)
    if threshold is None:
        if line is not None:
            line.remove()
            S.legend(ax)
        return None
    if line is None:
        line = ax.axvline(threshold, color="black", linestyle="--", linewidth=1.5, label=THRESHOLD)
        S.legend(ax)
    else:
        line.set_xdata([threshold, threshold])
        low, high = ax.get_xlim()
        if not low <= threshold <= high:
            ax.relim()
            ax.autoscale_view(scalex=True, scaley=False)
    return line
