"""The criterion model: what each quant's criteria read on a token at a scan hour.

``criterion_values`` is the one source of every criterion value: the world build decides its
evaluations with it, and at request time evaluation details and the optimizer recompute the
stored evaluations' values with it (values are not stored). Market and technical values come
from the candles before the scan, security and social ones from the token's static traits
(``tokens.py``), and the *predictive* ones mix the next 24 hours' return with noise: the planted
truth that threshold research should find.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from quantscope.sandbox.catalog import CRITERIA
from quantscope.sandbox.sim import market
from quantscope.sandbox.sim.tokens import TokenMeta

COLUMN = {c.key: i for i, c in enumerate(CRITERIA)}
"""Each criterion's column in a values matrix (catalog order), by key."""

PLANTED: dict[str, float] = {
    "top10_holders_pct": 0.35,
    "ai_confidence": 0.45,
    "smart_money_buys": 0.7,
    "buy_sell_ratio": 0.5,
}
"""The planted truth: the criteria whose value mixes the next day's return in (``latent``),
each with the correlation ``rho`` of its latent with that return. ``criterion_values`` reads
its weights from here, so the declaration is the generator (the calibration harness scores
research against it; the toolkit never reads it)."""

NOISE: frozenset[str] = frozenset(
    {
        "twitter_followers",
        "telegram_members",
        "narrative_score",
        "meme_virality",
        "social_sentiment",
        "holder_growth_pct",
        "mint_authority",
    }
)
"""Criteria drawn independently of the token's path and outcome (static traits and noise
draws): no signal to find. The rest (market-derived values and the rug-linked ``lp_locked``)
may carry real but unplanted signal and belong to neither set. A test checks both against
``criterion_values`` (a future that changes moves every planted value and no noise one)."""


def future_signal(path: market.TokenPath, hours: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The planted truth: the next 24 hours' log return from the scan, scaled and clipped."""
    end = np.minimum(hours + 23, len(path.close) - 1)
    return np.clip(np.log(path.close[end] / path.open[hours]) / 0.3, -3.0, 3.0)


def criterion_values(
    seed: int, quant_id: int, path: market.TokenPath, meta: TokenMeta, hours: np.ndarray
) -> np.ndarray:
    """Criterion values (n x 18, catalog order) seen by ``quant_id`` at each scan hour.

    Market and technical values use only candles before the scan; predictive values mix the
    next 24 hours' return with noise. Values are rounded as stored (6 significant digits).
    """
    hours = np.asarray(hours, dtype=np.int64)
    n = len(hours)
    prev = np.maximum(hours - 1, 0)
    counters = hours.astype(np.uint64)
    keys = (seed, 5, quant_id, path.token_id)

    noise = market.noise_normal_rows(keys, range(1, _NOISE_STREAMS + 1), counters)

    def eps(k: int) -> npt.NDArray[np.float64]:
        row: npt.NDArray[np.float64] = noise[k - 1]
        return row

    z = future_signal(path, hours)

    def latent(rho: float, k: int) -> npt.NDArray[np.float64]:
        mixed: npt.NDArray[np.float64] = rho * z + np.sqrt(1.0 - rho * rho) * eps(k)
        return mixed

    mcap = path.open[hours] * path.supply
    out = np.empty((n, len(CRITERIA)))

    def put(key: str, values: np.ndarray) -> None:
        c = CRITERIA[COLUMN[key]]
        if c.range is not None:
            values = np.clip(values, c.range[0], c.range[1])
        out[:, COLUMN[key]] = values

    put("lp_locked", np.full(n, float(meta.lp_locked)))
    put(
        "top10_holders_pct",
        meta.top10_base + 3.0 * eps(1) - 6.0 * latent(PLANTED["top10_holders_pct"], 2),
    )
    put("mint_authority", np.full(n, float(meta.mint_renounced)))
    put("liquidity_usd", mcap * path.liquidity_share * np.exp(0.1 * eps(3)))
    put("volume_24h_usd", market.rolling_sum(path.volume, prev, 24))
    put("price_change_1h_pct", (path.close[prev] / path.open[prev] - 1.0) * 100.0)
    put("twitter_followers", meta.twitter_base * np.exp(0.05 * eps(4)))
    put("telegram_members", meta.telegram_base * np.exp(0.05 * eps(5)))
    put("social_sentiment", np.tanh(0.8 * eps(6)))
    put("ai_confidence", 50.0 + 18.0 * latent(PLANTED["ai_confidence"], 7))
    put("narrative_score", meta.narrative_base + 8.0 * eps(8))
    put("meme_virality", meta.virality_base + 10.0 * eps(9))
    put("rsi_14", market.indicator_rsi(path.close, prev))
    back = np.maximum(hours - 25, 0)
    put("momentum_24h_pct", (path.close[prev] / path.close[back] - 1.0) * 100.0)
    avg_vol = market.rolling_sum(path.volume, np.maximum(hours - 2, 0), 24) / 24.0
    put("volume_spike_ratio", path.volume[prev] / np.maximum(avg_vol, 1e-9))
    put("smart_money_buys", np.floor(np.exp(0.9 + 0.75 * latent(PLANTED["smart_money_buys"], 10))))
    put("buy_sell_ratio", np.exp(0.1 + 0.45 * latent(PLANTED["buy_sell_ratio"], 11)))
    put("holder_growth_pct", np.exp(2.0 + 1.0 * eps(12)) - 5.0)
    return round_sig6(out)


_NOISE_STREAMS = 12  # eps(1) .. eps(12) above
_POW10 = np.array([float(10**i) for i in range(23)])  # exact doubles


def round_sig6(values: np.ndarray) -> np.ndarray:
    """``float(format(v, ".6g"))`` of every value (``catalog.round_value``): the same floats.

    Vectorised: ``v * 10**k`` (k = 5 - exponent, one correctly rounded operation, |k| <= 22)
    lies within 1e-10 of the exact product, so ``rint`` gives the six digits that ``format``
    gives unless the product sits near a half (a tie) or the exponent estimate is off by one
    near a power of ten; dividing the digits by the exact power is again one correctly rounded
    operation, i.e. the float nearest to the decimal, as ``float()`` parses it. The doubtful
    values (those two cases, zeros, non-finite, |k| > 22) take the per-value call.
    """
    v = np.asarray(values, dtype=np.float64)
    flat = v.ravel()
    with np.errstate(divide="ignore", invalid="ignore"):
        k = 5.0 - np.floor(np.log10(np.abs(flat)))
        ok = np.abs(k) <= 22  # False for zeros, NaN and infinities
        ki = np.where(ok, k, 0.0).astype(np.int64)
        up = ki >= 0
        power = _POW10[np.abs(ki)]
        scaled = np.where(up, flat * power, flat / power)
        mag = np.abs(scaled)
        ok &= (mag >= 1e5) & (mag < 999_999.0)
        ok &= np.abs(mag - np.floor(mag) - 0.5) > 1e-6
        digits = np.rint(scaled)
        out: npt.NDArray[np.float64] = np.where(up, digits / power, digits * power)
    for i in np.flatnonzero(~ok).tolist():
        out[i] = float(format(float(flat[i]), ".6g"))
    return out.reshape(v.shape)


def ai_scores(seed: int, quant_id: int, path: market.TokenPath, hours: np.ndarray) -> np.ndarray:
    """The model's score (0-100): mildly informed by the next day's return."""
    noise = market.noise_normal((seed, 6, quant_id, path.token_id), hours.astype(np.uint64))
    z = future_signal(path, hours)
    return np.round(np.clip(50.0 + 12.0 * (0.5 * z + noise), 0.0, 100.0), 2)
