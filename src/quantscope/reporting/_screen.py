"""The report's criterion ranking: ``backtest.screen`` over every criterion of the quant.

Each (market-cap class, criterion) row is answered out of sample (walk-forward folds with a
purge, thresholds chosen on training trades of other tokens only) for both questions: its
signal (kept versus dropped test trades) with an interval and a p-value adjusted over every
row of the family (Westfall-Young max-T of a whole-token sign flip), and its effect (the whole
pass rule replayed with the chosen threshold) with intervals. The section says how many
hypotheses and threshold combinations were searched, and which groups and criteria the screen
could not use; nothing searched is shown as if it were the only thing tried.
"""

from __future__ import annotations

import warnings

import pandas as pd

from quantscope import backtest as bt
from quantscope._errors import IncompleteDataWarning
from quantscope.backtest.questions import QUESTION_LABELS
from quantscope.backtest.screen import MIN_TOKENS as SCREEN_MIN_TOKENS
from quantscope.backtest.screen import MIN_TRADES as SCREEN_MIN_TRADES
from quantscope.reporting import cells as C
from quantscope.reporting._research import EFFECT, INTERVALS, SIGNAL, questions_note
from quantscope.reporting.blocks import Block, Note, Table, Text
from quantscope.reporting.build import ReportData


def _p(value: object) -> str:
    """A p-value: three decimals, "< 0.001" below."""
    v = C.number_or_none(value)
    return C.NA if v is None else ("< 0.001" if v < 0.001 else f"{v:.3f}")


def _ranked(table: pd.DataFrame) -> pd.DataFrame:
    ordered = table.sort_values(["p_value", "p_raw", "signal"], ascending=[True, True, False])
    return pd.DataFrame(
        {
            "threshold": [C.number(v) for v in ordered["threshold"]],
            "test trades": [C.count(v) for v in ordered["test_trades"]],
            "tokens": [C.count(v) for v in ordered["tokens"]],
            f"{SIGNAL}: win rate kept - dropped [95 %]": [
                f"{C.points(v)} {C.interval(lo, hi, 'points')}"
                for v, lo, hi in zip(
                    ordered["signal"], ordered["signal_lo"], ordered["signal_hi"], strict=True
                )
            ],
            "p (adjusted)": [_p(v) for v in ordered["p_value"]],
            "p (raw)": [_p(v) for v in ordered["p_raw"]],
            "significant": [C.flag(v) for v in ordered["significant"]],
            f"{EFFECT}: win rate [95 %]": [
                f"{C.points(v)} {C.interval(lo, hi, 'points')}"
                for v, lo, hi in zip(
                    ordered["effect_d_win_rate"],
                    ordered["effect_d_win_rate_lo"],
                    ordered["effect_d_win_rate_hi"],
                    strict=True,
                )
            ],
            f"{EFFECT}: PnL [95 %]": [
                f"{C.signed_usd(v)} {C.interval(lo, hi, 'signed_usd')}"
                for v, lo, hi in zip(
                    ordered["effect_d_total_pnl_usd"],
                    ordered["effect_d_total_pnl_usd_lo"],
                    ordered["effect_d_total_pnl_usd_hi"],
                    strict=True,
                )
            ],
        },
        index=pd.Index(
            [
                f"{c} / {n}"
                for c, n in zip(ordered["market_cap_class"], ordered["criterion"], strict=True)
            ],
            name="class / criterion",
        ),
    )


def screen(data: ReportData) -> list[Block]:
    """The criterion ranking of the screen, with what it searched and could not use."""
    features = data.features
    if features is None or features.empty:
        return [Text("No executed closed trade with criterion values to screen.")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteDataWarning)  # listed in attrs, shown below
        table = bt.screen(features)
    meta = table.attrs["screen"]
    blocks: list[Block] = [
        Text(
            "Every criterion of every market-cap class, screened out of sample: the trades in "
            f"time order are cut into {meta['folds'] + 1} blocks; each block is tested with "
            "a threshold chosen on the earlier blocks only (training trades that closed after "
            "the test block opened are purged) and on the other tokens only. Ranked by the "
            f"{QUESTION_LABELS['signal']}, with a p-value adjusted for the whole search; the "
            f"{QUESTION_LABELS['effect']} beside it."
        ),
        questions_note(),
    ]
    if len(table):
        blocks.append(
            Table(
                "ranking",
                f"Criteria ranked out of sample ({C.count(meta['hypotheses'])} hypotheses, "
                f"{C.count(meta['combos_searched'])} threshold combinations searched)",
                _ranked(table),
                f"Threshold: the median of those chosen on the training folds. p (adjusted): "
                f"{meta['test']}, {C.count(meta['flips'])} flips, over all "
                f"{C.count(meta['hypotheses'])} rows (family-wise); significant: below "
                f"{meta['alpha']}. {INTERVALS}",
            )
        )
    else:
        blocks.append(Note("No group had enough trades to screen.", "warn"))
    unused = meta["unused_groups"]
    if unused:
        blocks.append(
            Note(
                "Not screened (fewer than "
                f"{SCREEN_MIN_TRADES} trades or {SCREEN_MIN_TOKENS} tokens): "
                + ", ".join(
                    f"quant {u['quant_id']} {u['market_cap_class']} ({u['trades']} trades, "
                    f"{u['tokens']} tokens)"
                    for u in unused
                )
                + ".",
                "warn",
            )
        )
    untested = meta["untested"]
    if untested:
        blocks.append(
            Note(
                "No training set could split (nearly every trade shares one value): "
                + ", ".join(f"{u['market_cap_class']} / {u['criterion']}" for u in untested)
                + ".",
                "warn",
            )
        )
    return blocks
