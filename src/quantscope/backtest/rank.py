"""Which criteria matter: criteria ranked by their signal, tested against the whole search.

``rank_criteria`` tries every criterion at many thresholds in each market-cap class. Trying
18 criteria at ~100 thresholds in three classes is thousands of tries: the best of them looks
good on noise alone, and trades of one token share its traits, so a token trait that lines up
with a few lucky tokens looks good trade by trade. The ranking is honest about both:

* **One market-cap class at a time.** Thresholds differ up to 25x between classes and so do
  base win rates: each class is swept, tested and ranked on its own rows.
* **The signal question** (``questions.py``): at each threshold, do the trades it keeps win
  more often than those it drops? Its statistic is each token's contribution to the
  covariance of "kept" and "won", centred within each quant of the class (a quant's own
  thresholds and base rate are not taken for the criterion's signal). ``signal`` is the
  matching win-rate difference, kept minus dropped, averaged over the quants with weights
  ``n p (1 - p)`` (the plain difference for one quant).
* **A whole-token sign-flip test over the whole search** (``uncertainty.signflip_pvalues``):
  every token's contributions are flipped in sign together, the same flips for every
  threshold of every criterion and class, and a criterion's ``p_value`` is the
  Westfall-Young max-T adjusted p-value of its best threshold (family-wise over
  ``combos_searched`` thresholds); ``p_raw`` is adjusted over its own thresholds only.
  ``signal_lo``/``signal_hi`` are the matching simultaneous interval
  (``uncertainty.signflip_band``): it excludes 0 when, and only when, the row is significant.
* **The effect beside it**: the same threshold replayed through the whole pass rule against
  the current one (``uncertainty.what_if_intervals``, ``rule="replay"``): ``effect_d_win_rate``,
  ``effect_d_total_pnl_usd``, ``effect_d_roi`` with token-bootstrap intervals: what applying
  it would have done (NaN without a playbook).

``rule=`` names the question of the sweep columns ``mean_gain`` and ``best_gain`` (the
win-rate gain over the class's every trade, averaged over the thresholds tried, or the best):
``"filter"`` (the default: the signal) or ``"replay"`` (the effect). The test and the order
by ``p_value`` always answer the signal question: it is the one with a calibrated test
(docs/metrics.md, "Ranking criteria"). For out-of-sample figures use ``screen``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from quantscope.backtest import _sample, _shadow
from quantscope.backtest._guards import small_sample, token_codes
from quantscope.backtest._inputs import _operators
from quantscope.backtest._rules import MARKET_CAP_CLASSES, OPERATORS, PlaybookArg
from quantscope.backtest.features import backtest_attrs, bare, criteria_of
from quantscope.backtest.questions import QUESTION_LABELS, question_of
from quantscope.backtest.sweep import resolve_playbook, threshold_grid, what_if
from quantscope.backtest.uncertainty import (
    RESAMPLES,
    SEED,
    ClusterSums,
    cluster_intervals,
    score_contributions,
    signflip_band,
    signflip_pvalues,
    what_if_intervals,
)

#: ``sort_by`` choices: the adjusted p-value (ascending, ties by mean gain), or a gain.
SORTS = ("p_value", "mean_gain", "best_gain")
_EFFECTS = ("d_win_rate", "d_total_pnl_usd", "d_roi")


@dataclass
class _Searched:
    """One criterion of one class: the thresholds it tried and their evidence."""

    klass: str
    criterion: str
    op: str
    rows: pd.DataFrame  # the class's rows, with attrs (for what_if)
    grid: np.ndarray  # thresholds tried (one per distinct kept set)
    scores: np.ndarray  # (tokens, thresholds): contributions to the signal's covariance
    scale: np.ndarray  # (thresholds,): sum over quants of n p (1 - p)
    values: np.ndarray  # the usable rows' values, outcomes, PnL and token codes
    won: np.ndarray
    pnl: np.ndarray
    codes: np.ndarray


def _search(
    rows: pd.DataFrame,
    meta: dict[str, Any],
    klass: str,
    criterion: str,
    op: str,
    codes: np.ndarray,
    k: int,
    points: int,
    min_kept_share: float,
) -> _Searched:
    """The thresholds of one criterion in one class and each token's signal contributions."""
    ok = _sample.usable(rows, [criterion]) & rows["profitable"].notna().to_numpy()
    pnl = rows["pnl_usd"].to_numpy(dtype=np.float64, na_value=0.0)[ok]
    values = rows[criterion].to_numpy(dtype=np.float64, na_value=np.nan)[ok]
    won = rows["profitable"].to_numpy(dtype=np.float64, na_value=0.0)[ok]
    quants = rows["quant_id"].to_numpy(dtype=np.float64, na_value=-1.0)[ok]
    rc = codes[ok]
    grid = threshold_grid(values, points)
    kept = OPERATORS[op](values[:, None], grid[None, :]) if len(grid) else np.zeros((0, 0))
    share = kept.mean(axis=0) if len(values) else np.zeros(len(grid))
    eligible = (share >= min_kept_share) & (share < 1.0)
    # Nested sets: one threshold per distinct number of kept trades.
    _, first = np.unique(kept.sum(axis=0)[eligible], return_index=True)
    columns = np.flatnonzero(eligible)[np.sort(first)]
    grid, kept = grid[columns], kept[:, columns]
    scores = np.zeros((k, len(grid)))
    scale = np.zeros(len(grid))
    for q in np.unique(quants):
        mine = quants == q
        if mine.sum() < 2:
            continue
        scores += score_contributions(kept[mine], won[mine], rc[mine], k)
        p = kept[mine].mean(axis=0)
        scale += mine.sum() * p * (1 - p)
    with_attrs = bare(rows)
    with_attrs.attrs["backtest"] = meta
    return _Searched(klass, criterion, op, with_attrs, grid, scores, scale, values, won, pnl, rc)


