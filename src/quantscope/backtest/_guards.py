"""Guard rails on research rows: how much a row rests on, and how sure its figures are.

A what-if row says "at this threshold, these trades, this win rate". ``append`` adds to every
row of a sweep (``sweep._sweep_frame``) what a researcher needs before acting on it
(docs/metrics.md, "Guard rails"):

* ``tokens``: distinct tokens behind the kept trades (trades of one token are correlated: the
  same launch, the same market, often the same hour);
* ``win_rate_lo``/``win_rate_hi``: the 95 % Wilson score interval of the win rate;
* ``d_total_pnl_usd_lo``/``_hi`` and ``d_roi_lo``/``_hi``: 95 % percentile intervals of the
  changes against the current threshold from a seeded bootstrap that resamples *tokens* (all
  of a token's trades together), not trades;
* ``small_sample``: fewer than ``MIN_TRADES`` trades or ``MIN_TOKENS`` tokens.

The bootstrap sums each token's kept PnL and cost at every threshold once (``_kernel.
group_sums``: a table of tokens x thresholds) and draws the resamples as token counts (uniform
draws, counted), so a resample's sums are one matrix product. It runs when the table is small
(``BOOTSTRAP_MAX_CELLS`` threshold cells, ``BOOTSTRAP_MAX_TABLE`` token x cell entries); a
bigger sweep leaves the bootstrap columns NaN and says why in ``attrs["what_if"]["guards"]``,
as does a sweep called with ``bootstrap=False``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from quantscope.backtest import _sample
from quantscope.backtest._kernel import group_sums
from quantscope.backtest._rules import DIRECTION, OPERATORS

#: A row with fewer kept trades than this is ``small_sample``.
MIN_TRADES = 30
#: A row with fewer distinct tokens than this is ``small_sample`` (when tokens are known).
MIN_TOKENS = 10
#: The confidence of every interval, and its normal quantile (two-sided).
CONFIDENCE = 0.95
Z = 1.959963984540054
#: Bootstrap resamples and the seed they are drawn from (the same rows give the same interval).
RESAMPLES = 1000
SEED = 20260
#: The bootstrap runs for sweeps of at most this many threshold cells...
BOOTSTRAP_MAX_CELLS = 500
#: ...and at most this many (token, cell) entries in the table it sums.
BOOTSTRAP_MAX_TABLE = 5_000_000
#: Resamples drawn at a time: bounds the (resamples x tokens) count matrix in memory.
_CHUNK_ENTRIES = 4_000_000


def wilson(wins: np.ndarray, trades: np.ndarray, z: float = Z) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of ``wins / trades`` (NaN where there is no trade).

    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``: unlike ``p ± z·se`` it stays
    inside [0, 1] and is wide for few trades (1 win in 1 trade: 0.21 .. 1.0).
    """
    n = np.asarray(trades, dtype=np.float64)
    w = np.asarray(wins, dtype=np.float64)
    lo, hi = np.full(n.shape, np.nan), np.full(n.shape, np.nan)
    ok = n > 0
    p, m = w[ok] / n[ok], n[ok]
    centre = p + z * z / (2 * m)
    spread = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m))
    denominator = 1 + z * z / m
    lo[ok] = np.clip((centre - spread) / denominator, 0.0, 1.0)
    hi[ok] = np.clip((centre + spread) / denominator, 0.0, 1.0)
    return lo, hi


def small_sample(trades: np.ndarray, tokens: np.ndarray | None) -> np.ndarray:
    """``trades < MIN_TRADES``, or ``tokens < MIN_TOKENS`` where the tokens are known."""
    flag = np.asarray(trades) < MIN_TRADES
    if tokens is not None:
        flag = flag | (np.asarray(tokens, dtype=np.float64) < MIN_TOKENS)
    return flag


