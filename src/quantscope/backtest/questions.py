"""The two questions threshold research answers, named once for every frame, figure and panel.

* **signal**: "does this criterion predict outcomes?" The trades a threshold *keeps* against
  those it *drops*, the criterion counted as a hard filter (``rule="filter"``). It ranks and
  screens criteria; it is not what applying a threshold does.
* **effect**: "what does applying this change to the live playbook do?" The whole pass rule
  replayed with the threshold moved (``rule="replay"``), each trade by its quant's playbook
  slice. The default of every answer that leads to a write.

Neither bounds the other: the filter keeps a subset of the trades the replay keeps, but the
win rate, PnL or ROI of a subset can lie on either side (docs/metrics.md, "The two questions").
Every research frame records its question in ``attrs`` (``question``) and every figure and
panel names it with ``QUESTION_LABELS``.
"""

from __future__ import annotations

from typing import Literal

Question = Literal["signal", "effect"]

#: The rule each question is answered with (``rule=`` of the what-if functions).
RULE_OF: dict[Question, str] = {"signal": "filter", "effect": "replay"}
#: The question a rule answers.
QUESTION_OF: dict[str, Question] = {"filter": "signal", "replay": "effect"}

#: One short label per question, for legends, column headers and captions.
QUESTION_LABELS: dict[Question, str] = {
    "signal": "signal: kept versus dropped trades (the criterion as a hard filter)",
    "effect": "effect: what applying does (the whole pass rule replayed)",
}

#: The sentence that says what a question's figures are, and what they are not.
QUESTION_NOTES: dict[Question, str] = {
    "signal": (
        "Signal: the trades the threshold keeps compared with those it drops, the criterion "
        "counted as a hard filter. It says whether the criterion predicts outcomes; it is not "
        "what applying the threshold does and does not bound it."
    ),
    "effect": (
        "Effect: the whole pass rule replayed with only this threshold moved, each trade by "
        "its quant's playbook slice for its market-cap class: what applying the change would "
        "have done."
    ),
}


def question_of(rule: str) -> Question:
    """The question a what-if rule answers (``"filter"`` -> signal, ``"replay"`` -> effect)."""
    try:
        return QUESTION_OF[rule]
    except KeyError:
        raise ValueError(f"rule must be 'replay' or 'filter', not {rule!r}") from None
