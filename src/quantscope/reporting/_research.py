"""The report's research sections: the playbook, the optimizer's recommendations, the
thresholds the user named, and two trades on the chart.

Issue 10's rules hold: what applying a change does is the replayed pass rule
(``backtest.what_if``'s default), shown first; the hard filter and the service's claim are
labelled UPPER BOUND beside it; every research row says how many trades and tokens it rests
on, with a Wilson interval on the win rate, a token bootstrap on the PnL change and a
small-sample flag.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from quantscope import backtest as bt
from quantscope import plots
from quantscope.backtest._guards import MIN_TOKENS, MIN_TRADES
from quantscope.backtest.features import check_criteria
from quantscope.reporting import cells as C
from quantscope.reporting._trading import _one_axes, figure
from quantscope.reporting.blocks import Block, Heading, Note, Table, Text
from quantscope.reporting.build import ReportData
from quantscope.reporting.plugs import THRESHOLD_PLUGS

#: Thresholds per market-cap class in a named criterion's what-if table (quantiles).
WHAT_IF_POINTS = 7
#: Days of candles shown either side of an example trade.
CANDLE_MARGIN = pd.Timedelta(days=2)

UPPER_BOUND = (
    "UPPER BOUND: the service's claim and the filter figure count the criterion as a hard "
    "filter. Applying a change produces the replayed effect (the playbook's whole pass rule "
    "with the new threshold), which is the figure to act on."
)
_OPS = {"V_GTE_T": "≥", "V_GT_T": ">", "V_LTE_T": "≤", "V_LT_T": "<"}
_WHAT_IF: dict[str, str] = {
    "threshold": "number",
    "trades": "count",
    "tokens": "count",
    "win_rate": "share",
    "d_trades": "signed_count",
    "d_win_rate": "points",
    "d_total_pnl_usd": "signed_usd",
    "small_sample": "flag",
    "is_current": "flag",
    "admits_unseen": "flag",
}


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


# --- the optimizer's recommendations --------------------------------------------------------


def _replayed(features: pd.DataFrame, rec: pd.Series) -> pd.Series | None:
    """The replayed what-if row of one recommendation (new threshold against the old one)."""
    rows = _class_rows(features, str(rec["market_cap_class"]))
    criterion = str(rec["criterion"])
    if criterion not in rows.columns or rows.empty:
        return None
    table = bt.what_if(
        rows, criterion, [float(rec["new_threshold"])], current=float(rec["old_threshold"])
    )
    return table.iloc[0]


def recommendations(data: ReportData) -> list[Block]:
    recs, features = data.recommendations, data.features
    if recs is None:
        return _missing("recommendations", data)
    if features is None or recs.empty:
        return [Text("The optimizer has no recommendation for this quant.")]
    checks = bt.crosscheck(recs, features).set_index("recommendation_id")
    rows: list[dict[str, str]] = []
    ids: list[str] = []
    for _, rec in recs.iterrows():
        check = checks.loc[rec["recommendation_id"]]
        row = _replayed(features, rec)
        get: Any = row.get if row is not None else (lambda _name: None)
        ids.append(f"#{rec['recommendation_id']}")
        rows.append(
            {
                "class": C.text(rec["market_cap_class"]),
                "criterion": C.text(rec["criterion"]),
                "threshold": f"{C.number(rec['old_threshold'])} → {C.number(rec['new_threshold'])}",
                "applied": C.flag(rec["applied"]),
                "trades": C.count(check["sample_size_client"]),
                "replayed: trades": C.signed_count(get("d_trades")),
                "replayed: win rate": C.points(get("d_win_rate")),
                "new win rate [95 %]": f"{C.share(get('win_rate'))} "
                f"{C.interval(get('win_rate_lo'), get('win_rate_hi'))}",
                "replayed: PnL [95 %]": f"{C.signed_usd(get('d_total_pnl_usd'))} "
                f"{C.interval(get('d_total_pnl_usd_lo'), get('d_total_pnl_usd_hi'), 'signed_usd')}",
                "tokens": C.count(get("tokens")),
                "small sample": C.flag(get("small_sample")),
                "service claim (UPPER BOUND)": C.points(check["win_rate_change_service"]),
                "filter (UPPER BOUND)": C.points(check["win_rate_change_filter"]),
                "service = filter": C.flag(check["agrees"]),
            }
        )
    table = pd.DataFrame(rows, index=pd.Index(ids, name="recommendation"))
    capped = (recs.attrs.get("quantscope") or {}).get("capped")
    blocks: list[Block] = [
        Text(
            "For each recommendation: what applying it does (the whole pass rule replayed "
            "with the new threshold, on the quant's executed closed trades of its class), "
            "then, labelled, the service's claim and the client's hard-filter figure."
        ),
        Table(
            "table",
            "The optimizer's recommendations and their replayed effect",
            table,
            f"Intervals: Wilson (win rate), bootstrap over tokens (PnL). Small sample: fewer "
            f"than {MIN_TRADES} trades or {MIN_TOKENS} tokens kept.",
        ),
        Note(UPPER_BOUND, "upper_bound"),
    ]
    if capped:
        blocks += [Note(str(c["message"]), "warn") for c in capped]
    return blocks


# --- the thresholds the user named -----------------------------------------------------------


def _what_if_rows(rows: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """The replayed what-if at quantiles of the values plus the current threshold, and the
    filter's win-rate change beside it (an upper bound)."""
    values = rows[criterion].dropna().to_numpy(dtype=np.float64)
    grid = list(np.unique(bt.threshold_grid(values, WHAT_IF_POINTS)))
    replay = bt.what_if(rows, criterion, grid)
    current = replay.attrs["what_if"]["current"].get(criterion) or []
    if len(current) == 1 and not replay["is_current"].any():
        replay = bt.what_if(rows, criterion, sorted({*grid, float(current[0])}))
    filtered = bt.what_if(
        rows, criterion, list(replay["threshold"]), rule="filter", bootstrap=False
    )
    shown = C.table(replay, _WHAT_IF)
    shown.insert(
        shown.columns.get_loc("small_sample"),
        "win rate [95 %]",
        [
            C.interval(lo, hi)
            for lo, hi in zip(replay["win_rate_lo"], replay["win_rate_hi"], strict=True)
        ],
    )
    shown["filter: win rate (UPPER BOUND)"] = [C.points(v) for v in filtered["d_win_rate"]]
    return shown.set_index("threshold")


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
    blocks: list[Block] = []
    for criterion in data.criteria:
        blocks.append(Heading(criterion))
        for cap_class in sorted(features["market_cap_class"].dropna().astype(str).unique()):
            rows = _class_rows(features, cap_class)
            if rows[criterion].notna().sum() == 0:
                continue
            blocks.append(
                Table(
                    f"what_if_{criterion}_{cap_class}",
                    f"{criterion}, {cap_class}: what applying each threshold does (replayed)",
                    _what_if_rows(rows, criterion),
                    "Changes against the current threshold. The last column counts the "
                    "criterion as a hard filter: an UPPER BOUND.",
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
    kinds = {
        "market_cap_class": "text",
        "fold": "count",
        "threshold": "number",
        "train_trades": "count",
        "in_sample_gain": "points",
        "test_trades": "count",
        "out_of_sample_gain": "points",
        "out_of_sample_pnl_change_usd": "signed_usd",
    }
    meta = table.attrs["walk_forward"]
    return [
        Table(
            f"walk_forward_{criterion}",
            f"{criterion}: chosen on the past, tried on the future (walk-forward, replayed)",
            C.table(table, kinds),
            f"Mean win-rate gain in sample {C.points(meta['mean_in_sample_gain'])}, out of "
            f"sample {C.points(meta['mean_out_of_sample_gain'])}.",
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