def _gains(found: _Searched, options: dict[str, Any], min_kept_share: float) -> dict[str, Any]:
    """``mean_gain`` and ``best_gain`` of the sweep under ``options["rule"]`` (win rate of
    the kept trades less that of every trade of the class, as ``what_if`` counts them), and
    the current threshold.
    """
    table = what_if(found.rows, found.criterion, None, bootstrap=False, **options)
    cur = table.attrs["what_if"]["current"][found.criterion]
    out: dict[str, Any] = {
        "current": float(cur[0]) if cur is not None and len(cur) == 1 else np.nan,
        "mean_gain": np.nan,
        "best_gain": np.nan,
        "base_win_rate": np.nan,
        "base_total_pnl_usd": np.nan,
    }
    everyone = table[table["kept_share"] >= 1.0]
    eligible = table[table["kept_share"] >= min_kept_share].drop_duplicates("trades")
    if everyone.empty or eligible.empty:
        return out
    base = float(everyone["win_rate"].iloc[0])
    gains = eligible["win_rate"] - base
    out["mean_gain"], out["best_gain"] = float(gains.mean()), float(gains.max())
    out["base_win_rate"] = base
    out["base_total_pnl_usd"] = float(everyone["total_pnl_usd"].iloc[0])
    return out


def _effect(
    found: _Searched, threshold: float, playbook: PlaybookArg | None, **kw: Any
) -> dict[str, Any]:
    """The replayed effect of ``threshold`` against the current one, with its intervals."""
    out: dict[str, Any] = {f"effect_{n}{s}": np.nan for n in _EFFECTS for s in ("", "_lo", "_hi")}
    out["effect_interval"] = None
    if playbook is None:
        return out
    got = what_if_intervals(
        found.rows, found.criterion, [threshold], rule="replay", playbook=playbook, **kw
    )
    for name in _EFFECTS:
        for suffix in ("", "_lo", "_hi"):
            out[f"effect_{name}{suffix}"] = float(got[f"{name}{suffix}"].iloc[0])
    out["effect_interval"] = str(got["interval"].iloc[0])
    return out


