"""The report's returns section: the tear-sheet figures of the account's daily returns.

What a quant reads in a quantstats tear sheet, over the one daily series of
``analytics.daily_returns`` (a UTC day's realised PnL over the equity at the start of the
day): CAGR, volatility, Sharpe with its probabilistic Sharpe ratio, Sortino, drawdown, Calmar,
historical VaR and CVaR, skew, excess kurtosis, best and worst day, the monthly returns table,
and an optional benchmark beside. Numbers from ``analytics.returns`` and
``analytics.benchmark``; nothing is computed here but formatting.
"""

from __future__ import annotations

import pandas as pd

from quantscope import analytics
from quantscope.analytics import MIN_LOSING_DAYS, SHORT_SAMPLE_DAYS
from quantscope.reporting import cells as C
from quantscope.reporting.blocks import Block, Heading, Note, Table, Text
from quantscope.reporting.build import ReportData

# The rows of the figures table: metric of return_metrics(), how it prints.
FIGURES: tuple[tuple[str, str], ...] = (
    ("days", "count"),
    ("losing_days", "count"),
    ("total_return", "share"),
    ("cagr", "share"),
    ("volatility", "share"),
    ("sharpe", "ratio"),
    ("psr", "probability"),
    ("sortino", "ratio"),
    ("max_drawdown", "share"),
    ("calmar", "ratio"),
    ("var_95", "share"),
    ("cvar_95", "share"),
    ("skew", "ratio"),
    ("kurtosis", "ratio"),
    ("best_day", "share"),
    ("worst_day", "share"),
)
# The benchmark comparison: figure of return_metrics(), its name in benchmark_metrics().
COMPARED: tuple[tuple[str, str], ...] = (
    ("total_return", "share"),
    ("cagr", "share"),
    ("volatility", "share"),
    ("sharpe", "ratio"),
    ("psr", "probability"),
    ("max_drawdown", "share"),
)
GREEKS: tuple[tuple[str, str], ...] = (
    ("paired_days", "count"),
    ("beta", "ratio"),
    ("alpha", "share"),
    ("correlation", "ratio"),
)

DAY_AND_RETURN = (
    "A day is a UTC calendar day, every day from the first close to the last (days without a "
    "close count, at 0); a return is the day's realised PnL over the account's equity at the "
    "start of the day (capital plus the PnL realised before). Compounded, these returns "
    "rebuild the account's equity, so quantstats given the same series "
    "(df.quant.daily_returns()) shows these figures, with periods=365 (docs/metrics.md, "
    '"Return-based figures").'
)


def _figures_table(metrics: pd.Series) -> pd.DataFrame:
    values = [C.FORMATS[kind](metrics[name]) for name, kind in FIGURES]
    shown = pd.DataFrame(
        {"value": values, "definition": [analytics.RETURN_METRICS[n] for n, _ in FIGURES]},
        index=pd.Index([name for name, _ in FIGURES], name="metric"),
    )
    shown.loc["best_day", "value"] += f" ({C.day(metrics['best_day_date'])})"
    shown.loc["worst_day", "value"] += f" ({C.day(metrics['worst_day_date'])})"
    return shown


def short_sample_note(metrics: pd.Series) -> Note:
    """The annualised figures of a short series, flagged in words with their PSR."""
    return Note(
        f"Short sample: CAGR {C.share(metrics['cagr'])}, volatility "
        f"{C.share(metrics['volatility'])}, Sharpe {C.ratio(metrics['sharpe'])} (probabilistic "
        f"Sharpe ratio {C.probability(metrics['psr'])}) and Calmar {C.ratio(metrics['calmar'])} "
        f"are annualised from {C.count(metrics['days'])} days with "
        f"{C.count(metrics['losing_days'])} losing days (fewer than {SHORT_SAMPLE_DAYS} days or "
        f"{MIN_LOSING_DAYS} losing days). A CAGR is the period's return raised to the power "
        f"365 / days: over a short period it extrapolates, so read the total return "
        f"({C.share(metrics['total_return'])}) and the day counts, not the annual figures alone.",
        "warn",
    )


