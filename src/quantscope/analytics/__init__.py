"""Analytics: plain, vectorised metric functions on quantscope's frames.

Every formula is written out in docs/metrics.md. Trade-level metrics (``summary``, ``by``) and
period-level ones (daily Sharpe and Sortino) are kept apart and named apart: a "win rate" here
is always the share of winning *trades*, never of winning days. The ``df.quant`` accessor
(``quantscope.accessor``) checks columns and calls these functions.

Trade metrics are over executed trades unless ``execution=`` asks for the hypothetical ones
(trades the model validation declined, with their shadow outcome); results say which.

Modules: ``trades`` (trade frames), ``evaluations`` (evaluation, criterion and signal frames),
``_kernel`` (the grouped numpy kernel behind ``summary``/``by``), ``_stats`` (one-series
reference definitions: Sharpe, Sortino, the probabilistic and deflated Sharpe,
drawdown), ``_periods`` (calendar periods for ``freq``),
``_execution`` (executed versus hypothetical trades), ``windows`` (rolling win rate, PnL and
Sharpe over the last N trades or days), ``drawdowns`` (the worst drawdown episodes),
``calendar`` (a metric per month or week, years x periods), ``returns`` (the tear-sheet figures of
a daily returns series: CAGR, volatility, VaR/CVaR, Calmar, skew, kurtosis, best and worst day,
the monthly returns table), ``benchmark`` (beta, alpha and correlation against a benchmark's
daily returns, or a token's candles made into them).
"""

from quantscope.analytics._execution import EXECUTION_LABELS, Execution
from quantscope.analytics._periods import FREQS
from quantscope.analytics._stats import (
    MIN_LOSING_DAYS,
    MIN_RATIO_DAYS,
    PERIODS_PER_YEAR,
    SHORT_SAMPLE_DAYS,
    Drawdown,
    deflated_sharpe_ratio,
    max_drawdown,
    probabilistic_sharpe_ratio,
    sharpe_ratio,
    sortino_ratio,
)
from quantscope.analytics.benchmark import BENCHMARK_METRICS, benchmark_metrics, candle_returns
from quantscope.analytics.calendar import pnl_calendar
from quantscope.analytics.drawdowns import DRAWDOWN_COLUMNS, worst_drawdowns
from quantscope.analytics.evaluations import (
    OUTCOMES,
    criterion_values,
    pass_rate,
    pass_rates,
    stage_counts,
    trade_outcomes,
    values_by_outcome,
)
from quantscope.analytics.returns import (
    RETURN_METRICS,
    VAR_CONFIDENCE,
    cagr,
    calmar,
    conditional_value_at_risk,
    monthly_returns,
    return_drawdown,
    return_metrics,
    total_return,
    value_at_risk,
    volatility,
)
from quantscope.analytics.trades import (
    CAPITAL_PER_QUANT_USD,
    SUMMARY_METRICS,
    TRADE_COLUMNS,
    by,
    daily_pnl,
    daily_returns,
    default_capital,
    drawdown,
    equity_curve,
    executed,
    roi,
    select_execution,
    summary,
    win_rate,
)
from quantscope.analytics.windows import ROLLING_COLUMNS, rolling

__all__ = [
    "BENCHMARK_METRICS",
    "CAPITAL_PER_QUANT_USD",
    "DRAWDOWN_COLUMNS",
    "EXECUTION_LABELS",
    "FREQS",
    "MIN_LOSING_DAYS",
    "MIN_RATIO_DAYS",
    "OUTCOMES",
    "PERIODS_PER_YEAR",
    "RETURN_METRICS",
    "ROLLING_COLUMNS",
    "SHORT_SAMPLE_DAYS",
    "SUMMARY_METRICS",
    "TRADE_COLUMNS",
    "VAR_CONFIDENCE",
    "Drawdown",
    "Execution",
    "benchmark_metrics",
    "by",
    "cagr",
    "calmar",
    "candle_returns",
    "conditional_value_at_risk",
    "criterion_values",
    "daily_pnl",
    "daily_returns",
    "default_capital",
    "deflated_sharpe_ratio",
    "drawdown",
    "equity_curve",
    "executed",
    "max_drawdown",
    "monthly_returns",
    "pass_rate",
    "pass_rates",
    "pnl_calendar",
    "probabilistic_sharpe_ratio",
    "return_drawdown",
    "return_metrics",
    "roi",
    "rolling",
    "select_execution",
    "sharpe_ratio",
    "sortino_ratio",
    "stage_counts",
    "summary",
    "total_return",
    "trade_outcomes",
    "value_at_risk",
    "values_by_outcome",
    "volatility",
    "win_rate",
    "worst_drawdowns",
]
