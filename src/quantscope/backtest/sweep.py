"""What-if threshold sweeps: the trades a threshold keeps, and how they did, for many thresholds.

``what_if(features, criterion, thresholds)`` answers, for each candidate threshold of one
criterion, "had this been the threshold, which of these trades would have been taken, and
with what win rate, PnL, ROI and profit factor?", next to the change against the current
threshold. ``what_if_grid`` does the same for every pair of thresholds of two criteria (a
heatmap's worth: ``pivot_grid``); ``rank.rank_criteria`` ranks criteria by their effect.
The sums come from ``_kernel.sweep``: one sort per criterion, cumulative sums, a binary search
per threshold; no loop over the thresholds (benchmarks/bench_sweep.py).

Two rules say which trades a threshold keeps. ``rule="filter"`` (the default) treats the
criterion as a hard filter, as the service's optimizer does: a trade is *kept* at ``t`` when
``op(value, t)``. ``rule="playbook"`` replays the whole pass rule with only this threshold
moved: a criterion that is not required only moves the weighted score, so a trade whose other
criteria score enough stays whatever its value (the filter overstates such a criterion's
effect).

Trades only exist for evaluations that passed when they were made, so a threshold looser than
the current one keeps every trade the current one keeps and cannot show the evaluations it
would newly admit: such rows have ``admits_unseen`` True. Simulated entries
(``simulate.simulated_entries``) stand in for those evaluations when given: a failed
evaluation is admitted at ``t`` when ``op(value, t)`` and the playbook would have passed it
had this criterion passed (the rule replayed with the criterion forced to pass).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from quantscope.backtest import _guards, _sample
from quantscope.backtest._kernel import masked_sums, sweep
from quantscope.backtest._metrics import DELTAS, METRICS, deltas, metrics
from quantscope.backtest._rules import OPERATORS, PlaybookArg, check_operator, is_looser
from quantscope.backtest.features import backtest_attrs, bare

ThresholdsArg = Sequence[float] | np.ndarray | int | None

_NOTE = (
    "A trade is kept at a threshold when op(value, threshold) holds. Trades exist only for "
    "evaluations that passed when they were made: rows with admits_unseen=True loosen a "
    "current threshold and would also admit evaluations that failed, which have no trade"
)
_NOTE_SIMULATED = (
    "; simulated entries stand in for them (simulated_trades): entered at the detection price "
    "and exited by the researcher's rule on the token's candles, estimates, not trades."
)


def threshold_grid(values: np.ndarray, points: int = 101) -> np.ndarray:
    """``points`` evenly spaced quantiles of the values, as observed values, unique, ascending."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return np.array([], dtype=np.float64)
    qs = np.quantile(finite, np.linspace(0.0, 1.0, max(points, 2)), method="inverted_cdf")
    return np.unique(qs)


def _operators(
    recorded: Mapping[str, str],
    criteria: Sequence[str],
    given: Sequence[str | None],
    playbook: PlaybookArg | None,
) -> list[str]:
    found: list[str] = []
    for criterion, op in zip(criteria, given, strict=True):
        if op is None and playbook is not None:
            op = _playbook_operator(playbook, criterion)
        if op is None:
            op = recorded.get(criterion)
        if op is None:
            raise ValueError(
                f"no operator known for {criterion!r}: pass operator= or a playbook "
                f"(one of {sorted(OPERATORS)})"
            )
        found.append(check_operator(op))
    return found


def _playbook_operator(playbook: PlaybookArg, criterion: str) -> str | None:
    frames = [playbook] if isinstance(playbook, pd.DataFrame) else list(playbook.values())
    for frame in frames:
        ops = frame.loc[frame["criterion"] == criterion, "operator"].dropna()
        if len(ops):
            return str(ops.iloc[0])
    return None


