"""The report's research sections: the playbook, the optimizer's recommendations, the
thresholds the user named, and two trades on the chart.

Issue 21's rules hold: threshold research answers two questions (``backtest.questions``), and
where a decision is shown both stand side by side, each named with ``QUESTION_LABELS``: the
change's **effect** (the whole pass rule replayed: what applying does, shown first) and the
criterion's **signal** (kept versus dropped trades, the criterion as a hard filter; the
service's claims count this way). Neither bounds the other. Every decision number carries
its interval from ``backtest.uncertainty`` (``what_if_intervals``: a Poisson bootstrap over
tokens, the rule of three where nothing moved) and the sample it rests on (trades, tokens).
The screen's section (``_screen``) ranks every criterion out of sample.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from quantscope import backtest as bt
from quantscope import plots
from quantscope.backtest._guards import CONFIDENCE, MIN_TOKENS, MIN_TRADES
from quantscope.backtest.features import check_criteria
from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES, question_of
from quantscope.reporting import cells as C
from quantscope.reporting._trading import _one_axes, figure
from quantscope.reporting.blocks import Block, Heading, Note, Table, Text
from quantscope.reporting.build import ReportData
from quantscope.reporting.plugs import THRESHOLD_PLUGS

#: Thresholds per market-cap class in a named criterion's what-if table (quantiles).
WHAT_IF_POINTS = 7
#: Days of candles shown either side of an example trade.
CANDLE_MARGIN = pd.Timedelta(days=2)

_OPS = {"V_GTE_T": "≥", "V_GT_T": ">", "V_LTE_T": "≤", "V_LT_T": "<"}


def _class_rows(features: pd.DataFrame, cap_class: str) -> pd.DataFrame:
    return features[(features["market_cap_class"].astype("string") == cap_class).fillna(False)]


def _missing(what: str, data: ReportData) -> list[Block]:
    why = [n for n in data.notes if n.startswith(what)]
    return [Note(why[0] if why else f"No {what} in this report's data.", "warn")]


# --- the playbook ---------------------------------------------------------------------------


def playbook(data: ReportData) -> list[Block]:
    frame = data.playbook
    if frame is None:
        return _missing("playbook", data)
    blocks: list[Block] = [
        Text(
            "A buy evaluation passes when every required, enabled criterion passes and the "
            "weighted score of the enabled criteria reaches the class's pass mark "
            "(docs/service-contract.md)."
        )
    ]
    for cap_class, rows in frame.groupby("market_cap_class", observed=True, sort=True):
        shown = pd.DataFrame(
            {
                "type": [C.text(v) for v in rows["config_type"]],
                "rule": [
                    f"value {_OPS.get(str(op), str(op))} {C.number(t)}"
                    for op, t in zip(rows["operator"], rows["threshold"], strict=True)
                ],
                "weight": [C.number(v) for v in rows["weight"]],
                "required": [C.flag(v) for v in rows["required"]],
                "disabled": [C.flag(v) for v in rows["disabled"]],
            },
            index=pd.Index([str(v) for v in rows["criterion"]], name="criterion"),
        )
        mark = rows["pass_mark"].dropna()
        caption = f"{cap_class}: pass mark {C.number(mark.iloc[0]) if len(mark) else 'n/a'}"
        blocks += [Heading(str(cap_class)), Table(f"class_{cap_class}", caption, shown)]
    if data.evaluations is not None and len(data.evaluations):
        blocks.append(
            figure(
                "pass_rate",
                _one_axes(plots.pass_rate_over_time, data.evaluations, "W"),
                (9.0, 3.5),
                f"Share of the quant's {C.count(len(data.evaluations))} evaluations that "
                "passed, per week.",
            )
        )
    return blocks


# --- decision numbers with their intervals ---------------------------------------------------


def decision_rows(
    rows: pd.DataFrame, criterion: str, thresholds: list[float], current: float | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The what-if rows (effect, replayed) at ``thresholds`` and both questions' intervals:
    ``(what_if, effect intervals, signal intervals)``, one row per threshold each, in order.
    """
    kw: dict[str, Any] = {} if current is None else {"current": current}
    replay = bt.what_if(rows, criterion, thresholds, bootstrap=False, **kw)
    effect = bt.what_if_intervals(rows, criterion, list(replay["threshold"]), **kw)
    signal = bt.what_if_intervals(rows, criterion, list(replay["threshold"]), rule="filter", **kw)
    return replay, effect, signal


def with_interval(frame: pd.DataFrame, name: str, kind: str) -> list[str]:
    """``value [lo, hi]`` of column ``name`` (and ``name_lo``/``name_hi``) per row."""
    fmt = C.FORMATS[kind]
    return [
        f"{fmt(v)} {C.interval(lo, hi, kind)}"
        for v, lo, hi in zip(frame[name], frame[f"{name}_lo"], frame[f"{name}_hi"], strict=True)
    ]


