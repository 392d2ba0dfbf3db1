"""The two questions of a threshold, side by side, with their intervals: what panels show.

A researcher deciding on a threshold needs both answers (``backtest.questions``): the change's
**effect** (the whole pass rule replayed, what applying writes) and the criterion's **signal**
(the criterion as a hard filter: the trades the threshold keeps against those it drops). This
module computes them for panels and lays them out; every interval comes from
``backtest.uncertainty`` (``what_if_intervals`` for the changes against the current
threshold, ``cluster_intervals`` for kept against dropped), tokens resampled whole. A row
where nothing moved carries the rule-of-three interval that module gives, never "±0".

``Answers`` caches per (market-cap class, criterion, rule, current threshold): the what-if and
the intervals of every threshold a slider offers are computed in one call each when a
criterion is shown, so a slider step is a lookup (a typed value off the list costs one more
call, then is cached too).
The playbook is part of what the replayed effect depends on: a panel clears the cache when
its playbook changes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from quantscope import backtest as bt
from quantscope.backtest._sample import usable
from quantscope.backtest.questions import QUESTION_LABELS, Question, question_of
from quantscope.backtest.uncertainty import NO_MOVE, ClusterSums, cluster_intervals

#: The decision numbers of a change and how each is formatted (``_format.fmt`` kinds).
CHANGES: tuple[tuple[str, str, str], ...] = (
    ("d_win_rate", "win rate change", "share"),
    ("d_total_pnl_usd", "total PnL change", "usd"),
    ("d_roi", "ROI change", "share"),
)
RULE_OF_THREE = NO_MOVE  # the interval column of a row where nothing moved


def _num(kind: str, value: Any, signed: bool = True) -> str:
    """A number without its unit word (interval bounds): ``+1.2``, ``-$3.40``."""
    v = float(value) if value is not None and value is not pd.NA else float("nan")
    if not np.isfinite(v):
        return "–" if np.isnan(v) else ("+∞" if v > 0 else "-∞")
    if kind == "share":
        v = v if abs(v) >= 0.0005 else 0.0  # no "-0.0": shown to 0.1 pts
        return f"{v * 100:+.1f}" if signed and v else f"{v * 100:.1f}"
    if kind == "usd":
        v = v if abs(v) >= 0.005 else 0.0
        sign = "-" if v < 0 else ("+" if signed and v > 0 else "")
        return f"{sign}${abs(v):,.2f}"
    if kind == "count":
        return f"{round(v):+,}" if signed else f"{round(v):,}"
    return f"{v:+.2f}" if signed else f"{v:.2f}"


def with_interval(kind: str, estimate: Any, lo: Any, hi: Any) -> str:
    """``+0.3 pts [-1.2, +1.9]``, ``-$801.85 [-$2,576.55, +$596.47]``: an estimate and its
    95 % interval (shares in percentage points).
    """
    unit = " pts" if kind == "share" else ""
    return f"{_num(kind, estimate)}{unit} [{_num(kind, lo)}, {_num(kind, hi)}]"


# --- the numbers -------------------------------------------------------------------------


def _usable(features: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """The rows the what-if functions count: a value, a PnL and a cost."""
    return features[usable(features, [criterion])]


def kept_dropped(
    features: pd.DataFrame, criterion: str, operator: str, threshold: float
) -> dict[str, float]:
    """The signal at ``threshold``: win rate of the kept trades minus the dropped ones', the
    criterion a hard filter, with its interval (``cluster_intervals``, tokens resampled, not
    nested), and the sample: ``kept``/``dropped`` trades and ``kept_tokens``/``dropped_tokens``.
    """
    rows = _usable(features, criterion)
    values = rows[criterion].to_numpy(dtype=np.float64)
    won = rows["profitable"].to_numpy(dtype=bool, na_value=False).astype(np.float64)
    if "token_id" in rows.columns:
        codes, uniques = pd.factorize(rows["token_id"].astype(object))
        lone = codes < 0  # a trade without a token is a token of its own
        codes[lone] = len(uniques) + np.arange(int(lone.sum()))
        k = len(uniques) + int(lone.sum())
    else:
        codes, k = np.arange(len(rows)), len(rows)
    kept = bt.OPERATORS[operator](values, float(threshold)).astype(np.float64)

    def per_token(x: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=x, minlength=k)

    zeros = np.zeros(k)
    sums = ClusterSums(
        trades=per_token(kept)[:, None],
        wins=per_token(kept * won)[:, None],
        pnl=zeros[:, None],
        cost=zeros[:, None],
        base_trades=per_token(1 - kept),
        base_wins=per_token((1 - kept) * won),
        base_pnl=zeros,
        base_cost=zeros,
    )
    got = cluster_intervals(sums, nested=False)
    return {
        "signal": float(got["d_win_rate"][0]),
        "signal_lo": float(got["d_win_rate_lo"][0]),
        "signal_hi": float(got["d_win_rate_hi"][0]),
        "kept": int(kept.sum()),
        "dropped": int(len(kept) - kept.sum()),
        "kept_tokens": int(np.count_nonzero(sums.trades[:, 0])),
        "dropped_tokens": int(np.count_nonzero(sums.base_trades)),
    }


@dataclass
class Answer:
    """One question's answer at one threshold: the ``what_if_intervals`` row there and at the
    current threshold (its trades are the baseline's), and the tokens of the sample.
    """

    question: Question
    row: pd.Series
    now: pd.Series
    tokens: int

    @property
    def nothing_moved(self) -> bool:
        return str(self.row["interval"]) == RULE_OF_THREE


class Answers:
    """A criterion's research at every threshold a slider offers, computed once per (class,
    criterion, rule, current threshold) and cached: ``what_if`` (the before/after table) and
    ``what_if_intervals`` (both questions' intervals); ``kept_dropped`` per threshold.
    """

    def __init__(self) -> None:
        self._frames: dict[tuple[Any, ...], pd.DataFrame] = {}
        self._signals: dict[tuple[Any, ...], dict[str, float]] = {}

    def clear(self) -> None:
        """Forget everything (the playbook changed: the replayed effect did too)."""
        self._frames.clear()
        self._signals.clear()

    def _rows(
        self,
        kind: str,
        features: pd.DataFrame,
        key: tuple[str, str],
        rule: str,
        wanted: Sequence[float],
        *,
        current: float,
        operator: str | None,
        playbook: Any,
        thresholds: Sequence[float],
    ) -> pd.DataFrame:
        """The cached frame of ``kind`` holding every threshold of ``wanted`` (computed with
        ``thresholds`` on first use, the ones it lacks later), indexed by threshold.
        """
        cache = (kind, *key, rule, float(current))
        frame = self._frames.get(cache)
        need = {float(t) for t in wanted}
        if frame is not None and need <= set(frame.index):
            return frame
        if frame is None:
            need |= {float(t) for t in thresholds}
        missing = sorted(need - (set() if frame is None else set(frame.index)))
        common = dict(rule=rule, operator=operator, current=float(current), playbook=playbook)
        if kind == "what_if":
            got = bt.what_if(features, key[1], missing, bootstrap=False, **common)
        else:
            got = bt.what_if_intervals(features, key[1], missing, **common)
        got.index = pd.Index(got["threshold"].to_numpy(dtype=np.float64))
        if frame is not None:
            attrs = frame.attrs
            got = pd.concat([frame, got])
            got.attrs = attrs
        self._frames[cache] = got
        return got

    def what_if(
        self,
        features: pd.DataFrame,
        key: tuple[str, str],
        rule: str,
        threshold: float,
        **options: Any,
    ) -> pd.DataFrame:
        """``bt.what_if(features, criterion, [threshold], rule=rule, bootstrap=False, ...)``
        of ``key`` = (class, criterion), from the cache (``options``: ``current``,
        ``operator``, ``playbook``, ``thresholds``).
        """
        frame = self._rows("what_if", features, key, rule, [threshold], **options)
        out = frame.loc[[float(threshold)]].reset_index(drop=True)
        out.attrs = frame.attrs
        return out

    def answer(
        self,
        features: pd.DataFrame,
        key: tuple[str, str],
        rule: str,
        threshold: float,
        **options: Any,
    ) -> Answer:
        """The answer of ``rule`` at ``threshold`` for ``key`` = (class, criterion) on
        ``features`` (that class's trades), from the cache (``options`` as ``what_if``).
        """
        current = float(options["current"])
        frame = self._rows("intervals", features, key, rule, [threshold, current], **options)
        return Answer(
            question_of(rule),
            frame.loc[float(threshold)],
            frame.loc[current],
            int(frame.attrs.get("intervals", {}).get("clusters", 0)),
        )

    def signal(
        self, features: pd.DataFrame, key: tuple[str, str], operator: str, threshold: float
    ) -> dict[str, float]:
        """``kept_dropped`` at ``threshold``, cached."""
        cache = (*key, operator, float(threshold))
        if cache not in self._signals:
            self._signals[cache] = kept_dropped(features, key[1], operator, threshold)
        return self._signals[cache]


# --- the side-by-side table ----------------------------------------------------------------

_TABLE = 'style="border-collapse:collapse" class="quantscope qs-questions-table"'
_CELL = 'style="padding:2px 10px;text-align:right;white-space:nowrap;vertical-align:top"'
_HEAD = 'style="padding:2px 10px;text-align:left;white-space:normal;vertical-align:bottom"'


def _trades_text(answer: Answer) -> str:
    now, then = int(answer.now["trades"]), int(answer.row["trades"])
    return f"{now:,} → {then:,} ({_num('count', then - now)})"


def side_by_side_html(effect: Answer, signal: Answer, kept: dict[str, float]) -> str:
    """Both questions at the selected threshold: the trades each keeps (now → proposed),
    the tokens the sample rests on, each change with its interval, and the signal's kept
    against dropped win rate; headed by ``QUESTION_LABELS``, effect first (what applying
    does, what Apply writes).
    """
    answers = (effect, signal)
    rows: list[tuple[str, list[str]]] = [
        ("trades kept: now → proposed", [_trades_text(a) for a in answers]),
        (
            "tokens (moving)",
            [f"{a.tokens:,} ({int(a.row['moved_tokens']):,} move)" for a in answers],
        ),
    ]
    for name, label, kind in CHANGES:
        rows.append(
            (
                label,
                [
                    with_interval(kind, a.row[name], a.row[f"{name}_lo"], a.row[f"{name}_hi"])
                    for a in answers
                ],
            )
        )
    rows.append(
        (
            "kept − dropped win rate",
            [
                "–",
                with_interval("share", kept["signal"], kept["signal_lo"], kept["signal_hi"])
                + f" ({kept['kept']:,} kept / {kept['dropped']:,} dropped trades; "
                f"{kept['kept_tokens']:,} / {kept['dropped_tokens']:,} tokens)",
            ],
        )
    )
    rows.append(
        (
            "interval",
            [
                "rule of three: nothing moved" if a.nothing_moved else "token bootstrap"
                for a in answers
            ],
        )
    )
    head = "".join(
        f"<th {_HEAD} class='qs-question-{a.question}'>{html.escape(QUESTION_LABELS[a.question])}"
        "</th>"
        for a in answers
    )
    body = "".join(
        f"<tr><th {_HEAD}>{html.escape(label)}</th>"
        + "".join(f"<td {_CELL}>{html.escape(cell)}</td>" for cell in cells)
        + "</tr>"
        for label, cells in rows
    )
    table = f"<table {_TABLE}><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div style="overflow-x:auto;max-width:100%">{table}</div>'


def nothing_moved_text(answers: Sequence[Answer]) -> str | None:
    """What a rule-of-three interval means, when one is shown (None otherwise)."""
    moved = [a for a in answers if a.nothing_moved]
    if not moved:
        return None
    which = " and ".join(a.question for a in moved)
    return (
        f"Nothing moved ({which}): this threshold keeps the trades the current one keeps. "
        f"The interval is the rule of three over the {moved[0].tokens:,} tokens (how far a "
        "future sample could move), not ±0."
    )