def monthly_table(returns: pd.Series) -> pd.DataFrame:
    """``analytics.monthly_returns`` as text, n/a for months without a day of data."""
    table = analytics.monthly_returns(returns)
    shown = C.table(table, {name: "share" for name in table.columns})
    shown.index = pd.Index([str(y) for y in table.index], name="year")
    return shown


def _benchmark_blocks(data: ReportData, returns: pd.Series) -> list[Block]:
    if data.benchmark is None:
        return [
            Text(
                "No benchmark: pass benchmark= to the report (a Series of daily returns, a "
                "token's candles from load_ohlcv, or a token id) for beta, alpha and "
                "correlation, and the benchmark's own CAGR and volatility beside."
            )
        ]
    greeks = analytics.benchmark_metrics(returns, data.benchmark)
    paired = returns[returns.index.isin(data.benchmark.dropna().index)]
    ours = analytics.return_metrics(paired)
    label = data.benchmark_label
    compared = pd.DataFrame(
        {
            "account": [C.FORMATS[kind](ours[name]) for name, kind in COMPARED],
            f"benchmark ({label})": [
                C.FORMATS[kind](greeks[f"benchmark_{name}"]) for name, kind in COMPARED
            ],
        },
        index=pd.Index([name for name, _ in COMPARED], name="metric"),
    )
    relation = pd.DataFrame(
        {
            "value": [C.FORMATS[kind](greeks[name]) for name, kind in GREEKS],
            "definition": [analytics.BENCHMARK_METRICS[name] for name, _ in GREEKS],
        },
        index=pd.Index([name for name, _ in GREEKS], name="metric"),
    )
    blocks: list[Block] = [
        Heading(f"Against a benchmark: {label}"),
        Table(
            "benchmark",
            f"The account and the benchmark over the {C.count(greeks['paired_days'])} days both "
            "have",
            compared,
            "The benchmark's daily returns: each UTC day's last close over the previous day's "
            "(a token's candles), or the series given.",
        ),
        Table("greeks", "Beta, alpha and correlation", relation),
    ]
    if int(greeks["paired_days"]) < len(returns):
        blocks.append(
            Note(
                f"The benchmark covers {C.count(greeks['paired_days'])} of the "
                f"{C.count(len(returns))} days: the comparison is over those days only.",
                "warn",
            )
        )
    return blocks


def returns(data: ReportData) -> list[Block]:
    daily = analytics.daily_returns(data.executed)
    if daily.empty:
        return [Note("No closed executed trade: there are no daily returns to show.", "warn")]
    metrics = analytics.return_metrics(daily)
    headline = analytics.summary(data.executed)
    blocks: list[Block] = [
        Text(DAY_AND_RETURN),
        Table(
            "figures",
            "The tear-sheet figures (daily returns, executed trades)",
            _figures_table(metrics),
        ),
        Text(
            f"Two Sharpe ratios, each with its probabilistic Sharpe ratio: this one "
            f"({C.ratio(metrics['sharpe'])}, PSR {C.probability(metrics['psr'])}) is over the "
            f"daily returns on the growing equity, as quantstats computes it; the headline's "
            f"({C.ratio(headline['sharpe'])}, PSR {C.probability(headline['psr'])}) is over the "
            "daily PnL, which is PnL over a fixed capital. As the equity grows, a later day's "
            "PnL is a smaller return, so the two differ. VaR and CVaR are historical at 95 %: "
            "the 5th percentile of the days and the mean of the days at or below it. Kurtosis "
            "is excess kurtosis (a normal series gives 0)."
        ),
    ]
    if bool(metrics["short_sample"]):
        blocks.append(short_sample_note(metrics))
    blocks += [
        Heading("Monthly returns"),
        Table(
            "monthly",
            "Monthly returns, compounded (UTC months; the year's over the days it has)",
            monthly_table(daily),
            "n/a: a month without a day of data (quantstats prints 0 there).",
        ),
    ]
    return blocks + _benchmark_blocks(data, daily)
