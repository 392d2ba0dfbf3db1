"""What-if threshold sweeps: the trades a threshold keeps, and how they did, for many thresholds.

``what_if(features, criterion, thresholds)`` answers, for each candidate threshold of one
criterion, "had this been the threshold, which of these trades would have been taken, and
with what win rate, PnL, ROI and profit factor?", next to the change against the current
threshold. ``what_if_grid`` does the same for every pair of thresholds of two criteria (a
heatmap's worth: ``pivot_grid``); ``rank_criteria`` ranks criteria by their what-if effect.
The sums come from ``_kernel.sweep``: each row's bucket among the thresholds, one ``bincount``
per outcome, cumulative sums; no sort of the rows, no loop over the thresholds; the current
thresholds' baseline from the same table (benchmarks/bench_sweep.py, bench_replay.py).

A sweep answers one of the two questions of ``backtest.questions``. ``rule="replay"`` (the
default) answers the **effect**: it replays the whole pass rule (docs/service-contract.md)
with only this threshold moved, each trade by the playbook slice of its quant and market-cap
class, with the playbook's operators: what applying the threshold would do. A criterion that
is not required only moves the weighted score, so a trade whose other criteria score enough
stays whatever its value. ``rule="filter"`` answers the **signal**: the criterion as a hard
filter, as the service's optimizer counts (a trade is *kept* at ``t`` when ``op(value, t)``).
Neither bounds the other: the filter keeps fewer trades, but their win rate, PnL or ROI can
lie on either side of the replayed ones (docs/metrics.md, "The two questions").
``rule="both"`` puts the two side by side (``effect_*`` and ``signal_*`` columns, ``_both``).
Every frame records its question in ``attrs["what_if"]["question"]``. The playbook comes from
``playbook=``, else from the features (``trade_features`` keeps the quants' playbooks in its
attrs); no function here loads anything.

Every row carries 95 % intervals on its decision numbers (``win_rate``, ``d_win_rate``,
``d_total_pnl_usd``, ``d_roi``) from ``uncertainty`` through ``_guards``. Trades only exist for
evaluations that passed when they were made, so a threshold looser than the current one keeps
every trade the current one keeps and cannot show the evaluations it would newly admit: such
rows have ``admits_unseen`` True. Simulated entries (``simulate.simulated_entries``) stand in
for those evaluations when given: a failed evaluation is admitted at ``t`` when
``op(value, t)`` and the playbook would have passed it had this criterion passed (the rule
replayed with the criterion forced to pass). Frames holding never-executed trades warn
(``_shadow``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import fields

import numpy as np
import pandas as pd

from quantscope.backtest import _both, _guards, _sample, _shadow
from quantscope.backtest._inputs import (
    ThresholdsArg,
    _grid,
    _operators,
    resolve_playbook,
    threshold_grid,
)
from quantscope.backtest._kernel import Sums, masked_sums, sweep, sweep_with_baseline
from quantscope.backtest._metrics import DELTAS, METRICS, deltas, metrics
from quantscope.backtest._rules import NEGATION, PlaybookArg, is_looser
from quantscope.backtest.features import backtest_attrs, bare, check_criteria, decided_by_slice
from quantscope.backtest.features import kept_playbooks as kept_playbooks  # screen reads it here
from quantscope.backtest.questions import QUESTION_LABELS, QUESTION_NOTES, QUESTION_OF, question_of

__all__ = [
    "RULES",
    "RULE_LABELS",
    "ThresholdsArg",
    "pivot_grid",
    "resolve_playbook",
    "threshold_grid",
    "what_if",
    "what_if_grid",
]

#: The rules a sweep can count by, and the label every frame of that rule carries: the label
#: of the question the rule answers (``questions.QUESTION_LABELS``).
RULE_LABELS: dict[str, str] = {rule: QUESTION_LABELS[q] for rule, q in QUESTION_OF.items()}
#: The rules ``what_if`` takes: one question's, or ``"both"`` side by side.
RULES = (*RULE_LABELS, "both")

#: The largest bucket table (group x cells) a baseline is folded into; a bigger one is summed
#: from a mask of the rows instead.
MAX_BASELINE_CELLS = 1 << 22

_NOTE = (
    "Trades exist only for evaluations that passed when they were made: rows with "
    "admits_unseen=True loosen a current threshold and would also admit evaluations that "
    "failed, which have no trade"
)
_NOTE_SIMULATED = (
    "; simulated entries stand in for them (simulated_trades): entered at the detection price "
    "and exited by the researcher's rule on the token's candles, estimates, not trades."
)


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
    quantiles = any(t is None or isinstance(t, int) for t in thresholds)
    usable = _sample.usable(features, criteria) if quantiles else None  # the grid's values
    grids = [
        _grid(c, features[c][usable], t) if t is None or isinstance(t, int) else _grid(c, None, t)
        for c, t in zip(criteria, thresholds, strict=True)
    ]
    decided = decided_by_slice(meta.get("decided_thresholds"))

    def currents_of(part: _sample.Sample) -> list[_sample.Current]:
        return [
            _sample.current(part, decided, c, g, playbook)
            for c, g in zip(criteria, given, strict=True)
        ]

    currents = currents_of(rows)
    either_currents = None if rows.either is None else currents_of(rows.either)
    sums, base_sums = _sums_and_baseline(rows, grids, ops, currents)
    if rows.either is not None and either_currents is not None:
        # Kept when either passes: all of those rows but the ones failing both thresholds.
        negated = [NEGATION[op] for op in ops]
        failing, failing_base = _sums_and_baseline(
            rows.either, grids, negated, either_currents, fold=False
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
    question = question_of(rule)
    out.attrs["what_if"] = {
        "criteria": tuple(criteria),
        "operators": tuple(ops),
        "rule": rule,
        "question": question,
        "label": QUESTION_LABELS[question],
        "current": {
            c: (None if k is None else k.tolist()) for c, k in zip(criteria, knowns, strict=True)
        },
        "baseline": {name: float(np.asarray(base[name])) for name in METRICS},
        "real_trades": rows.real_total,
        "simulated_candidates": _candidates(rows),
        "dropped_trades": rows.dropped,
        "note": QUESTION_NOTES[question]
        + " "
        + _NOTE
        + (_NOTE_SIMULATED if simulated is not None else "."),
    }
    return _guards.append(
        out, rows, grids, ops, currents, either_currents=either_currents, bootstrap=bootstrap
    )


def _candidates(rows: _sample.Sample) -> int:
    parts = [rows] if rows.either is None else [rows, rows.either]
    return sum(int(np.count_nonzero(p.outcomes.simulated)) for p in parts)


def _add(a: Sums, b: Sums, sign: int = 1) -> Sums:
    """``a + sign * b``, field by field (shapes broadcast: a 0-d total against a table)."""
    return Sums(**{f.name: getattr(a, f.name) + sign * getattr(b, f.name) for f in fields(Sums)})


def _cell(sums: Sums, index: tuple[slice, ...] | tuple[int, ...]) -> Sums:
    return Sums(**{f.name: getattr(sums, f.name)[index] for f in fields(Sums)})


def _sums_and_baseline(
    rows: _sample.Sample,
    grids: Sequence[np.ndarray],
    ops: Sequence[str],
    currents: Sequence[_sample.Current],
    *,
    fold: bool = True,
) -> tuple[Sums, Sums]:
    """The sums at every threshold cell, and at the current thresholds.

    When every criterion has one current threshold for all rows, the baseline is one more
    threshold of the same sweep (the last of each axis); when they differ by group (a
    threshold per market-cap class), each group's thresholds are bucket edges of the same
    table with a group axis (``_kernel.sweep_with_baseline``); otherwise (many groups) the
    baseline is summed from a mask. ``fold=False`` for sums that are subtracted from a total
    (a replayed grid's rows kept when either criterion passes): summed as before, the same
    bits, so a total minus all of it stays exactly zero.
    """
    scalars = [c for c in currents if isinstance(c, float)]
    if len(scalars) == len(currents):
        extended = [np.append(g, c) for g, c in zip(grids, scalars, strict=True)]
        found = sweep(rows.values, extended, ops, rows.outcomes)
        inner = tuple(slice(0, len(g)) for g in grids)
        last = tuple(len(g) for g in grids)
        return _cell(found, inner), _cell(found, last)
    plan = _sample.baseline_groups(rows, currents) if fold else None
    if plan is not None:
        groups, of, at = plan
        cells = len(at) * np.prod([len(g) + len(at) + 1 for g in grids])
        if cells <= MAX_BASELINE_CELLS:
            return sweep_with_baseline(rows.values, grids, ops, rows.outcomes, groups, at, of=of)
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


@_shadow.checked()
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
            quant and market-cap class to study one playbook entry. Never-executed trades
            (``trading_status="all"``) warn (``ShadowOutcomesWarning``, ``attrs["shadow"]``).
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
        rule: the question answered (``backtest.questions``). ``"replay"`` (default), the
            **effect**: the whole pass rule decides with the threshold moved and everything
            else as it is, each trade by its quant's playbook slice for its market-cap
            class: what applying the threshold would do. ``"filter"``, the **signal**: the
            criterion as a hard filter, a trade is kept when ``op(value, t)``, as the
            service's optimizer counts: whether the criterion predicts outcomes, not what
            applying does (and no bound on it). ``"both"``: the two side by side in one
            frame (``effect_*`` and ``signal_*`` columns). Give ``features`` of one
            market-cap class to move one playbook entry: the threshold moves in every slice
            the rows are decided by.
        bootstrap: compute the intervals (``_guards``, from ``uncertainty``; on by default,
            a bootstrap per row, the sweep's largest cost; False: those columns NaN and
            ``attrs["what_if"]["guards"]`` says so, for a caller that reads few of many rows).

    Returns:
        One row per threshold: ``threshold``, the metrics of ``_metrics.METRICS``,
        ``admits_unseen`` (looser than a current threshold: evaluations that failed would
        pass too; NA when no current threshold is known), ``is_current`` and the changes
        ``d_trades``, ``d_win_rate``, ``d_total_pnl_usd``, ``d_roi``, ``d_profit_factor``
        against the current threshold, then the guard rails: ``tokens``, ``moved_tokens``,
        ``_lo``/``_hi`` 95 % intervals of ``win_rate``, ``d_win_rate``,
        ``d_total_pnl_usd`` and ``d_roi``, ``interval`` (``"bootstrap"`` or the rule of
        three where nothing moved) and ``small_sample``. ``attrs["what_if"]`` has the rule,
        the ``question`` ("effect" or "signal"), a plot-ready ``label``, the operator, the
        current threshold(s), the baseline's metrics, the counts and a note on what the rows
        mean. With ``rule="both"``: ``_both.side_by_side``'s frame.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {list(RULES)}, got {rule!r}")
    if rule == "both":
        answers = {
            question: what_if(
                features,
                criterion,
                thresholds,
                operator=operator,
                current=current,
                playbook=playbook,
                simulated=simulated,
                rule=rule_,
                bootstrap=bootstrap,
            )
            for rule_, question in QUESTION_OF.items()
        }
        return _both.side_by_side(answers["effect"], answers["signal"])
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


@_shadow.checked()
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

    ``rule`` as in ``what_if`` (one question per grid): ``"replay"`` (default, the effect)
    replays the whole pass rule with both thresholds moved (a trade may need both criteria,
    one, or either); ``"filter"`` (the signal) keeps the trades that pass both; ``bootstrap``
    as in ``what_if``. Returns one row per pair: a column per criterion holding its
    threshold, then the same metrics, flags, changes and intervals as ``what_if`` (a token
    counts as moved when its kept trade count differs from the current pair's).
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
    columns the second's (``ax.imshow(table)`` or ``plots`` draw it as a heatmap).
    """
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
