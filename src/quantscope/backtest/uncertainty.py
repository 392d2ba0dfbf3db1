"""One module for every interval and test of threshold research, resampling whole tokens.

Trades of one token share its launch, its traits and its market: they are not independent
evidence, so every interval and test here resamples or flips whole *clusters* (tokens by
default), never single trades (docs/metrics.md, "Calibrated uncertainty").

* **Intervals: a Poisson bootstrap over clusters** (``cluster_intervals``). Each resample gives
  every cluster a weight drawn from Poisson(1) (seeded): a future sample of the same expected
  size, whose number of tokens varies as a new sample's would (a sum such as a PnL change
  varies with it; a multinomial draw of exactly ``k`` tokens would hide that). The statistics
  of a resample are ratios and differences of weighted per-cluster sums, so 1,000 resamples
  are one matrix product of a ``(resamples, clusters)`` weight matrix by a ``(clusters,
  cells)`` table. Intervals are percentile intervals whose distances from the estimate are
  widened by ``sqrt(k / (k - 1))`` (the small-cluster correction of a bootstrap variance)
  and by ``t_df / z``, the Student quantile over the normal one, with ``df`` the clusters the
  figure rests on: the *effective* tokens with trades at the threshold (Kish's ``(sum n_c)^2
  / sum n_c^2``, ``effective_clusters``), less one, for a win rate, whose two distances are
  also at least the normal ``z * sd`` of the resamples (a percentile of a skewed rate over
  few tokens falls short on its short side); the
  tokens whose kept trades *move* for a change (a change that rests on 2 moving tokens is
  known to 2 tokens, however many trades they hold). Calibrated on seeds 100-119 against the
  generator's truth, validated on other seeds (docs/metrics.md, "Calibration").
* **Rows where nothing moved** (the threshold keeps the same trades as the current one): every
  resample repeats the same zero, so the bootstrap says nothing about the future. They get the
  rule-of-three interval instead: with no moving token among ``k``, the share of tokens a
  future sample would move is below ``3 / k`` at 95 %; the changes such a share can make are
  bounded by what the average token contributes (``_no_move_bounds``).
* **Tests: a sign-flip (wild cluster) test of score contributions** (``signflip_pvalues``).
  Each cluster's contribution to a centred covariance of "kept" and "won" is flipped in sign
  at random, the same flips for every hypothesis of a family, and the standardised sums give
  raw and Westfall-Young max-T adjusted p-values. With whole clusters flipped, a token trait
  that happens to line up with a few lucky tokens is judged by the number of tokens, not of
  trades.

The weights are drawn in chunks (bounded memory); the same rows and seed give the same
intervals. ``what_if_intervals`` applies them to a what-if sweep of one criterion.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from quantscope.backtest import _sample, _shadow
from quantscope.backtest._inputs import (
    CONFIDENCE,
    _grid,
    _operators,
    resolve_playbook,
    token_codes,
)
from quantscope.backtest._kernel import group_sums
from quantscope.backtest.features import backtest_attrs, bare, decided_by_slice

#: Resamples (or sign flips) of every interval and test, and their default seed.
RESAMPLES = 1000
SEED = 20261
#: Weights drawn at a time: bounds the (resamples x clusters) matrix in memory.
_CHUNK_ENTRIES = 4_000_000
#: The statistics an interval is computed for, in column order.
STATISTICS = ("win_rate", "d_win_rate", "d_total_pnl_usd", "d_roi")
#: ``interval`` of a row where the threshold keeps the same trades as the current one.
NO_MOVE = "nothing moved: rule of three"
#: The two-sided 95 % normal quantile.
_Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class ClusterSums:
    """Per-cluster sums of the rows a threshold keeps (shape ``(k, cells)``) and of the rows
    the current threshold keeps (shape ``(k,)``).
    """

    trades: np.ndarray
    wins: np.ndarray
    pnl: np.ndarray
    cost: np.ndarray
    base_trades: np.ndarray
    base_wins: np.ndarray
    base_pnl: np.ndarray
    base_cost: np.ndarray

    @property
    def clusters(self) -> int:
        return int(self.trades.shape[0])


def poisson_weights(k: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """``resamples`` rows of ``k`` Poisson(1) cluster weights, in chunks (float64).

    The draws depend on ``(k, resamples, seed)`` alone, and a study asks for the same ones
    again and again (a ranking: every criterion and class over one frame's tokens), so the
    last few draws are kept as small integers (``_WEIGHTS``) and only widened per chunk:
    drawing them was 30 % of a ranking's time. The values are the generator's, unchanged.
    """
    drawn = _drawn(k, resamples, seed)
    per_chunk = _per_chunk(k)
    for start in range(0, resamples, per_chunk):
        yield drawn[start : start + per_chunk].astype(np.float64)


def _per_chunk(k: int) -> int:
    return max(1, _CHUNK_ENTRIES // max(k, 1))


_WEIGHTS: dict[tuple[int, int, int], np.ndarray] = {}
_WEIGHTS_KEPT = 4  # draws kept; at most _WEIGHTS_BYTES each
_WEIGHTS_BYTES = 64_000_000


def _drawn(k: int, resamples: int, seed: int) -> np.ndarray:
    """The ``(resamples, k)`` Poisson(1) draws of ``seed``, in the chunks ``poisson_weights``
    has always drawn (the same stream), as uint8 (a Poisson(1) draw above 255 has probability
    below 1e-500); kept when small enough.
    """
    key = (k, resamples, seed)
    drawn = _WEIGHTS.get(key)
    if drawn is not None:
        return drawn
    rng, per_chunk = np.random.default_rng(seed), _per_chunk(k)
    drawn = np.empty((resamples, k), dtype=np.uint8)
    for start in range(0, resamples, per_chunk):
        size = min(per_chunk, resamples - start)
        drawn[start : start + size] = rng.poisson(1.0, size=(size, k))
    drawn.setflags(write=False)
    if drawn.nbytes <= _WEIGHTS_BYTES:
        if len(_WEIGHTS) >= _WEIGHTS_KEPT:
            _WEIGHTS.pop(next(iter(_WEIGHTS)))
        _WEIGHTS[key] = drawn
    return drawn


def t_quantile(p: float, df: np.ndarray | float) -> np.ndarray:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``p > 0.5``).

    Exact for 1 and 2 degrees of freedom, the Cornish-Fisher expansion in ``1/df`` (four
    terms) from 3 on: within 0.7 % at 3, 0.1 % at 5 for ``p = 0.975``. NaN for ``df < 1``.
    """
    nu = np.asarray(df, dtype=np.float64)
    z = NormalDist().inv_cdf(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        series = (
            z
            + (z**3 + z) / (4 * nu)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * nu**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * nu**3)
        )
    one = math.tan(math.pi * (p - 0.5))
    two = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    out = np.where(nu >= 3, series, np.where(nu >= 2, two, np.where(nu >= 1, one, np.nan)))
    return out


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def _point(t: ClusterSums) -> dict[str, np.ndarray]:
    ones = np.ones((1, t.clusters))
    return {k: v[0] for k, v in _statistics(t, ones).items()}


def _statistics(t: ClusterSums, w: np.ndarray) -> dict[str, np.ndarray]:
    """The statistics of each weight row ``w`` (shape ``(r, k)``): arrays ``(r, cells)``."""
    trades, wins, pnl, cost = w @ t.trades, w @ t.wins, w @ t.pnl, w @ t.cost
    b_trades, b_wins = (w @ t.base_trades)[:, None], (w @ t.base_wins)[:, None]
    b_pnl, b_cost = (w @ t.base_pnl)[:, None], (w @ t.base_cost)[:, None]
    rate = _ratio(wins, trades)
    return {
        "win_rate": rate,
        "d_win_rate": rate - _ratio(b_wins, b_trades),
        "d_total_pnl_usd": pnl - b_pnl,
        "d_roi": _ratio(pnl, cost) - _ratio(b_pnl, b_cost),
    }


def effective_clusters(counts: np.ndarray) -> np.ndarray:
    """Kish's effective number of clusters of each column of per-cluster trade counts
    ``(k, cells)``: ``(sum_c n_c)^2 / sum_c n_c^2``. Equal to the clusters with trades when
    they hold as many trades each, smaller when a few clusters hold most of them (a rate
    resting on 3 tokens of 40 trades and 30 of 1 is known to about 8 tokens, not 33); 0 for
    a cell without trades.
    """
    n = np.asarray(counts, dtype=np.float64)
    total, squares = n.sum(axis=0), (n * n).sum(axis=0)
    return np.where(squares > 0, total * total / np.where(squares > 0, squares, 1.0), 0.0)


def wilson(wins: np.ndarray, trades: np.ndarray, z: float = _Z95) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of ``wins / trades`` (NaN where there is no trade; counts may
    be fractional, as effective clusters are). For research rows only where the bootstrap
    cannot bound a rate (``_few_clusters_rate``), over tokens, never trades: trades cluster.
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


def _few_clusters_rate(
    est: np.ndarray, lo: np.ndarray, hi: np.ndarray, clusters: np.ndarray, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """A win rate's interval where the bootstrap cannot give one: undefined (so few clusters
    that too many resamples hold no trade: 3 tokens leave none in e^-3 = 5 % of them) or a
    single point (every kept trade won, or lost: every resample repeats it). There the Wilson
    score interval over the *effective clusters* (Kish), not the trades, says how uncertain a
    rate known to so few tokens is: 3 tokens, all wins, [0.44, 1].
    """
    need = (np.isnan(lo) | np.isnan(hi) | (hi - lo <= 1e-12)) & (clusters > 0) & ~np.isnan(est)
    if not need.any():
        return lo, hi
    w_lo, w_hi = wilson(np.where(need, est * clusters, 0.0), np.where(need, clusters, 0.0), z)
    return np.where(need, w_lo, lo), np.where(need, w_hi, hi)


def _moved(t: ClusterSums) -> np.ndarray:
    """Clusters whose kept trades differ from the current threshold's, per cell (nested sets
    of one criterion: a count differs exactly when the kept set does).
    """
    moved: npt.NDArray[np.intp] = (t.trades != t.base_trades[:, None]).sum(axis=0)
    return moved


def _no_move_bounds(t: ClusterSums) -> dict[str, float]:
    """Half-widths for a cell where no cluster moved: at most ``3 / k`` of the clusters would
    move in a future sample (rule of three, one-sided 95 %), each changing the statistic by
    what an average cluster can change it.
    """
    k = max(int(np.count_nonzero(t.base_trades)), 1)
    share = min(3.0 / k, 1.0)
    n, w = float(t.base_trades.sum()), float(t.base_wins.sum())
    p = w / n if n else 0.5
    # Dropping (or admitting) a share q of the trades, whatever their outcomes, moves the
    # win rate by at most q * max(p, 1 - p) / (1 - q).
    wr = share * max(p, 1 - p) / max(1 - share, 1e-9)
    per_cluster = np.abs(t.base_pnl[t.base_trades > 0])
    pnl = 3.0 * float(per_cluster.mean()) if len(per_cluster) else 0.0
    cost = float(t.base_cost.sum())
    roi = pnl / cost if cost else np.nan
    return {"win_rate": np.nan, "d_win_rate": wr, "d_total_pnl_usd": pnl, "d_roi": roi}


def cluster_intervals(
    table: ClusterSums,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
    nested: bool = True,
    weights: Sequence[np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Point estimates and intervals of ``STATISTICS`` at every cell of ``table``.

    ``weights``: the chunks ``poisson_weights(table.clusters, resamples, seed)`` yields, drawn
    once by a caller that computes many tables over the same clusters (the same numbers as
    drawing them here; a screen of 54 rows over 14,000 tokens drew 108 x 14 million).

    ``nested``: the kept rows and the baseline's are nested sets (one criterion's thresholds),
    so a cell whose per-cluster counts equal the baseline's moved nothing and gets the
    rule-of-three interval. False (e.g. kept against *dropped* trades): bootstrap everywhere.

    Returns ``{name: estimate, name_lo: ..., name_hi: ...}`` for each statistic, plus
    ``moved_clusters`` (clusters whose kept trades change at the cell) and ``no_move`` (cells
    given the rule-of-three interval). An interval is NaN where more than the tail share of
    the resamples leave the statistic undefined (a ratio over no trade).
    """
    k = table.clusters
    point = _point(table)
    tail = (1 - confidence) / 2
    draws: dict[str, list[np.ndarray]] = {name: [] for name in STATISTICS}
    for w in weights if weights is not None else poisson_weights(k, resamples, seed):
        for name, values in _statistics(table, w).items():
            draws[name].append(values)
    small = np.sqrt(k / (k - 1)) if k > 1 else 1.0
    z = NormalDist().inv_cdf(1 - tail)
    out: dict[str, np.ndarray] = {}
    moved = (
        _moved(table)
        if nested
        else np.count_nonzero(table.trades + table.base_trades[:, None], axis=0)
    )
    no_move = (moved == 0) & nested
    bounds = _no_move_bounds(table)
    t_rate = t_quantile(1 - tail, np.maximum(effective_clusters(table.trades) - 1, 1))
    t_change = np.where(moved > 0, t_quantile(1 - tail, np.maximum(moved, 1)), z)
    for name in STATISTICS:
        inflate = small * (t_rate if name == "win_rate" else t_change) / z
        stacked = np.concatenate(draws[name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column gives NaN
            lo, hi = nan_quantiles(stacked, (tail, 1 - tail))
        undefined = np.isnan(stacked).mean(axis=0) > tail
        est = point[name]
        # A skewed resample distribution can put a percentile past the estimate: the
        # interval always holds the estimate itself.
        down, up = np.maximum(est - lo, 0.0), np.maximum(hi - est, 0.0)
        if name == "win_rate":
            # A rate over few clusters has a skewed resample distribution whose percentile
            # falls short on its short side: each distance is at least the normal one.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                normal = z * np.nanstd(stacked, axis=0)
            down, up = np.fmax(down, normal), np.fmax(up, normal)
        lo = np.where(undefined, np.nan, est - inflate * down)
        hi = np.where(undefined, np.nan, est + inflate * up)
        if name != "win_rate":
            lo = np.where(no_move, est - bounds[name], lo)
            hi = np.where(no_move, est + bounds[name], hi)
        else:
            lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
            lo, hi = _few_clusters_rate(est, lo, hi, effective_clusters(table.trades), z)
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = est, lo, hi
    out["moved_clusters"] = moved
    out["no_move"] = no_move
    return out


def rate_interval(
    won: np.ndarray,
    clusters: np.ndarray,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float, float]:
    """A win rate over a whole sample of trades, ``(estimate, lo, hi)``: the same token-
    cluster interval as a what-if row's (``cluster_intervals``), for a sample no threshold
    picks (a report's headline). ``won`` is one bool per trade, ``clusters`` its token (any
    hashable codes; a missing token counts as a cluster of its own). NaN for no trade.
    """
    won = np.asarray(won, dtype=bool)
    if not len(won):
        return np.nan, np.nan, np.nan
    codes = pd.Series(clusters, dtype=object).reset_index(drop=True)
    codes = codes.where(codes.notna(), pd.Series([f"#{i}" for i in range(len(codes))]))
    index, _ = pd.factorize(codes, sort=False)
    k = int(index.max()) + 1
    trades = np.bincount(index, minlength=k).astype(np.float64)
    wins = np.bincount(index, weights=won.astype(np.float64), minlength=k)
    zero = np.zeros(k)
    table = ClusterSums(
        trades=trades[:, None],
        wins=wins[:, None],
        pnl=zero[:, None],
        cost=trades[:, None],
        base_trades=trades,
        base_wins=wins,
        base_pnl=zero,
        base_cost=trades,
    )
    got = cluster_intervals(table, resamples=resamples, seed=seed, confidence=confidence)
    return float(got["win_rate"][0]), float(got["win_rate_lo"][0]), float(got["win_rate_hi"][0])


def nan_quantiles(draws: np.ndarray, qs: tuple[float, ...]) -> list[np.ndarray]:
    """``np.nanquantile(draws, qs, axis=0)`` (linear), one sort for every column at once
    (numpy's own loops over the columns, sorting each separately).
    """
    ordered = np.sort(draws, axis=0)  # NaN last
    valid = np.count_nonzero(~np.isnan(draws), axis=0)
    cols = np.arange(draws.shape[1])
    out = []
    for q in qs:
        pos = q * np.maximum(valid - 1, 0)
        low = np.floor(pos).astype(np.intp)
        high = np.minimum(low + 1, np.maximum(valid - 1, 0))
        a, b = ordered[low, cols], ordered[high, cols]
        value = a + (pos - low) * (b - a)
        out.append(np.where(valid > 0, np.where(high == low, a, value), np.nan))
    return out


def signflip_pvalues(
    scores: np.ndarray,
    *,
    flips: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One-sided sign-flip p-values of the hypotheses in the columns of ``scores``.

    Args:
        scores: each cluster's score contribution (rows) to each hypothesis (columns),
            centred under the null (e.g. ``sum_i (kept_i - kept_share) (won_i - win_rate)``
            over the cluster's trades). A column of zeros is a hypothesis with no evidence.
        flips: random sign flips of whole clusters (Rademacher), shared by every column.

    Returns:
        ``(statistic, p_raw, p_adjusted)``: the standardised sum ``sum_c s_c / sqrt(sum_c
        s_c^2)`` of each column, its own p-value, and the Westfall-Young single-step max-T
        p-value over all columns (family-wise); ``(1 + #reaching) / (flips + 1)``.
    """
    s = np.asarray(scores, dtype=np.float64)
    k, h = s.shape
    norm = np.sqrt((s * s).sum(axis=0))
    safe = np.where(norm > 0, norm, 1.0)
    observed = np.where(norm > 0, s.sum(axis=0) / safe, -np.inf)
    rng = np.random.default_rng(seed)
    reach_raw = np.zeros(h, dtype=np.int64)
    reach_max = np.zeros(h, dtype=np.int64)
    per_chunk = max(1, _CHUNK_ENTRIES // max(k, 1))
    left = flips
    tol = 1e-9
    while left > 0:
        size = min(per_chunk, left)
        g = rng.integers(0, 2, size=(size, k)).astype(np.float64) * 2.0 - 1.0
        stats = np.where(norm > 0, (g @ s) / safe, -np.inf)
        reach_raw += (stats >= observed - tol).sum(axis=0)
        best = stats.max(axis=1) if h else np.zeros(size)
        reach_max += (best[:, None] >= observed[None, :] - tol).sum(axis=0)
        left -= size
    p_raw = (1 + reach_raw) / (flips + 1)
    p_adj = (1 + reach_max) / (flips + 1)
    empty = norm == 0
    p_raw[empty], p_adj[empty] = 1.0, 1.0
    return np.where(empty, np.nan, observed), p_raw, p_adj


def _tables(
    rows: _sample.Sample,
    grid: np.ndarray,
    op: str,
    current: _sample.Current,
    codes: np.ndarray,
    k: int,
) -> ClusterSums:
    o = rows.outcomes
    counts, wins, pnl, cost = group_sums(
        rows.values, [grid], [op], codes, k, [None, o.win.astype(np.float64), o.pnl, o.cost]
    )
    kept = _sample.baseline(rows, [op], [current])

    def base(x: np.ndarray | None) -> np.ndarray:
        weights = kept.astype(np.float64) if x is None else np.where(kept, x, 0.0)
        return np.bincount(codes, weights=weights, minlength=k)

    return ClusterSums(
        trades=counts,
        wins=wins,
        pnl=pnl,
        cost=cost,
        base_trades=base(None),
        base_wins=base(o.win.astype(np.float64)),
        base_pnl=base(o.pnl),
        base_cost=base(o.cost),
    )


@_shadow.checked()  # never-executed trades warn once (issue 21)
def what_if_intervals(
    features: pd.DataFrame,
    criterion: str,
    thresholds: Any = None,
    *,
    rule: str = "replay",
    operator: str | None = None,
    current: float | None = None,
    playbook: Any = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """The decision numbers of a what-if sweep with calibrated intervals, tokens resampled.

    The same rows, thresholds, rule and current threshold as ``what_if`` (``rule="replay"``:
    the change's *effect*, the whole pass rule replayed; ``"filter"``: the criterion's
    *signal*, kept trades only), so the estimates equal ``what_if``'s ``win_rate``,
    ``d_win_rate``, ``d_total_pnl_usd`` and ``d_roi``; each gets a ``_lo``/``_hi`` interval
    from a Poisson bootstrap over tokens (module docstring), ``d_win_rate`` included.

    Returns:
        One row per threshold: ``threshold``, ``trades``, ``moved_tokens`` (tokens whose kept
        trades change against the current threshold), the four statistics with their
        intervals, and ``interval`` ("bootstrap", or "nothing moved: rule of three" where the
        threshold keeps the same trades as now). ``attrs["intervals"]`` records the method,
        the unit, the resamples, the seed and the confidence.
    """
    playbook = resolve_playbook(features, playbook, rule)
    meta = backtest_attrs(features)
    (op,) = _operators(meta.get("operators") or {}, [criterion], [operator], playbook)
    frame = bare(features)
    rows = _sample.sample(frame, [criterion], [op], None, playbook, rule)
    grid = _grid(criterion, frame[criterion][_sample.usable(frame, [criterion])], thresholds)
    decided = decided_by_slice(meta.get("decided_thresholds"))
    cur = _sample.current(rows, decided, criterion, current, playbook)
    found = token_codes(rows.parts)
    n = len(rows.outcomes.pnl)
    codes, k = found if found is not None else (np.arange(n, dtype=np.intp), n)
    table = _tables(rows, grid, op, cur, codes, k)
    got = cluster_intervals(table, resamples=resamples, seed=seed, confidence=confidence)
    out = pd.DataFrame(
        {
            "threshold": grid,
            "trades": table.trades.sum(axis=0).astype(np.int64),
            "moved_tokens": got["moved_clusters"].astype(np.int64),
            **{
                f"{name}{suffix}": got[f"{name}{suffix}"]
                for name in STATISTICS
                for suffix in ("", "_lo", "_hi")
            },
            "interval": np.where(got["no_move"], NO_MOVE, "bootstrap"),
        }
    )
    out.attrs["intervals"] = {
        "criterion": criterion,
        "operator": op,
        "rule": rule,
        "method": "Poisson bootstrap over clusters, percentile, widened by sqrt(k/(k-1))",
        "unit": "token" if found is not None else "trade",
        "clusters": k,
        "resamples": resamples,
        "seed": seed,
        "confidence": confidence,
    }
    return out


def score_contributions(kept: np.ndarray, won: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """Each cluster's contribution ``sum_i (kept_i - mean kept)(won_i - mean won)`` to the
    covariance of kept and won over the rows (``kept``: ``(n,)`` or ``(n, h)`` bool).
    """
    kept2 = kept.reshape(len(won), -1).astype(np.float64)
    won_c = won.astype(np.float64) - won.mean() if len(won) else won.astype(np.float64)
    centred = (kept2 - kept2.mean(axis=0)) * won_c[:, None]
    out = np.zeros((k, kept2.shape[1]))
    np.add.at(out, codes, centred)
    return out


def signflip_band(
    scores: np.ndarray,
    scale: np.ndarray,
    *,
    flips: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simultaneous intervals of the estimates ``scores.sum(axis=0) / scale``, family-wise.

    The same sign flips of whole clusters as ``signflip_pvalues`` (same ``seed``): ``c_lo`` is
    the ``confidence`` quantile of the largest standardised statistic over the columns,
    ``c_hi`` that of the largest negated one, and each column's interval is ``estimate - c_lo
    * se`` to ``estimate + c_hi * se`` with ``se = sqrt(sum_c s_c^2) / scale``. Every column
    of the family is covered at once, so a lower bound above 0 says what a family-wise
    p-value below ``1 - confidence`` says (up to ties of the flips).

    Returns ``(estimate, lo, hi)``; NaN where a column has no evidence (all zero) or no
    scale.
    """
    s = np.asarray(scores, dtype=np.float64)
    k, h = s.shape
    scale = np.asarray(scale, dtype=np.float64)
    norm = np.sqrt((s * s).sum(axis=0))
    safe = np.where(norm > 0, norm, 1.0)
    rng = np.random.default_rng(seed)
    ups, downs = [], []
    per_chunk = max(1, _CHUNK_ENTRIES // max(k, 1))
    left = flips
    while left > 0 and h:
        size = min(per_chunk, left)
        g = rng.integers(0, 2, size=(size, k)).astype(np.float64) * 2.0 - 1.0
        stats = np.where(norm > 0, (g @ s) / safe, 0.0)
        ups.append(stats.max(axis=1))
        downs.append((-stats).max(axis=1))
        left -= size
    c_lo = float(np.quantile(np.concatenate(ups), confidence)) if ups else np.nan
    c_hi = float(np.quantile(np.concatenate(downs), confidence)) if downs else np.nan
    defined = (norm > 0) & (scale > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(scale > 0, s.sum(axis=0) / np.where(scale > 0, scale, 1.0), np.nan)
        se = np.where(defined, norm / np.where(scale > 0, scale, 1.0), np.nan)
    return (
        est,
        np.where(defined, est - c_lo * se, np.nan),
        np.where(defined, est + c_hi * se, np.nan),
    )
