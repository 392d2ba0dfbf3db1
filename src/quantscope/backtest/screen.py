"""The search-aware screen: every criterion and class, out of sample, adjusted for the search.

``screen(features)`` answers both questions of threshold research for every criterion of every
(quant, market-cap class), each threshold chosen on data the answer is not measured on:

* **Folds.** Each group's trades, in time order (``opened_at``), are cut into ``folds + 1``
  blocks of equal count; block ``i >= 1`` is tested with a threshold chosen on the blocks
  before it (walk-forward, expanding). **Purge**: a training trade that closes at or after
  the test block's first open (less ``embargo``) is dropped: its outcome was not known then.
  **Tokens apart**: the group's tokens are split at random (seeded) into ``token_groups``
  sets; a test trade's threshold is chosen on the *other* sets' trades only. The same tokens
  trade in every window, so a time split alone lets a token trait that happened to line up
  with a few lucky tokens "hold up" out of sample; training on other tokens does not.
* **Choice.** On the training trades, among ``points`` quantiles of the criterion's values
  that keep at least ``min_kept_share`` of them (and not all), the threshold whose kept trades
  beat the dropped ones by the largest token-clustered standard score.
* **Signal** (the criterion's: kept versus dropped test trades at the chosen threshold, a hard
  filter): ``signal`` = win rate of the kept test trades - win rate of the dropped ones, with
  a Poisson bootstrap interval over tokens (``uncertainty``), and a one-sided sign-flip test
  of whole tokens: ``p_raw`` and ``p_value``, Westfall-Young max-T adjusted over every
  criterion and class of the call (``hypotheses``), with ``combos_searched`` (every threshold
  tried in every training set) stated.
* **The criterion's score** (``criterion_score``, what the screen ranks criteria by): its
  out-of-sample signal over all the quant's classes in token-clustered standard errors, the
  tokens' test-score contributions summed over the classes and standardised like one row's
  ``statistic``. A raw gain is not comparable across criteria: a trait shared by all of a
  token's trades (``twitter_followers``) splits whole tokens, so its gain swings far more
  from sample to sample than that of a value that varies trade by trade; in standard errors
  every noise criterion's score is about N(0, 1), and a class too small to say much adds
  little instead of a coin flip.
* **Effect** (the change's: the whole pass rule replayed with the chosen threshold against
  the current one, on the test trades): ``effect_d_win_rate``, ``effect_d_total_pnl_usd``,
  ``effect_d_roi`` with bootstrap intervals (NaN without a playbook).

Groups with fewer than ``min_trades`` trades or ``min_tokens`` tokens cannot be screened: they
are listed in ``attrs["screen"]["unused_groups"]`` and an ``IncompleteDataWarning`` says so.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from quantscope._errors import IncompleteDataWarning
from quantscope.backtest import _sample, _shadow
from quantscope.backtest._guards import token_codes
from quantscope.backtest._inputs import _operators
from quantscope.backtest._rules import MARKET_CAP_CLASSES, OPERATORS, PlaybookArg
from quantscope.backtest.features import backtest_attrs, bare, criteria_of, decided_by_slice
from quantscope.backtest.sweep import kept_playbooks, threshold_grid
from quantscope.backtest.uncertainty import (
    RESAMPLES,
    SEED,
    ClusterSums,
    cluster_intervals,
    poisson_weights,
    signflip_pvalues,
)

#: The time trades are ordered and cut by, and the time a training trade's outcome is known.
OPENED, CLOSED = "opened_at", "closed_at"
#: Groups smaller than this are not screened.
MIN_TRADES = 60
MIN_TOKENS = 10


@dataclass
class _Acc:
    """One (group, criterion)'s test trades across folds: per-token sums and scores."""

    k: int
    signal: np.ndarray = field(init=False)  # (k, 4): kept trades, kept wins, dropped, wins
    effect: np.ndarray = field(init=False)  # (k, 8): kept trades/wins/pnl/cost, base the same
    score: np.ndarray = field(init=False)  # (k,)
    tried: int = 0
    thresholds: list[float] = field(default_factory=list)
    tested: int = 0

    def __post_init__(self) -> None:
        self.signal = np.zeros((self.k, 4))
        self.effect = np.zeros((self.k, 8))
        self.score = np.zeros(self.k)


