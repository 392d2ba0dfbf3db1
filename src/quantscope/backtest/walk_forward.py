"""Out of sample: choose a threshold on the past, report what it did in the future.

A what-if over all the trades picks its best threshold with hindsight: among a hundred
candidates, one fits the noise of these trades. ``walk_forward`` asks the honest question
instead. Each quant and market-cap class's trades are put in time order (by ``opened_at``)
and cut into ``folds + 1`` blocks of equal count; fold ``i`` trains on the blocks before
block ``i`` (an expanding window), picks the threshold with the best win-rate gain there (by
the replayed rule unless told otherwise), and reports that threshold's decision numbers on
block ``i``, which it never saw, with intervals (``uncertainty.what_if_intervals``: a
Poisson bootstrap over tokens). ``split=`` makes one train/test cut instead.

* **Purge and embargo.** A training trade that closes at or after the test block's first
  open, less ``embargo``, is dropped from training (``train_purged``): its outcome was not
  known when the test block began, and it overlaps the test trades in time. Cut on open time
  alone, 292 of 4,767 training rows of seed 7 (6.1 %) leaked, 25 of 58 in one fold. The same
  rule as ``screen``'s (docs/metrics.md, "Purge and embargo").
* **The search, stated.** Every criterion is walked by default; every candidate threshold
  of every fold, group and criterion counts in ``combos_searched`` (a column and
  ``attrs``): the best of many folds is a search result, not a single test.
* **Groups too small to walk** (fewer than ``min_trades`` trades) are left out with an
  ``IncompleteDataWarning`` and listed in ``attrs["walk_forward"]["skipped"]``.

Which question a table answers is ``rule``'s: ``"replay"`` (default) the change's effect,
``"filter"`` the criterion's signal (``questions.py``); ``attrs`` names it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from quantscope._errors import IncompleteDataWarning
from quantscope.backtest import _shadow
from quantscope.backtest._rules import DIRECTION, PlaybookArg
from quantscope.backtest.features import backtest_attrs, bare, check_criteria, criteria_of
from quantscope.backtest.questions import QUESTION_LABELS, question_of
from quantscope.backtest.sweep import resolve_playbook, threshold_grid, what_if
from quantscope.backtest.uncertainty import RESAMPLES, SEED, STATISTICS, what_if_intervals

#: The time each trade is ordered by: when the quant decided to buy.
TIME = "opened_at"
#: The time a trade's outcome is known: training trades closing after a test block opens
#: (less the embargo) are purged.
CLOSED = "closed_at"
_GROUPS = ("quant_id", "market_cap_class")
SplitArg: TypeAlias = float | str | pd.Timestamp | None
CriteriaArg: TypeAlias = str | Sequence[str] | None


def _blocks(rows: pd.DataFrame, folds: int, split: SplitArg) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) positions into ``rows`` (sorted by time), one pair per fold."""
    n = len(rows)
    if split is None:
        bounds = np.linspace(0, n, folds + 2).round().astype(int)
        return [
            (np.arange(bounds[i]), np.arange(bounds[i], bounds[i + 1])) for i in range(1, folds + 1)
        ]
    if isinstance(split, float):
        if not 0.0 < split < 1.0:
            raise ValueError(f"split as a share of the trades must be in (0, 1), got {split}")
        cut = round(n * split)
    else:
        at = pd.Timestamp(split)
        at = at.tz_localize("UTC") if at.tzinfo is None else at
        cut = int(rows[TIME].searchsorted(at, side="left"))
    return [(np.arange(cut), np.arange(cut, n))]


def purge(
    rows: pd.DataFrame, train: np.ndarray, test: np.ndarray, embargo: pd.Timedelta
) -> tuple[np.ndarray, int]:
    """``train`` without the trades that close at or after the test block's first open, less
    ``embargo``; and how many were dropped. A trade with no close time is kept.
    """
    if not len(train) or not len(test) or CLOSED not in rows.columns:
        return train, 0
    start = rows[TIME].iloc[test].min() - embargo
    closed = rows[CLOSED].iloc[train]
    late = (closed >= start).fillna(False).to_numpy(dtype=bool)
    return train[~late], int(late.sum())


def _candidates(table: pd.DataFrame, op: str, min_kept_share: float) -> pd.DataFrame:
    """The thresholds a fold may choose, least strict first: the current one (no change), and
    those keeping enough trades that are not looser (their effect on evaluations that failed
    is unseen).
    """
    ok = (table["kept_share"] >= min_kept_share) & ~table["admits_unseen"].fillna(False)
    ok |= table["is_current"]
    eligible = table[ok.to_numpy(dtype=bool)]
    order = np.argsort(DIRECTION[op] * eligible["threshold"].to_numpy(), kind="stable")
    return eligible.iloc[order]