#: Short column prefixes of the two questions (their full labels: ``QUESTION_LABELS``).
EFFECT, SIGNAL = "effect", "signal"
INTERVALS = (
    f"Intervals: {CONFIDENCE:.0%}, Poisson bootstrap over tokens with a t widening; where "
    "nothing moved (the threshold keeps the same trades as now), the rule of three over the "
    "tokens (backtest.uncertainty, docs/metrics.md). Small sample: fewer than "
    f"{MIN_TRADES} trades or {MIN_TOKENS} tokens kept."
)


def questions_note() -> Note:
    """Both questions, as the report states them once per research table."""
    return Note(f"{QUESTION_NOTES['effect']} {QUESTION_NOTES['signal']}", "question")


# --- the optimizer's recommendations --------------------------------------------------------


def _recommendation_row(features: pd.DataFrame, rec: pd.Series, check: pd.Series) -> dict[str, str]:
    rows = _class_rows(features, str(rec["market_cap_class"]))
    rows = rows[(rows["quant_id"] == rec["quant_id"]).fillna(False).to_numpy(dtype=bool)]
    criterion = str(rec["criterion"])
    shown = {
        "class": C.text(rec["market_cap_class"]),
        "criterion": C.text(rec["criterion"]),
        "threshold": f"{C.number(rec['old_threshold'])} → {C.number(rec['new_threshold'])}",
        "applied": C.flag(rec["applied"]),
        "trades": C.count(check["sample_size_client"]),
    }
    if criterion not in rows.columns or rows[criterion].notna().sum() == 0:
        return shown
    replay, effect, signal = decision_rows(
        rows, criterion, [float(rec["new_threshold"])], float(rec["old_threshold"])
    )
    shown |= {
        "tokens": C.count(rows["token_id"].nunique()),
        f"{EFFECT}: trades": C.signed_count(replay["d_trades"].iloc[0]),
        f"{EFFECT}: win rate [95 %]": with_interval(effect, "d_win_rate", "points")[0],
        f"{EFFECT}: PnL [95 %]": with_interval(effect, "d_total_pnl_usd", "signed_usd")[0],
        f"{SIGNAL}: win rate [95 %]": with_interval(signal, "d_win_rate", "points")[0],
        f"service claim ({SIGNAL})": C.points(check["win_rate_change_service"]),
        "service = client filter": C.flag(check["agrees"]),
        "moved tokens": C.count(effect["moved_tokens"].iloc[0]),
        "small sample": C.flag(replay["small_sample"].iloc[0]),
    }
    return shown


def recommendations(data: ReportData) -> list[Block]:
    recs, features = data.recommendations, data.features
    if recs is None:
        return _missing("recommendations", data)
    if features is None or recs.empty:
        return [Text("The optimizer has no recommendation for this quant.")]
    checks = bt.crosscheck(recs, features).set_index("recommendation_id")
    rows = [
        _recommendation_row(features, rec, checks.loc[rec["recommendation_id"]])
        for _, rec in recs.iterrows()
    ]
    ids = [f"#{r}" for r in recs["recommendation_id"]]
    table = pd.DataFrame(rows, index=pd.Index(ids, name="recommendation")).fillna(C.NA)
    capped = (recs.attrs.get("quantscope") or {}).get("capped")
    blocks: list[Block] = [
        Text(
            "For each recommendation, on the quant's executed closed trades of its class: "
            f"first the {QUESTION_LABELS['effect']}, then the {QUESTION_LABELS['signal']}, "
            "and the service's own claim, which counts the criterion as a hard filter (a "
            "signal figure). Act on the effect; each figure carries its interval."
        ),
        Table(
            "table",
            "The optimizer's recommendations: their effect and their signal",
            table,
            INTERVALS,
        ),
        questions_note(),
    ]
    if capped:
        blocks += [Note(str(c["message"]), "warn") for c in capped]
    return blocks


# --- the thresholds the user named -----------------------------------------------------------


