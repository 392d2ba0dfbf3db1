"""Figures of quantscope's frames: matplotlib, ``ax=`` in, Axes out, no math inside.

Every function draws numbers computed by ``quantscope.analytics`` (or columns of a frame as
they are), takes the Axes to draw in (``ax=``; ``axes=`` for two panels; a new figure when
omitted) and returns it, and never calls ``plt.show()``. The same figures are methods of
``df.quant.plot`` (``QuantPlots``), which first checks the frame's columns.

* trades (``load_trades``): ``equity`` (equity curve with drawdown underneath),
  ``roi_distribution`` (by result), ``metric_by`` (a ``by()`` metric per group);
* trades, over time: ``rolling`` (win rate, PnL and Sharpe over N trades or days),
  ``drawdowns`` (the worst drawdowns shaded on the equity curve), ``pnl_calendar`` (a metric
  per month or ISO week, years x periods);
* threshold research (``quantscope.backtest`` frames; functions only, not on ``df.quant``):
  ``what_if_curve`` (``what_if``), ``threshold_heatmap`` (``what_if_grid`` / ``pivot_grid``),
  ``walk_forward_folds`` (``walk_forward``);
* OHLCV (``load_ohlcv``): ``candles`` (greys), with evaluations, trade entries and exits marked;
* evaluations (``load_evaluations``, ``load_eval_details``): ``pass_rate_over_time``,
  ``criterion_distributions`` (a criterion's values for winning vs losing trades) and
  ``set_threshold`` (move its threshold line). ``pass_rate`` is the deprecated old name of
  ``pass_rate_over_time`` (kept one release; ``df.quant.pass_rate()`` is the number).
"""

from quantscope.plots._frontend import QuantPlots
from quantscope.plots.calendar import pnl_calendar
from quantscope.plots.evaluations import (
    THRESHOLD,
    criterion_distributions,
    pass_rate,
    pass_rate_over_time,
    set_threshold,
)
from quantscope.plots.heatmap import threshold_heatmap
from quantscope.plots.market import candles
from quantscope.plots.trades import equity, metric_by, roi_distribution
from quantscope.plots.walkforward import walk_forward_folds
from quantscope.plots.whatif import what_if_curve
from quantscope.plots.windows import rolling
from quantscope.plots.worst_drawdowns import drawdowns

__all__ = [
    "THRESHOLD",
    "QuantPlots",
    "candles",
    "criterion_distributions",
    "drawdowns",
    "equity",
    "metric_by",
    "pass_rate",
    "pass_rate_over_time",
    "pnl_calendar",
    "roi_distribution",
    "rolling",
    "set_threshold",
    "threshold_heatmap",
    "walk_forward_folds",
    "what_if_curve",
]
