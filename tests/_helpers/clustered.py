"""Hand-made research frames whose trades cluster by token, with a known planted criterion.

``clustered_features`` builds a features frame (the columns ``trade_features`` gives that
research reads) of ``tokens`` tokens, each with its own win propensity: ``signal`` predicts a
trade's outcome (planted), ``trait`` is a token's static trait unrelated to outcomes (noise: any
association with outcomes in one sample is a fluke of which tokens it drew).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def clustered_features(
    n: int = 600,
    tokens: int = 40,
    seed: int = 2,
    planted: float = 0.15,
    spread: float = 0.2,
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    token = rng.integers(0, tokens, n)
    base = rng.uniform(0.5 - spread, 0.5 + spread, tokens)
    signal = rng.normal(size=n)
    won = rng.random(n) < np.clip(base[token] + planted * signal, 0, 1)
    opened = pd.Timestamp("2026-08-01", tz="UTC") + pd.to_timedelta(
        np.sort(rng.uniform(0, 60 * 24, n)), unit="h"
    )
    frame = pd.DataFrame(
        {
            "trade_id": np.arange(n),
            "evaluation_id": np.arange(n),
            "quant_id": 1,
            "token_id": token,
            "evaluation_type": "TOKEN_BUY",
            "market_cap_class": "DEGEN_CAP",
            "opened_at": opened,
            "closed_at": opened + pd.to_timedelta(rng.uniform(1, 72, n), unit="h"),
            "buy_cost_usd": 100.0,
            "pnl_usd": np.where(won, 30.0, -25.0) + rng.normal(0, 5, n),
            "profitable": won,
            "signal": signal,
            "trait": rng.normal(size=tokens)[token],
        }
    )
    frame.attrs["backtest"] = {
        "criteria": ["signal", "trait"],
        "operators": {"signal": "V_GTE_T", "trait": "V_GTE_T"},
    }
    return frame
