"""Where new figures plug into the report: named places, empty until someone fills them.

The report's sections (``sections.SECTIONS``) call the functions registered here at fixed
places, after their own blocks. A plug is a function of the report's data returning blocks
(usually one ``Figure`` made with ``report._trading.figure``), or an empty list when it has
nothing to show. Register at import time of the module that owns the figure, or in
``sections.py`` after merging::

    from quantscope.report.plugs import PLUGS, THRESHOLD_PLUGS
    PLUGS["equity"].append(lambda data: [figure("worst_drawdowns", ...)])
    THRESHOLD_PLUGS.append(lambda data, criterion: [figure(f"what_if_curve_{criterion}", ...)])

The places, and the figures meant for them (issue 13, item 1):

* ``PLUGS["equity"]``: the worst-N drawdowns (table, and shaded on the equity curve),
  rolling win rate / PnL / Sharpe;
* ``PLUGS["breakdowns"]``: the monthly (or weekly) PnL heatmap, ``metric_by(freq=...)`` as
  grouped bars;
* ``PLUGS["recommendations"]``: anything drawn per recommendation;
* ``THRESHOLD_PLUGS``: per named criterion, the what-if curve (replayed, the filter's upper
  bound dashed), the two-threshold heatmap of ``pivot_grid`` (with a second criterion of
  ``ReportData.criteria``), the walk-forward folds.
"""

from __future__ import annotations

from collections.abc import Callable

from quantscope.report.blocks import Block
from quantscope.report.build import ReportData

#: A plug of a section: the report's data -> blocks.
Plug = Callable[[ReportData], list[Block]]
#: A plug of the threshold section: (the report's data, one named criterion) -> blocks.
ThresholdPlug = Callable[[ReportData, str], list[Block]]

#: Plugs run at the end of the section of that key, in order.
PLUGS: dict[str, list[Plug]] = {"equity": [], "breakdowns": [], "recommendations": []}
#: Plugs run for each named criterion, after its what-if tables and walk-forward table.
THRESHOLD_PLUGS: list[ThresholdPlug] = []
