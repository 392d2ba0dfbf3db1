"""The report's trading sections: overview, headline metrics, equity, breakdowns, hypothetical.

Each builder is a function of ``ReportData`` to blocks: numbers from ``quantscope.analytics``,
figures from ``quantscope.plots`` (drawn by ``png.draw``), nothing computed here but
formatting. Executed trades everywhere, except the hypothetical section, which says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure

from quantscope import analytics, plots
from quantscope.analytics import MIN_LOSING_DAYS, SHORT_SAMPLE_DAYS
from quantscope.backtest._guards import CONFIDENCE
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.backtest.uncertainty import rate_interval
from quantscope.reporting import cells as C
from quantscope.reporting.blocks import Block, Definitions, Figure, Heading, Note, Table, Text
from quantscope.reporting.build import ReportData
from quantscope.reporting.png import draw

#: Tokens listed in the token breakdown (the most traded; the rest are counted under it).
TOP_TOKENS = 20
#: The period of the period breakdown (``analytics.FREQS``).
PERIOD = "W"

# The headline rows: metric of summary(), how it prints.
HEADLINE: tuple[tuple[str, str], ...] = (
    ("trades", "count"),
    ("wins", "count"),
    ("losses", "count"),
    ("win_rate", "share"),
    ("total_pnl_usd", "usd"),
    ("roi", "share"),
    ("profit_factor", "ratio"),
    ("expectancy_usd", "usd"),
    ("avg_win_usd", "usd"),
    ("avg_loss_usd", "usd"),
    ("max_drawdown", "share"),
    ("max_drawdown_usd", "usd"),
    ("max_drawdown_duration", "duration"),
    ("days", "count"),
    ("losing_days", "count"),
    ("sharpe", "ratio"),
    ("psr", "probability"),
    ("sortino", "ratio"),
    ("avg_holding_time", "duration"),
    ("open_trades", "count"),
    ("unrealised_pnl_usd", "usd"),
)
# The columns of the breakdown tables: by() metric, how it prints.
BREAKDOWN: dict[str, str] = {
    "trades": "count",
    "win_rate": "share",
    "total_pnl_usd": "usd",
    "roi": "share",
    "profit_factor": "ratio",
    "max_drawdown": "share",
}


def figure(
    key: str, paint: Callable[[MplFigure], Any], size: tuple[float, float], caption: str = ""
) -> Figure:
    """A figure block: ``paint(figure)`` drawn under the report style."""
    png, title = draw(size, paint)
    return Figure(key, png, title or key, caption)


def _one_axes(draw_on: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[MplFigure], Any]:
    return lambda fig: draw_on(*args, ax=fig.add_subplot(), **kwargs)


def _label(key: object) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    return " / ".join(C.day(p) if isinstance(p, pd.Timestamp) else C.text(p) for p in parts)


def by_table(table: pd.DataFrame, kinds: dict[str, str] = BREAKDOWN) -> pd.DataFrame:
    """A ``by()`` table's chosen columns as text, its group keys as the row labels."""
    shown = C.table(table, kinds)
    shown.index = pd.Index([_label(k) for k in table.index], name=" / ".join(table.index.names))
    return shown


def _tokens(data: ReportData, executed: pd.DataFrame) -> pd.Series:
    closed = executed[(executed["status"] == "Closed").fillna(False).to_numpy(bool)]
    return closed["token_id"].dropna()


# --- sections ------------------------------------------------------------------------------


def overview(data: ReportData) -> list[Block]:
    executed, hypothetical = data.executed, data.hypothetical
    closed = (executed["status"] == "Closed").fillna(False).to_numpy(bool)
    rows = {
        "subject": data.title + (f" (quant {data.quant_id})" if data.quant_id else ""),
        "data as of": C.when(data.as_of),
        "executed trades": f"{C.count(closed.sum())} closed, {C.count((~closed).sum())} open",
        "hypothetical trades (never executed)": C.count(len(hypothetical)),
        "requests sent for this report": C.count(data.cost.sent),
        "answers read from the cache": C.count(data.cost.cached),
    }
    if data.plan:
        rows["plan"] = data.plan
    table = pd.DataFrame({"value": list(rows.values())}, index=pd.Index(list(rows), name=""))
    blocks: list[Block] = [
        Table("facts", "What this report is about", table),
        Text(
            "Every figure and table is over the executed trades (realised PnL) unless it says "
            "otherwise. Trades the model validation declined (REJECT, RECOMMEND, a DELAY still "
            "waiting) were never executed: their PnL is a shadow outcome, shown only in the "
            "section on hypothetical trades."
        ),
        Text(
            "Threshold research answers two questions, labelled wherever a figure is shown: "
            f"the {QUESTION_LABELS['effect']}, the figure to act on, and the "
            f"{QUESTION_LABELS['signal']}, which ranks criteria; neither bounds the other. "
            "Every decision number carries a 95 % interval from one module (a Poisson "
            "bootstrap over tokens) and the trades and tokens it rests on; rows resting on "
            "fewer than 30 trades or 10 tokens are flagged small sample."
        ),
    ]
    if data.cost.loads:
        loads = pd.DataFrame(
            {
                "requests sent": [C.count(s) for _, s, _ in data.cost.loads],
                "from the cache": [C.count(c) for _, _, c in data.cost.loads],
            },
            index=pd.Index([e for e, _, _ in data.cost.loads], name="endpoint"),
        )
        blocks.append(Table("cost", "What the report read, per load", loads))
    blocks += [Note(n, "warn") for n in data.notes]
    return blocks


