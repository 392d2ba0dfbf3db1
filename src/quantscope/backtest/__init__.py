"""Threshold research: replay playbooks on past evaluations and sweep thresholds over trades.

A research session, end to end::

    from quantscope import backtest as bt
    trades = qsc.load_trades(1)                             # executed trades of quant 1
    features = bt.trade_features(trades)                   # + the values that bought them
    bt.what_if(features, "smart_money_buys", [1, 2, 3, 4, 5])  # what applying each does
    bt.what_if(features, "smart_money_buys", [3], rule="both")  # effect and signal
    bt.walk_forward(features, "smart_money_buys")          # chosen on the past, tried ahead
    bt.rank_criteria(features)                             # which criteria matter most
    bt.screen(features)                                    # every criterion, out of sample,
                                                           # adjusted for the whole search
    bt.what_if_intervals(features, "smart_money_buys", [2, 3, 4])  # intervals on every
                                                           # decision number, tokens resampled
    bt.replay(qsc.load_playbook(1), qsc.load_eval_details(ids))  # = the service's verdicts

Modules: ``features`` (trades joined to criterion values, wide), ``replay`` (the contract's
pass rule applied to evaluations), ``sweep`` (what-if over thresholds and grids), ``rank``
(criteria ranked per market-cap class, adjusted for the search),
``simulate`` (simulated entries for evaluations that failed), ``compare`` (two playbooks side
by side), ``crosscheck`` (the optimizer's recommendations recomputed, and what applying each
does), ``walk_forward`` (thresholds chosen on the past, reported on the future), ``uncertainty``
(intervals and tests that resample or flip whole tokens: ``what_if_intervals``), ``screen``
(every criterion and class out of sample, purged, tokens apart, family-wise adjusted). The pass
rule lives in ``_rules``, the sort-and-cumsum sweep in ``_kernel``, the metric formulas in
``_metrics``, the guard rails of every row (intervals, counts, flags) in ``_guards``.
"""

from quantscope.backtest._metrics import METRICS
from quantscope.backtest._rules import MARKET_CAP_CLASSES, OPERATORS, market_cap_class
from quantscope.backtest.compare import compare_playbooks
from quantscope.backtest.crosscheck import RATE_TOLERANCE, crosscheck
from quantscope.backtest.features import trade_features, wide_details
from quantscope.backtest.rank import rank_criteria
from quantscope.backtest.replay import replay
from quantscope.backtest.screen import screen
from quantscope.backtest.simulate import ExitRule, Exits, simulate_exits, simulated_entries
from quantscope.backtest.sweep import (
    RULE_LABELS,
    pivot_grid,
    threshold_grid,
    what_if,
    what_if_grid,
)
from quantscope.backtest.uncertainty import what_if_intervals
from quantscope.backtest.walk_forward import walk_forward

__all__ = [
    "MARKET_CAP_CLASSES",
    "METRICS",
    "OPERATORS",
    "RATE_TOLERANCE",
    "RULE_LABELS",
    "ExitRule",
    "Exits",
    "compare_playbooks",
    "crosscheck",
    "market_cap_class",
    "pivot_grid",
    "rank_criteria",
    "replay",
    "screen",
    "simulate_exits",
    "simulated_entries",
    "threshold_grid",
    "trade_features",
    "walk_forward",
    "what_if",
    "what_if_grid",
    "what_if_intervals",
    "wide_details",
]