def _what_if_rows(rows: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """Both questions at quantiles of the values plus the current threshold, with intervals."""
    values = rows[criterion].dropna().to_numpy(dtype=np.float64)
    grid = [float(v) for v in np.unique(bt.threshold_grid(values, WHAT_IF_POINTS))]
    current = bt.what_if(rows, criterion, grid[:1], bootstrap=False).attrs["what_if"]["current"]
    known = current.get(criterion) or []
    if len(known) == 1:
        grid = sorted({*grid, float(known[0])})
    replay, effect, signal = decision_rows(rows, criterion, grid)
    shown = pd.DataFrame(
        {
            "trades": [C.count(v) for v in replay["trades"]],
            "tokens": [C.count(v) for v in replay["tokens"]],
            f"{EFFECT}: trades": [C.signed_count(v) for v in replay["d_trades"]],
            f"{EFFECT}: win rate [95 %]": with_interval(effect, "d_win_rate", "points"),
            f"{EFFECT}: PnL [95 %]": with_interval(effect, "d_total_pnl_usd", "signed_usd"),
            f"{SIGNAL}: win rate [95 %]": with_interval(signal, "d_win_rate", "points"),
            f"{SIGNAL}: trades kept": [C.count(v) for v in signal["trades"]],
            "small sample": [C.flag(v) for v in replay["small_sample"]],
            "current": [C.flag(v) for v in replay["is_current"]],
            "admits unseen": [C.flag(v) for v in replay["admits_unseen"]],
        },
        index=pd.Index([C.number(v) for v in replay["threshold"]], name="threshold"),
    )
    return shown


def thresholds(data: ReportData) -> list[Block]:
    if not data.criteria:
        return [
            Text(
                "No criterion named. Name some (qsc.report(..., criteria=['smart_money_buys']), "
                "quantscope report --criteria a,b) to see what moving their thresholds does."
            )
        ]
    features = data.features
    if features is None:
        return _missing("features", data)
    check_criteria(features, list(data.criteria), "report")
    blocks: list[Block] = [questions_note()]
    for criterion in data.criteria:
        blocks.append(Heading(criterion))
        for cap_class in sorted(features["market_cap_class"].dropna().astype(str).unique()):
            rows = _class_rows(features, cap_class)
            if rows[criterion].notna().sum() == 0:
                continue
            blocks.append(
                Table(
                    f"what_if_{criterion}_{cap_class}",
                    f"{criterion}, {cap_class}: each threshold's effect and signal",
                    _what_if_rows(rows, criterion),
                    "Changes against the current threshold. " + INTERVALS,
                )
            )
        blocks += _walk_forward(features, criterion)
        if data.details is not None:
            blocks.append(
                figure(
                    f"distribution_{criterion}",
                    _one_axes(
                        plots.criterion_distributions, data.details, data.executed, criterion
                    ),
                    (8.0, 3.5),
                )
            )
        for plug in THRESHOLD_PLUGS:
            blocks += plug(data, criterion)
    return blocks


def _walk_forward(features: pd.DataFrame, criterion: str) -> list[Block]:
    table = bt.walk_forward(features, criterion)
    if table.empty:
        return [Note(f"{criterion}: too few trades for walk-forward folds.", "warn")]
    shown = C.table(
        table,
        {
            "market_cap_class": "text",
            "fold": "count",
            "threshold": "number",
            "train_trades": "count",
            "in_sample_gain": "points",
            "test_trades": "count",
        },
    )
    # each fold's test block, its tokens and its effect with the interval walk_forward gives
    shown["test tokens"] = [C.count(v) for v in table["test_tokens"]]
    shown[f"out of sample, {EFFECT}: win rate [95 %]"] = with_interval(
        table, "d_win_rate", "points"
    )
    shown[f"out of sample, {EFFECT}: PnL [95 %]"] = with_interval(
        table, "d_total_pnl_usd", "signed_usd"
    )
    meta = table.attrs["walk_forward"]
    return [
        Table(
            f"walk_forward_{criterion}",
            f"{criterion}: chosen on the past, tried on the future (walk-forward, "
            f"{QUESTION_LABELS[question_of(str(meta['rule']))]})",
            shown,
            f"Mean win-rate gain in sample {C.points(meta['mean_in_sample_gain'])}, out of "
            f"sample {C.points(meta['mean_out_of_sample_gain'])}. Each fold chose its "
            "threshold among about 100 candidates on its training trades only: the in-sample "
            "gain is the best of a search, the out-of-sample one is not. " + INTERVALS,
            index=False,
        )
    ]


# --- two trades on the chart ----------------------------------------------------------------


def examples(data: ReportData) -> list[Block]:
    if not data.candles:
        return [Text("No closed executed trade to show.")]
    blocks: list[Block] = []
    for label, trade, ohlcv in data.candles:
        start = pd.Timestamp(trade["opened_at"]) - CANDLE_MARGIN
        end = pd.Timestamp(trade["closed_at"]) + CANDLE_MARGIN
        window = ohlcv[(ohlcv.index >= start) & (ohlcv.index <= end)]
        window.attrs = ohlcv.attrs
        one = data.executed[data.executed["trade_id"] == trade["trade_id"]]
        blocks.append(
            figure(
                f"candles_{label}",
                _one_axes(plots.candles, window, trades=one),
                (9.0, 3.5),
                f"The {label} executed trade: #{trade['trade_id']} {C.text(trade['token_symbol'])}"
                f" on {C.text(trade['chain'])}, PnL {C.signed_usd(trade['pnl_usd'])} "
                f"({C.share(trade['roi'])} of {C.usd(trade['buy_cost_usd'])}).",
            )
        )
    return blocks
