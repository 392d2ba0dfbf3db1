"""Guard rails on research rows: how much a row rests on, and how sure its figures are.

A what-if row says "at this threshold, these trades, this win rate". ``append`` adds to every
row of a sweep (``sweep._sweep_frame``) what a researcher needs before acting on it
(docs/metrics.md, "Guard rails"):

* ``tokens``: distinct tokens behind the kept trades (trades of one token are correlated: the
  same launch, the same market, often the same hour); ``moved_tokens``: those whose kept
  trades differ from the current threshold's (what a change rests on);
* ``<figure>_lo``/``_hi`` for ``win_rate``, ``d_win_rate``, ``d_total_pnl_usd`` and ``d_roi``:
  95 % intervals from the one interval module, ``uncertainty.cluster_intervals`` (a Poisson
  bootstrap over whole tokens with a t widening; a row where nothing moved gets the
  rule-of-three interval, never [0, 0]), and ``interval`` naming which of the two a row got;
* ``small_sample``: fewer than ``MIN_TRADES`` trades or ``MIN_TOKENS`` tokens.

The per-token sums of every threshold cell are one table (``_kernel.group_sums``); the
intervals run when the table is small (``BOOTSTRAP_MAX_CELLS`` threshold cells,
``BOOTSTRAP_MAX_TABLE`` token x cell entries); a bigger sweep, or one called with
``bootstrap=False``, leaves the interval columns NaN and says why in
``attrs["what_if"]["guards"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from quantscope.backtest import _sample, uncertainty
from quantscope.backtest._inputs import CONFIDENCE, token_codes
from quantscope.backtest._kernel import group_sums
from quantscope.backtest._rules import DIRECTION, NEGATION, OPERATORS
from quantscope.backtest.uncertainty import NO_MOVE, wilson

__all__ = [
    "BOOTSTRAP_MAX_CELLS",
    "BOOTSTRAP_MAX_TABLE",
    "CONFIDENCE",
    "INTERVAL_COLUMNS",
    "MIN_TOKENS",
    "MIN_TRADES",
    "NO_MOVE",
    "Z",
    "append",
    "small_sample",
    "token_codes",
    "wilson",
]

#: A row with fewer kept trades than this is ``small_sample``.
MIN_TRADES = 30
#: A row with fewer distinct tokens than this is ``small_sample`` (when tokens are known).
MIN_TOKENS = 10
#: The normal quantile of ``CONFIDENCE`` (two-sided).
Z = 1.959963984540054
#: The intervals run for sweeps of at most this many threshold cells...
BOOTSTRAP_MAX_CELLS = 500
#: ...and at most this many (token, cell) entries in the table they sum.
BOOTSTRAP_MAX_TABLE = 5_000_000
#: The interval columns, in frame order.
INTERVAL_COLUMNS = tuple(
    f"{name}{side}" for name in uncertainty.STATISTICS for side in ("_lo", "_hi")
)
_METHOD = (
    "Poisson bootstrap over whole tokens (uncertainty.cluster_intervals), percentile widened "
    "by sqrt(k/(k-1)) and t/z; rule of three where nothing moved"
)


def small_sample(trades: np.ndarray, tokens: np.ndarray | None) -> np.ndarray:
    """``trades < MIN_TRADES``, or ``tokens < MIN_TOKENS`` where the tokens are known."""
    flag = np.asarray(trades) < MIN_TRADES
    if tokens is not None:
        flag = flag | (np.asarray(tokens, dtype=np.float64) < MIN_TOKENS)
    return flag


def _tokens_kept_1d(
    values: np.ndarray, grid: np.ndarray, op: str, codes: np.ndarray, k: int
) -> np.ndarray:
    """Distinct tokens kept at each threshold of one criterion: a token is kept when its
    best value (the largest under ``V_GTE_T``) passes.
    """
    up = DIRECTION[op] > 0
    best = np.full(k, -np.inf if up else np.inf)
    (np.maximum if up else np.minimum).at(best, codes, values)
    kept: npt.NDArray[np.intp] = OPERATORS[op](best[:, None], grid[None, :]).sum(axis=0)
    return kept


def _per_token(
    rows: _sample.Sample, kept: np.ndarray, codes: np.ndarray, k: int
) -> list[np.ndarray]:
    """Each token's trades, wins, PnL and cost over the rows ``kept`` (a bool mask)."""
    o = rows.outcomes
    weights = [kept, kept & o.win, np.where(kept, o.pnl, 0.0), np.where(kept, o.cost, 0.0)]
    return [np.bincount(codes, weights=w.astype(np.float64), minlength=k) for w in weights]


