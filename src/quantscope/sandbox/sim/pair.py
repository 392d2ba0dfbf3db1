"""One quant on one token: its evaluations and trades over the world's history.

``simulate_pair`` tells the story of docs/service-contract.md ("The simulator") for one pair:
scans every 12 hours, a buy evaluation after a passed scan, model validation, the exit on the
quant's take-profit, stop-loss or horizon read off the candles, and a sell evaluation after an
executed exit. Rows come back in the pair's own order; ``build.py`` numbers them world-wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from quantscope.sandbox.catalog import (
    HISTORY_HOURS,
    HOUR_MS,
    MARKET_CAP_CLASSES,
    NATIVE_PRICE_USD,
    WORLD_START_MS,
)
from quantscope.sandbox.sim import market
from quantscope.sandbox.sim.criteria import COLUMN, ai_scores, criterion_values, future_signal
from quantscope.sandbox.sim.quants import QuantSpec, rule_set
from quantscope.sandbox.sim.rules import decide
from quantscope.sandbox.sim.tokens import TokenMeta

SCAN_EVERY_H = 12
FEE = 0.01  # swap fee on each side
SLIPPAGE = 0.005

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
    stop = min(entry_hour + quant.horizon_h, last + 1)
    # The first hour where any exit fires (the hour's open or its range crosses a level), then
    # the first of the rules, in order, that fires in that hour.
    o, h, lo = path.open[entry_hour:stop], path.high[entry_hour:stop], path.low[entry_hour:stop]
    crossed = (lo <= sl) | (h >= tp)
    crossed[1:] |= (o[1:] <= sl) | (o[1:] >= tp)
    if crossed.any():
        j = int(crossed.argmax())
        k, opened = entry_hour + j, float(o[j])
        if j > 0 and opened <= sl:
            return k, opened, "stop_loss"
        if lo[j] <= sl:
            return k, float(sl), "stop_loss"
        if j > 0 and opened >= tp:
            return k, opened, "take_profit"
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
    liq = values[:, COLUMN["liquidity_usd"]]
    vol24 = values[:, COLUMN["volume_24h_usd"]]
    holders = (meta.holders0 * (1 + meta.holder_growth * hours / HISTORY_HOURS)).astype(int)
    jitter_ms = (path.token_id * 7919 % 600) * 1000
    u = market.noise_uniform((seed, 7, quant.id, path.token_id), np.arange(len(hours) * 8))
    busy_until = -1  # hour until which the quant holds (or waits on) this token

    # Python lists, converted once: a row takes its fields by index, never a numpy scalar.
    cols = (
        hours.tolist(),
        mcap.tolist(),
        classes.tolist(),
        path.open[hours].tolist(),
        liq.tolist(),
        vol24.tolist(),
    )
    perf_l, holders_l, ai_l = perf.tolist(), holders.tolist(), ai.tolist()
    signal = future_signal(path, hours).tolist()
    rows = evals.rows

    def eval_row(
        i: int, etype: str, created_ms: int, passed: bool, scored: bool, internal: float
    ) -> int:
        ai_i = ai_l[i] if scored else 0.0
        avg = round((internal + ai_i) / 2, 2) if scored else internal
        hour, mcap_i, mc_class, price, liquidity, volume = (c[i] for c in cols)
        rows.append(  # EVAL_COLUMNS order
            (
                quant.id,
                path.token_id,
                path.chain,
                etype,
                created_ms,
                hour,
                mcap_i,
                mc_class,
                price,
                liquidity,
                volume,
                int(passed),
                int(scored),
                internal,
                ai_i,
                avg,
                perf_l[i],
                holders_l[i],
            )
        )
        return len(rows) - 1

    links: list[tuple[int, int]] = []  # (trade index, sell eval local index)
    exits: list[tuple[int, int, int]] = []  # (trade index, exit hour, close ms)
    scan = zip(scan_pass.tolist(), scan_scored.tolist(), scan_internal.tolist(), strict=True)
    buy = (buy_pass.tolist(), buy_scored.tolist(), buy_internal.tolist())
    for i, (h, (passed, scored, internal)) in enumerate(zip(cols[0], scan, strict=True)):
        scan_ms = WORLD_START_MS + h * HOUR_MS + quant.scan_offset_min * 60_000 + jitter_ms
        eval_row(i, "TOKEN_STATUS", scan_ms, passed, scored, internal)
        if not passed or h <= busy_until:
            continue
        buy_ms = scan_ms + 90_000
        buy_idx = eval_row(i, "TOKEN_BUY", buy_ms, buy[0][i], buy[1][i], buy[2][i])
        if not buy[0][i]:
            continue
        r = u[i * 8 : i * 8 + 8]
        zi = signal[i]
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
            liquidity=float(values[j, COLUMN["liquidity_usd"]]),
            volume_24h=float(values[j, COLUMN["volume_24h_usd"]]),
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