def _win_rate_interval(executed: pd.DataFrame) -> tuple[float, float]:
    """The headline win rate's interval from ``backtest.uncertainty`` (whole tokens resampled),
    over the trades ``summary()`` counts: closed, with a PnL; won when ``pnl_usd > 0``.
    """
    closed = executed[(executed["status"] == "Closed").fillna(False).to_numpy(bool)]
    pnl = closed["pnl_usd"].to_numpy(dtype=np.float64, na_value=np.nan)
    counted = ~np.isnan(pnl)
    _, lo, hi = rate_interval(pnl[counted] > 0, closed["token_id"].to_numpy(object)[counted])
    return lo, hi


def headline(data: ReportData) -> list[Block]:
    executed = data.executed
    metrics = analytics.summary(executed)
    n = int(metrics["trades"])
    lo, hi = _win_rate_interval(executed)
    tokens = _tokens(data, executed).nunique()
    values = [C.FORMATS[kind](metrics[name]) for name, kind in HEADLINE]
    shown = pd.DataFrame(
        {
            "value": values,
            "definition": [analytics.SUMMARY_METRICS[name] for name, _ in HEADLINE],
        },
        index=pd.Index([name for name, _ in HEADLINE], name="metric"),
    )
    shown.loc["win_rate", "value"] += f" {C.interval(lo, hi)}"
    notes: list[Block] = [sharpe_caveat(metrics)] if bool(metrics["short_sample"]) else []
    if bool(metrics["few_days"]):
        notes.append(Note("Sharpe and Sortino rest on fewer than 30 daily values.", "warn"))
    if bool(metrics["no_losing_day"]):
        notes.append(Note("No losing day: Sortino has no downside.", "warn"))
    if n < 30 or tokens < 10:
        notes.append(Note(f"Small sample: {n} trades in {tokens} tokens.", "warn"))
    return [
        Text(
            f"Sample: {C.count(n)} closed executed trades in {C.count(tokens)} distinct tokens "
            f"over {C.count(metrics['days'])} days; open positions are reported apart "
            f"({C.count(metrics['open_trades'])}, marked PnL "
            f"{C.usd(metrics['unrealised_pnl_usd'])})."
            f" The win rate's interval is {CONFIDENCE:.0%}, resampling whole tokens (trades of "
            'one token are not independent; docs/metrics.md, "Calibrated uncertainty"). '
            + sharpe_sentence(metrics)
        ),
        Table("metrics", "Headline metrics (executed, closed trades)", shown),
        *notes,
    ]


def sharpe_sentence(metrics: pd.Series) -> str:
    """The Sharpe with the sample it rests on and its probabilistic version, in words."""
    return (
        f"Sharpe {C.ratio(metrics['sharpe'])} over {C.count(metrics['days'])} days "
        f"({C.count(metrics['losing_days'])} losing days); probabilistic Sharpe ratio "
        f"{C.probability(metrics['psr'])} (the probability that the true Sharpe is above 0, "
        "given the days, skew and kurtosis of the daily PnL; docs/metrics.md)."
    )


def sharpe_caveat(metrics: pd.Series) -> Note:
    """The short-sample warning of an annualised ratio."""
    return Note(
        f"Short sample: the Sharpe of {C.ratio(metrics['sharpe'])} and the Sortino rest on "
        f"{C.count(metrics['days'])} days with {C.count(metrics['losing_days'])} losing days "
        f"(fewer than {SHORT_SAMPLE_DAYS} days or {MIN_LOSING_DAYS} losing days). An annualised "
        "ratio from so few days says little about the next ones: read the probabilistic Sharpe "
        "ratio and the day counts, not the ratio alone.",
        "warn",
    )


