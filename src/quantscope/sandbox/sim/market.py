"""The simulated market: hourly candles of memecoin-like tokens, regenerated on demand.

Every token's path comes from its own random stream (``seed``, ``token_id``), so candles are never
stored: any process regenerates exactly the same numbers. The model (docs/service-contract.md,
"The simulator"):

* log-price random walk with a per-token drift and hourly volatility of 1.5-5 %;
* jumps (about one every 80 hours, sd 20 %);
* pumps: 0-4 episodes of +65 % to +500 % over 4-24 hours, then a partial retrace;
* rugs: 15 % of tokens lose 92-99 % in one gap at a random hour, then trade thinly;
* volume in USD proportional to market cap, spiking with absolute returns and during pumps.

``noise`` is a counter-based generator (splitmix64) used for per-evaluation randomness: a value
depends only on its keys, so one evaluation's criterion values can be recomputed alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from quantscope.sandbox.catalog import CHAINS, HISTORY_HOURS, HOUR_MS, WORLD_START_MS

RUG_SHARE = 0.15


@dataclass(frozen=True)
class TokenPath:
    """A token's candles (hourly, ``HISTORY_HOURS`` of them) and its static traits."""

    token_id: int
    chain: str
    open: npt.NDArray[np.float64]
    high: npt.NDArray[np.float64]
    low: npt.NDArray[np.float64]
    close: npt.NDArray[np.float64]
    volume: npt.NDArray[np.float64]  # USD per hour
    supply: float
    rug_hour: int | None
    liquidity_share: float  # pool liquidity as a share of market cap
    pump_hours: tuple[int, ...]

    @property
    def timestamps_ms(self) -> np.ndarray:
        return WORLD_START_MS + np.arange(len(self.close), dtype=np.int64) * HOUR_MS

    def market_cap(self, hours: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return self.close[hours] * self.supply


def chain_of(token_id: int) -> str:
    """The chain a token trades on (tokens take the chains in turn)."""
    return CHAINS[(token_id - 1) % len(CHAINS)]


@lru_cache(maxsize=256)
def token_path(seed: int, token_id: int) -> TokenPath:
    """Generate (or return the cached) candles of one token."""
    rng = np.random.default_rng([seed, 1, token_id])
    n = HISTORY_HOURS
    mcap0 = 10 ** rng.uniform(4.7, 7.2)
    supply = 10 ** rng.uniform(8.5, 10.0)
    p0 = mcap0 / supply
    sigma = rng.uniform(0.015, 0.05)
    drift = rng.normal(0.0, 0.0012)

    steps = drift + sigma * rng.standard_normal(n)
    jump_mask = rng.random(n) < 1 / 80
    steps += np.where(jump_mask, rng.normal(0.0, 0.2, n), 0.0)
    pump_flag = np.zeros(n)
    pumps: list[int] = []
    for _ in range(int(rng.poisson(1.5))):
        start = int(rng.integers(24, n - 30))
        length = int(rng.integers(4, 25))
        gain = rng.uniform(0.5, 1.8)
        retrace = gain * rng.uniform(0.3, 1.0)
        up = slice(start, min(n, start + length))
        down = slice(up.stop, min(n, up.stop + 2 * length))
        steps[up] += gain / length
        steps[down] -= retrace / (2 * length)
        pump_flag[up] = 1.0
        pumps.append(start)

    rug_hour: int | None = None
    if rng.random() < RUG_SHARE:
        rug_hour = int(rng.integers(48, n - 24))
        steps[rug_hour] += -rng.uniform(2.5, 5.0)
        steps[rug_hour + 1 :] = 0.1 * sigma * rng.standard_normal(n - rug_hour - 1)

    log_close = np.log(p0) + np.cumsum(steps)
    close = np.exp(log_close)
    open_ = np.empty(n)
    open_[0] = p0
    open_[1:] = close[:-1]
    if rug_hour is not None:  # the rug is a gap: the candle opens already drained
        open_[rug_hour] = close[rug_hour]
    wick = np.abs(rng.normal(0.0, sigma / 2, (2, n)))
    high = np.maximum(open_, close) * np.exp(wick[0])
    low = np.minimum(open_, close) * np.exp(-wick[1])

    turnover = rng.uniform(0.02, 0.2) / 24
    activity = 1.0 + 4.0 * np.abs(steps) / sigma + 2.0 * pump_flag
    volume = close * supply * turnover * activity * np.exp(rng.normal(0.0, 0.4, n))
    if rug_hour is not None:
        volume[rug_hour + 1 :] *= 0.01
    return TokenPath(
        token_id=token_id,
        chain=chain_of(token_id),
        open=open_,
        high=high,
        low=low,
        close=close,
        volume=volume,
        supply=float(supply),
        rug_hour=rug_hour,
        liquidity_share=float(rng.uniform(0.04, 0.15)),
        pump_hours=tuple(pumps),
    )


_MASK = 0xFFFFFFFFFFFFFFFF


def _splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _splitmix64_int(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def noise_uniform(keys: tuple[int, ...], counters: np.ndarray) -> npt.NDArray[np.float64]:
    """Uniform [0, 1) numbers that depend only on ``keys`` and each counter."""
    h = _key_hash(keys)
    mixed = _splitmix64(np.asarray(counters, dtype=np.uint64) ^ np.uint64(h))
    return (mixed >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def noise_normal(keys: tuple[int, ...], counters: np.ndarray) -> npt.NDArray[np.float64]:
    """Standard normal numbers from two uniform streams (Box-Muller)."""
    counters = np.asarray(counters, dtype=np.uint64)
    u1 = noise_uniform((*keys, 1), counters)
    u2 = noise_uniform((*keys, 2), counters)
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)


def _key_hash(keys: tuple[int, ...], h: int = 0) -> int:
    for key in keys:
        h = _splitmix64_int(h ^ (key & _MASK))
    return h


def noise_normal_rows(
    keys: tuple[int, ...], subkeys: Sequence[int], counters: np.ndarray
) -> npt.NDArray[np.float64]:
    """``noise_normal((*keys, k), counters)`` for each ``k`` of ``subkeys``, as rows, at once.

    The same numbers (the same elementwise operations on one contiguous block), without the
    per-call overhead of a dozen small arrays.
    """
    prefix = _key_hash(keys)
    subs = [_key_hash((k,), prefix) for k in subkeys]
    counters = np.asarray(counters, dtype=np.uint64)

    def uniform(stream: int) -> npt.NDArray[np.float64]:
        h = np.array([_splitmix64_int(s ^ stream) for s in subs], dtype=np.uint64)
        mixed = _splitmix64(counters[None, :] ^ h[:, None])
        return (mixed >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))

    u1, u2 = uniform(1), uniform(2)
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)