def _clustered_z(kept: np.ndarray, won: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """Token-clustered standard score of kept-versus-dropped for each column of ``kept``."""
    kept = kept.astype(np.float64)
    centred = (kept - kept.mean(axis=0)) * (won - won.mean())[:, None]
    per = np.zeros((k, kept.shape[1]))
    np.add.at(per, codes, centred)
    norm = np.sqrt((per * per).sum(axis=0))
    return np.where(norm > 0, per.sum(axis=0) / np.where(norm > 0, norm, 1.0), -np.inf)


def _choose(
    values: np.ndarray,
    won: np.ndarray,
    codes: np.ndarray,
    k: int,
    op: str,
    points: int,
    min_kept_share: float,
) -> tuple[float | None, int]:
    """The training threshold with the best clustered score, and how many were tried."""
    grid = threshold_grid(values, points)
    if not len(grid):
        return None, 0
    kept = OPERATORS[op](values[:, None], grid[None, :])
    share = kept.mean(axis=0)
    ok = (share >= min_kept_share) & (share < 1.0)
    if not ok.any():
        return None, 0
    z = _clustered_z(kept[:, ok], won, codes, k)
    return float(grid[ok][int(np.argmax(z))]), int(ok.sum())


def _folds(
    opened: np.ndarray, closed: np.ndarray, folds: int, embargo: pd.Timedelta
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(purged training mask, test mask) per fold, rows in time order."""
    n = len(opened)
    bounds = np.linspace(0, n, folds + 2).round().astype(int)
    out = []
    for i in range(1, folds + 1):
        test = np.zeros(n, dtype=bool)
        test[bounds[i] : bounds[i + 1]] = True
        if not test.any():
            continue
        start = opened[bounds[i]] - embargo.to_timedelta64()
        train = np.zeros(n, dtype=bool)
        train[: bounds[i]] = True
        train &= ~(closed >= start)  # purge: outcome not known when the test block opens
        out.append((train, test))
    return out


@_shadow.checked()  # never-executed trades warn once (issue 21)
def screen(
    features: pd.DataFrame,
    criteria: Sequence[str] | None = None,
    *,
    folds: int = 4,
    token_groups: int = 2,
    embargo: str | pd.Timedelta = "0h",
    points: int = 21,
    min_kept_share: float = 0.35,
    playbook: PlaybookArg | None = None,
    effect: bool = True,
    flips: int = RESAMPLES,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Every criterion of every (quant, market-cap class) screened out of sample.

    Args:
        features: trades with criterion values (``trade_features``).
        criteria: the criteria to screen (default: every criterion of the frame).
        folds: walk-forward test blocks per group (``folds + 1`` blocks in time order).
        token_groups: random sets the tokens are split into; a test trade's threshold is
            chosen on the other sets' trades (1: time split only, tokens shared).
        embargo: training trades closing within this time before a test block opens are
            dropped too (beyond the purge of those closing after it opens).
        points: quantiles of the training values tried as thresholds.
        min_kept_share: thresholds keeping fewer training trades are not tried.
        playbook: for the effect (default: the playbooks the features keep).
        effect: replay each chosen threshold for the ``effect_*`` columns (False: the signal
            only, about a sixth of the time; the effect columns are NaN).
        flips: sign flips of the test; ``resamples``: bootstrap resamples of the intervals.
        seed: seeds the token split, the flips and the resamples.
        alpha: ``significant`` is ``p_value < alpha``.

    Returns:
        One row per (quant, class, criterion): ``quant_id``, ``market_cap_class``,
        ``criterion``, ``operator``, ``threshold`` (the median of those chosen), ``test_trades``,
        ``tokens``, ``signal`` with ``signal_lo``/``signal_hi``, ``statistic``,
        ``criterion_score`` (the quant's classes pooled, module docstring), ``p_raw``,
        ``p_value`` (family-wise adjusted), ``significant``, ``effect_d_win_rate``,
        ``effect_d_total_pnl_usd``, ``effect_d_roi`` with ``_lo``/``_hi``, ``hypotheses``
        and ``combos_searched``. ``attrs["screen"]`` records the design, the groups that could
        not be used and the criteria no training set could split (``untested``: a value that
        nearly every trade shares).
    """
    meta = backtest_attrs(features)
    names = list(criteria) if criteria is not None else criteria_of(features)
    book = playbook if playbook is not None else kept_playbooks(features)
    ops = _operators(meta.get("operators") or {}, names, [None] * len(names), book)
    decided = decided_by_slice(meta.get("decided_thresholds"))
    frame = bare(features)
    frame = frame[frame["profitable"].notna() & frame[OPENED].notna()].reset_index(drop=True)
    found = token_codes([frame])
    codes, k = found if found is not None else (np.arange(len(frame), dtype=np.intp), len(frame))
    rng = np.random.default_rng(seed)
    sets = rng.permutation(k) % max(token_groups, 1)
    lag = pd.Timedelta(embargo)
    accs: dict[tuple[int, str, str], _Acc] = {}
    unused: list[dict[str, Any]] = []
    klass = frame["market_cap_class"].astype("string")
    order = [c for c, _ in MARKET_CAP_CLASSES]
    for q in sorted(int(x) for x in frame["quant_id"].dropna().unique()):
        for cls in order + sorted(set(klass.dropna()) - set(order)):
            mask = ((frame["quant_id"] == q) & (klass == cls)).fillna(False).to_numpy(dtype=bool)
            rows = frame[mask].sort_values(OPENED, kind="stable")
            n_tokens = len(np.unique(codes[rows.index.to_numpy()])) if len(rows) else 0
            if len(rows) < MIN_TRADES or n_tokens < MIN_TOKENS:
                if len(rows):
                    unused.append(
                        {
                            "quant_id": q,
                            "market_cap_class": cls,
                            "trades": len(rows),
                            "tokens": n_tokens,
                        }
                    )
                continue
            _screen_group(
                rows,
                q,
                cls,
                names,
                ops,
                codes,
                k,
                sets,
                folds,
                lag,
                points,
                min_kept_share,
                book if effect else None,
                decided,
                accs,
            )
    if unused:
        warnings.warn(
            f"screen: {len(unused)} group(s) could not be screened (fewer than {MIN_TRADES} "
            f"trades or {MIN_TOKENS} tokens): "
            + ", ".join(
                f"quant {u['quant_id']} {u['market_cap_class']} ({u['trades']} trades)"
                for u in unused
            )
            + "; see attrs['screen']['unused_groups']",
            IncompleteDataWarning,
            stacklevel=2,
        )
    return _report(
        accs,
        names,
        ops,
        flips,
        resamples,
        seed,
        alpha,
        folds,
        token_groups,
        lag,
        unused,
        min_kept_share,
    )


def _screen_group(
    rows: pd.DataFrame,
    q: int,
    cls: str,
    names: Sequence[str],
    ops: Sequence[str],
    codes: np.ndarray,
    k: int,
    sets: np.ndarray,
    folds: int,
    lag: pd.Timedelta,
    points: int,
    min_kept_share: float,
    book: PlaybookArg | None,
    decided: Any,
    accs: dict[tuple[int, str, str], _Acc],
) -> None:
    idx = rows.index.to_numpy()
    rc = codes[idx]
    won = rows["profitable"].to_numpy(dtype=np.float64, na_value=0.0)
    opened = rows[OPENED].to_numpy()
    closed = rows[CLOSED].to_numpy()
    closed = np.where(pd.isna(closed), np.datetime64("NaT"), closed)
    fold_masks = _folds(opened, closed, folds, lag)
    tokset = sets[rc]
    split = np.unique(sets)
    for name, op in zip(names, ops, strict=True):
        acc = accs.setdefault((q, cls, name), _Acc(k))
        values = rows[name].to_numpy(dtype=np.float64, na_value=np.nan)
        have = ~np.isnan(values) & rows["pnl_usd"].notna().to_numpy()
        replayed = _replayed(rows, name, op, book, decided)
        for train, test in fold_masks:
            for g in np.unique(tokset[test]):
                # With one token set the tokens are shared: train on every earlier trade.
                tr = train & ((tokset != g) | (len(split) == 1)) & have
                te = test & (tokset == g) & have
                if tr.sum() < 10 or not te.any():
                    continue
                t, tried = _choose(values[tr], won[tr], rc[tr], k, op, points, min_kept_share)
                acc.tried += tried
                if t is None:
                    continue
                acc.thresholds.append(t)
                kept = OPERATORS[op](values[te], t)
                c, w = rc[te], won[te]
                acc.tested += int(te.sum())
                for j, x in enumerate((kept, kept * w, ~kept, ~kept * w)):
                    acc.signal[:, j] += np.bincount(c, weights=x.astype(np.float64), minlength=k)
                centred = (kept - kept.mean()) * (w - w.mean())
                acc.score += np.bincount(c, weights=centred, minlength=k)
                if replayed is not None:
                    _add_effect(acc, replayed, te, t, op, c, w, rows)


@dataclass
class _Replayed:
    """A group's rows as the replayed rule sees one criterion: a value that decides, and
    whether the current threshold keeps the row (rows never kept are marked).
    """

    values: np.ndarray  # +-inf: passes anyway; NaN: never kept
    base: np.ndarray  # bool


def _replayed(
    rows: pd.DataFrame, name: str, op: str, book: PlaybookArg | None, decided: Any
) -> _Replayed | None:
    if book is None:
        return None
    frame = rows.reset_index(drop=True)
    frame["_row"] = np.arange(len(frame))
    try:
        sample = _sample.sample(frame, [name], [op], None, book, "replay")
    except (ValueError, KeyError):
        return None
    cur = _sample.current(sample, decided, name, None, book)
    base = _sample.baseline(sample, [op], [cur])
    values = np.full(len(frame), np.nan)
    kept_base = np.zeros(len(frame), dtype=bool)
    where = sample.parts[0]["_row"].to_numpy()
    values[where] = sample.values[0]
    kept_base[where] = base
    return _Replayed(values, kept_base)


def _add_effect(
    acc: _Acc,
    rep: _Replayed,
    te: np.ndarray,
    t: float,
    op: str,
    c: np.ndarray,
    w: np.ndarray,
    rows: pd.DataFrame,
) -> None:
    v = rep.values[te]
    kept = OPERATORS[op](v, t)  # NaN (never kept) compares False
    base = rep.base[te]
    pnl = rows["pnl_usd"].to_numpy(dtype=np.float64, na_value=0.0)[te]
    cost = rows["buy_cost_usd"].to_numpy(dtype=np.float64, na_value=0.0)[te]
    for j, (mask, x) in enumerate(
        [
            (kept, 1.0),
            (kept, w),
            (kept, pnl),
            (kept, cost),
            (base, 1.0),
            (base, w),
            (base, pnl),
            (base, cost),
        ]
    ):
        acc.effect[:, j] += np.bincount(c, weights=np.where(mask, x, 0.0), minlength=acc.k)


def _criterion_scores(
    accs: dict[tuple[int, str, str], _Acc], keys: Sequence[tuple[int, str, str]]
) -> dict[tuple[int, str], float]:
    """Each (quant, criterion)'s out-of-sample signal over its classes, in token-clustered
    standard errors: the tokens' score contributions summed over the classes (a token can
    change class as its market cap moves, so the sums are per token, not per class), then
    ``sum_c s_c / sqrt(sum_c s_c^2)`` as for one row. What the screen ranks criteria by.
    """
    summed: dict[tuple[int, str], np.ndarray] = {}
    for q, _cls, name in keys:
        score = accs[q, _cls, name].score
        got = summed.get((q, name))
        summed[q, name] = score.copy() if got is None else got + score
    out = {}
    for key, s in summed.items():
        norm = float(np.sqrt((s * s).sum()))
        out[key] = float(s.sum() / norm) if norm > 0 else float("nan")
    return out


def _report(
    accs: dict[tuple[int, str, str], _Acc],
    names: Sequence[str],
    ops: Sequence[str],
    flips: int,
    resamples: int,
    seed: int,
    alpha: float,
    folds: int,
    token_groups: int,
    lag: pd.Timedelta,
    unused: list[dict[str, Any]],
    min_kept_share: float,
) -> pd.DataFrame:
    keys = [key for key, a in accs.items() if a.tested]
    combos = sum(a.tried for a in accs.values())
    op_of = dict(zip(names, ops, strict=True))
    rows: list[dict[str, Any]] = []
    pooled: dict[tuple[int, str], float] = {}
    if keys:
        scores = np.stack([accs[key].score for key in keys], axis=1)
        stat, p_raw, p_adj = signflip_pvalues(scores, flips=flips, seed=seed)
        pooled = _criterion_scores(accs, keys)
        # Every row resamples the same tokens with the same seed: draw the weights once.
        drawn = list(poisson_weights(accs[keys[0]].k, resamples, seed))
    for j, key in enumerate(keys):
        a = accs[key]
        s = a.signal
        sig = ClusterSums(
            trades=s[:, [0]],
            wins=s[:, [1]],
            pnl=np.zeros((a.k, 1)),
            cost=np.zeros((a.k, 1)),
            base_trades=s[:, 2],
            base_wins=s[:, 3],
            base_pnl=np.zeros(a.k),
            base_cost=np.zeros(a.k),
        )
        got = cluster_intervals(sig, resamples=resamples, seed=seed, nested=False, weights=drawn)
        e = a.effect
        eff = ClusterSums(
            trades=e[:, [0]],
            wins=e[:, [1]],
            pnl=e[:, [2]],
            cost=e[:, [3]],
            base_trades=e[:, 4],
            base_wins=e[:, 5],
            base_pnl=e[:, 6],
            base_cost=e[:, 7],
        )
        has_effect = bool(e[:, 4].sum() > 0)
        eff_got = (
            cluster_intervals(eff, resamples=resamples, seed=seed, weights=drawn)
            if has_effect
            else {}
        )
        row: dict[str, Any] = {
            "quant_id": key[0],
            "market_cap_class": key[1],
            "criterion": key[2],
            "operator": op_of[key[2]],
            "threshold": float(np.median(a.thresholds)),
            "test_trades": a.tested,
            "tokens": int(np.count_nonzero(s[:, 0] + s[:, 2])),
            "signal": float(got["d_win_rate"][0]),
            "signal_lo": float(got["d_win_rate_lo"][0]),
            "signal_hi": float(got["d_win_rate_hi"][0]),
            "statistic": float(stat[j]),
            "criterion_score": pooled[key[0], key[2]],
            "p_raw": float(p_raw[j]),
            "p_value": float(p_adj[j]),
        }
        for name in ("d_win_rate", "d_total_pnl_usd", "d_roi"):
            for suffix in ("", "_lo", "_hi"):
                value = eff_got.get(f"{name}{suffix}")
                row[f"effect_{name}{suffix}"] = float(value[0]) if value is not None else np.nan
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):
        out["significant"] = out["p_value"] < alpha
        out["hypotheses"] = len(keys)
        out["combos_searched"] = combos
    out.attrs["screen"] = {
        "question_signal": "kept versus dropped test trades at the threshold chosen on training",
        "question_effect": "the whole pass rule replayed with that threshold, against the "
        "current one, on the test trades",
        "folds": folds,
        "token_groups": token_groups,
        "embargo": str(lag),
        "purge": "training trades closing at or after the test block's first open (less the "
        "embargo) are dropped",
        "test": "one-sided sign flip of whole tokens, Westfall-Young max-T over every row",
        "criterion_score": "out-of-sample kept-versus-dropped score over the quant's classes, "
        "in token-clustered standard errors",
        "min_kept_share": min_kept_share,
        "hypotheses": len(keys),
        "combos_searched": combos,
        "flips": flips,
        "resamples": resamples,
        "seed": seed,
        "alpha": alpha,
        "unused_groups": unused,
        "untested": [
            {"quant_id": q, "market_cap_class": c, "criterion": n}
            for (q, c, n), a in accs.items()
            if not a.tested
        ],
    }
    return out
