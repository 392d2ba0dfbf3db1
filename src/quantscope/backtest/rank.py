"""Which criteria matter: a ranking of criteria by their what-if effect, adjusted for the search.

``rank_criteria`` sweeps every criterion over many thresholds (``sweep.what_if``) and reports
the best. Trying 18 criteria at ~100 thresholds each is ~1,800 tries: the best of them looks
good on noise alone. So the ranking is honest about the search:

* **One market-cap class at a time.** Thresholds differ up to 25x between classes and so do
  base win rates; a sweep over mixed classes ranks the mixture. Each class is swept, tested
  and ranked on its own rows (``market_cap_class`` and ``rank`` columns).
* **A permutation test over the whole search.** The statistic of a threshold is the standard
  score of the wins it keeps against drawing as many trades at random from the class
  (hypergeometric: ``(W - n·p) / sqrt(n·p·(1-p)·(N-n)/(N-1))``), a criterion's the largest
  over its thresholds. The outcomes are reshuffled within each class (``permutations`` times,
  seeded) and the largest statistic over *every* criterion, threshold and class of the search
  is taken each time; a criterion's ``p_value`` is the share of reshuffles whose largest
  statistic reaches its own (Westfall-Young max-T: family-wise adjusted). ``p_raw`` is the
  same against the criterion's own maxima only (unadjusted), ``combos_searched`` the size of
  the family.
* **The playbook.** ``rule`` and ``playbook`` go to ``what_if``; the rows carry the current
  threshold, the change against it, ``admits_unseen`` for a loosening threshold and the guard
  columns (``tokens``, Wilson interval, bootstrap intervals, ``small_sample``).

The permutations reuse one sort per criterion (``_kernel.permuted_wins``): 18 criteria with
200 permutations over 100k trades take seconds (benchmarks/bench_rank.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from quantscope.backtest import _sample, _shadow
from quantscope.backtest._kernel import permuted_wins
from quantscope.backtest._rules import MARKET_CAP_CLASSES, PlaybookArg
from quantscope.backtest.features import backtest_attrs, bare, criteria_of
from quantscope.backtest.sweep import resolve_playbook, what_if

#: ``sort_by`` choices: the adjusted p-value (ascending, ties by mean gain), or a gain.
SORTS = ("p_value", "mean_gain", "best_gain")
#: Columns of the best threshold's ``what_if`` row carried into the ranking.
_ROW_COLUMNS = (
    "trades",
    "tokens",
    "kept_share",
    "win_rate",
    "win_rate_lo",
    "win_rate_hi",
    "total_pnl_usd",
    "d_win_rate",
    "d_total_pnl_usd",
    "d_total_pnl_usd_lo",
    "d_total_pnl_usd_hi",
    "d_roi_lo",
    "d_roi_hi",
    "admits_unseen",
    "small_sample",
)


@dataclass
class _Tested:
    """One criterion of one class: its ranking row and the statistics of its thresholds."""

    row: dict[str, Any]
    observed: float  # the largest standard score over its thresholds (NaN: none to test)
    maxima: np.ndarray  # per permutation, the largest standard score over its thresholds


def _scores(
    wins: np.ndarray, kept: np.ndarray, total_wins: np.ndarray | float, n: int
) -> np.ndarray:
    """Hypergeometric standard scores of ``wins`` kept in ``kept`` of ``n`` rows holding
    ``total_wins`` wins (broadcast); 0 where there is no spread (no win or no loss)."""
    p = total_wins / n
    var = kept * p * (1 - p) * (n - kept) / max(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (wins - kept * p) / np.sqrt(var)
    return np.where(var > 0, z, 0.0)


def _test_one(
    frame: pd.DataFrame,
    criterion: str,
    shuffled: np.ndarray,
    options: dict[str, Any],
    points: int,
    min_kept_share: float,
) -> _Tested | None:
    table = what_if(frame, criterion, points, bootstrap=False, **options)
    info = table.attrs["what_if"]
    # The grid's loosest threshold (the smallest or largest value) keeps every trade.
    everyone = table[table["kept_share"] >= 1.0]
    eligible = table[table["kept_share"] >= min_kept_share].drop_duplicates("trades")
    if everyone.empty or eligible.empty:
        return None
    base_rate = float(everyone["win_rate"].iloc[0])
    gains = eligible["win_rate"] - base_rate
    # The best threshold's row again, bootstrapped this time (one threshold: cheap).
    best = what_if(frame, criterion, [eligible.loc[gains.idxmax(), "threshold"]], **options)
    best = best.iloc[0]
    current = info["current"][criterion]
    row: dict[str, Any] = {
        "criterion": criterion,
        "operator": info["operators"][0],
        "mean_gain": float(gains.mean()),
        "best_gain": float(gains.max()),
        "current": float(current[0]) if current is not None and len(current) == 1 else np.nan,
        "threshold": float(best["threshold"]),
        **{name: best[name] for name in _ROW_COLUMNS},
        "thresholds_searched": 0,
        "base_win_rate": base_rate,
        "base_total_pnl_usd": float(everyone["total_pnl_usd"].iloc[0]),
    }
    ops = list(info["operators"])
    playbook = resolve_playbook(frame, options["playbook"], info["rule"])
    rows = _sample.sample(bare(frame), [criterion], ops, None, playbook, info["rule"])
    n = len(rows.outcomes.win)
    tested = eligible[eligible["trades"] < n]
    row["thresholds_searched"] = len(tested)
    if tested.empty or not len(shuffled):
        return _Tested(row, np.nan, np.full(len(shuffled), -np.inf))
    grid = tested["threshold"].to_numpy(dtype=np.float64)
    kept = tested["trades"].to_numpy(dtype=np.float64)
    observed = _scores(
        tested["wins"].to_numpy(dtype=np.float64), kept, float(rows.outcomes.win.sum()), n
    )
    # The sample's rows are rows of ``frame`` (its index): their reshuffled outcomes.
    outcomes = shuffled[:, rows.parts[0].index.to_numpy()]
    wins = permuted_wins(rows.values[0], grid, info["operators"][0], outcomes)
    totals = outcomes.sum(axis=1, dtype=np.int64).astype(np.float64)[:, None]
    maxima = _scores(wins.astype(np.float64), kept[None, :], totals, n).max(axis=1)
    return _Tested(row, float(observed.max()), maxima)


@_shadow.checked()  # never-executed trades warn once (issue 21)
def rank_criteria(
    features: pd.DataFrame,
    criteria: Sequence[str] | None = None,
    *,
    min_kept_share: float = 0.3,
    points: int = 101,
    sort_by: str = "p_value",
    by: str | None = None,
    rule: str = "replay",
    playbook: PlaybookArg | None = None,
    permutations: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Criteria ranked within each market-cap class, with a p-value adjusted for the search.

    Each criterion is swept over ``points`` quantiles of its values in the class
    (``what_if``), keeping the thresholds that keep at least ``min_kept_share`` of the trades
    (one per distinct trade set). Against the win rate of every trade of the class:

    * ``mean_gain``: the mean win-rate gain over those thresholds (the area under the
      what-if curve, per step);
    * ``best_gain``: the largest gain at any one of them (what an optimizer would pick);
    * ``p_value``: how often reshuffled outcomes give a threshold, anywhere in the search, as
      good as this criterion's best (family-wise adjusted permutation test; module docstring,
      docs/metrics.md). ``p_raw``: the same against this criterion's thresholds only.

    Args:
        features: trades with criterion values (``trade_features``).
        criteria: the criteria to rank (default: every criterion of the frame).
        min_kept_share: thresholds keeping fewer of the class's trades are not considered.
        points: quantiles of each criterion's values to try.
        sort_by: ``"p_value"`` (default; ties by ``mean_gain``), ``"mean_gain"`` or
            ``"best_gain"``, within each class.
        by: the old spelling of ``sort_by`` (deprecated: a DeprecationWarning).
        rule: ``"replay"`` (default: what applying each threshold does, as ``what_if``) or
            ``"filter"`` (separating power: an upper bound).
        playbook: passed to ``what_if`` (default: the one the features keep).
        permutations: reshuffles of the outcomes (0: no test, p-values NaN).
        seed: the reshuffles' seed (the same call gives the same p-values).

    Returns:
        One row per class and criterion, classes smallest first, best first within a class:
        ``market_cap_class``, ``rank``, ``criterion``, ``operator``, ``p_value``, ``p_raw``,
        ``mean_gain``, ``best_gain``, ``current`` (the current threshold; NaN when unknown or
        several), the best threshold's ``threshold`` and its what-if row (``trades``,
        ``tokens``, ``kept_share``, ``win_rate`` and its interval, ``total_pnl_usd``, the
        changes against the current threshold and their intervals, ``admits_unseen``,
        ``small_sample``), ``thresholds_searched``, ``combos_searched`` (the whole search),
        ``base_win_rate`` and ``base_total_pnl_usd`` of every trade of the class.
        ``attrs["rank_criteria"]`` records the search and the test.
    """
    if by is not None:
        warnings.warn(
            "rank_criteria(by=...) is deprecated and will be removed in the next release: "
            "use sort_by=...",
            DeprecationWarning,
            stacklevel=2,
        )
        sort_by = by
    if sort_by not in SORTS:
        raise ValueError(f"sort_by must be 'p_value', 'mean_gain' or 'best_gain', got {sort_by!r}")
    names = list(criteria) if criteria is not None else criteria_of(features)
    options: dict[str, Any] = {"playbook": playbook, "rule": rule}
    meta = backtest_attrs(features)
    frame = bare(features)
    classes = frame["market_cap_class"].astype("string")
    order = [c for c, _ in MARKET_CAP_CLASSES] + sorted(
        set(classes.dropna()) - {c for c, _ in MARKET_CAP_CLASSES}
    )
    rng = np.random.default_rng(seed)
    tested: list[tuple[str, _Tested]] = []
    for name in order:
        rows = frame[(classes == name).fillna(False).to_numpy()].reset_index(drop=True)
        if rows.empty:
            continue
        rows.attrs["backtest"] = meta
        wins = rows["profitable"].to_numpy(dtype=np.int8, na_value=0)
        shuffled = rng.permuted(np.tile(wins, (permutations, 1)), axis=1)
        for criterion in names:
            found = _test_one(rows, criterion, shuffled, options, points, min_kept_share)
            if found is not None:
                tested.append((name, found))
    return _ranked(
        tested, permutations, sort_by, seed, options, len(frame) - int(classes.notna().sum())
    )


