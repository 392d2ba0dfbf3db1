"""Build the simulated world: quants, playbooks, tokens, evaluations and trades.

``build_world(conn, seed, scale)`` fills an empty database (``store.SCHEMA``) deterministically.
The story it simulates (docs/service-contract.md, "The simulator"):

1. Each quant scans every tracked token every 12 hours (a ``TOKEN_STATUS`` evaluation decided by
   its ``SCANNING`` playbook).
2. A passed scan on a token the quant does not hold leads to a ``TOKEN_BUY`` evaluation
   (``BUYING`` playbook) a minute and a half later.
3. A passed buy goes to model validation: approved, delayed (entered when the wait ends),
   rejected or recommended to a human. Only approved and elapsed delays are executed; the others
   carry the shadow outcome of the same exit rule.
4. A position exits on the quant's take-profit, stop-loss or horizon, read off the candles;
   positions still open at ``WORLD_NOW`` are marked to the last close. An executed exit is
   followed by a ``TOKEN_SELL`` evaluation.

Criterion values are computed from the candles (market and technical criteria), from static token
traits (security, social) and, for the *predictive* criteria, from the token's return over the
next 24 hours mixed with noise: the planted truth that threshold research should find.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from quantscope.sandbox import market
from quantscope.sandbox.catalog import (
    CATEGORY_IDS,
    CONFIG_TYPES,
    CRITERIA,
    HISTORY_HOURS,
    HOUR_MS,
    INTERVAL,
    MARKET_CAP_CLASSES,
    NATIVE_PRICE_USD,
    WORLD_START_MS,
    round_value,
)
from quantscope.sandbox.quants import DEFAULT_WEIGHT, QUANTS, QuantSpec, rule_set, threshold_for
from quantscope.sandbox.rules import decide

_COL = {c.key: i for i, c in enumerate(CRITERIA)}

WORLD_VERSION = "1"
TOKENS_PER_SCALE = 90
SCAN_EVERY_H = 12
FEE = 0.01  # swap fee on each side
SLIPPAGE = 0.005


def _stable_uuid(*parts: object) -> str:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=16).digest()
    return str(uuid.UUID(bytes=digest, version=4))


# ---------------------------------------------------------------------------------------------
# Tokens


_SYLLABLES = (
    "pe",
    "po",
    "do",
    "ge",
    "mo",
    "on",
    "ki",
    "ra",
    "zu",
    "ba",
    "lu",
    "na",
    "ti",
    "fu",
    "sha",
    "bo",
    "wi",
    "fa",
    "ro",
    "mi",
    "ka",
    "su",
    "ne",
    "xo",
)
_NOUNS = (
    "Inu",
    "Cat",
    "Frog",
    "Moon",
    "Rocket",
    "Pepe",
    "Doge",
    "Bonk",
    "Wif",
    "Chad",
    "Ape",
    "Toad",
    "Fren",
    "Goblin",
    "Shiba",
    "Mog",
    "Pump",
    "Degen",
    "Wojak",
    "Turbo",
)
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


@dataclass(frozen=True)
class TokenMeta:
    id: int
    name: str
    symbol: str
    address: str
    chain: str
    created_ms: int
    holders0: int
    holder_growth: float
    # static traits read by criteria
    lp_locked: int
    mint_renounced: int
    top10_base: float
    twitter_base: float
    telegram_base: float
    narrative_base: float
    virality_base: float


def token_meta(seed: int, token_id: int, path: market.TokenPath) -> TokenMeta:
    u = market.noise_uniform((seed, 3, token_id), np.arange(16))
    z = market.noise_normal((seed, 4, token_id), np.arange(4))
    syl = [_SYLLABLES[int(x * len(_SYLLABLES))] for x in u[:3]]
    stem = "".join(syl[: 2 + int(u[3] * 2)]).capitalize()
    noun = _NOUNS[int(u[4] * len(_NOUNS))]
    name = f"{stem} {noun}"
    symbol = (stem[:3] + noun[:2]).upper()[: 3 + int(u[5] * 3)]
    digest = hashlib.blake2b(f"{seed}:token:{token_id}".encode(), digest_size=32).digest()
    if path.chain == "SOLANA":
        num = int.from_bytes(digest, "big")
        chars = []
        for _ in range(44):
            num, rem = divmod(num, 58)
            chars.append(_B58[rem])
        address = "".join(chars)
    else:
        address = "0x" + digest[:20].hex()
    rugs = path.rug_hour is not None
    # Security traits: rugs mostly come from unlocked pools and concentrated supply.
    lock_p = (0.6, 0.25, 0.1, 0.05) if rugs else (0.1, 0.2, 0.4, 0.3)
    lp_locked = int(np.searchsorted(np.cumsum(lock_p), u[6], side="right"))
    return TokenMeta(
        id=token_id,
        name=name,
        symbol=symbol,
        address=address,
        chain=path.chain,
        created_ms=WORLD_START_MS - int((1 + u[7] * 29) * 24) * HOUR_MS,
        holders0=int(200 + u[8] * 3000),
        holder_growth=float(0.2 + u[9] * 3.0),
        lp_locked=min(lp_locked, 3),
        mint_renounced=int(u[10] < 0.75),
        top10_base=float(np.clip((55.0 if rugs else 32.0) + 10 * z[0], 5, 95)),
        twitter_base=float(np.exp(7.5 + 1.2 * z[1])),
        telegram_base=float(np.exp(6.8 + 1.1 * z[2])),
        narrative_base=float(u[11] * 100),
        virality_base=float(u[12] * 100),
    )


# ---------------------------------------------------------------------------------------------
# Criterion values


def future_signal(path: market.TokenPath, hours: np.ndarray) -> np.ndarray:
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

    def eps(k: int) -> np.ndarray:
        return market.noise_normal((*keys, k), counters)

    z = future_signal(path, hours)

    def latent(rho: float, k: int) -> np.ndarray:
        return rho * z + np.sqrt(1.0 - rho * rho) * eps(k)

    mcap = path.open[hours] * path.supply
    out = np.empty((n, len(CRITERIA)))

    def put(key: str, values: np.ndarray) -> None:
        c = CRITERIA[_COL[key]]
        if c.range is not None:
            values = np.clip(values, c.range[0], c.range[1])
        out[:, _COL[key]] = values

    put("lp_locked", np.full(n, float(meta.lp_locked)))
    put("top10_holders_pct", meta.top10_base + 3.0 * eps(1) - 6.0 * latent(0.35, 2))
    put("mint_authority", np.full(n, float(meta.mint_renounced)))
    put("liquidity_usd", mcap * path.liquidity_share * np.exp(0.1 * eps(3)))
    put("volume_24h_usd", market.rolling_sum(path.volume, prev, 24))
    put("price_change_1h_pct", (path.close[prev] / path.open[prev] - 1.0) * 100.0)
    put("twitter_followers", meta.twitter_base * np.exp(0.05 * eps(4)))
    put("telegram_members", meta.telegram_base * np.exp(0.05 * eps(5)))
    put("social_sentiment", np.tanh(0.8 * eps(6)))
    put("ai_confidence", 50.0 + 18.0 * latent(0.45, 7))
    put("narrative_score", meta.narrative_base + 8.0 * eps(8))
    put("meme_virality", meta.virality_base + 10.0 * eps(9))
    put("rsi_14", market.indicator_rsi(path.close, prev))
    back = np.maximum(hours - 25, 0)
    put("momentum_24h_pct", (path.close[prev] / path.close[back] - 1.0) * 100.0)
    avg_vol = market.rolling_sum(path.volume, np.maximum(hours - 2, 0), 24) / 24.0
    put("volume_spike_ratio", path.volume[prev] / np.maximum(avg_vol, 1e-9))
    put("smart_money_buys", np.floor(np.exp(0.9 + 0.75 * latent(0.7, 10))))
    put("buy_sell_ratio", np.exp(0.1 + 0.45 * latent(0.5, 11)))
    put("holder_growth_pct", np.exp(2.0 + 1.0 * eps(12)) - 5.0)
    rounded = [round_value(v) for v in out.ravel().tolist()]
    return np.array(rounded, dtype=np.float64).reshape(out.shape)


def ai_scores(seed: int, quant_id: int, path: market.TokenPath, hours: np.ndarray) -> np.ndarray:
    """The model's score (0-100): mildly informed by the next day's return."""
    noise = market.noise_normal((seed, 6, quant_id, path.token_id), hours.astype(np.uint64))
    z = future_signal(path, hours)
    return np.round(np.clip(50.0 + 12.0 * (0.5 * z + noise), 0.0, 100.0), 2)


# ---------------------------------------------------------------------------------------------
# Evaluations and trades of one (quant, token)


EVAL_COLUMNS = (
    "quant_id",
    "token_id",
    "chain",
    "type",
    "created_ms",
    "hour",
    "market_cap",
    "mc_class",
    "price",
    "liquidity",
    "volume_24h",
    "passed",
    "scored",
    "internal_score",
    "ai_score",
    "avg_score",
    "perf_roi",
    "holders",
)
TRADE_COLUMNS = (
    "quant_id",
    "token_id",
    "chain",
    "buy_eval_id",
    "sell_eval_id",
    "decision",
    "trading_status",
    "wait_until_ms",
    "validated_ms",
    "confidence",
    "mode",
    "tracking",
    "open_ms",
    "close_ms",
    "status",
    "result",
    "exit_reason",
    "entry_price",
    "exit_price",
    "buy_cost",
    "sell_revenue",
    "pnl",
    "roi",
    "native_spent",
    "native_received",
    "tokens_bought",
    "tokens_sold",
    "avg_buy_price_native",
)
_TYPE_ORDER = {"TOKEN_STATUS": 0, "TOKEN_BUY": 1, "TOKEN_SELL": 2}


def _classes(mcap: np.ndarray) -> np.ndarray:
    bounds = np.array([lower for _, lower in MARKET_CAP_CLASSES[1:]])
    names = np.array([name for name, _ in MARKET_CAP_CLASSES])
    return names[np.searchsorted(bounds, mcap, side="right")]


@dataclass
class _Evals:
    """Evaluations of one pair, column-wise, decided under the build-time playbook."""

    rows: list[tuple[object, ...]]

    def add(self, **fields: object) -> int:
        self.rows.append(tuple(fields[c] for c in EVAL_COLUMNS))
        return len(self.rows) - 1


def _decide_rows(
    quant: QuantSpec, config_type: str, values: np.ndarray, classes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    passed = np.zeros(len(values), dtype=bool)
    scored = np.zeros(len(values), dtype=bool)
    internal = np.zeros(len(values))
    for mc_class, _ in MARKET_CAP_CLASSES:
        rows = classes == mc_class
        if rows.any():
            d = decide(rule_set(quant, mc_class, config_type), values[rows])
            passed[rows], scored[rows], internal[rows] = d.passed, d.required_ok, d.internal_score
    return passed, scored, internal


def _exit(
    quant: QuantSpec, path: market.TokenPath, entry_hour: int, entry_price: float
) -> tuple[int | None, float, str | None]:
    """(exit hour or None if still open, exit or mark price, reason) per the quant's rule."""
    tp = entry_price * (1 + quant.take_profit)
    sl = entry_price * (1 - quant.stop_loss)
    last = len(path.close) - 1
    for k in range(entry_hour, min(entry_hour + quant.horizon_h, last + 1)):
        o, h, lo = path.open[k], path.high[k], path.low[k]
        if k > entry_hour and o <= sl:
            return k, float(o), "stop_loss"
        if lo <= sl:
            return k, float(sl), "stop_loss"
        if k > entry_hour and o >= tp:
            return k, float(o), "take_profit"
        if h >= tp:
            return k, float(tp), "take_profit"
    end = entry_hour + quant.horizon_h - 1
    if end <= last:
        return end, float(path.close[end]), "horizon"
    return None, float(path.close[last]), None