def indicator_rsi(close: np.ndarray, hours: np.ndarray, period: int = 14) -> np.ndarray:
    """Simple-average RSI over the ``period`` hourly changes ending at each hour."""
    diff = np.diff(close, prepend=close[0])
    gains = np.concatenate([[0.0], np.cumsum(np.maximum(diff, 0.0))])
    losses = np.concatenate([[0.0], np.cumsum(np.maximum(-diff, 0.0))])
    lo = np.maximum(hours + 1 - period, 0)
    g = gains[hours + 1] - gains[lo]
    lsum = losses[hours + 1] - losses[lo]
    total = g + lsum
    return np.where(total > 0, 100.0 * g / np.where(total > 0, total, 1.0), 50.0)


def rolling_sum(
    x: np.ndarray, hours: npt.NDArray[np.int64], window: int
) -> npt.NDArray[np.float64]:
    """Sum of ``x`` over the ``window`` hours ending at each hour (inclusive)."""
    csum: npt.NDArray[np.float64] = np.concatenate([[0.0], np.cumsum(x)])
    lo = np.maximum(hours + 1 - window, 0)
    return csum[hours + 1] - csum[lo]


TIMEFRAME_HOURS = {"1h": 1, "2h": 2, "4h": 4, "6h": 6, "12h": 12, "1d": 24, "1w": 168}


def aggregate(path: TokenPath, timeframe: str) -> dict[str, np.ndarray]:
    """Candles of ``timeframe``, aligned to UTC (weeks start on Monday), oldest first."""
    step = TIMEFRAME_HOURS[timeframe]
    ts = path.timestamps_ms
    if step == 1:
        return {
            "timestamp": ts,
            "open": path.open,
            "high": path.high,
            "low": path.low,
            "close": path.close,
            "volume": path.volume,
        }
    # Monday 1970-01-05 00:00 UTC is 4 days after the epoch.
    offset = 4 * 24 * HOUR_MS if step == 168 else 0
    span = step * HOUR_MS
    bucket = (ts - offset) // span
    starts = np.flatnonzero(np.diff(bucket, prepend=bucket[0] - 1))
    ends = np.append(starts[1:], len(ts))
    return {
        "timestamp": bucket[starts] * span + offset,
        "open": path.open[starts],
        "high": np.maximum.reduceat(path.high, starts),
        "low": np.minimum.reduceat(path.low, starts),
        "close": path.close[ends - 1],
        "volume": np.add.reduceat(path.volume, starts),
    }