@_shadow.checked()  # never-executed trades warn once (issue 21)
def rank_criteria(
    features: pd.DataFrame,
    criteria: Sequence[str] | None = None,
    *,
    min_kept_share: float = 0.3,
    points: int = 101,
    sort_by: str = "p_value",
    by: str | None = None,
    rule: str = "filter",
    playbook: PlaybookArg | None = None,
    flips: int = RESAMPLES,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    alpha: float = 0.05,
    permutations: int | None = None,
) -> pd.DataFrame:
    """Criteria ranked within each market-cap class by their signal, tested over the search.

    Each criterion is tried at ``points`` quantiles of its values in the class, keeping the
    thresholds that keep at least ``min_kept_share`` of the trades and not all (one per
    distinct trade set). Every threshold of every criterion and class is one hypothesis of
    one family, tested by flipping whole tokens (module docstring, docs/metrics.md).

    Args:
        features: trades with criterion values (``trade_features``).
        criteria: the criteria to rank (default: every criterion of the frame).
        min_kept_share: thresholds keeping fewer of the class's trades are not tried.
        points: quantiles of each criterion's values to try.
        sort_by: ``"p_value"`` (default; ties by ``mean_gain``), ``"mean_gain"`` or
            ``"best_gain"``, within each class.
        by: the old spelling of ``sort_by`` (deprecated: a DeprecationWarning).
        rule: the question of ``mean_gain``/``best_gain``: ``"filter"`` (default, the
            signal: the criterion as a hard filter) or ``"replay"`` (the effect: the whole pass
            rule replayed). ``p_value`` and the ``signal`` columns answer the signal question
            whatever the rule; the ``effect_`` columns the effect question.
        playbook: for the replayed effect (default: the one the features keep; without any
            the ``effect_`` columns are NaN).
        flips: sign flips of the test (0: no test, p-values and the signal interval NaN).
        resamples: bootstrap resamples of the win-rate and effect intervals.
        seed: the flips' and resamples' seed (the same call gives the same figures).
        alpha: ``significant`` is ``p_value < alpha``.
        permutations: the old name of ``flips`` (deprecated: a DeprecationWarning).

    Returns:
        One row per class and criterion, classes smallest first, best first within a class:
        ``market_cap_class``, ``rank``, ``criterion``, ``operator``, ``p_value`` (family-wise),
        ``p_raw`` (over the criterion's own thresholds), ``significant``, ``statistic`` (the
        standardised sum of the best threshold), ``threshold`` (the best), ``signal`` with
        ``signal_lo``/``signal_hi`` (simultaneous), ``current`` (NaN when unknown or several),
        ``admits_unseen``, the kept trades' ``trades``, ``tokens``, ``kept_share``,
        ``win_rate`` with ``win_rate_lo``/``win_rate_hi`` (token bootstrap),
        ``total_pnl_usd``, ``small_sample``, the replayed ``effect_d_win_rate``,
        ``effect_d_total_pnl_usd``, ``effect_d_roi`` with ``_lo``/``_hi`` and
        ``effect_interval``, ``mean_gain``, ``best_gain``, ``base_win_rate``,
        ``base_total_pnl_usd``, ``thresholds_searched``, ``hypotheses`` (rows ranked) and
        ``combos_searched`` (thresholds in the family). ``attrs["rank_criteria"]`` records
        the question, the search, the test and the criteria no threshold could split
        (``untested``).
    """
    if by is not None:
        warnings.warn(
            "rank_criteria(by=...) is deprecated and will be removed in the next release: "
            "use sort_by=...",
            DeprecationWarning,
            stacklevel=2,
        )
        sort_by = by
    if permutations is not None:
        warnings.warn(
            "rank_criteria(permutations=...) is deprecated and will be removed in the next "
            "release: the test flips whole tokens, use flips=...",
            DeprecationWarning,
            stacklevel=2,
        )
        flips = permutations
    if sort_by not in SORTS:
        raise ValueError(f"sort_by must be 'p_value', 'mean_gain' or 'best_gain', got {sort_by!r}")
    question = question_of(rule)
    book = resolve_playbook(features, playbook, rule)
    names = list(criteria) if criteria is not None else criteria_of(features)
    # The playbooks are passed resolved: pandas deep-copies attrs on every step.
    meta = {k: v for k, v in backtest_attrs(features).items() if k != "playbooks"}
    ops = _operators(meta.get("operators") or {}, names, [None] * len(names), book)
    frame = bare(features).reset_index(drop=True)
    found_codes = token_codes([frame])
    codes, k = found_codes if found_codes is not None else (np.arange(len(frame)), len(frame))
    classes = frame["market_cap_class"].astype("string")
    order = [c for c, _ in MARKET_CAP_CLASSES] + sorted(
        set(classes.dropna()) - {c for c, _ in MARKET_CAP_CLASSES}
    )
    searched: list[_Searched] = []
    for name in order:
        mask = (classes == name).fillna(False).to_numpy(dtype=bool)
        if not mask.any():
            continue
        rows = frame[mask]
        for criterion, op in zip(names, ops, strict=True):
            searched.append(
                _search(rows, meta, name, criterion, op, codes[mask], k, points, min_kept_share)
            )
    options: dict[str, Any] = {"rule": rule, "playbook": book}
    table = _ranked(searched, options, flips, resamples, seed, alpha, min_kept_share)
    table = _sorted(table, sort_by)
    combos = sum(len(s.grid) for s in searched)
    if len(table):
        table["hypotheses"] = len(table)
        table["combos_searched"] = combos
    table.attrs["rank_criteria"] = {
        "question": question,
        "label": QUESTION_LABELS[question],
        "ranked_by": sort_by,
        "rule": rule,
        "test": "one-sided sign flip of whole tokens (the signal's covariance of kept and won, "
        "centred within each quant), Westfall-Young max-T over every threshold of every "
        "criterion and class",
        "signal_interval": "simultaneous over the family, from the same sign flips",
        "effect_interval": "Poisson bootstrap over tokens (uncertainty.what_if_intervals)",
        "hypotheses": len(table),
        "combos_searched": combos,
        "flips": flips,
        "resamples": resamples,
        "seed": seed,
        "alpha": alpha,
        "effect_available": book is not None,
        "trades_without_class": int(classes.isna().sum()),
        # Criteria no threshold could split (a value nearly every trade of the class shares).
        "untested": [
            {"market_cap_class": s.klass, "criterion": s.criterion}
            for s in searched
            if not len(s.grid)
        ],
    }
    return table


