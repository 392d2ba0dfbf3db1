"""The what-if curve of one threshold: win rate, PnL change and trades kept against it.

It draws ``backtest.what_if`` frames as they are (docs/metrics.md, "The two questions" and
"Guard rails"), each named by the question it answers (``backtest.questions``): the
**effect** (the replayed rule, what applying does) solid, the criterion's **signal** (the
hard filter, given as ``signal=`` or as the frame itself) dashed. Neither bounds the other.
Each panel shows the win rate, the change in total PnL against the current threshold, and the
trades kept; the win rate and the PnL change carry their 95 % intervals from
``backtest.uncertainty`` (a Poisson bootstrap over whole tokens; the rule of three where
nothing moved), and the legend says so (``BAND``); when a sweep skipped the intervals the
panel says why. The current threshold is a vertical line in every panel, rows flagged
``small_sample`` are marked, and thresholds looser than the current one (``admits_unseen``:
evaluations that failed would pass too, and have no trade) are shaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_OF, Question
from quantscope.plots import _style as S

# Each panel: (column drawn, interval columns, y label, unit).
_PANELS: tuple[tuple[str, tuple[str, str] | None, str, S.Unit], ...] = (
    ("win_rate", ("win_rate_lo", "win_rate_hi"), "win rate (% of kept trades)", S.PERCENT),
    (
        "d_total_pnl_usd",
        ("d_total_pnl_usd_lo", "d_total_pnl_usd_hi"),
        "total PnL change\nvs current (USD)",
        S.USD,
    ),
    ("trades", None, "trades kept", S.PLAIN),
)
#: What the bands are: the intervals of ``backtest.uncertainty``, named in the legend.
BAND = "95 % token-cluster bootstrap interval (rule of three where nothing moved)"
UNSEEN = "looser than current: failed evaluations unseen"


def _info(table: pd.DataFrame) -> dict[str, Any]:
    return dict(table.attrs.get("what_if", {}))


def _ordered(table: pd.DataFrame) -> pd.DataFrame:
    """The rows by threshold (a line needs its x ascending), ties in the frame's order."""
    if "threshold" not in table.columns:
        return table
    return table.iloc[np.argsort(S.column(table, "threshold"), kind="stable")]


def _question(info: dict[str, Any]) -> Question | None:
    """The question a frame answers: its ``question``, else its rule's (older frames)."""
    found = info.get("question")
    if found in QUESTION_LABELS:
        return cast(Question, found)
    return QUESTION_OF.get(str(info.get("rule")))


def _label(info: dict[str, Any]) -> str:
    question = _question(info)
    return QUESTION_LABELS[question] if question else "what-if"


def what_if_curve(
    table: pd.DataFrame,
    *,
    signal: pd.DataFrame | None = None,
    axes: Sequence[Axes] | None = None,
    upper_bound: pd.DataFrame | None = None,
) -> tuple[Axes, Axes, Axes]:
    """Win rate, total PnL change and trades kept against the threshold of one criterion.

    Args:
        table: ``backtest.what_if(features, criterion, thresholds)`` (the effect by default;
            a ``rule="filter"`` frame, the signal, is drawn dashed).
        signal: the same sweep with ``rule="filter"`` (the criterion's signal), drawn dashed
            beside it as the other question.
        axes: three Axes (win rate, PnL change, trades kept); default a new figure, x shared.
        upper_bound: the former name of ``signal`` (the filter bounds nothing), still taken.

    Returns:
        The three Axes. Each draws each frame's column as a line labelled with its question
        (``QUESTION_LABELS``) at the thresholds in ascending order, its interval as a band
        labelled ``"<question>: " + BAND``, the rows flagged ``small_sample`` as open circles
        (label from ``SMALL_SAMPLE``), the current threshold as a vertical line labelled
        ``"current threshold (<value>)"``, and the looser thresholds shaded (``UNSEEN``).
    """
    signal = signal if signal is not None else upper_bound
    if axes is None:
        _, made = plt.subplots(
            3, 1, sharex=True, figsize=(11.0, 7.0), height_ratios=[3, 2, 2], layout="constrained"
        )
        panels = (made[0], made[1], made[2])
    else:
        panels = (axes[0], axes[1], axes[2])
    info = _info(table)
    frames = [(table, info)]
    if signal is not None:
        frames.append((signal, _info(signal)))
    for frame, meta in frames:
        _draw_rule(panels, _ordered(frame), meta)
    _mark_current(panels, info)
    _shade_unseen(panels, _ordered(table))
    _bootstrap_note(panels[1], table, info)
    _decorate(panels, table, info)
    return panels


