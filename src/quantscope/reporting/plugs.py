"""Where the research figures sit in the report: named places, each a list of functions.

The report's sections (``sections.SECTIONS``) call the functions listed here at fixed places,
after their own blocks. A plug is a function of the report's data returning blocks (usually
one ``Figure`` made with ``reporting._trading.figure``), or an empty list when it has nothing
to show. The figures themselves are in ``_figures`` (issue 13, item 1):

* ``PLUGS["equity"]``: the worst-N drawdowns (table, and shaded on the equity curve),
  rolling win rate / PnL / Sharpe;
* ``PLUGS["breakdowns"]``: the monthly PnL heatmap;
* ``PLUGS["recommendations"]``: anything drawn per recommendation (none yet);
* ``THRESHOLD_PLUGS``: per named criterion, the what-if curve (replayed, the filter's upper
  bound dashed), the two-threshold heatmap with the next named criterion, the walk-forward
  folds.
"""

from __future__ import annotations

from collections.abc import Callable

from quantscope.reporting import _figures as F
from quantscope.reporting.blocks import Block
from quantscope.reporting.build import ReportData

#: A plug of a section: the report's data -> blocks.
Plug = Callable[[ReportData], list[Block]]
#: A plug of the threshold section: (the report's data, one named criterion) -> blocks.
ThresholdPlug = Callable[[ReportData, str], list[Block]]

#: Plugs run at the end of the section of that key, in order.
PLUGS: dict[str, list[Plug]] = {
    "equity": [F.worst_drawdowns, F.rolling],
    "breakdowns": [F.pnl_calendar],
    "recommendations": [],
}
#: Plugs run for each named criterion, after its what-if tables and walk-forward table.
THRESHOLD_PLUGS: list[ThresholdPlug] = [
    F.what_if_curve,
    F.threshold_heatmap,
    F.walk_forward_folds,
]