def simulate_pair(
    seed: int, quant: QuantSpec, path: market.TokenPath, meta: TokenMeta
) -> tuple[list[tuple[object, ...]], list[dict[str, Any]], list[tuple[int, int]]]:
    """Evaluations, trades (buy/sell eval as local indexes) of one quant on one token."""
    last = len(path.close) - 1
    stop = last if path.rug_hour is None else min(last, path.rug_hour + 24)
    first = 24 + (quant.scan_offset_min // 15) % SCAN_EVERY_H
    hours = np.arange(first, stop + 1, SCAN_EVERY_H, dtype=np.int64)
    evals = _Evals([])
    trades: list[dict[str, Any]] = []
    if not len(hours):
        return evals.rows, trades, []
    values = criterion_values(seed, quant.id, path, meta, hours)
    mcap = path.open[hours] * path.supply
    classes = _classes(mcap)
    scan_pass, scan_scored, scan_internal = _decide_rows(quant, "SCANNING", values, classes)
    buy_pass, buy_scored, buy_internal = _decide_rows(quant, "BUYING", values, classes)
    ai = ai_scores(seed, quant.id, path, hours)
    end24 = np.minimum(hours + 23, last)
    perf = (path.close[end24] / path.open[hours] - 1.0) * 100.0
    liq = values[:, _COL["liquidity_usd"]]
    vol24 = values[:, _COL["volume_24h_usd"]]
    holders = (meta.holders0 * (1 + meta.holder_growth * hours / HISTORY_HOURS)).astype(int)
    jitter_ms = (path.token_id * 7919 % 600) * 1000
    u = market.noise_uniform((seed, 7, quant.id, path.token_id), np.arange(len(hours) * 8))
    busy_until = -1  # hour until which the quant holds (or waits on) this token

    def eval_row(
        i: int, etype: str, created_ms: int, passed: bool, scored: bool, internal: float
    ) -> int:
        ai_i = float(ai[i]) if scored else 0.0
        avg = round((internal + ai_i) / 2, 2) if scored else internal
        return evals.add(
            quant_id=quant.id,
            token_id=path.token_id,
            chain=path.chain,
            type=etype,
            created_ms=created_ms,
            hour=int(hours[i]),
            market_cap=float(mcap[i]),
            mc_class=str(classes[i]),
            price=float(path.open[hours[i]]),
            liquidity=float(liq[i]),
            volume_24h=float(vol24[i]),
            passed=int(passed),
            scored=int(scored),
            internal_score=float(internal),
            ai_score=ai_i,
            avg_score=avg,
            perf_roi=float(perf[i]),
            holders=int(holders[i]),
        )

    links: list[tuple[int, int]] = []  # (trade index, sell eval local index)
    exits: list[tuple[int, int, int]] = []  # (trade index, exit hour, close ms)
    for i, h in enumerate(hours.tolist()):
        scan_ms = WORLD_START_MS + h * HOUR_MS + quant.scan_offset_min * 60_000 + jitter_ms
        eval_row(
            i,
            "TOKEN_STATUS",
            scan_ms,
            bool(scan_pass[i]),
            bool(scan_scored[i]),
            float(scan_internal[i]),
        )
        if not scan_pass[i] or h <= busy_until:
            continue
        buy_ms = scan_ms + 90_000
        buy_idx = eval_row(
            i, "TOKEN_BUY", buy_ms, bool(buy_pass[i]), bool(buy_scored[i]), float(buy_internal[i])
        )
        if not buy_pass[i]:
            continue
        r = u[i * 8 : i * 8 + 8]
        zi = float(future_signal(path, np.array([h]))[0])
        p_reject = 0.05 + 0.15 / (1.0 + np.exp(2.0 * zi))
        if r[0] < p_reject:
            decision = "REJECT"
        elif r[0] < p_reject + 0.06:
            decision = "RECOMMEND"
        elif r[0] < p_reject + 0.18:
            decision = "DELAY"
        else:
            decision = "APPROVE"
        validated_ms = buy_ms + 30_000 + int(r[1] * 30_000)
        wait_until_ms = None
        entry_hour = h
        if decision == "DELAY":
            # mostly a few hours; one delay in six waits one to three days
            delay_h = 1 + int(r[2] * 8) if r[6] < 5 / 6 else 24 + int(r[2] * 48)
            entry_hour = h + delay_h
            wait_until_ms = WORLD_START_MS + entry_hour * HOUR_MS + 5 * 60_000
        delayed_active = decision == "DELAY" and entry_hour > last
        executed = decision == "APPROVE" or (decision == "DELAY" and not delayed_active)
        trading_status = {
            "APPROVE": "executed",
            "REJECT": "rejected",
            "RECOMMEND": "recommended",
        }.get(decision, "delayed" if delayed_active else "executed")
        entry_hour = min(entry_hour, last)
        entry_price = float(path.open[entry_hour]) * (1 + SLIPPAGE)
        size = round(quant.size_usd[0] + r[3] * (quant.size_usd[1] - quant.size_usd[0]), 2)
        open_ms: int = validated_ms + 15_000
        if wait_until_ms is not None and not delayed_active:
            open_ms = wait_until_ms
        if delayed_active:
            exit_hour, exit_price, reason = None, float(path.close[last]), None
        else:
            exit_hour, exit_price, reason = _exit(quant, path, entry_hour, entry_price)
        tokens = size * (1 - FEE) / entry_price
        if exit_hour is None:
            sold, revenue = 0.0, 0.0
            pnl = tokens * exit_price * (1 - FEE) - size
            close_ms = None
        else:
            sold = tokens
            revenue = tokens * exit_price * (1 - FEE)
            pnl = revenue - size
            close_ms = max(
                WORLD_START_MS + exit_hour * HOUR_MS + int(r[4] * 3_540_000) + 60_000,
                open_ms + 60_000,
            )
        roi = pnl / size * 100.0
        native = NATIVE_PRICE_USD[path.chain]
        trade = {
            "quant_id": quant.id,
            "token_id": path.token_id,
            "chain": path.chain,
            "buy_eval_id": buy_idx,
            "sell_eval_id": None,
            "decision": decision,
            "trading_status": trading_status,
            "wait_until_ms": wait_until_ms,
            "validated_ms": validated_ms,
            "confidence": round(0.55 + 0.4 * float(r[5]), 3),
            "mode": quant.trading_mode,
            "tracking": int(path.rug_hour is None),
            "open_ms": open_ms,
            "close_ms": close_ms,
            "status": "Open" if exit_hour is None else "Closed",
            "result": "Profit" if pnl > 0 else "Loss" if pnl < 0 else "Breakeven",
            "exit_reason": reason,
            "entry_price": entry_price,
            "exit_price": exit_price,
            "buy_cost": size,
            "sell_revenue": revenue,
            "pnl": pnl,
            "roi": roi,
            "native_spent": size / native,
            "native_received": revenue / native,
            "tokens_bought": tokens,
            "tokens_sold": sold,
            "avg_buy_price_native": entry_price / native,
        }
        trades.append(trade)
        if executed:
            busy_until = last + 1 if exit_hour is None else exit_hour
            if exit_hour is not None and close_ms is not None:
                exits.append((len(trades) - 1, exit_hour, close_ms))
        else:
            busy_until = max(busy_until, h + 24)  # a declined buy cools down for a day
    if exits:
        links = _sell_evaluations(seed, quant, path, meta, exits, evals)
    return evals.rows, trades, links


def _sell_evaluations(
    seed: int,
    quant: QuantSpec,
    path: market.TokenPath,
    meta: TokenMeta,
    exits: list[tuple[int, int, int]],
    evals: _Evals,
) -> list[tuple[int, int]]:
    """One TOKEN_SELL evaluation after each executed exit (BUYING playbook: would it still buy?)."""
    last = len(path.close) - 1
    hours = np.array([h for _, h, _ in exits], dtype=np.int64)
    values = criterion_values(seed, quant.id, path, meta, hours)
    classes = _classes(path.open[hours] * path.supply)
    passed, scored, internal = _decide_rows(quant, "BUYING", values, classes)
    ai = ai_scores(seed, quant.id, path, hours)
    end24 = np.minimum(hours + 23, last)
    perf = (path.close[end24] / path.open[hours] - 1.0) * 100.0
    holders = (meta.holders0 * (1 + meta.holder_growth * hours / HISTORY_HOURS)).astype(int)
    links = []
    for j, (trade_index, hour, close_ms) in enumerate(exits):
        ai_j = float(ai[j]) if scored[j] else 0.0
        internal_j = float(internal[j])
        idx = evals.add(
            quant_id=quant.id,
            token_id=path.token_id,
            chain=path.chain,
            type="TOKEN_SELL",
            created_ms=close_ms + 30_000,
            hour=hour,
            market_cap=float(path.open[hour] * path.supply),
            mc_class=str(classes[j]),
            price=float(path.open[hour]),
            liquidity=float(values[j, _COL["liquidity_usd"]]),
            volume_24h=float(values[j, _COL["volume_24h_usd"]]),
            passed=int(passed[j]),
            scored=int(scored[j]),
            internal_score=internal_j,
            ai_score=ai_j,
            avg_score=round((internal_j + ai_j) / 2, 2) if scored[j] else internal_j,
            perf_roi=float(perf[j]),
            holders=int(holders[j]),
        )
        links.append((trade_index, idx))
    return links


# ---------------------------------------------------------------------------------------------
# The whole world


def _config_rows(seed: int) -> Iterator[tuple[object, ...]]:
    for quant in QUANTS:
        for mc_class, _ in MARKET_CAP_CLASSES:
            for config_type in CONFIG_TYPES:
                for c in CRITERIA:
                    cid = _stable_uuid(seed, quant.id, mc_class, config_type, c.key)
                    yield (
                        cid,
                        quant.id,
                        mc_class,
                        config_type,
                        INTERVAL,
                        c.id,
                        threshold_for(quant, mc_class, config_type, c),
                        quant.weights.get(c.key, DEFAULT_WEIGHT),
                        int(c.key in quant.required),
                        int(c.key in quant.disabled),
                        int(c.is_human),
                        json.dumps(c.extra_info()),
                        f"{mc_class}.{config_type}.{c.key}.{INTERVAL}",
                    )


def _token_row(seed: int, path: market.TokenPath, meta: TokenMeta) -> tuple[object, ...]:
    last = len(path.close) - 1
    price = float(path.close[last])
    change = (price / float(path.close[last - 24]) - 1.0) * 100.0
    volume = float(path.volume[last - 23 :].sum())
    mcap = price * path.supply
    if path.rug_hour is not None:
        status = "RUGGED"
    elif volume < 0.002 * mcap:
        status = "DORMANT"
    else:
        status = "ACTIVE"
    holders = int(meta.holders0 * (1 + meta.holder_growth))
    return (
        meta.id,
        meta.name,
        meta.symbol,
        meta.address,
        meta.chain,
        f"https://sandbox.quantscope.invalid/tokens/{meta.id}.png",
        meta.created_ms,
        status,
        path.supply,
        path.rug_hour,
        holders,
        price,
        change,
        volume,
        mcap,
        mcap * path.liquidity_share,
    )


def build_world(conn: sqlite3.Connection, seed: int, scale: int) -> None:
    """Fill an empty world database (schema created, transaction managed by the caller)."""
    if scale < 1:
        raise ValueError("scale must be at least 1")
    conn.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("seed", str(seed)), ("scale", str(scale)), ("world_version", WORLD_VERSION)],
    )
    conn.executemany(
        "INSERT INTO quants VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                q.id,
                q.name,
                q.trading_mode,
                q.capital_usd,
                q.take_profit,
                q.stop_loss,
                q.horizon_h,
                _stable_uuid(seed, "group", q.id),
            )
            for q in QUANTS
        ],
    )
    conn.executemany(
        "INSERT INTO criteria VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                c.id,
                c.key,
                c.name,
                c.category,
                CATEGORY_IDS[c.category],
                c.short,
                c.long,
                int(c.is_human),
                i,
            )
            for i, c in enumerate(CRITERIA)
        ],
    )
    config = list(_config_rows(seed))
    conn.executemany(f"INSERT INTO config VALUES ({','.join('?' * 13)})", config)
    conn.execute("INSERT INTO config_original SELECT * FROM config")
    conn.executemany(
        "INSERT INTO pass_marks VALUES (?, ?, ?, ?)",
        [
            (q.id, mc, ct, q.pass_marks[ct])
            for q in QUANTS
            for mc, _ in MARKET_CAP_CLASSES
            for ct in CONFIG_TYPES
        ],
    )

    # A bounded page cache for the bulk inserts and sorts (main and temp): flat in scale.
    saved = [conn.execute(f"PRAGMA {db}.cache_size").fetchone()[0] for db in ("main", "temp")]
    try:
        for db in ("main", "temp"):
            conn.execute(f"PRAGMA {db}.cache_size = {_BUILD_CACHE_KIB}")
        _stage_world(conn, seed, scale)
        _renumber(conn, seed)
    finally:
        for db, size in zip(("main", "temp"), saved, strict=True):
            conn.execute(f"PRAGMA {db}.cache_size = {int(size)}")
    _after_build(conn, seed)