def token_codes(parts: Sequence[pd.DataFrame]) -> tuple[np.ndarray, int] | None:
    """Each row's token as a code ``0 .. k-1`` (shared across the parts), and ``k``.

    None when the rows have no ``token_id`` column; a row without a token id is a token of
    its own.
    """
    if not parts or any("token_id" not in p.columns for p in parts):
        return None
    ids = pd.concat([p["token_id"].astype(object) for p in parts], ignore_index=True)
    codes, uniques = pd.factorize(ids)
    missing = codes < 0
    codes[missing] = len(uniques) + np.arange(np.count_nonzero(missing))
    return codes.astype(np.intp), len(uniques) + int(np.count_nonzero(missing))


def _tokens_kept_1d(
    values: np.ndarray, grid: np.ndarray, op: str, codes: np.ndarray, k: int
) -> np.ndarray:
    """Distinct tokens kept at each threshold of one criterion: a token is kept when its
    best value (the largest under ``V_GTE_T``) passes."""
    up = DIRECTION[op] > 0
    best = np.full(k, -np.inf if up else np.inf)
    (np.maximum if up else np.minimum).at(best, codes, values)
    return OPERATORS[op](best[:, None], grid[None, :]).sum(axis=0)


def _resampled(rng: np.random.Generator, k: int, resamples: int) -> list[np.ndarray]:
    """Token counts of ``resamples`` bootstrap draws of ``k`` tokens with replacement (each
    row sums to ``k``), in chunks: ``k`` uniform draws per resample, counted per row."""
    per_chunk = max(1, _CHUNK_ENTRIES // max(k, 1))
    chunks, left = [], resamples
    while left > 0:
        size = min(per_chunk, left)
        drawn = rng.integers(0, k, size=(size, k)) + (np.arange(size) * k)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=size * k).reshape(size, k)
        chunks.append(counts.astype(np.float64))
        left -= size
    return chunks


