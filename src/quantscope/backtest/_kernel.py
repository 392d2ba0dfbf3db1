"""The sweep kernel: outcome sums of the rows kept at every threshold, from one sort per column.

One criterion (``sweep_one``): under ``V_GTE_T`` the rows kept at ``t`` are the rows whose
value is at least ``t``, a suffix of the rows sorted by value (a prefix under ``V_LTE_T``), and
its start is ``searchsorted(sorted_values, t)``. So one ``argsort``, the outcomes gathered into
value order, one ``reduceat`` per outcome (sums between consecutive split points) accumulated
over the ``m`` segments, and one binary search per threshold give every threshold's sums:
O(n log n + m log n) against O(n * m) for a loop over the thresholds
(benchmarks/bench_sweep.py). Suffix sums are accumulated from the end, so a small suffix is
never the difference of two large sums.

Several criteria (a grid, ``sweep``): each row falls in one *bucket* per criterion (how many of
the sorted thresholds it passes: the passed ones are contiguous), found from the same sort and
written back to row order once. The buckets combine into one cell index, ``np.bincount`` sums
each outcome per cell, and a cumulative sum along each axis turns per-cell sums into the sums of
the rows kept at every combination: one sort per criterion plus a table of ``prod(m_i + 1)``
cells.

Binary-searching the unsorted values into the sorted thresholds instead
(``searchsorted(thresholds, values)``) gives the same buckets without a sort, but its random
probes measured ~3x slower than numpy's sort on 1M rows.

Per group (``group_sums``: the same sums split by a group code, e.g. the token of each trade,
for a bootstrap over tokens) the group is one more leading axis of the same bucket table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quantscope.backtest._rules import DIRECTION, searchsorted_side


@dataclass(frozen=True)
class Outcomes:
    """What a sweep adds up for each row (all arrays of the same length, no NaN)."""

    win: np.ndarray  # bool: the trade was profitable
    pnl: np.ndarray  # float64, USD
    cost: np.ndarray  # float64, USD spent
    simulated: np.ndarray  # bool: a simulated entry, not a trade that happened


@dataclass(frozen=True)
class Sums:
    """Sums over the kept rows, one cell per threshold (combination); shapes ``(m_1, ...)``."""

    trades: np.ndarray  # int64
    simulated: np.ndarray  # int64
    wins: np.ndarray  # int64
    pnl: np.ndarray  # float64
    gross_profit: np.ndarray  # float64, >= 0
    gross_loss: np.ndarray  # float64, <= 0
    cost: np.ndarray  # float64


def buckets(values: np.ndarray, thresholds: np.ndarray, operator: str) -> tuple[np.ndarray, int]:
    """Each value's bucket among the thresholds sorted ascending, and the number of buckets.

    Bucket ``c`` holds the values that pass exactly the sorted thresholds ``j < c``
    (``V_GTE_T``, ``V_GT_T``) or ``j >= c`` (``V_LTE_T``, ``V_LT_T``).
    """
    n, m = len(values), len(thresholds)
    order = np.argsort(values)
    sorted_thresholds = np.sort(thresholds)
    bounds = np.searchsorted(
        values, sorted_thresholds, side=searchsorted_side(operator), sorter=order
    )
    sizes = np.diff(bounds, prepend=0, append=n)
    out = np.empty(n, dtype=np.intp)
    out[order] = np.repeat(np.arange(m + 1, dtype=np.intp), sizes)
    return out, m + 1


def _kept(table: np.ndarray, axis: int, operator: str) -> np.ndarray:
    """Bucket sums -> sums of the rows kept at each sorted threshold, along one axis."""
    if DIRECTION[operator] > 0:  # kept at j: buckets j+1 .. m (they pass more than j)
        flipped = np.flip(table, axis=axis)
        suffix = np.flip(np.cumsum(flipped, axis=axis), axis=axis)
        return np.delete(suffix, 0, axis=axis)
    prefix = np.cumsum(table, axis=axis)  # kept at j: buckets 0 .. j
    return np.delete(prefix, -1, axis=axis)


def sweep(
    values: Sequence[np.ndarray],
    thresholds: Sequence[np.ndarray],
    operators: Sequence[str],
    outcomes: Outcomes,
) -> Sums:
    """Outcome sums of the rows kept at every combination of thresholds.

    Args:
        values: one float64 array per criterion (no NaN), rows aligned with ``outcomes``.
        thresholds: the candidate thresholds of each criterion (no NaN), in any order.
        operators: each criterion's operator; a row is kept when every ``op(value, t)`` holds.
        outcomes: the rows' outcomes.

    Returns:
        ``Sums`` whose arrays have shape ``(len(thresholds[0]), len(thresholds[1]), ...)``, in
        the thresholds' given order.
    """
    if not (len(values) == len(thresholds) == len(operators)) or not values:
        raise ValueError("one values array, one thresholds array and one operator per criterion")
    if len(values) == 1:
        return sweep_one(values[0], thresholds[0], operators[0], outcomes)
    cells = np.zeros(len(outcomes.pnl), dtype=np.intp)
    shape: list[int] = []
    for v, t, op in zip(values, thresholds, operators, strict=True):
        b, size = buckets(v, t, op)
        cells = cells * size + b
        shape.append(size)
    n_cells = int(np.prod(shape))
    # Counts by (cell, win, simulated); pnl by (cell, pnl > 0); cost by cell.
    keys = cells * 4 + outcomes.win.astype(np.intp) * 2 + outcomes.simulated.astype(np.intp)
    counts = np.bincount(keys, minlength=4 * n_cells).reshape(*shape, 2, 2)
    signed = np.bincount(
        cells * 2 + (outcomes.pnl > 0), weights=outcomes.pnl, minlength=2 * n_cells
    ).reshape(*shape, 2)
    cost = np.bincount(cells, weights=outcomes.cost, minlength=n_cells).reshape(shape)
    tables = {
        "trades": counts.sum(axis=(-2, -1)),
        "simulated": counts[..., 1].sum(axis=-1),
        "wins": counts[..., 1, :].sum(axis=-1),
        "gross_profit": signed[..., 1],
        "gross_loss": signed[..., 0],
        "cost": cost,
    }
    # Back to the caller's threshold order: position of each given threshold when sorted.
    ranks = [np.argsort(np.argsort(t, kind="stable"), kind="stable") for t in thresholds]
    out: dict[str, np.ndarray] = {}
    for name, table in tables.items():
        for axis, op in enumerate(operators):
            table = _kept(table, axis, op)
        out[name] = table[np.ix_(*ranks)]
    return Sums(pnl=out["gross_profit"] + out["gross_loss"], **out)


class _Splits:
    """Where the kept rows start or end in value order, for reading sums at every threshold.

    The outcomes are summed per segment between consecutive distinct split positions
    (``np.add.reduceat``: one read of the column, ``m`` writes), then accumulated over the
    segments; a suffix is accumulated from the end, so it is never the difference of two
    large sums.
    """

    def __init__(self, split: np.ndarray, n: int, up: bool) -> None:
        starts = np.unique(np.concatenate(([0], split)))
        self.starts = starts[starts < n]
        self.index = np.searchsorted(self.starts, split)  # == len(starts) where split == n
        self.up = up

    def sums(self, x: np.ndarray) -> np.ndarray:
        """For each threshold, the sum of the sorted ``x`` over the rows it keeps."""
        dtype = np.result_type(x, np.int64)
        if not len(self.starts):
            return np.zeros(len(self.index), dtype=dtype)
        segments = np.add.reduceat(x, self.starts, dtype=dtype)
        if self.up:  # kept: from the split to the end
            tails = np.append(np.cumsum(segments[::-1])[::-1], 0)
            return tails[self.index]
        heads = np.concatenate(([0], np.cumsum(segments)))  # kept: before the split
        return heads[self.index]


def sweep_one(
    values: np.ndarray, thresholds: np.ndarray, operator: str, outcomes: Outcomes
) -> Sums:
    """``sweep`` for one criterion: sort, sums per segment, one index per threshold.

    The rows kept at ``t`` are a prefix or suffix of the sorted rows, starting or ending at
    ``searchsorted(sorted_values, t)``: the sums are read off accumulated sums of the
    outcomes in value order. Trade counts need no sum at all.
    """
    n = len(values)
    order = np.argsort(values)
    split = np.searchsorted(values, thresholds, side=searchsorted_side(operator), sorter=order)
    up = DIRECTION[operator] > 0
    at = _Splits(split, n, up)
    pnl = outcomes.pnl[order]
    gross_profit = at.sums(np.maximum(pnl, 0.0))
    gross_loss = at.sums(np.minimum(pnl, 0.0))
    simulated = (
        at.sums(outcomes.simulated[order].view(np.int8))
        if outcomes.simulated.any()
        else np.zeros(len(split), dtype=np.int64)
    )
    return Sums(
        trades=(n - split if up else split).astype(np.int64),
        simulated=simulated,
        wins=at.sums(outcomes.win[order].view(np.int8)),
        pnl=gross_profit + gross_loss,
        gross_profit=gross_profit,
        gross_loss=gross_loss,
        cost=at.sums(outcomes.cost[order]),
    )


def masked_sums(kept: np.ndarray, outcomes: Outcomes) -> Sums:
    """The same sums over the rows where ``kept`` is True (0-d arrays): one fixed selection.

    ``bincount`` by (kept, ...) rather than boolean indexing: no copies of the selected rows.
    """
    k = kept.astype(np.intp)
    keys = k * 4 + outcomes.win.astype(np.intp) * 2 + outcomes.simulated.astype(np.intp)
    counts = np.bincount(keys, minlength=8)[4:].reshape(2, 2)
    signed = np.bincount(k * 2 + (outcomes.pnl > 0), weights=outcomes.pnl, minlength=4)
    cost = np.bincount(k, weights=outcomes.cost, minlength=2)[1]
    return Sums(
        trades=np.asarray(counts.sum()),
        simulated=np.asarray(counts[:, 1].sum()),
        wins=np.asarray(counts[1, :].sum()),
        pnl=np.asarray(signed[2] + signed[3]),
        gross_profit=np.asarray(signed[3]),
        gross_loss=np.asarray(signed[2]),
        cost=np.asarray(cost),
    )


def group_sums(
    values: Sequence[np.ndarray],
    thresholds: Sequence[np.ndarray],
    operators: Sequence[str],
    groups: np.ndarray,
    n_groups: int,
    weights: Sequence[np.ndarray | None],
) -> list[np.ndarray]:
    """For each of ``weights`` (None: count rows), its sum over the kept rows of each group.

    ``groups`` holds each row's group code in ``0 .. n_groups - 1``. Returns one array per
    weight of shape ``(n_groups, len(thresholds[0]), ...)``, thresholds in the given order: a
    table of ``n_groups * prod(m_i + 1)`` cells (callers bound it).
    """
    cells = np.zeros(len(groups), dtype=np.intp)
    shape: list[int] = []
    for v, t, op in zip(values, thresholds, operators, strict=True):
        b, size = buckets(v, t, op)
        cells = cells * size + b
        shape.append(size)
    n_cells = int(np.prod(shape))
    keys = groups.astype(np.intp) * n_cells + cells
    ranks = [np.argsort(np.argsort(t, kind="stable"), kind="stable") for t in thresholds]
    out = []
    for w in weights:
        table = np.bincount(keys, weights=w, minlength=n_groups * n_cells)
        table = table.reshape(n_groups, *shape)
        for axis, op in enumerate(operators):
            table = _kept(table, axis + 1, op)
        out.append(table[np.ix_(np.arange(n_groups), *ranks)])
    return out


def permuted_wins(
    values: np.ndarray, thresholds: np.ndarray, operator: str, wins: np.ndarray
) -> np.ndarray:
    """Wins kept at each threshold under each row of ``wins`` (a ``(k, n)`` 0/1 matrix: one
    outcome vector per row, e.g. permutations), shape ``(k, len(thresholds))``.

    One sort of the values serves every outcome vector: the matrix is gathered into value
    order once and summed per segment between split points (``reduceat`` along the rows).
    """
    n = len(values)
    order = np.argsort(values)
    split = np.searchsorted(values, thresholds, side=searchsorted_side(operator), sorter=order)
    at = _Splits(split, n, DIRECTION[operator] > 0)
    if not len(at.starts):
        return np.zeros((wins.shape[0], len(split)), dtype=np.int64)
    segments = np.add.reduceat(wins[:, order], at.starts, axis=1, dtype=np.int64)
    if at.up:
        tails = np.cumsum(segments[:, ::-1], axis=1)[:, ::-1]
        padded = np.concatenate([tails, np.zeros((len(tails), 1), np.int64)], axis=1)
        return padded[:, at.index]
    heads = np.concatenate(
        [np.zeros((len(segments), 1), np.int64), np.cumsum(segments, axis=1)], axis=1
    )
    return heads[:, at.index]