_EVAL_SELECT = ", ".join(EVAL_COLUMNS)
_TRADE_SELECT = ", ".join(TRADE_COLUMNS)
_BATCH = 5000  # trades per batch when building transactions
_BUILD_CACHE_KIB = -65536  # 64 MiB of page cache per database while building


def _stage_world(conn: sqlite3.Connection, seed: int, scale: int) -> None:
    """Simulate token by token into TEMP staging tables (memory stays flat in ``scale``).

    Staging ids (``sid``) follow simulation order: token, quant, then the pair's own order. They
    break ties in the time orders exactly as the stable sort of the in-memory build did.
    """
    conn.execute("DROP TABLE IF EXISTS temp.stage_evals")
    conn.execute("DROP TABLE IF EXISTS temp.stage_trades")
    conn.execute(
        f"CREATE TEMP TABLE stage_evals (sid INTEGER PRIMARY KEY, type_order, {_EVAL_SELECT})"
    )
    conn.execute(f"CREATE TEMP TABLE stage_trades (sid INTEGER PRIMARY KEY, {_TRADE_SELECT})")
    eval_sql = (
        f"INSERT INTO stage_evals (sid, type_order, {_EVAL_SELECT}) "
        f"VALUES ({','.join('?' * (len(EVAL_COLUMNS) + 2))})"
    )
    trade_sql = (
        f"INSERT INTO stage_trades ({_TRADE_SELECT}) VALUES ({','.join('?' * len(TRADE_COLUMNS))})"
    )
    type_col = EVAL_COLUMNS.index("type")
    n_evals = 0
    for token_id in range(1, TOKENS_PER_SCALE * scale + 1):
        path = market.token_path(seed, token_id)
        meta = token_meta(seed, token_id, path)
        conn.execute(
            f"INSERT INTO tokens VALUES ({','.join('?' * 16)})", _token_row(seed, path, meta)
        )
        eval_rows: list[tuple[object, ...]] = []
        trade_rows: list[tuple[object, ...]] = []
        for quant in QUANTS:
            rows, trades, links = simulate_pair(seed, quant, path, meta)
            base = n_evals + 1  # staging ids start at 1
            eval_rows.extend(
                (base + i, _TYPE_ORDER[str(r[type_col])], *r) for i, r in enumerate(rows)
            )
            n_evals += len(rows)
            for t in trades:
                t["buy_eval_id"] = base + int(t["buy_eval_id"])
            for ti, si in links:
                trades[ti]["sell_eval_id"] = base + si
            trade_rows.extend(tuple(t[c] for c in TRADE_COLUMNS) for t in trades)
        conn.executemany(eval_sql, eval_rows)
        conn.executemany(trade_sql, trade_rows)
        if scale > 1:
            market.token_path.cache_clear()


