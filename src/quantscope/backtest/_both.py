"""The two questions side by side at the same thresholds: ``what_if(..., rule="both")``.

A decision about a threshold needs both answers at once (docs/metrics.md, "The two
questions"): the change's **effect** (the whole pass rule replayed: what applying does) and the
criterion's **signal** (the criterion as a hard filter: whether it predicts outcomes). Each
decision number comes with its interval and what it rests on, and every column is prefixed by
its question (``effect_d_win_rate``, ``signal_d_win_rate``), so one cannot be read for the
other.
"""

from __future__ import annotations

import pandas as pd

from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES, Question

#: The columns of each question, in frame order, each as ``<question>_<column>``.
DECISION_COLUMNS = (
    "trades",
    "tokens",
    "moved_tokens",
    "win_rate",
    "win_rate_lo",
    "win_rate_hi",
    "d_trades",
    "d_win_rate",
    "d_win_rate_lo",
    "d_win_rate_hi",
    "d_total_pnl_usd",
    "d_total_pnl_usd_lo",
    "d_total_pnl_usd_hi",
    "d_roi",
    "d_roi_lo",
    "d_roi_hi",
    "interval",
    "small_sample",
)
#: The columns both questions share (the thresholds and what they are against).
SHARED = ("threshold", "is_current", "admits_unseen")
ORDER: tuple[Question, Question] = ("effect", "signal")


def side_by_side(effect: pd.DataFrame, signal: pd.DataFrame) -> pd.DataFrame:
    """One frame of ``what_if``'s replayed (``effect``) and filter (``signal``) frames over the
    same thresholds: ``SHARED`` columns (from the effect: ``admits_unseen`` is about the
    playbook), then ``effect_<column>`` and ``signal_<column>`` for ``DECISION_COLUMNS``.
    ``attrs["what_if"]``: ``rule`` "both", ``question`` ("effect", "signal"), ``labels`` and
    ``notes`` per question, each question's own attrs under ``questions``.
    """
    frames = {"effect": effect, "signal": signal}
    columns = {name: effect[name].to_numpy() for name in SHARED if name in effect.columns}
    if "admits_unseen" in columns:
        columns["admits_unseen"] = effect["admits_unseen"].array
    for question in ORDER:
        frame = frames[question]
        for name in DECISION_COLUMNS:
            if name in frame.columns:
                columns[f"{question}_{name}"] = frame[name].array
    out = pd.DataFrame(columns)
    infos = {q: dict(frames[q].attrs.get("what_if", {})) for q in ORDER}
    first = infos["effect"]
    out.attrs["what_if"] = {
        "criteria": first.get("criteria"),
        "operators": first.get("operators"),
        "rule": "both",
        "question": ORDER,
        "labels": {q: QUESTION_LABELS[q] for q in ORDER},
        "notes": {q: QUESTION_NOTES[q] for q in ORDER},
        "current": first.get("current"),
        "real_trades": first.get("real_trades"),
        "questions": infos,
        "note": (
            "Two questions side by side: effect_* is what applying the threshold does (the "
            "whole pass rule replayed), signal_* whether the criterion predicts outcomes (the "
            "criterion as a hard filter). Neither bounds the other; act on the effect."
        ),
    }
    return out
