"""Deterministic texts of an evaluation: the AI step's analysis and prompt, and a signal's alert.

The sandbox has no language model. Its "model" writes from the evaluation's own figures: the
criterion values the playbook saw, which of them passed, the scores and the market at the time.
So every sentence is true of the evaluation it describes, the same world gives the same text, and
a researcher can check the text against eval-details.

* ``ai_analysis``: the model's text; ``""`` when the evaluation is unscored (the AI step ran only
  when every required, enabled criterion passed: docs/service-contract.md, Evaluations).
* ``ai_prompt``: what the AI step was asked; ``""`` when unscored (no AI step ran).
* ``alert``: a one-line summary for alpha signals, at most 140 characters (``…`` ends a
  truncated one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quantscope.sandbox.catalog import CRITERIA, OPERATOR_DIRECTION, Criterion
from quantscope.sandbox.sim.rules import RuleSet
from quantscope.sandbox.timefmt import iso_ms

ALERT_MAX_CHARS = 140

_PURPOSE = {
    "TOKEN_STATUS": "screening scan",
    "TOKEN_BUY": "buy decision",
    "TOKEN_SELL": "post-exit re-check",
}
_SHORT_TYPE = {"TOKEN_STATUS": "scan", "TOKEN_BUY": "buy check", "TOKEN_SELL": "exit re-check"}
_OPERATOR_TEXT = {"V_GTE_T": "≥", "V_GT_T": ">", "V_LTE_T": "≤", "V_LT_T": "<"}


@dataclass(frozen=True)
class EvalFacts:
    """What the texts are made of: an evaluation, its token, and the playbook slice that decided it.

    ``values`` are the 18 criterion values in catalog order, as stored (6 significant digits);
    ``rules`` the build-time playbook slice (quant x market-cap class x config type) and
    ``criterion_passed`` its verdict on each value (``rules.decide``; ``evaldetail`` fills it).
    """

    evaluation_id: int
    eval_type: str
    quant_name: str
    token_name: str
    symbol: str
    chain: str
    created_ms: int
    price: float
    market_cap: float
    mc_class: str
    liquidity: float
    volume_24h: float
    holders: int
    passed: bool
    scored: bool
    internal_score: float
    ai_score: float
    values: np.ndarray
    rules: RuleSet
    criterion_passed: np.ndarray  # bool (18,): the pass test of each criterion under ``rules``


def compact_usd(value: float) -> str:
    """``$1.23M``-style money for prose (the contract's compact format, sign kept)."""
    sign = "-" if value < 0 else ""
    amount = abs(value)
    for suffix, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if amount >= size:
            return f"{sign}${amount / size:.2f}{suffix}"
    return f"{sign}${amount:.2f}"


def price_usd(value: float) -> str:
    """A token price with 4 significant digits, never in exponent notation."""
    text = np.format_float_positional(float(value), precision=4, unique=False, fractional=False)
    return "$" + text.rstrip(".")


def number(value: float) -> str:
    """A number for prose: 4 significant digits (whole above 10,000, with separators)."""
    value = float(value)
    magnitude = abs(value)
    if magnitude >= 1e4:
        return f"{round(value):,}"
    if magnitude >= 1e-4 or value == 0:
        return f"{value:.4g}"
    return str(np.format_float_positional(value, precision=4, fractional=False, trim="-"))


def reading(c: Criterion, value: float) -> str:
    """A criterion value as prose: the option's label, or the number."""
    if c.options:
        index = int(value)
        return c.options[index] if 0 <= index < len(c.options) else str(index)
    return number(value)


def _requirement(c: Criterion, threshold: float, operator: str) -> str:
    return f"{_OPERATOR_TEXT[operator]} {reading(c, threshold)}"


@dataclass(frozen=True)
class _Verdicts:
    enabled: list[int]
    passed: list[int]  # enabled criteria that passed, heaviest first
    failed: list[int]  # enabled criteria that failed, heaviest first (required ones first)


def _verdicts(f: EvalFacts) -> _Verdicts:
    ok = f.criterion_passed
    enabled = [j for j in range(len(CRITERIA)) if not f.rules.disabled[j]]

    def heaviest(j: int) -> tuple[float, int]:
        return (-float(f.rules.weights[j]), j)

    def required_then_heaviest(j: int) -> tuple[bool, float, int]:
        return (not bool(f.rules.required[j]), *heaviest(j))

    return _Verdicts(
        enabled=enabled,
        passed=sorted((j for j in enabled if ok[j]), key=heaviest),
        failed=sorted((j for j in enabled if not ok[j]), key=required_then_heaviest),
    )


def _describe(f: EvalFacts, j: int, *, with_need: bool) -> str:
    c = CRITERIA[j]
    text = f"{c.name} {reading(c, f.values[j])}"
    if with_need:
        text += f" (needs {_requirement(c, f.rules.thresholds[j], f.rules.operators[j])})"
    return text


def _band(score: float) -> str:
    if score >= 70:
        return "high"
    if score >= 55:
        return "moderate"
    if score >= 40:
        return "low"
    return "very low"


def ai_analysis(f: EvalFacts) -> str:
    """The AI step's analysis of a scored evaluation; ``""`` when unscored."""
    if not f.scored:
        return ""
    v = _verdicts(f)
    strongest = ", ".join(_describe(f, j, with_need=False) for j in v.passed[:3]) or "none"
    if v.failed:
        concerns = "; ".join(_describe(f, j, with_need=True) for j in v.failed[:3])
    else:
        concerns = "no criterion missed its threshold"
    verdict = "passes" if f.passed else "does not pass"
    return (
        f"{f.quant_name} {_PURPOSE[f.eval_type]} of {f.symbol} ({f.token_name}, {f.chain}): "
        f"AI score {f.ai_score:.2f}/100, {_band(f.ai_score)} conviction. "
        f"Playbook score {f.internal_score:.2f} against a pass mark of {f.rules.pass_mark:g} "
        f"({f.mc_class}); {len(v.passed)} of {len(v.enabled)} enabled criteria met. "
        f"Strongest: {strongest}. Concerns: {concerns}. "
        f"Market at evaluation: price {price_usd(f.price)}, market cap "
        f"{compact_usd(f.market_cap)}, liquidity {compact_usd(f.liquidity)}, 24h volume "
        f"{compact_usd(f.volume_24h)}, {f.holders:,} holders. The evaluation {verdict}."
    )


def ai_prompt(f: EvalFacts) -> str:
    """What the AI step was asked for a scored evaluation; ``""`` when unscored."""
    if not f.scored:
        return ""
    readings = "; ".join(
        f"{c.name} = {reading(c, f.values[j])}"
        + (" (disabled)" if f.rules.disabled[j] else "")
        + (
            " [higher is better]"
            if OPERATOR_DIRECTION[f.rules.operators[j]] > 0
            else " [lower is better]"
        )
        for j, c in enumerate(CRITERIA)
    )
    return (
        f"You are {f.quant_name}, a memecoin trading analyst. Assess {f.symbol} "
        f"({f.token_name}) on {f.chain} for a {_PURPOSE[f.eval_type]} at {iso_ms(f.created_ms)}. "
        f"Market: price {price_usd(f.price)}, market cap {compact_usd(f.market_cap)} "
        f"({f.mc_class}), liquidity {compact_usd(f.liquidity)}, 24h volume "
        f"{compact_usd(f.volume_24h)}, {f.holders:,} holders. Criterion readings: {readings}. "
        f"The playbook scored it {f.internal_score:.2f}/100. Reply with a score from 0 to 100 "
        f"and a short analysis of the risks and the upside."
    )


def truncate(text: str, limit: int = ALERT_MAX_CHARS) -> str:
    """``text`` cut to ``limit`` characters, ending with ``…`` when it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def alert(f: EvalFacts, limit: int = ALERT_MAX_CHARS) -> str:
    """A one-line alert for an alpha signal: verdict, scores and the decisive criteria.

    At most ``limit`` characters (140 per the contract); a truncated alert ends with ``…``.
    """
    v = _verdicts(f)
    verdict = "passed" if f.passed else "failed"
    scores = f"score {f.internal_score:.1f}"
    if f.scored:
        scores += f", AI {f.ai_score:.1f}"
    decisive = v.passed[:2] if f.passed else v.failed[:2]
    tail = ", ".join(_describe(f, j, with_need=not f.passed) for j in decisive)
    text = f"{f.symbol} {verdict} {f.quant_name}'s {_SHORT_TYPE[f.eval_type]} ({scores})"
    return truncate(f"{text}: {tail}" if tail else text, limit)
