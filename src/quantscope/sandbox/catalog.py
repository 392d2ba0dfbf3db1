"""The fixed vocabulary of the simulated world: chains, criteria, market-cap classes, operators.

Everything here is data. The world generator, the routers and the optimizer all read it, so a
criterion is described once. ``predictive`` records the planted truth: how strongly a criterion's
value is tied to the outcome of a trade (0 = pure noise). It is documented in
``docs/service-contract.md`` and is what threshold research should rediscover.
"""

from __future__ import annotations

import operator as _op
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

WORLD_NOW = datetime(2026, 10, 1, tzinfo=UTC)
HISTORY_HOURS = 70 * 24
WORLD_NOW_MS = int(WORLD_NOW.timestamp() * 1000)
HOUR_MS = 3_600_000
WORLD_START_MS = WORLD_NOW_MS - HISTORY_HOURS * HOUR_MS

CHAINS: tuple[str, ...] = ("SOLANA", "BASE", "BSC")
NATIVE_UNIT = {"SOLANA": "SOL", "BASE": "ETH", "BSC": "BNB"}
NATIVE_PRICE_USD = {"SOLANA": 150.0, "BASE": 2500.0, "BSC": 600.0}
WRAPPED_NATIVE_ADDRESS = {
    "SOLANA": "So11111111111111111111111111111111111111112",
    "BASE": "0x4200000000000000000000000000000000000006",
    "BSC": "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c",
}

CATEGORIES: tuple[str, ...] = (
    "Security",
    "Market",
    "Social",
    "AI",
    "Technical Analysis",
    "Onchain",
)
CATEGORY_IDS = {name: i + 1 for i, name in enumerate(CATEGORIES)}

EVAL_TYPES: tuple[str, ...] = ("TOKEN_STATUS", "TOKEN_BUY", "TOKEN_SELL")
CONFIG_TYPES: tuple[str, ...] = ("SCANNING", "BUYING")
CONFIG_TYPE_OF_EVAL = {"TOKEN_STATUS": "SCANNING", "TOKEN_BUY": "BUYING", "TOKEN_SELL": "BUYING"}
INTERVAL = "noTime"

# Market-cap classes: (name, lower bound inclusive in USD).
MARKET_CAP_CLASSES: tuple[tuple[str, float], ...] = (
    ("DEGEN_CAP", 0.0),
    ("LOW_CAP", 1_000_000.0),
    ("MID_CAP", 10_000_000.0),
)


def market_cap_class(market_cap_usd: float) -> str:
    """The class whose playbook decides an evaluation at this market cap."""
    name = MARKET_CAP_CLASSES[0][0]
    for cls, lower in MARKET_CAP_CLASSES:
        if market_cap_usd >= lower:
            name = cls
    return name


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "V_GTE_T": _op.ge,
    "V_GT_T": _op.gt,
    "V_LTE_T": _op.le,
    "V_LT_T": _op.lt,
}
# +1 when larger values are better under the operator, -1 when smaller values are.
OPERATOR_DIRECTION = {"V_GTE_T": 1, "V_GT_T": 1, "V_LTE_T": -1, "V_LT_T": -1}


@dataclass(frozen=True)
class Criterion:
    """One criterion of the playbook, with how the simulator produces its values."""

    id: int
    key: str
    name: str
    category: str
    short: str
    long: str
    operator: str = "V_GTE_T"
    range: tuple[float, float] | None = None
    options: tuple[str, ...] = ()
    is_human: bool = False
    predictive: float = 0.0
    # The simulator's generator name (sim/criteria.py) and its parameters.
    source: str = "latent"
    params: dict[str, float] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "options" if self.options else "numeric"

    def extra_info(self) -> dict[str, Any]:
        """The criterion's Extra info object, as served."""
        info: dict[str, Any] = {"operator": self.operator}
        if self.options:
            info["options"] = [{"id": i, "label": label} for i, label in enumerate(self.options)]
        if self.range is not None:
            info["range"] = {"min": self.range[0], "max": self.range[1]}
        return info


def _c(*args: Any, **kwargs: Any) -> Criterion:
    return Criterion(*args, **kwargs)


