"""What-if threshold sweeps: the trades a threshold keeps, and how they did, for many thresholds.

``what_if(features, criterion, thresholds)`` answers, for each candidate threshold of one
criterion, "had this been the threshold, which of these trades would have been taken, and
with what win rate, PnL, ROI and profit factor?", next to the change against the current
threshold. ``what_if_grid`` does the same for every pair of thresholds of two criteria (a
heatmap's worth: ``pivot_grid``); ``rank_criteria`` ranks criteria by their what-if effect.
The sums come from ``_kernel.sweep``: one sort per criterion, cumulative sums, a binary search
per threshold; no loop over the thresholds (benchmarks/bench_sweep.py).

Two rules say which trades a threshold keeps. ``rule="replay"`` (the default) replays the
whole pass rule (docs/service-contract.md) with only this threshold moved, each trade by the
playbook slice of its quant and market-cap class, with the playbook's operators: what applying
the threshold would do. A criterion that is not required only moves the weighted score, so a
trade whose other criteria score enough stays whatever its value. ``rule="filter"`` treats the
criterion as a hard filter, as the service's optimizer counts: a trade is *kept* at ``t`` when
``op(value, t)``. The filter drops every trade the replay drops and more, so its effects are an
**upper bound** on what applying does, and every frame it makes says so (``attrs``' ``label``).
The playbook comes from ``playbook=``, else from the features (``trade_features`` keeps the
quants' playbooks in its attrs); no function here loads anything.

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
from dataclasses import fields

import numpy as np
import pandas as pd

from quantscope.backtest import _guards, _sample
from quantscope.backtest._kernel import Sums, masked_sums, sweep
from quantscope.backtest._metrics import DELTAS, METRICS, deltas, metrics
from quantscope.backtest._rules import (
    NEGATION,
    OPERATORS,
    PlaybookArg,
    check_operator,
    is_looser,
)
from quantscope.backtest.features import (
    backtest_attrs,
    bare,
    check_criteria,
    decided_by_slice,
    kept_playbooks,
)

ThresholdsArg = Sequence[float] | np.ndarray | int | None

#: The rules a sweep can count by, and the label every frame of that rule carries.
RULE_LABELS: dict[str, str] = {
    "replay": "whole pass rule replayed: what applying the threshold does",
    "filter": "hard filter: an UPPER BOUND on what applying the threshold does",
}

_NOTE_FILTER = (
    "UPPER BOUND: the criterion counted as a hard filter, as the service's optimizer does (a "
    "trade is kept at a threshold when op(value, threshold) holds); "
    "the playbook passes a trade that fails a criterion that is not required when the rest "
    "of its score reaches the pass mark, so applying the threshold keeps at least these "
    'trades (rule="replay" says what it does). '
)
_NOTE_REPLAY = (
    "The whole pass rule replayed with the threshold moved, each trade by its quant's "
    "playbook slice for its market-cap class: what applying the threshold would do. "
)
_NOTE = (
    "Trades exist only for evaluations that passed when they were made: rows with "
    "admits_unseen=True loosen a current threshold and would also admit evaluations that "
    "failed, which have no trade"
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


def _no_playbook(features: pd.DataFrame) -> str:
    why = backtest_attrs(features).get("playbooks_missing")
    return (
        'rule="replay" (the default) replays the playbook, and none was given: pass '
        "playbook=qsc.load_playbook(quant_id) (or {quant_id: playbook}), or make the features "
        "with bt.trade_features(trades), which keeps the quants' playbooks (with details= "
        'given: trade_features(..., playbook=...)). rule="filter" needs none but only gives '
        "an upper bound."
        + (f" The playbooks could not be loaded with these features: {why}" if why else "")
    )


def resolve_playbook(
    features: pd.DataFrame, playbook: PlaybookArg | None, rule: str
) -> PlaybookArg | None:
    """The playbook a sweep uses: ``playbook``, else the one the features keep; a ValueError
    naming both fixes when ``rule="replay"`` finds neither."""
    if rule not in RULE_LABELS:
        raise ValueError(f"rule must be one of {sorted(RULE_LABELS)}, got {rule!r}")
    found = playbook if playbook is not None else kept_playbooks(features)
    if found is None and rule == "replay":
        raise ValueError(_no_playbook(features))
    return found


def _sweep_frame(
    features: pd.DataFrame,
    criteria: Sequence[str],
    thresholds: Sequence[ThresholdsArg],
    operators: Sequence[str | None],
    given: Sequence[float | None],
    playbook: PlaybookArg | None,
    simulated: pd.DataFrame | None,
    rule: str,
    bootstrap: bool,
) -> pd.DataFrame:
    check_criteria(features, criteria, "what_if_grid" if len(criteria) > 1 else "what_if")
    playbook = resolve_playbook(features, playbook, rule)
    meta = backtest_attrs(features)
    ops = _operators(meta.get("operators") or {}, criteria, operators, playbook)
    features = bare(features)
    bare_simulated = None if simulated is None else bare(simulated)
    rows = _sample.sample(features, criteria, ops, bare_simulated, playbook, rule)
    observed = features[_sample.usable(features, criteria)] if len(features) else features
    grids = [_grid(c, observed[c], t) for c, t in zip(criteria, thresholds, strict=True)]
    decided = decided_by_slice(meta.get("decided_thresholds"))

    def currents_of(part: _sample.Sample) -> list[_sample.Current]:
        return [
            _sample.current(part, decided, c, g, playbook)
            for c, g in zip(criteria, given, strict=True)
        ]

    currents = currents_of(rows)
    sums, base_sums = _sums_and_baseline(rows, grids, ops, currents)
    if rows.either is not None:
        # Kept when either passes: all of those rows but the ones failing both thresholds.
        negated = [NEGATION[op] for op in ops]
        failing, failing_base = _sums_and_baseline(
            rows.either, grids, negated, currents_of(rows.either)
        )
        every = masked_sums(np.ones(len(rows.either.outcomes.pnl), bool), rows.either.outcomes)
        sums = _add(sums, _add(every, failing, -1))
        base_sums = _add(base_sums, _add(every, failing_base, -1))
    table, base = metrics(sums, rows.real_total), metrics(base_sums, rows.real_total)
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
    note = _NOTE_FILTER if rule == "filter" else _NOTE_REPLAY
    out.attrs["what_if"] = {
        "criteria": tuple(criteria),
        "operators": tuple(ops),
        "rule": rule,
        "upper_bound": rule == "filter",
        "label": RULE_LABELS[rule],
        "current": {
            c: (None if k is None else k.tolist()) for c, k in zip(criteria, knowns, strict=True)
        },
        "baseline": {name: float(np.asarray(base[name])) for name in METRICS},
        "real_trades": rows.real_total,
        "simulated_candidates": _candidates(rows),
        "dropped_trades": rows.dropped,
        "note": note + _NOTE + (_NOTE_SIMULATED if simulated is not None else "."),
    }
    return _guards.append(out, rows, grids, ops, currents, bootstrap=bootstrap)


def _candidates(rows: _sample.Sample) -> int:
    parts = [rows] if rows.either is None else [rows, rows.either]
    return sum(int(np.count_nonzero(p.outcomes.simulated)) for p in parts)


def _add(a: Sums, b: Sums, sign: int = 1) -> Sums:
    """``a + sign * b``, field by field (shapes broadcast: a 0-d total against a table)."""
    return Sums(**{f.name: getattr(a, f.name) + sign * getattr(b, f.name) for f in fields(Sums)})


def _grid(criterion: str, observed: pd.Series, given: ThresholdsArg) -> np.ndarray:
    """The thresholds to sweep: ``given``, or quantiles of the values the trades had."""
    if given is None or isinstance(given, int):
        values = observed.to_numpy(dtype=np.float64, na_value=np.nan)
        return threshold_grid(values, 101 if given is None else given)
    grid = np.asarray(given, dtype=np.float64)
    if grid.ndim != 1 or np.isnan(grid).any():
        raise ValueError(f"the thresholds of {criterion!r} must be a 1-d array without NaN")
    return grid


def _cell(sums: Sums, index: tuple[slice, ...] | tuple[int, ...]) -> Sums:
    return Sums(**{f.name: getattr(sums, f.name)[index] for f in fields(Sums)})


def _sums_and_baseline(
    rows: _sample.Sample,
    grids: Sequence[np.ndarray],
    ops: Sequence[str],
    currents: Sequence[_sample.Current],
) -> tuple[Sums, Sums]:
    """The sums at every threshold cell, and at the current thresholds.

    When every criterion has one current threshold for all rows, the baseline is one more
    threshold of the same sweep (the last of each axis); otherwise it is summed from a mask.
    """
    scalars = [c for c in currents if isinstance(c, float)]
    if len(scalars) == len(currents):
        extended = [np.append(g, c) for g, c in zip(grids, scalars, strict=True)]
        found = sweep(rows.values, extended, ops, rows.outcomes)
        inner = tuple(slice(0, len(g)) for g in grids)
        last = tuple(len(g) for g in grids)
        return _cell(found, inner), _cell(found, last)
    table = sweep(rows.values, grids, ops, rows.outcomes)
    return table, masked_sums(_sample.baseline(rows, ops, currents), rows.outcomes)


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
    rule: str = "replay",
    bootstrap: bool = True,
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
        playbook: the quant's playbook (``load_playbook``) or {quant_id: playbook};
            default: the playbooks the features keep (``trade_features``). Needed by
            ``rule="replay"`` and with ``simulated``.
        simulated: simulated entries for evaluations that failed (``simulated_entries``).
        rule: ``"replay"`` (default): the whole pass rule decides with the threshold moved
            and everything else as it is, each trade by its quant's playbook slice for its
            market-cap class: what applying the threshold would do. A trade whose other
            criteria score enough passes whatever this one's value, unless it is required.
            ``"filter"``: the criterion is a hard filter, a trade is kept when
            ``op(value, t)``, as the service's optimizer counts: an UPPER BOUND on what
            applying does (``attrs["what_if"]["upper_bound"]`` is True and its ``label``
            says so). Give ``features`` of one market-cap class to move one playbook entry:
            the threshold moves in every slice the rows are decided by.
        bootstrap: compute the bootstrap intervals of the changes (``_guards``; False:
            those columns NaN and ``attrs["what_if"]["guards"]`` says so, for a caller that
            reads few of many rows).

    Returns:
        One row per threshold: ``threshold``, the metrics of ``_metrics.METRICS``,
        ``admits_unseen`` (looser than a current threshold: evaluations that failed would
        pass too; NA when no current threshold is known), ``is_current`` and the changes
        ``d_trades``, ``d_win_rate``, ``d_total_pnl_usd``, ``d_roi``, ``d_profit_factor``
        against the current threshold. ``attrs["what_if"]`` has the rule, ``upper_bound``,
        a plot-ready ``label``, the operator, the current threshold(s), the baseline's
        metrics, the counts and a note on what the rows mean.
    """
    return _sweep_frame(
        features,
        [criterion],
        [thresholds],
        [operator],
        [current],
        playbook,
        simulated,
        rule,
        bootstrap,
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
    rule: str = "replay",
    bootstrap: bool = True,
) -> pd.DataFrame:
    """``what_if`` over every pair of thresholds of two criteria, both moved at once.

    ``rule`` as in ``what_if``: ``"replay"`` (default) replays the whole pass rule with both
    thresholds moved (a trade may need both criteria, one, or either); ``"filter"`` keeps the
    trades that pass both, an upper bound; ``bootstrap`` as in ``what_if``. Returns one row
    per pair: a column per criterion holding its threshold, then the same metrics, flags and
    changes as ``what_if``.
    ``pivot_grid`` turns one metric into a heatmap-ready table. Thresholds default to 21
    quantiles each.
    """
    if len(criteria) != 2 or criteria[0] == criteria[1]:
        raise ValueError(f"what_if_grid needs two different criteria, got {criteria!r}")
    grids = [21 if t is None else t for t in thresholds]
    return _sweep_frame(
        features,
        list(criteria),
        grids,
        list(operators),
        list(current),
        playbook,
        simulated,
        rule,
        bootstrap,
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