def _sweep_frame(
    features: pd.DataFrame,
    criteria: Sequence[str],
    thresholds: Sequence[ThresholdsArg],
    operators: Sequence[str | None],
    given: Sequence[float | None],
    playbook: PlaybookArg | None,
    simulated: pd.DataFrame | None,
    rule: str = "filter",
) -> pd.DataFrame:
    meta = backtest_attrs(features)
    ops = _operators(meta.get("operators") or {}, criteria, operators, playbook)
    if rule not in ("filter", "playbook"):
        raise ValueError(f'rule must be "filter" or "playbook", got {rule!r}')
    bare_simulated = None if simulated is None else bare(simulated)
    rows = _sample.sample(bare(features), criteria, ops, bare_simulated, playbook, rule)
    grids = [
        _grid(c, v, t, rows) for c, v, t in zip(criteria, rows.values, thresholds, strict=True)
    ]
    decided = meta.get("decided_thresholds") or {}
    currents = [
        _sample.current(rows, decided, c, g, playbook) for c, g in zip(criteria, given, strict=True)
    ]
    table, base = _sums_and_baseline(rows, grids, ops, currents)
    mesh = [m.reshape(-1) for m in np.meshgrid(*grids, indexing="ij")]
    columns = (
        {"threshold": mesh[0]} if len(criteria) == 1 else dict(zip(criteria, mesh, strict=True))
    )
    columns.update({name: np.asarray(table[name]).reshape(-1) for name in METRICS})
    knowns = [_sample.known_values(c) for c in currents]
    columns.update(_flags(mesh, ops, knowns))
    columns.update({k: v.reshape(-1) for k, v in deltas(table, base).items()})
    out = pd.DataFrame(columns)
    out["admits_unseen"] = out["admits_unseen"].astype("boolean")
    if any(k is None for k in knowns):
        out["admits_unseen"] = pd.NA
    out.attrs["what_if"] = {
        "criteria": tuple(criteria),
        "operators": tuple(ops),
        "rule": rule,
        "current": {
            c: (None if k is None else k.tolist()) for c, k in zip(criteria, knowns, strict=True)
        },
        "baseline": {name: float(np.asarray(base[name])) for name in METRICS},
        "real_trades": rows.real_total,
        "simulated_candidates": int(np.count_nonzero(rows.outcomes.simulated)),
        "dropped_trades": rows.dropped,
        "note": _NOTE + (_NOTE_SIMULATED if simulated is not None else "."),
    }
    return _guards.append(out, rows, grids, ops, currents)


def _grid(
    criterion: str, values: np.ndarray, given: ThresholdsArg, rows: _sample.Sample
) -> np.ndarray:
    if given is None or isinstance(given, int):
        real = values[~rows.outcomes.simulated] if rows.outcomes.simulated.any() else values
        return threshold_grid(real, 101 if given is None else given)
    grid = np.asarray(given, dtype=np.float64)
    if grid.ndim != 1 or np.isnan(grid).any():
        raise ValueError(f"the thresholds of {criterion!r} must be a 1-d array without NaN")
    return grid