CRITERIA: tuple[Criterion, ...] = (
    # Security
    _c(
        1,
        "lp_locked",
        "Liquidity lock",
        "Security",
        "Is the liquidity pool locked or burned?",
        "Reads the LP token holders: unlocked pools can be pulled by the deployer at any time.",
        options=("Unlocked", "Partially locked", "Locked", "Burned"),
        predictive=0.55,
        source="rug_risk",
    ),
    _c(
        2,
        "top10_holders_pct",
        "Top-10 holder share",
        "Security",
        "Share of supply held by the ten largest wallets (%).",
        "Concentrated supply lets a handful of wallets dump on buyers.",
        operator="V_LTE_T",
        range=(0.0, 100.0),
        predictive=0.35,
        source="rug_risk_pct",
    ),
    _c(
        3,
        "mint_authority",
        "Mint authority",
        "Security",
        "Has the mint authority been renounced?",
        "An active mint authority can inflate supply without warning.",
        options=("Active", "Renounced"),
        predictive=0.0,
        source="noise_options",
    ),
    # Market
    _c(
        4,
        "liquidity_usd",
        "Liquidity",
        "Market",
        "Pool liquidity in USD.",
        "Deeper pools mean less slippage on entry and exit.",
        range=(0.0, 5_000_000.0),
        source="market_liquidity",
    ),
    _c(
        5,
        "volume_24h_usd",
        "24h volume",
        "Market",
        "Traded volume over the last 24 hours in USD.",
        "Activity, not quality.",
        range=(0.0, 50_000_000.0),
        source="market_volume",
    ),
    _c(
        6,
        "price_change_1h_pct",
        "1h price change",
        "Market",
        "Price change over the last hour (%).",
        "Chasing the last hour's move.",
        range=(-100.0, 500.0),
        source="market_change_1h",
    ),
    # Social
    _c(
        7,
        "twitter_followers",
        "Twitter followers",
        "Social",
        "Followers of the project's account.",
        "Easily bought; rarely informative.",
        range=(0.0, 200_000.0),
        source="noise_lognormal",
        params={"mu": 7.5, "sigma": 1.2},
    ),
    _c(
        8,
        "telegram_members",
        "Telegram members",
        "Social",
        "Members of the project's Telegram group.",
        "Easily botted.",
        range=(0.0, 100_000.0),
        source="noise_lognormal",
        params={"mu": 6.8, "sigma": 1.1},
    ),
    _c(
        9,
        "social_sentiment",
        "Social sentiment",
        "Social",
        "Mean sentiment of recent posts, -1 to 1.",
        "Scored by human reviewers from a sample.",
        range=(-1.0, 1.0),
        is_human=True,
        source="noise_uniform",
        params={"low": -1.0, "high": 1.0},
    ),
    # AI
    _c(
        10,
        "ai_confidence",
        "AI conviction",
        "AI",
        "The model's conviction that the setup is genuine (0-100).",
        "A model reads order flow and wallet graphs; its conviction carries real signal.",
        range=(0.0, 100.0),
        predictive=0.45,
        source="latent_score",
    ),
    _c(
        11,
        "narrative_score",
        "Narrative strength",
        "AI",
        "How well the token fits the current narrative (0-100).",
        "Rated by human curators; fashionable, not predictive.",
        range=(0.0, 100.0),
        is_human=True,
        source="noise_uniform",
        params={"low": 0.0, "high": 100.0},
    ),
    _c(
        12,
        "meme_virality",
        "Meme virality",
        "AI",
        "Predicted virality of the meme (0-100).",
        "A vision model's guess.",
        range=(0.0, 100.0),
        source="noise_uniform",
        params={"low": 0.0, "high": 100.0},
    ),
    # Technical Analysis
    _c(
        13,
        "rsi_14",
        "RSI (14h)",
        "Technical Analysis",
        "Relative strength index over 14 hourly candles.",
        "Overbought tokens tend to mean-revert.",
        operator="V_LTE_T",
        range=(0.0, 100.0),
        source="market_rsi",
    ),
    _c(
        14,
        "momentum_24h_pct",
        "24h momentum",
        "Technical Analysis",
        "Price change over the last 24 hours (%).",
        "Trend following on a noisy market.",
        range=(-100.0, 1000.0),
        source="market_change_24h",
    ),
    _c(
        15,
        "volume_spike_ratio",
        "Volume spike",
        "Technical Analysis",
        "Last hour's volume over the 24h hourly average.",
        "Spikes precede both pumps and dumps.",
        range=(0.0, 50.0),
        source="market_volume_spike",
    ),
    # Onchain
    _c(
        16,
        "smart_money_buys",
        "Smart-money buys",
        "Onchain",
        "Wallets with a profitable history that bought in the last 6 hours.",
        "Tracked wallets front-run the crowd: the strongest signal in the world.",
        range=(0.0, 50.0),
        predictive=0.7,
        source="latent_count",
    ),
    _c(
        17,
        "buy_sell_ratio",
        "Buy/sell ratio",
        "Onchain",
        "Buy transactions over sell transactions in the last hour.",
        "Persistent buy pressure precedes moves up.",
        range=(0.0, 10.0),
        predictive=0.5,
        source="latent_ratio",
    ),
    _c(
        18,
        "holder_growth_pct",
        "Holder growth",
        "Onchain",
        "Growth of the holder count over 24 hours (%).",
        "Airdrops and dust inflate it.",
        range=(-50.0, 300.0),
        source="noise_lognormal_pct",
        params={"mu": 2.0, "sigma": 1.0},
    ),
)
CRITERIA_BY_KEY = {c.key: c for c in CRITERIA}
CRITERIA_BY_ID = {c.id: c for c in CRITERIA}


def criterion_passes(operator: str, value: float, threshold: float) -> bool:
    """The pass test of one criterion (docs/service-contract.md, The pass rule)."""
    return bool(OPERATORS[operator](value, threshold))


# Below 1e-307 floats lose precision (subnormal): value_text leaves those to numpy.
SUBNORMAL_EXPONENT = -307


def round_value(value: float) -> float:
    """Values are stored and served as decimal text with 6 significant digits."""
    return float(format(float(value), ".6g"))


def value_text(value: float) -> str:
    """Decimal text of a stored value, never in exponent notation.

    The text is ``np.format_float_positional(round_value(value), trim="-")``: the shortest
    decimal of the 6-significant-digit float. For a normal float those are the digits of
    ``format(value, ".6g")`` itself (no shorter decimal names the same double), so the text
    is spelled from them, only moved out of exponent notation, at a third of numpy's cost
    (eval-details writes 18 a request). Subnormal magnitudes, where 6 digits can name a
    double whose shortest decimal is shorter, take numpy's path.
    """
    text = format(float(value), ".6g")
    mantissa, is_exponent, exponent = text.partition("e")
    if not is_exponent:  # also "nan", "inf", "-inf", "-0": numpy's spelling too
        return text
    power = int(exponent)
    if power < SUBNORMAL_EXPONENT:
        return str(np.format_float_positional(float(text), trim="-"))
    sign = "-" if mantissa[0] == "-" else ""
    digits = mantissa.lstrip("-").replace(".", "")
    if power >= 0:  # ".6g" writes an exponent from 1e6 on: more places than digits
        return sign + digits.ljust(power + 1, "0")
    return sign + "0." + "0" * (-power - 1) + digits