def _quantiles(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2.5 % and 97.5 % quantiles of each column; NaN where more than 2.5 % of the draws
    are undefined (an ROI over resamples that kept no trade: the bound is unknown)."""
    tail = (1 - CONFIDENCE) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column gives NaN
        lo, hi = np.nanquantile(draws, [tail, 1 - tail], axis=0)
    undefined = np.isnan(draws).mean(axis=0) > tail
    return np.where(undefined, np.nan, lo), np.where(undefined, np.nan, hi)


_BOOTSTRAP_COLUMNS = ("d_total_pnl_usd_lo", "d_total_pnl_usd_hi", "d_roi_lo", "d_roi_hi")


def bootstrap_deltas(
    pnl: np.ndarray,
    cost: np.ndarray,
    base_pnl: np.ndarray,
    base_cost: np.ndarray,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, np.ndarray]:
    """Percentile intervals of the PnL and ROI changes, resampling tokens.

    Args:
        pnl, cost: each token's kept PnL and cost at each cell, shape ``(tokens, cells)``.
        base_pnl, base_cost: each token's PnL and cost under the current threshold(s).

    A resample draws as many tokens as there are, with replacement; its change at a cell is
    ``sum(count_t * (pnl_tc - base_pnl_t))`` and its ROI change ``sum(count·pnl)/sum(count·
    cost) - sum(count·base_pnl)/sum(count·base_cost)`` (undefined when a cost sums to 0;
    more than 2.5 % undefined draws leave the interval NaN).
    """
    k = pnl.shape[0]
    rng = np.random.default_rng(seed)
    d_pnl, d_roi = [], []
    change = pnl - base_pnl[:, None]
    for counts in _resampled(rng, k, resamples):
        d_pnl.append(counts @ change)
        kept_cost, now_cost = counts @ cost, counts @ base_cost
        with np.errstate(divide="ignore", invalid="ignore"):
            roi = (counts @ pnl) / np.where(kept_cost != 0, kept_cost, np.nan)
            now = (counts @ base_pnl) / np.where(now_cost != 0, now_cost, np.nan)
        d_roi.append(roi - now[:, None])
    pnl_lo, pnl_hi = _quantiles(np.concatenate(d_pnl))
    roi_lo, roi_hi = _quantiles(np.concatenate(d_roi))
    return dict(zip(_BOOTSTRAP_COLUMNS, (pnl_lo, pnl_hi, roi_lo, roi_hi), strict=True))


def append(
    out: pd.DataFrame,
    rows: _sample.Sample,
    grids: Sequence[np.ndarray],
    ops: Sequence[str],
    currents: Sequence[_sample.Current],
    *,
    bootstrap: bool = True,
) -> pd.DataFrame:
    """``out`` (a sweep's rows, cells in ``meshgrid(*grids, indexing="ij")`` order) with the
    guard columns appended, and ``attrs["what_if"]["guards"]`` saying how."""
    # A replayed two-criterion grid keeps some rows when either criterion passes
    # (``rows.either``): the per-token sums below see one criterion's filter only, so tokens
    # and the bootstrap are not computed there (said in attrs), never computed wrong.
    found = token_codes(rows.parts) if rows.either is None else None
    cells = int(np.prod([len(g) for g in grids]))
    tokens: np.ndarray | None = None
    info: dict[str, Any] = {
        "min_trades": MIN_TRADES,
        "min_tokens": MIN_TOKENS,
        "confidence": CONFIDENCE,
        "bootstrap_unit": None if rows.either is not None else "token" if found else "trade",
    }
    n = len(rows.outcomes.pnl)
    codes, k = found if found is not None else (np.arange(n, dtype=np.intp), n)
    table_size = k * cells
    wanted = bootstrap
    run = (
        rows.either is None
        and wanted
        and 0 < cells <= BOOTSTRAP_MAX_CELLS
        and table_size <= BOOTSTRAP_MAX_TABLE
        and k > 0
    )
    sums: list[np.ndarray] = []
    if run or (found is not None and len(grids) > 1 and table_size <= BOOTSTRAP_MAX_TABLE):
        sums = group_sums(
            rows.values, grids, ops, codes, k, [None, rows.outcomes.pnl, rows.outcomes.cost]
        )
    if found is not None:
        if len(grids) == 1:
            tokens = _tokens_kept_1d(rows.values[0], grids[0], ops[0], codes, k)
        elif sums:
            tokens = (sums[0] > 0).reshape(k, -1).sum(axis=0)
    lo, hi = wilson(out["wins"].to_numpy(), out["trades"].to_numpy())
    guards: dict[str, Any] = {
        "tokens": pd.array(
            tokens if tokens is not None else np.full(len(out), None), dtype="Int64"
        ),
        "win_rate_lo": lo,
        "win_rate_hi": hi,
    }
    if run:
        kept = _sample.baseline(rows, ops, currents)
        pnl, cost = rows.outcomes.pnl, rows.outcomes.cost
        base_pnl = np.bincount(codes, weights=np.where(kept, pnl, 0.0), minlength=k)
        base_cost = np.bincount(codes, weights=np.where(kept, cost, 0.0), minlength=k)
        guards.update(
            bootstrap_deltas(sums[1].reshape(k, -1), sums[2].reshape(k, -1), base_pnl, base_cost)
        )
        info.update(bootstrap_resamples=RESAMPLES, bootstrap_seed=SEED)
    else:
        guards.update(dict.fromkeys(_BOOTSTRAP_COLUMNS, np.full(len(out), np.nan)))
        info.update(
            bootstrap_resamples=0,
            bootstrap_skipped=(
                f"{cells} threshold cells and {table_size} (unit, cell) entries: the bootstrap "
                f"runs for at most {BOOTSTRAP_MAX_CELLS} cells and {BOOTSTRAP_MAX_TABLE} entries"
                if wanted and rows.either is None
                else "not computed for a replayed two-criterion grid (rows kept when either "
                "criterion passes); tokens neither"
                if rows.either is not None
                else "skipped by the caller (bootstrap=False)"
            ),
        )
    flags = small_sample(out["trades"].to_numpy(), tokens)
    guards["small_sample"] = pd.array(flags, dtype="boolean")
    result = out.assign(**guards)
    result.attrs["what_if"] = {**out.attrs.get("what_if", {}), "guards": info}
    return result
