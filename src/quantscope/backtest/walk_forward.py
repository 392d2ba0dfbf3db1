"""Out of sample: choose a threshold on the past, report what it did in the future.

A what-if over all the trades picks its best threshold with hindsight: among a hundred
candidates, one fits the noise of these trades. ``walk_forward`` asks the honest question
instead. Each quant and market-cap class's trades are put in time order (by ``opened_at``)
and cut into ``folds + 1`` blocks of equal count; fold ``i`` trains on the blocks before
block ``i`` (an expanding window), picks the threshold with the best win-rate gain there (by
the replayed rule unless told otherwise), and reports that threshold's gain on block ``i``,
which it never saw. ``split=`` makes one train/test cut instead. A criterion that carries
signal keeps its gain out of sample; one that only fitted the past loses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import pandas as pd

from quantscope.backtest import _shadow
from quantscope.backtest._rules import DIRECTION, PlaybookArg
from quantscope.backtest.features import bare, check_criteria
from quantscope.backtest.sweep import RULE_LABELS, resolve_playbook, threshold_grid, what_if

#: The time each trade is ordered by: when the quant decided to buy.
TIME = "opened_at"
_GROUPS = ("quant_id", "market_cap_class")
SplitArg: TypeAlias = float | str | pd.Timestamp | None


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


def _candidates(table: pd.DataFrame, op: str, min_kept_share: float) -> pd.DataFrame:
    """The thresholds a fold may choose, least strict first: the current one (no change), and
    those keeping enough trades that are not looser (their effect on evaluations that failed
    is unseen)."""
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
    kwargs: dict[str, object],
    min_kept_share: float,
) -> dict[str, object] | None:
    past, future = rows.iloc[train], rows.iloc[test]
    if past.empty or future.empty:
        return None
    grid = thresholds
    if grid is None or isinstance(grid, int):
        values = past[criterion].to_numpy(dtype=np.float64, na_value=np.nan)
        grid = threshold_grid(values, 101 if grid is None else grid)
    seen = what_if(past, criterion, grid, **kwargs)  # type: ignore[arg-type]
    current = seen.attrs["what_if"]["current"][criterion]
    if current is not None and len(current) == 1 and not seen["is_current"].any():
        grid = np.append(np.asarray(grid, dtype=np.float64), current[0])
        seen = what_if(past, criterion, grid, **kwargs)  # type: ignore[arg-type]
    op = seen.attrs["what_if"]["operators"][0]
    eligible = _candidates(seen, op, min_kept_share)
    if eligible.empty:
        return None
    best = eligible.loc[eligible["d_win_rate"].idxmax()]
    ahead = what_if(future, criterion, [float(best["threshold"])], **kwargs)  # type: ignore[arg-type]
    return {
        "train_start": past[TIME].iloc[0],
        "train_end": past[TIME].iloc[-1],
        "test_start": future[TIME].iloc[0],
        "test_end": future[TIME].iloc[-1],
        "current": float(current[0]) if current is not None and len(current) == 1 else np.nan,
        "threshold": float(best["threshold"]),
        "train_trades": int(seen.attrs["what_if"]["baseline"]["trades"]),
        "train_kept": int(best["trades"]),
        "in_sample_gain": float(best["d_win_rate"]),
        "in_sample_pnl_change_usd": float(best["d_total_pnl_usd"]),
        "test_trades": int(ahead.attrs["what_if"]["baseline"]["trades"]),
        "test_kept": int(ahead["trades"].iloc[0]),
        "out_of_sample_gain": float(ahead["d_win_rate"].iloc[0]),
        "out_of_sample_pnl_change_usd": float(ahead["d_total_pnl_usd"].iloc[0]),
    }


@_shadow.checked()  # never-executed trades warn once (issue 21)
def walk_forward(
    features: pd.DataFrame,
    criterion: str,
    thresholds: Sequence[float] | np.ndarray | int | None = None,
    *,
    folds: int = 3,
    split: SplitArg = None,
    rule: str = "replay",
    playbook: PlaybookArg | None = None,
    operator: str | None = None,
    min_kept_share: float = 0.3,
    min_trades: int = 60,
) -> pd.DataFrame:
    """Each fold's threshold chosen on the past, and how it did on the future.

    Args:
        features: ``trade_features`` (closed trades); each quant and market-cap class is
            walked on its own, since each has its own playbook entry.
        criterion: the criterion whose threshold is chosen.
        thresholds: the candidates (default: 101 quantiles of each training window's values;
            an int ``k``: ``k`` quantiles).
        folds: expanding-window folds: the trades in time order are cut into ``folds + 1``
            blocks of equal count, fold ``i`` trains on blocks ``0 .. i-1`` and tests on ``i``.
        split: one train/test cut instead: a share of the trades (0.5: the first half
            trains) or a time (trades opened before it train).
        rule: ``"replay"`` (default) or ``"filter"`` (an upper bound), as in ``what_if``.
        playbook: as in ``what_if`` (default: the one the features keep).
        operator: as in ``what_if``.
        min_kept_share: a candidate must keep this share of the training trades (as the
            service's optimizer requires); candidates looser than the current threshold
            are never chosen (their effect on evaluations that failed is unseen).
        min_trades: quants and classes with fewer trades are left out (listed in attrs).

    Returns:
        One row per (quant, class, fold): ``quant_id``, ``market_cap_class``, ``fold``, the
        windows' ``train_start``/``train_end``/``test_start``/``test_end`` (opening times),
        the ``current`` and chosen ``threshold``, ``train_trades`` and ``train_kept``,
        ``in_sample_gain`` (win-rate change at the chosen threshold on the training trades)
        and ``in_sample_pnl_change_usd``, ``test_trades``, ``test_kept``,
        ``out_of_sample_gain`` and ``out_of_sample_pnl_change_usd`` (the same threshold on
        the test trades, against the current threshold). ``attrs["walk_forward"]`` has the
        rule, its label, the means of both gains and the groups left out.
    """
    if folds < 1:
        raise ValueError(f"folds must be at least 1, got {folds}")
    playbook = resolve_playbook(features, playbook, rule)
    kwargs: dict[str, object] = {"rule": rule, "playbook": playbook, "operator": operator}
    check_criteria(features, [criterion], "walk_forward")
    frame = bare(features)
    frame = frame[frame[criterion].notna().to_numpy(dtype=bool)]
    out, skipped = [], []
    for key, group in frame.groupby(list(_GROUPS), observed=True, sort=True):
        quant, mc_class = int(key[0]), str(key[1])
        if len(group) < min_trades:
            skipped.append({"quant_id": quant, "market_cap_class": mc_class, "trades": len(group)})
            continue
        rows = group.sort_values([TIME, "trade_id"], kind="stable")
        for i, (train, test) in enumerate(_blocks(rows, folds, split), start=1):
            found = _fold(rows, train, test, criterion, thresholds, kwargs, min_kept_share)
            if found is not None:
                out.append({"quant_id": quant, "market_cap_class": mc_class, "fold": i, **found})
    table = pd.DataFrame(out)
    table.attrs["walk_forward"] = {
        "criterion": criterion,
        "rule": rule,
        "upper_bound": rule == "filter",
        "label": RULE_LABELS[rule],
        "folds": 1 if split is not None else folds,
        "min_kept_share": min_kept_share,
        "mean_in_sample_gain": float(table["in_sample_gain"].mean()) if out else np.nan,
        "mean_out_of_sample_gain": float(table["out_of_sample_gain"].mean()) if out else np.nan,
        "skipped": skipped,
    }
    return table