def _renumber(conn: sqlite3.Connection, seed: int) -> None:
    """Ids follow time: evaluations by (created, quant, token, type), trades by open time."""
    conn.execute("DROP TABLE IF EXISTS temp.eval_ids")
    conn.execute("CREATE TEMP TABLE eval_ids (id INTEGER PRIMARY KEY, sid INTEGER NOT NULL)")
    conn.execute(
        "INSERT INTO eval_ids (id, sid) SELECT row_number() OVER ("
        "ORDER BY created_ms, quant_id, token_id, type_order, sid), sid FROM stage_evals"
    )
    conn.execute(
        f"INSERT INTO evaluations (id, {_EVAL_SELECT}) "
        f"SELECT e.id, {', '.join('s.' + c for c in EVAL_COLUMNS)} "
        "FROM eval_ids AS e JOIN stage_evals AS s ON s.sid = e.sid ORDER BY e.id"
    )
    conn.execute("CREATE INDEX temp.eval_ids_sid ON eval_ids(sid)")
    conn.execute("DROP TABLE temp.stage_evals")
    remap = {"buy_eval_id": "b.id", "sell_eval_id": "x.id"}
    conn.execute(
        f"INSERT INTO trades (id, {_TRADE_SELECT}) "
        "SELECT row_number() OVER (ORDER BY t.open_ms, t.quant_id, t.token_id, t.sid), "
        f"{', '.join(remap.get(c, 't.' + c) for c in TRADE_COLUMNS)} "
        "FROM stage_trades AS t JOIN eval_ids AS b ON b.sid = t.buy_eval_id "
        "LEFT JOIN eval_ids AS x ON x.sid = t.sell_eval_id"
    )
    conn.execute("DROP TABLE temp.stage_trades")
    conn.execute("DROP TABLE temp.eval_ids")
    tx_sql = (
        "INSERT INTO transactions (trade_id, action, tx_hash, ts_ms, input_token, output_token, "
        "input_amount, output_amount, input_value_usd, output_value_usd, price_usd) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    last_id = 0
    while True:  # keyset batches: a fresh read each time, never a cursor open across writes
        batch = conn.execute(
            f"SELECT id, {_TRADE_SELECT} FROM trades "
            "WHERE id > ? AND trading_status = 'executed' ORDER BY id LIMIT ?",
            (last_id, _BATCH),
        ).fetchall()
        if not batch:
            break
        tx_rows: list[tuple[object, ...]] = []
        for row in batch:
            t = dict(zip(TRADE_COLUMNS, row[1:], strict=True))
            tx_rows.extend(_transactions(seed, int(row[0]), t, conn))
        conn.executemany(tx_sql, tx_rows)
        last_id = int(batch[-1][0])


def _tx_hash(seed: int, trade_id: int, action: str, chain: str) -> str:
    digest = hashlib.blake2b(f"{seed}:tx:{trade_id}:{action}".encode(), digest_size=64).digest()
    if chain != "SOLANA":
        return "0x" + digest[:32].hex()
    num = int.from_bytes(digest, "big")
    chars = []
    for _ in range(88):
        num, rem = divmod(num, 58)
        chars.append(_B58[rem])
    return "".join(chars)


_address_cache: dict[int, str] = {}


def _transactions(
    seed: int, trade_id: int, t: dict[str, Any], conn: sqlite3.Connection
) -> list[tuple[object, ...]]:
    from quantscope.sandbox.catalog import WRAPPED_NATIVE_ADDRESS

    chain = str(t["chain"])
    token_id = int(t["token_id"])
    address = _address_cache.get(token_id)
    if address is None:
        address = conn.execute("SELECT address FROM tokens WHERE id = ?", (token_id,)).fetchone()[0]
        _address_cache[token_id] = address
    native = WRAPPED_NATIVE_ADDRESS[chain]
    f = {k: float(v) for k, v in t.items() if isinstance(v, float)}
    rows: list[tuple[object, ...]] = [
        (
            trade_id,
            "BUY",
            _tx_hash(seed, trade_id, "BUY", chain),
            t["open_ms"],
            native,
            address,
            f["native_spent"],
            f["tokens_bought"],
            f["buy_cost"],
            f["tokens_bought"] * f["entry_price"],
            f["entry_price"],
        )
    ]
    if t["close_ms"] is not None:
        rows.append(
            (
                trade_id,
                "SELL",
                _tx_hash(seed, trade_id, "SELL", chain),
                t["close_ms"],
                address,
                native,
                f["tokens_sold"],
                f["native_received"],
                f["tokens_sold"] * f["exit_price"],
                f["sell_revenue"],
                f["exit_price"],
            )
        )
    return rows


def _after_build(conn: sqlite3.Connection, seed: int) -> None:
    """Hook for derived data computed from the built history (the optimizer's first run)."""
    _address_cache.clear()
    import importlib

    try:
        optimizer = importlib.import_module("quantscope.sandbox.optimizer")
    except ImportError:  # the optimizer module lands separately
        return
    optimizer.initial_analysis(conn)