def _sums_and_baseline(
    rows: _sample.Sample,
    grids: Sequence[np.ndarray],
    ops: Sequence[str],
    currents: Sequence[_sample.Current],
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The metrics at every threshold cell, and at the current thresholds.

    When every criterion has one current threshold for all rows, the baseline is one more
    threshold of the same sweep (the last of each axis); otherwise it is summed from a mask.
    """
    scalars = [c for c in currents if isinstance(c, float)]
    if len(scalars) == len(currents):
        extended = [np.append(g, c) for g, c in zip(grids, scalars, strict=True)]
        found = metrics(sweep(rows.values, extended, ops, rows.outcomes), rows.real_total)
        inner = tuple(slice(0, len(g)) for g in grids)
        last = tuple(len(g) for g in grids)
        return {k: v[inner] for k, v in found.items()}, {k: v[last] for k, v in found.items()}
    table = metrics(sweep(rows.values, grids, ops, rows.outcomes), rows.real_total)
    kept = _sample.baseline(rows, ops, currents)
    return table, metrics(masked_sums(kept, rows.outcomes), rows.real_total)


def _flags(
    mesh: Sequence[np.ndarray], ops: Sequence[str], knowns: Sequence[np.ndarray | None]
) -> dict[str, np.ndarray]:
    """``admits_unseen`` (a threshold looser than a current one) and ``is_current``, per cell."""
    unseen = np.zeros(mesh[0].size, dtype=bool)
    is_current = np.ones(mesh[0].size, dtype=bool)
    for flat, op, known in zip(mesh, ops, knowns, strict=True):
        for c in [] if known is None else known:
            unseen |= is_looser(op, flat, float(c))
        is_current &= (flat == known[0]) if known is not None and len(known) == 1 else False
    return {"admits_unseen": unseen, "is_current": is_current}


def what_if(
    features: pd.DataFrame,
    criterion: str,
    thresholds: ThresholdsArg = None,
    *,
    operator: str | None = None,
    current: float | None = None,
    playbook: PlaybookArg | None = None,
    simulated: pd.DataFrame | None = None,
    rule: str = "filter",
) -> pd.DataFrame:
    """The trades kept and their results at each candidate threshold of one criterion.

    Args:
        features: trades with criterion values (``trade_features``); restrict it to one
            quant and market-cap class to study one playbook entry.
        criterion: the criterion key (a column of ``features``).
        thresholds: the candidates, in the order wanted; an int ``k`` (or None: 101) takes
            ``k`` quantiles of the trades' values.
        operator: the criterion's operator; default: the playbook's, else the one the
            evaluation details recorded.
        current: the current threshold the changes are measured against; default: the
            playbook's for each trade's class, else the threshold each trade was decided
            under (from the details). Without any, the baseline is every trade.
        playbook: the quant's playbook (``load_playbook``) or {quant_id: playbook}; needed
            with ``simulated``.
        simulated: simulated entries for evaluations that failed (``simulated_entries``).
        rule: ``"filter"`` (default): the criterion is a hard filter, a trade is kept when
            ``op(value, t)``, as the service's optimizer counts. ``"playbook"``: the whole
            pass rule decides with the threshold moved and everything else as it is (needs
            ``playbook``): a trade whose other criteria score enough passes whatever this
            one's value, unless it is required. Filter effects of a criterion with a small
            weight that is not required overstate what changing its threshold would do;
            ``"playbook"`` measures that.

    Returns:
        One row per threshold: ``threshold``, the metrics of ``_metrics.METRICS``,
        ``admits_unseen`` (looser than a current threshold: evaluations that failed would
        pass too; NA when no current threshold is known), ``is_current`` and the changes
        ``d_trades``, ``d_win_rate``, ``d_total_pnl_usd``, ``d_roi``, ``d_profit_factor``
        against the current threshold. ``attrs["what_if"]`` has the operator, the current
        threshold(s), the baseline's metrics, the counts and a note on what the rows mean.
    """
    return _sweep_frame(
        features, [criterion], [thresholds], [operator], [current], playbook, simulated, rule
    )


def what_if_grid(
    features: pd.DataFrame,
    criteria: tuple[str, str],
    thresholds: tuple[ThresholdsArg, ThresholdsArg] = (None, None),
    *,
    operators: tuple[str | None, str | None] = (None, None),
    current: tuple[float | None, float | None] = (None, None),
    playbook: PlaybookArg | None = None,
    simulated: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``what_if`` over every pair of thresholds of two criteria (kept: both pass).

    Returns one row per pair: a column per criterion holding its threshold, then the same
    metrics, flags and changes as ``what_if``. ``pivot_grid`` turns one metric into a
    heatmap-ready table. Thresholds default to 21 quantiles each.
    """
    if len(criteria) != 2 or criteria[0] == criteria[1]:
        raise ValueError(f"what_if_grid needs two different criteria, got {criteria!r}")
    grids = [21 if t is None else t for t in thresholds]
    return _sweep_frame(
        features, list(criteria), grids, list(operators), list(current), playbook, simulated
    )


def pivot_grid(grid: pd.DataFrame, metric: str = "win_rate") -> pd.DataFrame:
    """One metric of ``what_if_grid`` as a table: rows the first criterion's thresholds,
    columns the second's (``ax.imshow(table)`` or ``plots`` draw it as a heatmap)."""
    first, second = grid.attrs["what_if"]["criteria"]
    if metric not in grid.columns:
        raise KeyError(
            f"no metric {metric!r}; choose from {list(METRICS) + ['d_' + d for d in DELTAS]}"
        )
    return grid.pivot(index=first, columns=second, values=metric)


def __getattr__(name: str) -> object:
    """``rank_criteria`` moved to ``backtest.rank``: still importable from here.

    The package imports ``rank`` (which builds on ``what_if``) before anyone can ask, so it is
    looked up, not imported: no import circle.
    """
    if name == "rank_criteria":
        return sys.modules["quantscope.backtest.rank"].rank_criteria
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