def _draw_rule(panels: tuple[Axes, Axes, Axes], rows: pd.DataFrame, info: dict[str, Any]) -> None:
    question = _question(info)
    dashed = question == "signal"
    label = _label(info)
    x = S.column(rows, "threshold")
    small = S.flags(rows, "small_sample")
    guards = info.get("guards", {})
    small_label = S.SMALL_SAMPLE.format(
        trades=guards.get("min_trades", 30), tokens=guards.get("min_tokens", 10)
    )
    color = S.NEUTRAL if dashed else S.LINE
    for ax, (name, band, _, _) in zip(panels, _PANELS, strict=True):
        y = S.column(rows, name)
        ax.plot(
            x,
            y,
            linestyle="--" if dashed else "-",
            marker=".",
            color=color,
            label=label,
        )
        if band is not None and band[0] in rows.columns:
            lo, hi = S.column(rows, band[0]), S.column(rows, band[1])
            if np.isfinite(lo).any():
                ax.fill_between(
                    x,
                    lo,
                    hi,
                    color=color,
                    alpha=0.10 if dashed else 0.18,
                    linewidth=0,
                    label=f"{question or 'what-if'}: {BAND}",
                )
        if small.any():
            ax.plot(
                x[small],
                y[small],
                linestyle="none",
                marker="o",
                markersize=7,
                markerfacecolor="none",
                markeredgecolor=S.LOSS,
                label=small_label if not dashed else f"{small_label} (signal)",
            )


def _mark_current(panels: tuple[Axes, Axes, Axes], info: dict[str, Any]) -> None:
    criteria = info.get("criteria") or ()
    known = (info.get("current") or {}).get(criteria[0]) if criteria else None
    if not known:
        return
    many = len(known) > 1
    for i, value in enumerate(known):
        label = "current thresholds (per class)" if many else f"current threshold ({value:g})"
        for ax in panels:
            ax.axvline(
                value,
                color=S.CURRENT,
                linestyle=":",
                linewidth=1.4,
                label=label if i == 0 else None,
            )


def _shade_unseen(panels: tuple[Axes, Axes, Axes], rows: pd.DataFrame) -> None:
    unseen = S.flags(rows, "admits_unseen")
    if not unseen.any():
        return
    x = S.column(rows, "threshold")[unseen]
    for ax in panels:
        ax.axvspan(
            float(x.min()), float(x.max()), color=S.NEUTRAL, alpha=0.12, linewidth=0, label=UNSEEN
        )


def _bootstrap_note(ax: Axes, table: pd.DataFrame, info: dict[str, Any]) -> None:
    skipped = info.get("guards", {}).get("bootstrap_skipped")
    if skipped and not table.empty:
        ax.text(
            0.01,
            0.03,
            f"no interval: {skipped}",
            transform=ax.transAxes,
            fontsize="x-small",
            color=S.NEUTRAL,
            gid="bootstrap-note",
        )


def _decorate(panels: tuple[Axes, Axes, Axes], table: pd.DataFrame, info: dict[str, Any]) -> None:
    criteria = info.get("criteria") or ("threshold",)
    ops = info.get("operators") or ()
    symbol = S.OPERATOR_SYMBOLS.get(ops[0], "") if ops else ""
    real = info.get("real_trades", len(table))
    simulated = info.get("simulated_candidates", 0)
    extra = f" + {simulated:,} simulated entries (estimates)" if simulated else ""
    question = _question(info)
    rule = {"effect": "effect: replayed rule", "signal": "signal: hard filter"}.get(
        question or "", "what-if"
    )
    panels[0].set_title(f"What if {criteria[0]} moved ({rule}; {real:,} closed trades{extra})")
    for ax, (_, _, ylabel, unit) in zip(panels, _PANELS, strict=True):
        ax.set_ylabel(ylabel)
        ax.yaxis.set_major_formatter(unit.axis())
        ax.grid(alpha=0.3)
    panels[1].axhline(0.0, color=S.NEUTRAL, linewidth=0.8)
    panels[2].set_xlabel(f"{criteria[0]} threshold (trade kept when value {symbol} threshold)")
    S.legend(panels[0], loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if table.empty:
        S.empty_note(panels[0], "no threshold to draw")
