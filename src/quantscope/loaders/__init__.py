"""Loader functions, one module per resource group of the spec."""

from quantscope.loaders.evaluations import (
    load_eval_count,
    load_eval_details,
    load_eval_history,
    load_eval_timeseries,
    load_evaluations,
)
from quantscope.loaders.market import load_ohlcv
from quantscope.loaders.optimization import (
    Dashboard,
    apply_recommendation,
    load_dashboard,
    load_recommendations,
    run_analysis,
)
from quantscope.loaders.playbook import load_playbook, update_playbook
from quantscope.loaders.signals import SignalDetail, load_signal, load_signal_stats, load_signals
from quantscope.loaders.trades import TradeDetail, load_trade, load_trade_stats, load_trades

__all__ = [
    "Dashboard",
    "SignalDetail",
    "TradeDetail",
    "apply_recommendation",
    "load_dashboard",
    "load_eval_count",
    "load_eval_details",
    "load_eval_history",
    "load_eval_timeseries",
    "load_evaluations",
    "load_ohlcv",
    "load_playbook",
    "load_recommendations",
    "load_signal",
    "load_signal_stats",
    "load_signals",
    "load_trade",
    "load_trade_stats",
    "load_trades",
    "run_analysis",
    "update_playbook",
]
