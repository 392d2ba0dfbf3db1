"""Hand-made frames with the loaders' dtypes, small enough to check on paper.

``HAND`` (trades of two quants), ``EVALS`` (evaluations) and ``details_frame()`` (criterion
results) are the analytics, accessor and plot tests' common fixtures; ``trades_frame`` builds
a trades frame from short rows and ``at`` names a moment of September 2026.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from quantscope._typed import schemas as _schemas

DTYPES = _schemas.TRADES.dtypes()
T0 = pd.Timestamp("2026-09-01", tz="UTC")  # a Tuesday; its week starts on Monday 08-31


def at(day: int, hour: float = 0) -> pd.Timestamp:
    """September ``day`` 2026 at ``hour`` (UTC)."""
    return T0 + pd.Timedelta(days=day - 1, hours=hour)


def trades_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A trades frame with the loader's dtypes from short rows.

    Row keys: ``id``, ``opened``, ``closed`` (None: open), ``pnl``; optional ``quant``,
    ``cost``, ``held_s`` (an open position's time to its mark), ``chain``, ``evaluation_id``,
    ``decision``.
    """
    closed = [r.get("closed") for r in rows]
    held = [
        (c - r["opened"]).total_seconds() if c is not None else r.get("held_s", 3600.0)
        for r, c in zip(rows, closed, strict=True)
    ]
    pnl = [r["pnl"] for r in rows]
    cost = [r.get("cost", 100.0) for r in rows]
    data: dict[str, Any] = {
        "trade_id": [r["id"] for r in rows],
        "quant_name": [r.get("quant", "Atlas") for r in rows],
        "chain": [r.get("chain", "SOLANA") for r in rows],
        "opened_at": pd.to_datetime(pd.Series([r["opened"] for r in rows], dtype=object), utc=True),
        "closed_at": pd.to_datetime(pd.Series(closed, dtype=object), utc=True),
        "duration_s": held,
        "status": ["Open" if c is None else "Closed" for c in closed],
        "result": [
            None if p is None or p != p else "Profit" if p > 0 else "Loss" if p < 0 else "Breakeven"
            for p in pnl
        ],
        "buy_cost_usd": cost,
        "sell_revenue_usd": [
            0.0 if c is None else k + p for c, k, p in zip(closed, cost, pnl, strict=True)
        ],
        "pnl_usd": pnl,
        "decision": [r.get("decision", "APPROVE") for r in rows],
        "evaluation_id": [r.get("evaluation_id") for r in rows],
    }
    return pd.DataFrame(data).astype({name: DTYPES[name] for name in data})


# Atlas: six closed trades (two close at the same moment: ids break the tie) and one open
# position; Borealis: two losing trades. Close order of Atlas: +100, -50, -30, 0, +200, +40.
HAND = trades_frame(
    [
        {"id": 1, "opened": at(1, 10), "closed": at(1, 12), "pnl": 100.0, "cost": 1000.0},
        {"id": 3, "opened": at(2, 8), "closed": at(2, 9), "pnl": -30.0, "cost": 300.0},
        {"id": 2, "opened": at(1, 11), "closed": at(2, 9), "pnl": -50.0, "cost": 500.0},
        {"id": 4, "opened": at(3), "closed": at(4), "pnl": 0.0, "cost": 200.0},
        {"id": 5, "opened": at(4, 6), "closed": at(5, 6), "pnl": 200.0, "cost": 1000.0},
        {"id": 6, "opened": at(5), "closed": at(5, 12), "pnl": 40.0, "cost": 400.0},
        {"id": 7, "opened": at(6), "closed": None, "held_s": 3600.0, "pnl": -25.0, "cost": 250.0},
        {"id": 8, "quant": "Borealis", "opened": at(1), "closed": at(3), "pnl": -100.0},
        {"id": 9, "quant": "Borealis", "opened": at(2), "closed": at(3), "pnl": -20.0},
    ]
)


EVALS = pd.DataFrame(
    {
        "evaluation_id": [1, 2, 3, 4, 5],
        "evaluation_type": ["TOKEN_STATUS", "TOKEN_BUY", "TOKEN_STATUS", "TOKEN_STATUS", None],
        "chain": ["SOLANA", "SOLANA", "BASE", "BASE", "BASE"],
        "created_at": [at(1, 1), at(1, 2), at(1, 23), at(2, 1), at(2, 5)],
        "passed": [True, True, False, None, False],
    }
).astype(
    {
        "evaluation_id": "Int64",
        "evaluation_type": "category",
        "chain": "category",
        "created_at": "datetime64[ms, UTC]",
        "passed": "boolean",
    }
)


def details_frame() -> pd.DataFrame:
    """Three buy evaluations (ids 11, 12, 13) x criteria a, b, c; c is disabled on 13."""
    rows = [
        (11, "a", "Onchain", 5.0, True),
        (11, "b", "Social", 1.0, False),
        (11, "c", "Social", 0.5, True),
        (12, "a", "Onchain", 3.0, True),
        (12, "b", "Social", 2.0, True),
        (12, "c", "Social", 0.7, False),
        (13, "a", "Onchain", 1.0, False),
        (13, "b", "Social", 4.0, True),
        (13, "c", "Social", 0.9, None),
    ]
    frame = pd.DataFrame(
        rows, columns=["evaluation_id", "criterion", "category", "value", "passed"]
    )
    frame["created_at"] = [at(1)] * 6 + [at(2)] * 3
    return frame.astype(
        {
            "evaluation_id": "Int64",
            "criterion": "category",
            "category": "category",
            "passed": "boolean",
            "created_at": "datetime64[ms, UTC]",
        }
    )
