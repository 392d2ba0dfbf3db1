"""Rolling figures: win rate, PnL and Sharpe over the last N trades or N days.

Three panels draw ``analytics.rolling(trades, window)`` as it is, against the close of each
window's last trade (or each day); the overall win rate (``analytics.win_rate``) is a dashed
reference. Like the other trade figures it draws the executed trades unless ``execution=``
says otherwise, and names the trades it drew in its title.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from quantscope import analytics
from quantscope.plots import _style as S


def _window_words(info: dict[str, object]) -> str:
    size, unit = info["size"], info["unit"]
    return f"last {size} {unit if size != 1 else str(unit).rstrip('s')}"


def rolling(
    trades: pd.DataFrame,
    window: int | str = 50,
    *,
    execution: analytics.Execution | None = None,
    periods_per_year: int = analytics.PERIODS_PER_YEAR,
    axes: Sequence[Axes] | None = None,
) -> tuple[Axes, Axes, Axes]:
    """Rolling win rate, PnL and Sharpe of the closed trades.

    Args:
        trades: a trades frame (``load_trades``).
        window: the last ``n`` closed trades (int) or days (``"30D"``), as in
            ``analytics.rolling``.
        execution, periods_per_year: as in ``analytics.rolling``.
        axes: three Axes (win rate, PnL, Sharpe); default a new figure, x shared.

    Returns:
        The three Axes; each draws one column of ``analytics.rolling()`` (``win_rate``,
        ``pnl_usd``, ``sharpe``) as a line labelled ``"<column>, last <n> <unit>"`` against
        its index (UTC); NaN until the window is full.
    """
    table = analytics.rolling(
        trades, window, execution=execution, periods_per_year=periods_per_year
    )
    info = dict(table.attrs["rolling"])
    note = table.attrs["execution"]
    if axes is None:
        _, made = plt.subplots(3, 1, sharex=True, figsize=(9.0, 6.5), layout="constrained")
        panels = (made[0], made[1], made[2])
    else:
        panels = (axes[0], axes[1], axes[2])
    x = S.utc_naive(table.index)
    words = _window_words(info)
    sharpe_kind = "per trade" if info["unit"] == "trades" else "daily, annualised"
    specs = (
        ("win_rate", "win rate", "win rate\n(% of trades)", S.PERCENT, S.LINE),
        ("pnl_usd", "pnl", "PnL (USD)", S.USD, S.LINE),
        ("sharpe", "sharpe", f"Sharpe\n({sharpe_kind})", S.PLAIN, S.LINE),
    )
    for ax, (name, short, ylabel, unit, color) in zip(panels, specs, strict=True):
        ax.plot(x, S.column(table, name), color=color, linewidth=1.3, label=f"{short}, {words}")
        ax.set_ylabel(ylabel)
        ax.yaxis.set_major_formatter(unit.axis())
        ax.grid(alpha=0.3)
    overall = analytics.win_rate(trades, execution=execution)
    if np.isfinite(overall):
        panels[0].axhline(
            overall,
            color=S.NEUTRAL,
            linestyle="--",
            linewidth=1,
            label=f"all trades ({S.PERCENT.text(overall)})",
        )
    panels[1].axhline(0.0, color=S.NEUTRAL, linewidth=0.8)
    panels[2].axhline(0.0, color=S.NEUTRAL, linewidth=0.8)
    if "sharpe_note" in info:
        S.empty_note(panels[2], f"Sharpe {info['sharpe_note']}")
    closed = len(analytics.equity_curve(trades, execution=execution))
    panels[0].set_title(f"Rolling metrics, {words} ({closed:,} closed {note['label']})")
    S.legend(panels[0], loc="upper left")
    S.date_axis(panels[2], "close time (UTC)" if info["unit"] == "trades" else "day (UTC)")
    if table.empty:
        S.empty_note(panels[0], "no closed trade to draw")
    return panels