def equity(data: ReportData) -> list[Block]:
    executed = data.executed
    metrics = analytics.summary(executed)
    curve = figure(
        "equity",
        lambda fig: plots.equity(
            executed, axes=fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
        ),
        (9.0, 5.5),
        f"Realised equity from {C.usd(metrics['capital_usd'])} of starting capital, and its "
        "distance below the running peak.",
    )
    deepest = pd.DataFrame(
        {
            "value": [
                C.share(metrics["max_drawdown"]),
                C.usd(metrics["max_drawdown_usd"]),
                C.duration(metrics["max_drawdown_duration"]),
            ]
        },
        index=pd.Index(
            ["max_drawdown", "max_drawdown_usd", "max_drawdown_duration"], name="metric"
        ),
    )
    return [
        curve,
        Table(
            "drawdown",
            "The deepest fall",
            deepest,
            "Drawdown is measured against peak equity (capital plus cumulative PnL).",
        ),
    ]


def breakdowns(data: ReportData) -> list[Block]:
    executed = data.executed
    blocks: list[Block] = []
    for key, title in (("chain", "By chain"), ("decision", "By decision of the model validation")):
        if key in executed.columns:
            blocks += [Heading(title), Table(key, title, by_table(analytics.by(executed, key)))]
    blocks.append(
        figure(
            "win_rate_by_chain",
            _one_axes(plots.metric_by, executed, "chain", "win_rate"),
            (8.0, 3.5),
        )
    )
    blocks += _token_table(executed)
    period = analytics.by(executed, freq=PERIOD)
    blocks += [
        Heading("By week of the close"),
        Table(
            "period",
            "By week of the close (UTC, weeks start on Monday)",
            by_table(period),
            "A week's drawdown is the account's within that week, not a fresh start.",
        ),
        figure(
            "pnl_by_week",
            _one_axes(plots.metric_by, executed, None, "total_pnl_usd", freq=PERIOD),
            (9.0, 3.5),
        ),
        figure("roi_distribution", _one_axes(plots.roi_distribution, executed), (8.0, 3.5)),
    ]
    return blocks


def _token_table(executed: pd.DataFrame) -> list[Block]:
    if "token_symbol" not in executed.columns:
        return []
    table = analytics.by(executed, "token_symbol")
    ranked = table.sort_values(["trades", "total_pnl_usd"], ascending=[False, False], kind="stable")
    shown = ranked.head(TOP_TOKENS)
    rest = ranked.iloc[TOP_TOKENS:]
    footnote = f"The {len(shown)} most traded of {len(ranked)} tokens" + (
        f"; the other {len(rest)} hold {C.count(rest['trades'].sum())} trades "
        f"({C.usd(rest['total_pnl_usd'].sum())})."
        if len(rest)
        else "."
    )
    return [Heading("By token"), Table("token", "By token", by_table(shown), footnote)]


def hypothetical(data: ReportData) -> list[Block]:
    frame = data.hypothetical
    label = analytics.EXECUTION_LABELS["hypothetical"]
    if frame.empty:
        return [
            Note(
                "The trades of this report hold no hypothetical trade (load them with "
                "trading_status='all' to see the declined buys' shadow outcomes).",
                "hypothetical",
            )
        ]
    metrics = analytics.summary(frame, execution="hypothetical")
    rows = ("trades", "win_rate", "total_pnl_usd", "roi", "max_drawdown")
    kinds = dict(HEADLINE)
    shown = pd.DataFrame(
        {"value": [C.FORMATS[kinds[r]](metrics[r]) for r in rows]},
        index=pd.Index(list(rows), name="metric"),
    )
    blocks: list[Block] = [
        Note(
            f"HYPOTHETICAL: {label}. Their PnL is what the quant's exit rule would have made; "
            "none of it is in the account or in any other section.",
            "hypothetical",
        ),
        Table("summary", f"Summary of the {label}", shown),
    ]
    if "decision" in frame.columns:
        by = analytics.by(frame, "decision", execution="hypothetical")
        blocks.append(Table("decision", f"By decision ({label})", by_table(by)))
    return blocks


def definitions(data: ReportData) -> list[Block]:
    del data
    return [
        Heading("Trade-level metrics (summary(): trades, daily PnL)"),
        Definitions(tuple(analytics.SUMMARY_METRICS.items())),
        Heading("Return-based figures (return_metrics(): daily returns)"),
        Definitions(tuple(analytics.RETURN_METRICS.items())),
        Heading("Against a benchmark (benchmark_metrics())"),
        Definitions(tuple(analytics.BENCHMARK_METRICS.items())),
        Text("Formulas: docs/metrics.md of quantscope."),
    ]
