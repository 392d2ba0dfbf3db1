"""The quants of the simulated world and their build-time playbooks.

Three personalities, so that research has contrasts to find: Atlas weighs the on-chain criteria
that really predict outcomes, Borealis chases momentum, Cinder (paper trading) follows social hype.
``rule_set`` turns a quant's playbook slice into the pass rule's input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quantscope.sandbox.catalog import CRITERIA, Criterion, round_value
from quantscope.sandbox.sim.rules import RuleSet


@dataclass(frozen=True)
class QuantSpec:
    """One quant of the world: its identity, trading settings, weights and thresholds."""

    id: int
    name: str
    trading_mode: str
    capital_usd: float
    take_profit: float
    stop_loss: float
    horizon_h: int
    size_usd: tuple[float, float]
    scan_offset_min: int
    weights: dict[str, float]
    required: frozenset[str]
    disabled: frozenset[str]
    threshold_shift: dict[str, float]  # multiplies the base BUYING threshold
    pass_marks: dict[str, float]  # config type -> pass mark


DEFAULT_WEIGHT = 0.5
QUANTS: tuple[QuantSpec, ...] = (
    QuantSpec(
        1,
        "Atlas",
        "live",
        10_000.0,
        0.8,
        0.35,
        72,
        (200.0, 600.0),
        5,
        weights={
            "smart_money_buys": 3.0,
            "buy_sell_ratio": 2.5,
            "lp_locked": 2.0,
            "top10_holders_pct": 1.5,
            "ai_confidence": 2.0,
            "liquidity_usd": 1.0,
            "volume_24h_usd": 1.0,
        },
        required=frozenset({"lp_locked", "mint_authority"}),
        disabled=frozenset(),
        threshold_shift={},
        pass_marks={"SCANNING": 85.0, "BUYING": 68.0},
    ),
    QuantSpec(
        2,
        "Borealis",
        "live",
        10_000.0,
        1.5,
        0.5,
        168,
        (100.0, 300.0),
        20,
        weights={
            "momentum_24h_pct": 3.0,
            "volume_spike_ratio": 2.5,
            "price_change_1h_pct": 2.0,
            "volume_24h_usd": 2.0,
            "rsi_14": 1.0,
            "smart_money_buys": 1.0,
            "buy_sell_ratio": 1.0,
        },
        required=frozenset({"lp_locked"}),
        disabled=frozenset({"mint_authority"}),
        threshold_shift={"momentum_24h_pct": -1.0},
        pass_marks={"SCANNING": 88.0, "BUYING": 60.0},
    ),
    QuantSpec(
        3,
        "Cinder",
        "paper",
        10_000.0,
        0.4,
        0.2,
        24,
        (500.0, 1500.0),
        35,
        weights={
            "twitter_followers": 3.0,
            "telegram_members": 2.5,
            "narrative_score": 2.5,
            "meme_virality": 2.5,
            "social_sentiment": 2.0,
            "ai_confidence": 1.0,
        },
        required=frozenset({"top10_holders_pct"}),
        disabled=frozenset({"rsi_14"}),
        threshold_shift={"lp_locked": 0.5},
        pass_marks={"SCANNING": 85.0, "BUYING": 72.0},
    ),
)

# Base thresholds (SCANNING, BUYING) for DEGEN_CAP; size criteria scale with the class.
BASE_THRESHOLDS: dict[str, tuple[float, float]] = {
    "lp_locked": (1, 2),
    "top10_holders_pct": (60, 45),
    "mint_authority": (1, 1),
    "liquidity_usd": (5_000, 15_000),
    "volume_24h_usd": (5_000, 20_000),
    "price_change_1h_pct": (-15, -8),
    "twitter_followers": (300, 800),
    "telegram_members": (200, 500),
    "social_sentiment": (-0.5, -0.2),
    "ai_confidence": (35, 45),
    "narrative_score": (20, 30),
    "meme_virality": (15, 25),
    "rsi_14": (90, 80),
    "momentum_24h_pct": (-40, -20),
    "volume_spike_ratio": (0.3, 0.6),
    "smart_money_buys": (1, 2),
    "buy_sell_ratio": (0.7, 0.9),
    "holder_growth_pct": (-10, -3),
}
SIZE_CRITERIA = frozenset({"liquidity_usd", "volume_24h_usd"})
CLASS_SIZE_MULTIPLIER = {"DEGEN_CAP": 1.0, "LOW_CAP": 5.0, "MID_CAP": 25.0}


def threshold_for(quant: QuantSpec, mc_class: str, config_type: str, c: Criterion) -> float:
    """The quant's threshold of criterion ``c`` for one market-cap class and config type."""
    scan, buy = BASE_THRESHOLDS[c.key]
    value = float(scan if config_type == "SCANNING" else buy)
    if config_type == "BUYING" and c.key in quant.threshold_shift:
        value *= quant.threshold_shift[c.key]
    if c.key in SIZE_CRITERIA:
        value *= CLASS_SIZE_MULTIPLIER[mc_class]
    if c.options:
        value = float(min(max(round(value), 0), len(c.options) - 1))
    return round_value(value)


_RULES: dict[tuple[int, str, str], RuleSet] = {}


def rule_set(quant: QuantSpec, mc_class: str, config_type: str) -> RuleSet:
    """The build-time playbook slice of a quant, as the pass rule reads it."""
    cached = _RULES.get((quant.id, mc_class, config_type))
    if cached is None:
        cached = _RULES[quant.id, mc_class, config_type] = _rule_set(quant, mc_class, config_type)
    return cached


def _rule_set(quant: QuantSpec, mc_class: str, config_type: str) -> RuleSet:
    return RuleSet(
        thresholds=np.array([threshold_for(quant, mc_class, config_type, c) for c in CRITERIA]),
        weights=np.array([quant.weights.get(c.key, DEFAULT_WEIGHT) for c in CRITERIA]),
        required=np.array([c.key in quant.required for c in CRITERIA]),
        disabled=np.array([c.key in quant.disabled for c in CRITERIA]),
        operators=tuple(c.operator for c in CRITERIA),
        pass_mark=quant.pass_marks[config_type],
    )
