"""The research figures of issue 13 as report blocks: what ``plugs.PLUGS`` holds.

Each function takes the report's data and returns blocks (``[]`` when there is nothing to
draw); the drawing is ``quantscope.plots``' and the numbers ``analytics``' / ``backtest``'s,
so the report shows exactly what a notebook shows. Threshold figures follow the report's
rules (issue 21): the effect (the replayed rule) is the figure to act on, the signal (the
filter's sweep) is drawn dashed; each is named with ``backtest.questions``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from quantscope import analytics, plots
from quantscope import backtest as bt
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.reporting import cells as C
from quantscope.reporting._trading import figure
from quantscope.reporting.blocks import Block, Table
from quantscope.reporting.build import ReportData

#: Points of a what-if curve (quantiles of the criterion's values, plus the current threshold).
CURVE_POINTS = 15
#: Thresholds per criterion of the two-criterion heatmap.
HEATMAP_POINTS = 6
#: Drawdown episodes in the table and shaded on the equity curve.
WORST = 5

_DRAWDOWNS = {
    "start": "when",
    "trough": "when",
    "recovery": "when",
    "depth": "share",
    "depth_usd": "usd",
    "length": "duration",
    "trades": "count",
}


def _closed(trades: pd.DataFrame) -> int:
    return int((trades["status"] == "Closed").fillna(False).sum())


def worst_drawdowns(data: ReportData) -> list[Block]:
    """The deepest drawdowns: a table and the equity curve with them shaded."""
    executed = data.executed
    if _closed(executed) < 2:
        return []
    table = analytics.worst_drawdowns(executed, WORST)
    if table.empty:
        return []
    kinds = {k: v for k, v in _DRAWDOWNS.items() if k in table.columns}
    return [
        Table(
            "worst_drawdowns",
            f"The {len(table)} deepest drawdowns of the executed trades",
            C.table(table, kinds),
            "Depth is from the running peak of equity (fraction of that peak); recovery is "
            "empty when equity has not regained the peak yet.",
        ),
        figure(
            "drawdowns_shaded",
            lambda fig: plots.drawdowns(executed, WORST, ax=fig.add_subplot()),
            (8.0, 3.5),
        ),
    ]


def rolling(data: ReportData) -> list[Block]:
    """Rolling win rate, PnL and Sharpe over a window that fits the sample."""
    executed = data.executed
    closed = _closed(executed)
    if closed < 20:
        return []
    window = int(min(50, max(10, closed // 5)))
    return [
        figure(
            "rolling",
            lambda fig: plots.rolling(executed, window, axes=fig.subplots(3, 1, sharex=True)),
            (8.0, 6.0),
            f"Over the last {window} closed trades at each close.",
        )
    ]


def pnl_calendar(data: ReportData) -> list[Block]:
    """Monthly PnL as a years x months heatmap."""
    executed = data.executed
    if _closed(executed) == 0:
        return []
    return [
        figure(
            "pnl_calendar",
            lambda fig: plots.pnl_calendar(executed, "M", ax=fig.add_subplot()),
            (8.0, 2.5),
        )
    ]


def _largest_class(features: pd.DataFrame, criterion: str) -> tuple[str, pd.DataFrame] | None:
    classes = features.loc[features[criterion].notna(), "market_cap_class"].dropna()
    if classes.empty:
        return None
    name = str(classes.astype(str).value_counts().index[0])
    rows = features[(features["market_cap_class"].astype("string") == name).fillna(False)]
    return name, rows


def _grid(rows: pd.DataFrame, criterion: str, points: int) -> list[float]:
    """Quantiles of the criterion's values, and the playbook's current threshold(s)."""
    values = rows[criterion].dropna().to_numpy(dtype=np.float64)
    grid = [float(v) for v in np.unique(bt.threshold_grid(values, points))]
    current = bt.what_if(rows, criterion, grid[:1], bootstrap=False).attrs["what_if"]["current"]
    return sorted({*grid, *(float(c) for c in current.get(criterion) or [])})


def what_if_curve(data: ReportData, criterion: str) -> list[Block]:
    """The what-if curve of ``criterion`` in its largest class: replayed solid, filter dashed."""
    if data.features is None:
        return []
    picked = _largest_class(data.features, criterion)
    if picked is None:
        return []
    name, rows = picked
    grid = _grid(rows, criterion, CURVE_POINTS)
    replayed = bt.what_if(rows, criterion, grid)
    # the signal's sweep, drawn dashed beside the effect (neither bounds the other)
    signal = bt.what_if(rows, criterion, grid, rule="filter", bootstrap=False)
    return [
        figure(
            f"what_if_curve_{criterion}",
            lambda fig: plots.what_if_curve(
                replayed,
                signal=signal,
                axes=fig.subplots(3, 1, sharex=True, height_ratios=[3, 2, 2]),
            ),
            (10.0, 6.5),
            f"{criterion} in {name} ({len(rows)} closed trades): solid, the "
            f"{QUESTION_LABELS['effect']}; dashed, the {QUESTION_LABELS['signal']}. Neither "
            "bounds the other.",
        )
    ]


def threshold_heatmap(data: ReportData, criterion: str) -> list[Block]:
    """Win rate over pairs of thresholds of ``criterion`` and the next named criterion."""
    named = list(data.criteria)
    if data.features is None or len(named) < 2 or criterion != named[0]:
        return []
    other = named[1]
    picked = _largest_class(data.features, criterion)
    if picked is None or picked[1][other].notna().sum() == 0:
        return []
    name, rows = picked
    pairs = (_grid(rows, criterion, HEATMAP_POINTS), _grid(rows, other, HEATMAP_POINTS))
    grid = bt.what_if_grid(rows, (criterion, other), pairs, bootstrap=False)
    return [
        figure(
            f"threshold_heatmap_{criterion}_{other}",
            lambda fig: plots.threshold_heatmap(
                grid, "win_rate", subject=name, ax=fig.add_subplot()
            ),
            (8.0, 5.5),
            f"{criterion} x {other} in {name}, {QUESTION_LABELS['effect']}: win rate of the "
            "trades kept, with its interval and the trades it rests on (cells on a small "
            "sample hatched, the current pair outlined).",
        )
    ]


def walk_forward_folds(data: ReportData, criterion: str) -> list[Block]:
    """Each walk-forward fold's in-sample against out-of-sample gain."""
    if data.features is None:
        return []
    folds = bt.walk_forward(data.features, criterion)
    if folds.empty:
        return []
    return [
        figure(
            f"walk_forward_{criterion}",
            lambda fig: plots.walk_forward_folds(folds, ax=fig.add_subplot()),
            (8.0, 3.5),
        )
    ]