def _ranked(
    searched: list[_Searched],
    options: dict[str, Any],
    flips: int,
    resamples: int,
    seed: int,
    alpha: float,
    min_kept_share: float,
) -> pd.DataFrame:
    tried = [s for s in searched if len(s.grid)]
    if not tried:
        return pd.DataFrame()
    scores = np.concatenate([s.scores for s in tried], axis=1)
    scores = _with_evidence(scores)
    scale = np.concatenate([s.scale for s in tried])
    if flips:
        stat, _, p_adj = signflip_pvalues(scores, flips=flips, seed=seed)
        _, lo, hi = signflip_band(scores, scale, flips=flips, seed=seed, confidence=1 - alpha)
    else:
        norm = np.sqrt((scores * scores).sum(axis=0))
        stat = np.where(norm > 0, scores.sum(axis=0) / np.where(norm > 0, norm, 1.0), np.nan)
        p_adj = lo = hi = np.full(len(scale), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        signal = np.where(scale > 0, scores.sum(axis=0) / np.where(scale > 0, scale, 1.0), np.nan)
    rows, start = [], 0
    for s in tried:
        cols = slice(start, start + len(s.grid))
        start += len(s.grid)
        own = np.nan_to_num(stat[cols], nan=-np.inf)
        best = int(np.argmax(own))
        j = cols.start + best
        p_raw = np.nan
        if flips:
            p_raw = float(
                signflip_pvalues(_with_evidence(s.scores), flips=flips, seed=seed)[2].min()
            )
        threshold = float(s.grid[best])
        gains = _gains(s, options, min_kept_share)
        current = gains.pop("current")
        rows.append(
            {
                "market_cap_class": s.klass,
                "criterion": s.criterion,
                "operator": s.op,
                "p_value": float(np.nanmin(p_adj[cols])) if flips else np.nan,
                "p_raw": p_raw,
                "statistic": float(stat[j]),
                "threshold": threshold,
                "signal": float(signal[j]),
                "signal_lo": float(lo[j]),
                "signal_hi": float(hi[j]),
                "current": current,
                "admits_unseen": (
                    pd.NA
                    if np.isnan(current)
                    else not bool(OPERATORS[s.op](np.asarray(threshold), np.asarray(current)))
                ),
                **_kept(s, threshold, resamples, seed),
                **_effect(s, threshold, options["playbook"], resamples=resamples, seed=seed),
                **gains,
                "thresholds_searched": len(s.grid),
            }
        )
    out = pd.DataFrame(rows)
    out.insert(out.columns.get_loc("p_raw") + 1, "significant", (out["p_value"] < alpha).to_numpy())
    return out


def _with_evidence(scores: np.ndarray) -> np.ndarray:
    """The rows (tokens) of ``scores`` that contribute: a token of another class flips nothing."""
    return scores[np.flatnonzero(np.abs(scores).sum(axis=1) > 0)]


def _kept(s: _Searched, threshold: float, resamples: int, seed: int) -> dict[str, Any]:
    """The trades ``threshold`` keeps as a hard filter: counts, PnL, and the win rate with
    its token-bootstrap interval (``uncertainty.cluster_intervals``).
    """
    kept = OPERATORS[s.op](s.values, threshold)
    # The class's own tokens only: the resamples draw one weight per token.
    _, codes = np.unique(s.codes, return_inverse=True)
    k = int(codes.max()) + 1 if len(codes) else 0
    per = [
        np.bincount(codes, weights=np.where(kept, x, 0.0), minlength=k)
        for x in (np.ones(len(kept)), s.won, s.pnl)
    ]
    every = np.bincount(codes, weights=np.ones(len(kept)), minlength=k)
    table = ClusterSums(
        trades=per[0][:, None],
        wins=per[1][:, None],
        pnl=per[2][:, None],
        cost=np.zeros((k, 1)),
        base_trades=every,
        base_wins=np.bincount(codes, weights=s.won, minlength=k),
        base_pnl=np.bincount(codes, weights=s.pnl, minlength=k),
        base_cost=np.zeros(k),
    )
    got = cluster_intervals(table, resamples=resamples, seed=seed, nested=False)
    trades, tokens = int(kept.sum()), int(np.count_nonzero(per[0]))
    return {
        "trades": trades,
        "tokens": tokens,
        "kept_share": trades / len(kept),
        "total_pnl_usd": float(per[2].sum()),
        "small_sample": bool(small_sample(np.array([trades]), np.array([tokens]))[0]),
        "win_rate": float(got["win_rate"][0]),
        "win_rate_lo": float(got["win_rate_lo"][0]),
        "win_rate_hi": float(got["win_rate_hi"][0]),
    }


def _sorted(ranked: pd.DataFrame, sort_by: str) -> pd.DataFrame:
    if ranked.empty:
        return ranked
    keys, ascending = (
        ([sort_by, "mean_gain"], [True, False]) if sort_by == "p_value" else ([sort_by], [False])
    )
    parts = [
        part.sort_values(keys, ascending=ascending, kind="stable", na_position="last")
        for _, part in ranked.groupby("market_cap_class", sort=False)
    ]
    ranked = pd.concat(parts, ignore_index=True)
    ranked.insert(1, "rank", ranked.groupby("market_cap_class", sort=False).cumcount() + 1)
    return ranked