def _cluster_table(
    rows: _sample.Sample,
    grids: Sequence[np.ndarray],
    ops: Sequence[str],
    currents: Sequence[_sample.Current],
    either_currents: Sequence[_sample.Current] | None,
    codes: np.ndarray,
    k: int,
) -> uncertainty.ClusterSums:
    """Per-token sums at every cell and under the current thresholds, the rows a replayed
    grid keeps when either criterion passes included (all of them but those failing both).
    """
    n = len(rows.outcomes.pnl)
    main = codes[:n]

    def cell_sums(part: _sample.Sample, part_ops: Sequence[str], c: np.ndarray) -> list[np.ndarray]:
        o = part.outcomes
        weights = [None, o.win.astype(np.float64), o.pnl, o.cost]
        found = group_sums(part.values, grids, part_ops, c, k, weights)
        return [s.reshape(k, -1) for s in found]

    sums = cell_sums(rows, ops, main)
    base = _per_token(rows, _sample.baseline(rows, ops, currents), main, k)
    if rows.either is not None and either_currents is not None:
        other, negated = rows.either, [NEGATION[op] for op in ops]
        c = codes[n:]
        every = _per_token(other, np.ones(len(other.outcomes.pnl), bool), c, k)
        failing = cell_sums(other, negated, c)
        sums = [s + (e[:, None] - f) for s, e, f in zip(sums, every, failing, strict=True)]
        fails_now = _sample.baseline(other, negated, either_currents)
        base = [b + x for b, x in zip(base, _per_token(other, ~fails_now, c, k), strict=True)]
    return uncertainty.ClusterSums(*sums, *base)


def append(
    out: pd.DataFrame,
    rows: _sample.Sample,
    grids: Sequence[np.ndarray],
    ops: Sequence[str],
    currents: Sequence[_sample.Current],
    *,
    either_currents: Sequence[_sample.Current] | None = None,
    bootstrap: bool = True,
) -> pd.DataFrame:
    """``out`` (a sweep's rows, cells in ``meshgrid(*grids, indexing="ij")`` order) with the
    guard columns appended, and ``attrs["what_if"]["guards"]`` saying how.
    """
    parts = rows.token_frames() + (rows.either.token_frames() if rows.either is not None else [])
    found = token_codes(parts)
    total = sum(len(p) for p in parts)
    k = found[1] if found is not None else total  # without token ids, each trade is a unit
    cells = int(np.prod([len(g) for g in grids]))
    table_size = k * cells
    fits = 0 < cells <= BOOTSTRAP_MAX_CELLS and table_size <= BOOTSTRAP_MAX_TABLE and k > 0
    info: dict[str, Any] = {
        "min_trades": MIN_TRADES,
        "min_tokens": MIN_TOKENS,
        "confidence": CONFIDENCE,
        "bootstrap_unit": "token" if found is not None else "trade",
        "method": _METHOD,
    }
    one_criterion = len(grids) == 1 and rows.either is None  # tokens by a cheaper count
    table = None
    wanted = (bootstrap and fits) or (found is not None and not one_criterion)
    if wanted and table_size <= BOOTSTRAP_MAX_TABLE and k > 0 and cells > 0:
        codes = found[0] if found is not None else np.arange(total, dtype=np.intp)
        table = _cluster_table(rows, grids, ops, currents, either_currents, codes, k)
    tokens: np.ndarray | None = None
    if found is not None:
        if one_criterion:
            tokens = _tokens_kept_1d(rows.values[0], grids[0], ops[0], found[0], k)
        elif table is not None:
            tokens = np.count_nonzero(table.trades, axis=0)
    nan = np.full(len(out), np.nan)
    guards: dict[str, Any] = {
        "tokens": pd.array(tokens if tokens is not None else [None] * len(out), dtype="Int64"),
        "moved_tokens": pd.array([None] * len(out), dtype="Int64"),
        **dict.fromkeys(INTERVAL_COLUMNS, nan),
        "interval": pd.array([None] * len(out), dtype="string"),
    }
    if bootstrap and fits and table is not None:
        got = uncertainty.cluster_intervals(table)
        guards.update({name: got[name] for name in INTERVAL_COLUMNS})
        if found is not None:
            guards["moved_tokens"] = pd.array(got["moved_clusters"], dtype="Int64")
        guards["interval"] = pd.array(np.where(got["no_move"], NO_MOVE, "bootstrap"), "string")
        info.update(bootstrap_resamples=uncertainty.RESAMPLES, bootstrap_seed=uncertainty.SEED)
        if len(grids) > 1:
            info["moved"] = "a token moved when its kept trade count differs from the current"
    else:
        info.update(
            bootstrap_resamples=0,
            bootstrap_skipped=(
                f"{cells} threshold cells and {table_size} (unit, cell) entries: the intervals "
                f"run for at most {BOOTSTRAP_MAX_CELLS} cells and {BOOTSTRAP_MAX_TABLE} entries"
                if bootstrap
                else "skipped by the caller (bootstrap=False)"
            ),
        )
    flags = small_sample(out["trades"].to_numpy(), tokens)
    guards["small_sample"] = pd.array(flags, dtype="boolean")
    result = out.assign(**guards)
    result.attrs["what_if"] = {**out.attrs.get("what_if", {}), "guards": info}
    return result
