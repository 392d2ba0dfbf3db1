"""Sums over kept trades -> the metrics a threshold study reports, and their changes.

One place for the formulas, shared by ``what_if``, ``compare_playbooks`` and ``crosscheck``,
and the same as ``quantscope.analytics`` (docs/metrics.md): win rate = wins / trades; ROI =
total PnL / total buy cost; profit factor = gross profit / |gross loss| (inf with profit and no
loss, NaN with neither). A *win* is a profitable trade (``features.profitable``).
"""

from __future__ import annotations

import numpy as np

from quantscope.backtest._kernel import Sums

#: The metric columns, in order, and what each is.
METRICS: dict[str, str] = {
    "trades": "trades kept (simulated entries included)",
    "simulated_trades": "simulated entries among them",
    "kept_share": "real trades kept / real trades in the sample",
    "wins": "profitable trades kept",
    "win_rate": "wins / trades",
    "total_pnl_usd": "sum of pnl_usd",
    "gross_profit_usd": "sum of the positive pnl_usd",
    "gross_loss_usd": "sum of the negative pnl_usd (<= 0)",
    "roi": "total_pnl_usd / total buy_cost_usd",
    "profit_factor": "gross_profit_usd / |gross_loss_usd|",
}
#: The metrics whose change against the baseline is reported as ``d_<name>``.
DELTAS = ("trades", "win_rate", "total_pnl_usd", "roi", "profit_factor")


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def metrics(sums: Sums, real_total: int) -> dict[str, np.ndarray]:
    """The ``METRICS`` of each cell of ``sums`` (``real_total``: real trades in the sample)."""
    gp, gl = sums.gross_profit, sums.gross_loss
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(gl == 0, np.where(gp > 0, np.inf, np.nan), gp / np.abs(gl))
    return {
        "trades": sums.trades,
        "simulated_trades": sums.simulated,
        "kept_share": _divide(sums.trades - sums.simulated, np.full_like(gp, real_total)),
        "wins": sums.wins,
        "win_rate": _divide(sums.wins, sums.trades),
        "total_pnl_usd": sums.pnl,
        "gross_profit_usd": gp,
        "gross_loss_usd": gl,
        "roi": _divide(sums.pnl, sums.cost),
        "profit_factor": factor,
    }


def deltas(table: dict[str, np.ndarray], base: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``d_<metric>`` = metric - the baseline's, for each of ``DELTAS`` (inf - inf is NaN)."""
    out = {}
    with np.errstate(invalid="ignore"):
        for name in DELTAS:
            out[f"d_{name}"] = np.asarray(table[name], dtype=np.float64) - float(
                np.asarray(base[name]).reshape(-1)[0]
            )
    out["d_trades"] = out["d_trades"].astype(np.int64)
    return out