def _fold(
    rows: pd.DataFrame,
    train: np.ndarray,
    test: np.ndarray,
    criterion: str,
    thresholds: Sequence[float] | np.ndarray | int | None,
    kwargs: dict[str, Any],
    min_kept_share: float,
    draws: tuple[int, int],
) -> dict[str, object] | None:
    past, future = rows.iloc[train], rows.iloc[test]
    if past.empty or future.empty:
        return None
    grid = thresholds
    if grid is None or isinstance(grid, int):
        values = past[criterion].to_numpy(dtype=np.float64, na_value=np.nan)
        grid = threshold_grid(values, 101 if grid is None else grid)
    seen = what_if(past, criterion, grid, bootstrap=False, **kwargs)
    current = seen.attrs["what_if"]["current"][criterion]
    if current is not None and len(current) == 1 and not seen["is_current"].any():
        grid = np.append(np.asarray(grid, dtype=np.float64), current[0])
        seen = what_if(past, criterion, grid, bootstrap=False, **kwargs)
    op = seen.attrs["what_if"]["operators"][0]
    eligible = _candidates(seen, op, min_kept_share)
    if eligible.empty:
        return None
    best = eligible.loc[eligible["d_win_rate"].idxmax()]
    chosen = [float(best["threshold"])]
    ahead = what_if(future, criterion, chosen, bootstrap=False, **kwargs)
    resamples, seed = draws
    sure = what_if_intervals(
        future, criterion, chosen, **kwargs, resamples=resamples, seed=seed
    ).iloc[0]
    tokens = future["token_id"].nunique() if "token_id" in future.columns else np.nan
    out: dict[str, object] = {
        "train_start": past[TIME].iloc[0],
        "train_end": past[TIME].iloc[-1],
        "test_start": future[TIME].iloc[0],
        "test_end": future[TIME].iloc[-1],
        "current": float(current[0]) if current is not None and len(current) == 1 else np.nan,
        "threshold": chosen[0],
        "candidates": len(eligible),
        "train_trades": int(seen.attrs["what_if"]["baseline"]["trades"]),
        "train_kept": int(best["trades"]),
        "in_sample_gain": float(best["d_win_rate"]),
        "in_sample_pnl_change_usd": float(best["d_total_pnl_usd"]),
        "test_trades": int(ahead.attrs["what_if"]["baseline"]["trades"]),
        "test_tokens": tokens,
        "test_kept": int(ahead["trades"].iloc[0]),
        "out_of_sample_gain": float(ahead["d_win_rate"].iloc[0]),
        "out_of_sample_pnl_change_usd": float(ahead["d_total_pnl_usd"].iloc[0]),
    }
    for name in STATISTICS:
        for suffix in ("", "_lo", "_hi"):
            out[f"{name}{suffix}"] = float(sure[f"{name}{suffix}"])
    out["interval"] = str(sure["interval"])
    return out


def _names(features: pd.DataFrame, criteria: CriteriaArg) -> list[str]:
    if criteria is None:
        return criteria_of(features)
    names = [criteria] if isinstance(criteria, str) else list(criteria)
    check_criteria(features, names, "walk_forward")
    return names