def _ranked(
    tested: list[tuple[str, _Tested]],
    permutations: int,
    sort_by: str,
    seed: int,
    options: dict[str, Any],
    without_class: int,
) -> pd.DataFrame:
    combos = sum(int(t.row["thresholds_searched"]) for _, t in tested)
    overall = np.full(permutations, -np.inf)
    for _, t in tested:
        overall = np.maximum(overall, t.maxima)
    rows = []
    for name, t in tested:
        p_value = p_raw = 1.0 if permutations else np.nan
        if permutations and np.isfinite(t.observed):
            # A tolerance, so that a reshuffle reproducing the observed split counts as reaching it.
            reach = t.observed - 1e-9
            p_value = (1 + int(np.count_nonzero(overall >= reach))) / (permutations + 1)
            p_raw = (1 + int(np.count_nonzero(t.maxima >= reach))) / (permutations + 1)
        rows.append({"market_cap_class": name, "p_value": p_value, "p_raw": p_raw, **t.row})
    ranked = pd.DataFrame(rows)
    if ranked.empty:
        return ranked
    keys, ascending = (
        ([sort_by, "mean_gain"], [True, False])
        if sort_by == "p_value"
        else (
            [sort_by],
            [False],
        )
    )
    parts = [
        part.sort_values(keys, ascending=ascending, kind="stable")
        for _, part in ranked.groupby("market_cap_class", sort=False)
    ]
    ranked = pd.concat(parts, ignore_index=True)
    ranked.insert(1, "rank", ranked.groupby("market_cap_class", sort=False).cumcount() + 1)
    columns = ["market_cap_class", "rank", "criterion", "operator", "p_value", "p_raw"]
    ranked = ranked[columns + [c for c in ranked.columns if c not in columns]]
    ranked["combos_searched"] = combos
    ranked.attrs["rank_criteria"] = {
        "combos_searched": combos,
        "permutations": permutations,
        "seed": seed,
        "rule": options["rule"],
        "statistic": "hypergeometric standard score of the wins a threshold keeps",
        "adjustment": "max over every criterion, threshold and class (Westfall-Young max-T)",
        "trades_without_class": without_class,
    }
    return ranked
