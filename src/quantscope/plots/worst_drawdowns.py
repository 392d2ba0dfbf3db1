"""The worst drawdowns shaded on the equity curve.

The curve is ``analytics.equity_curve`` (as ``plots.equity`` draws it); each episode of
``analytics.worst_drawdowns`` is a shaded span from its ``start`` to its ``recovery`` (to
``start + length``, the last close, while it has not recovered), labelled with its rank,
depth and length. Executed trades unless ``execution=`` says otherwise, named in the title.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes

from quantscope import analytics
from quantscope.plots import _style as S

_EQUITY_WORDS = {
    "executed": "realised equity",
    "hypothetical": "hypothetical equity",
    "all": "equity, hypothetical trades included",
}


def _days(length: pd.Timedelta) -> str:
    days = length / pd.Timedelta(days=1)
    return f"{days:.1f} days" if days < 10 else f"{days:.0f} days"


def drawdowns(
    trades: pd.DataFrame,
    n: int = 5,
    *,
    capital: float | None = None,
    execution: analytics.Execution | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The equity curve with its ``n`` deepest drawdowns shaded.

    Args:
        trades: a trades frame (``load_trades``).
        n, capital, execution: as in ``analytics.worst_drawdowns``.

    Returns:
        The Axes: the equity step line (label as ``plots.equity``'s) and one span per
        episode (gid ``drawdown-<rank>``, label ``"#<rank> <depth> (<length>)"`` and
        ``", not recovered"`` when it is not), deepest darkest.
    """
    table = analytics.worst_drawdowns(trades, n, capital=capital, execution=execution)
    curve = analytics.equity_curve(trades, capital=capital, execution=execution)
    start = analytics.default_capital(trades) if capital is None else capital
    note = curve.attrs["execution"]
    ax = S.new_axes(ax, figsize=(9.0, 4.0))
    ax.axhline(start, color=S.NEUTRAL, linestyle="--", linewidth=1, label="starting capital")
    ax.plot(
        S.utc_naive(curve.index),
        curve["equity_usd"].to_numpy(),
        drawstyle="steps-post",
        color=S.LINE,
        label=_EQUITY_WORDS[note["basis"]],
    )
    shown = max(len(table), 1)
    for rank, row in table.iterrows():
        left, right = S.utc_naive([row["start"], row["start"] + row["length"]])
        open_end = "" if row["recovered"] else ", not recovered"
        ax.axvspan(
            left,
            right,
            color=S.LOSS,
            alpha=0.35 - 0.25 * (int(rank) - 1) / shown,
            linewidth=0,
            label=f"#{rank} {S.PERCENT.text(row['depth'])} ({_days(row['length'])}{open_end})",
            gid=f"drawdown-{rank}",
        )
    episodes = table.attrs["drawdowns"]["episodes"]
    ax.set_title(
        f"Worst {len(table)} of {episodes} drawdowns ({len(curve):,} closed {note['label']})"
    )
    ax.set_ylabel("equity (USD)")
    ax.yaxis.set_major_formatter(S.USD.axis())
    ax.grid(alpha=0.3)
    S.date_axis(ax, "close time (UTC)")
    S.legend(ax, loc="upper left")
    if curve.empty:
        S.empty_note(ax, "no closed trade to draw")
    return ax