@_shadow.checked()  # never-executed trades warn once (issue 21)
def walk_forward(
    features: pd.DataFrame,
    criteria: CriteriaArg = None,
    thresholds: Sequence[float] | np.ndarray | int | None = None,
    *,
    folds: int = 3,
    split: SplitArg = None,
    embargo: str | pd.Timedelta = "0h",
    rule: str = "replay",
    playbook: PlaybookArg | None = None,
    operator: str | None = None,
    min_kept_share: float = 0.3,
    min_trades: int = 60,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> pd.DataFrame:
    """Each fold's threshold chosen on the (purged) past, and how it did on the future.

    Args:
        features: ``trade_features`` (closed trades); each quant and market-cap class is
            walked on its own, since each has its own playbook entry.
        criteria: the criterion or criteria whose threshold is chosen (default: every
            criterion of the frame; each is walked on its own, so the time grows with the
            number of criteria, mostly in the intervals).
        thresholds: the candidates (default: 101 quantiles of each training window's values;
            an int ``k``: ``k`` quantiles).
        folds: expanding-window folds: the trades in time order are cut into ``folds + 1``
            blocks of equal count, fold ``i`` trains on blocks ``0 .. i-1`` and tests on ``i``.
        split: one train/test cut instead: a share of the trades (0.5: the first half
            trains) or a time (trades opened before it train).
        embargo: training trades closing within this time before a test block's first open
            are purged too (the purge alone drops those closing at or after it).
        rule: ``"replay"`` (default: the effect question) or ``"filter"`` (the signal
            question), as in ``what_if``.
        playbook: as in ``what_if`` (default: the one the features keep).
        operator: as in ``what_if``.
        min_kept_share: a candidate must keep this share of the training trades (as the
            service's optimizer requires); candidates looser than the current threshold
            are never chosen (their effect on evaluations that failed is unseen).
        min_trades: quants and classes with fewer trades are left out: an
            ``IncompleteDataWarning`` names them, ``attrs`` lists them.
        resamples, seed: of the bootstrap intervals (``uncertainty.what_if_intervals``).

    Returns:
        One row per (criterion, quant, class, fold): ``criterion``, ``quant_id``,
        ``market_cap_class``, ``fold``, the windows' ``train_start``/``train_end``/
        ``test_start``/``test_end`` (opening times), the ``current`` and chosen
        ``threshold``, ``candidates`` (thresholds the fold chose among), ``train_trades``
        (after the purge), ``train_purged``, ``train_kept``, ``in_sample_gain`` and
        ``in_sample_pnl_change_usd`` (the chosen threshold on the training trades),
        ``test_trades``, ``test_tokens``, ``test_kept``, ``out_of_sample_gain`` and
        ``out_of_sample_pnl_change_usd`` (the same threshold on the test trades against the
        current one), the test block's decision numbers ``win_rate``, ``d_win_rate``,
        ``d_total_pnl_usd``, ``d_roi`` each with ``_lo``/``_hi`` and ``interval`` (the
        interval's method), and ``combos_searched``. ``attrs["walk_forward"]`` has the
        question and its label, the rule, the purge and embargo, the means of both gains,
        the search's size and the groups left out.
    """
    if folds < 1:
        raise ValueError(f"folds must be at least 1, got {folds}")
    question = question_of(rule)
    playbook = resolve_playbook(features, playbook, rule)
    kwargs: dict[str, Any] = {"rule": rule, "playbook": playbook, "operator": operator}
    draws = (resamples, seed)
    names = _names(features, criteria)
    lag = pd.Timedelta(embargo)
    if lag < pd.Timedelta(0):
        raise ValueError(f"embargo must not be negative, got {embargo!r}")
    base = bare(features)
    # What the sweeps read from attrs (operators, the thresholds each trade was decided
    # under); the playbooks are passed resolved (pandas deep-copies attrs on every step).
    meta = {k: v for k, v in backtest_attrs(features).items() if k != "playbooks"}
    out: list[dict[str, object]] = []
    skipped: dict[tuple[int, str], dict[str, object]] = {}
    purged = trained = 0
    for criterion in names:
        frame = base[base[criterion].notna().to_numpy(dtype=bool)]
        for key, group in frame.groupby(list(_GROUPS), observed=True, sort=True):
            quant, mc_class = int(key[0]), str(key[1])
            if len(group) < min_trades:
                entry = skipped.setdefault(
                    (quant, mc_class),
                    {"quant_id": quant, "market_cap_class": mc_class, "trades": 0},
                )
                entry["trades"] = max(int(entry["trades"]), len(group))  # type: ignore[call-overload]  # entry's values are typed object; trades is an int
                continue
            rows = group.sort_values([TIME, "trade_id"], kind="stable")
            rows.attrs["backtest"] = meta
            for i, (train, test) in enumerate(_blocks(rows, folds, split), start=1):
                kept, dropped = purge(rows, train, test, lag)
                found = _fold(
                    rows, kept, test, criterion, thresholds, kwargs, min_kept_share, draws
                )
                if found is not None:
                    purged, trained = purged + dropped, trained + len(train)
                    out.append(
                        {
                            "criterion": criterion,
                            "quant_id": quant,
                            "market_cap_class": mc_class,
                            "fold": i,
                            "train_purged": dropped,
                            **found,
                        }
                    )
    table = pd.DataFrame(out)
    combos = int(table["candidates"].sum()) if out else 0
    if out:
        table["combos_searched"] = combos
    left_out = list(skipped.values())
    if left_out:
        warnings.warn(
            f"walk_forward: {len(left_out)} quant/class group(s) left out (fewer than "
            f"{min_trades} trades with the criterion): "
            + ", ".join(
                f"quant {s['quant_id']} {s['market_cap_class']} ({s['trades']} trades)"
                for s in left_out
            )
            + "; see attrs['walk_forward']['skipped'] (min_trades= to change the bound)",
            IncompleteDataWarning,
            stacklevel=2,
        )
    table.attrs["walk_forward"] = {
        "criterion": names[0] if len(names) == 1 else None,
        "criteria": names,
        "question": question,
        "label": QUESTION_LABELS[question],
        "rule": rule,
        "folds": 1 if split is not None else folds,
        "embargo": str(lag),
        "purge": "training trades closing at or after the test block's first open (less the "
        "embargo) are dropped",
        "train_purged": purged,
        "train_rows_before_purge": trained,
        "min_kept_share": min_kept_share,
        "combos_searched": combos,
        "interval": "Poisson bootstrap over tokens (uncertainty.what_if_intervals)",
        "resamples": resamples,
        "seed": seed,
        "mean_in_sample_gain": float(table["in_sample_gain"].mean()) if out else np.nan,
        "mean_out_of_sample_gain": float(table["out_of_sample_gain"].mean()) if out else np.nan,
        "skipped": left_out,
    }
    return table
