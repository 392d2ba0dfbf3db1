"""The sweep kernel: outcome sums of the rows kept at every threshold, without sorting the rows.

Each row falls in one *bucket* per criterion: how many of the sorted thresholds it passes (the
passed ones are contiguous). ``positions`` finds it without a binary search per row (a lookup
table over equal cells of the thresholds' range, one comparison, exact), ~3x cheaper than one
``argsort`` of the column on 1M rows and ~10x cheaper than numpy's ``searchsorted`` of unsorted
values. The buckets of the criteria combine into one cell index, ``np.bincount`` sums each
outcome per cell, and a cumulative sum along each axis (from the strict end: a small suffix is
never the difference of two large sums) turns per-cell sums into the sums of the rows kept at
every threshold (``sweep_one``) or combination (``sweep``): O(n + prod(m_i + 1)) after
``O(m log m)`` for the thresholds, against O(n * m) for a loop over them
(benchmarks/bench_sweep.py, bench_replay.py).

Per group (``group_sums``: the same sums split by a group code, e.g. the token of each trade,
for a bootstrap over tokens) the group is one more leading axis of the same bucket table.
``sweep_with_baseline`` uses that axis for the *baseline* (the rows the current thresholds
keep) when the current threshold differs by (quant, class, type): each group's thresholds are
bucket edges too, and the baseline is a few bucket ranges of the table, with no per-row
threshold, mask or masked sum.
``permuted_wins`` (many outcome vectors at once) still sorts the values once and sums the
gathered matrix per segment between split points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from quantscope.backtest._rules import DIRECTION, check_operator, searchsorted_side


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


#: The cells of ``positions``' lookup table (fits in the L2 cache; measured best on 1M rows).
CELLS = 1 << 16
#: Below this many values ``positions`` is a plain ``searchsorted``.
SMALL = 4096


class _Positions:
    """``positions`` for one sorted thresholds array: the lookup table built once, applied to
    any number of value arrays (the chunks of a sweep's pass over the rows).
    """

    def __init__(self, sorted_thresholds: np.ndarray, side: Literal["left", "right"]) -> None:
        t = self.thresholds = sorted_thresholds
        self.side = side
        self.table = len(t) > 0 and bool(np.isfinite(t[0]) and np.isfinite(t[-1]))
        self.table = self.table and float(t[-1]) > float(t[0])
        if self.table:
            self.lo = float(t[0])
            self.scale = (CELLS - 2) / (float(t[-1]) - self.lo)
            self.table = bool(np.isfinite(self.scale))  # a span of subnormals: no table
        self.before: np.ndarray | None = None  # built on the first call that uses it

    def _build(self) -> np.ndarray:
        t = self.thresholds
        at = self._cell(t)
        counts = np.bincount(at, minlength=CELLS)
        self.before = np.cumsum(counts) - counts  # thresholds in earlier cells (intp)
        alone = counts[at] == 1
        self.held = np.full(CELLS, np.nan)  # NaN compares False: no threshold in the cell
        self.held[at[alone]] = t[alone]
        self.crowded = None if alone.all() else counts > 1
        return self.before

    def _cell(self, x: np.ndarray) -> np.ndarray:  # intp: numpy's gathers take intp without a cast
        f: np.ndarray = np.subtract(x, self.lo, dtype=np.float64)
        f *= self.scale
        np.clip(f, -1.0, CELLS - 2, out=f)
        c = f.astype(np.intp)
        c += 1
        return c

    def __call__(self, values: np.ndarray) -> np.ndarray:
        t, side = self.thresholds, self.side
        if not self.table or len(values) < SMALL or np.isnan(values).any():
            return np.searchsorted(t, values, side=side)
        before = self.before if self.before is not None else self._build()
        c = self._cell(values)
        out = before.take(c)
        compare = np.greater_equal if side == "right" else np.greater
        out += compare(values, self.held.take(c))
        if self.crowded is not None:
            crowded = np.flatnonzero(self.crowded.take(c))
            out[crowded] = np.searchsorted(t, values[crowded], side=side)
        return out


def positions(
    values: np.ndarray, sorted_thresholds: np.ndarray, side: Literal["left", "right"]
) -> np.ndarray:
    """``np.searchsorted(sorted_thresholds, values, side)`` for many values and few thresholds,
    without a binary search per value (numpy's branchy search of random keys costs ~3x a sort).

    Values and thresholds map to one of ``CELLS`` equal cells between the extreme thresholds
    by ``trunc(clip((x - lo) * scale))``: every step is monotone, so a value in another cell
    than a threshold compares with it as the cells do. Each value's answer is the count of
    thresholds in earlier cells (a lookup table), plus one comparison with the threshold its
    own cell holds, if any; the few values of cells holding several thresholds are searched.
    Exact for every float, infinities included; NaN values fall back to ``searchsorted``.
    """
    if len(values) < SMALL:
        return np.searchsorted(sorted_thresholds, values, side=side)
    return _Positions(sorted_thresholds, side)(values)


def bucket_side(operator: str) -> Literal["left", "right"]:
    """The ``positions`` side that counts, for a value, the sorted thresholds before its
    bucket: ``#{t <= v}`` under ``V_GTE_T`` and ``V_LT_T``, ``#{t < v}`` otherwise.
    """
    return "right" if check_operator(operator) in ("V_GTE_T", "V_LT_T") else "left"


def buckets(values: np.ndarray, thresholds: np.ndarray, operator: str) -> tuple[np.ndarray, int]:
    """Each value's bucket among the thresholds sorted ascending, and the number of buckets.

    Bucket ``c`` holds the values that pass exactly the sorted thresholds ``j < c``
    (``V_GTE_T``, ``V_GT_T``) or ``j >= c`` (``V_LTE_T``, ``V_LT_T``): the count of sorted
    thresholds at most (or below) the value, by ``positions``.
    """
    found = positions(values, np.sort(thresholds), bucket_side(operator))
    return found.astype(np.intp, copy=False), len(thresholds) + 1


def _ranks(thresholds: np.ndarray) -> np.ndarray:
    """The position of each given threshold among them sorted (stable for ties)."""
    order = np.argsort(thresholds, kind="stable")
    out = np.empty(len(thresholds), dtype=np.intp)
    out[order] = np.arange(len(thresholds))
    return out


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
    tables, shape = _bucket_tables(values, thresholds, operators, outcomes)
    return _kept_sums({k: t.reshape(shape) for k, t in tables.items()}, thresholds, operators)


#: Rows per chunk of a sweep's pass (``_bucket_tables``): a chunk's temporaries (cells, keys,
#: flags: 8 bytes a row) stay in the L2 cache between the steps instead of going to memory
#: and back (benchmarks/README.md, replay: "the replayed rule as a kernel").
CHUNK = 1 << 16


def _bucket_tables(
    values: Sequence[np.ndarray],
    thresholds: Sequence[np.ndarray],
    operators: Sequence[str],
    outcomes: Outcomes,
    groups: np.ndarray | None = None,
    n_groups: int = 1,
    of: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], list[int]]:
    """The outcomes summed per bucket cell (``_tables``' flat tables, with a leading group axis
    of ``n_groups`` when ``groups`` gives each row's, or each row's index into ``of``, whose
    entries are the groups), and the cells' shape: buckets, keys and sums a chunk of rows at
    a time, the bucket lookups built once. Chunks are at least 8 rows per table entry, so a
    big table (a grid) is summed in few chunks.
    """
    finders = [
        _Positions(np.sort(np.asarray(t)), bucket_side(op))
        for t, op in zip(thresholds, operators, strict=True)
    ]
    shape = [len(t) + 1 for t in thresholds]
    n_cells = int(np.prod(shape))
    size = n_groups * n_cells
    n = len(outcomes.pnl)
    step = max(CHUNK, 8 * 4 * size)  # 4: the widest table entry (key, win, simulated)
    offsets = None if of is None else np.multiply(of, n_cells, dtype=np.intp)
    simulated = bool(outcomes.simulated.any())
    raw: list[np.ndarray] = []
    for start in range(0, max(n, 1), step):
        rows = slice(start, start + step)
        keys = finders[0](values[0][rows])  # intp, a new array
        for finder, v, m in zip(finders[1:], values[1:], shape[1:], strict=True):
            keys *= m
            keys += finder(v[rows])
        if groups is not None and offsets is not None:
            keys += offsets.take(groups[rows])
        elif groups is not None:
            keys += np.multiply(groups[rows], n_cells, dtype=np.intp)
        part = Outcomes(
            outcomes.win[rows], outcomes.pnl[rows], outcomes.cost[rows], outcomes.simulated[rows]
        )
        found = _counted(keys, size, part, simulated)
        raw = found if not raw else [a + b for a, b in zip(raw, found, strict=True)]
    return _tables(raw, size, simulated), shape


def _counted(keys: np.ndarray, size: int, outcomes: Outcomes, simulated: bool) -> list[np.ndarray]:
    """Three ``bincount`` passes over the rows: the rows and their cost per (key, win[,
    simulated]) flag, and their PnL per (key, PnL > 0), over one key array when the wins
    are the trades with a positive PnL (a split of the keys by the PnL's sign otherwise).
    ``keys`` (intp) is overwritten.
    """
    win = outcomes.win.view(np.int8) if outcomes.win.dtype == bool else outcomes.win
    positive = outcomes.pnl > 0
    signs = None
    if not np.array_equal(positive, outcomes.win):
        signs = keys * 2
        signs += positive
    flags = keys  # (key, win[, simulated]), in place
    flags *= 2
    flags += win
    width = 2
    if simulated:
        flags *= 2
        flags += outcomes.simulated.view(np.int8)
        width = 4
    counts = np.bincount(flags, minlength=width * size)
    cost = np.bincount(flags, weights=outcomes.cost, minlength=width * size)
    if signs is None:  # the win bit is the sign of the PnL
        signed = np.bincount(flags, weights=outcomes.pnl, minlength=width * size)
        signed = signed.reshape(size, 2, width // 2).sum(axis=-1).reshape(-1)
    else:
        signed = np.bincount(signs, weights=outcomes.pnl, minlength=2 * size)
    return [counts, cost, signed]


def _tables(raw: Sequence[np.ndarray], size: int, simulated: bool) -> dict[str, np.ndarray]:
    """``_counted``'s flat counts as the outcomes summed per key ``0 .. size - 1`` (one
    table per ``Sums`` field but the PnL).
    """
    width = 4 if simulated else 2
    counts = raw[0].reshape(size, 2, width // 2)
    signed = raw[2].reshape(size, 2)
    return {
        "trades": counts.sum(axis=(-2, -1)),
        "simulated": counts[..., 1].sum(axis=-1) if simulated else np.zeros(size, np.int64),
        "wins": counts[:, 1, :].sum(axis=-1),
        "gross_profit": signed[:, 1],
        "gross_loss": signed[:, 0],
        "cost": raw[1].reshape(size, width).sum(axis=-1),
    }


def _kept_sums(
    tables: dict[str, np.ndarray],
    thresholds: Sequence[np.ndarray],
    operators: Sequence[str],
    first: Sequence[int] | None = None,
) -> Sums:
    """Bucket tables (one axis per criterion) -> ``Sums`` at the thresholds in their given
    order (only the ``first[i]`` thresholds of each axis when given).
    """
    ranks = [_ranks(np.asarray(t)) for t in thresholds]
    if first is not None:
        ranks = [r[:m] for r, m in zip(ranks, first, strict=True)]
    out: dict[str, np.ndarray] = {}
    for name, table in tables.items():
        for axis, op in enumerate(operators):
            table = _kept(table, axis, op)
        out[name] = table[np.ix_(*ranks)]
    return Sums(pnl=out["gross_profit"] + out["gross_loss"], **out)


def sweep_with_baseline(
    values: Sequence[np.ndarray],
    thresholds: Sequence[np.ndarray],
    operators: Sequence[str],
    outcomes: Outcomes,
    groups: np.ndarray,
    at: Sequence[Sequence[float] | None],
    *,
    of: np.ndarray | None = None,
) -> tuple[Sums, Sums]:
    """``sweep``, and the sums over the rows each group keeps at thresholds of its own (the
    *baseline*), from the same bucket table: no mask, no second pass over the rows.

    ``groups`` holds each row's group, an index into ``at`` (with ``of``: an index into
    ``of``, whose entries index ``at``: a few codes, gathered a chunk at a time); ``at[g]`` is
    group ``g``'s
    threshold per criterion (NaN: every row of the group counts as passing that criterion),
    or None: no row of the group is in the baseline. Each group's thresholds become bucket
    edges (appended to the swept ones), the bucket table gets a leading group axis, the
    sweep sums it over the groups and the baseline adds, per group, the buckets its
    thresholds keep. A table of ``len(at) * prod(m_i + k_i + 1)`` cells (callers bound it).
    """
    extra = [
        np.unique([float(g[i]) for g in at if g is not None and not np.isnan(g[i])])
        for i in range(len(operators))
    ]
    extended = [np.append(t, e) for t, e in zip(thresholds, extra, strict=True)]
    flat, shape = _bucket_tables(values, extended, operators, outcomes, groups, len(at), of)
    tables = {k: t.reshape(len(at), *shape) for k, t in flat.items()}
    found = _kept_sums(
        {k: t.sum(axis=0) for k, t in tables.items()},
        extended,
        operators,
        [len(t) for t in thresholds],
    )
    edges = [np.sort(e) for e in extended]
    base = {k: t.dtype.type(0) for k, t in tables.items()}
    for g, cur in enumerate(at):
        if cur is None:
            continue
        ranges = zip(edges, cur, operators, strict=True)
        index: tuple[int | slice, ...] = (g, *(_kept_range(e, c, op) for e, c, op in ranges))
        for k, t in tables.items():
            base[k] = base[k] + t[index].sum()
    sums = {k: np.asarray(v) for k, v in base.items()}
    baseline = Sums(pnl=sums["gross_profit"] + sums["gross_loss"], **sums)
    return found, baseline


def _kept_range(edges: np.ndarray, current: float, operator: str) -> slice:
    """The buckets a threshold that is one of the sorted ``edges`` keeps (NaN: all)."""
    if np.isnan(current):
        return slice(None)
    j = int(np.searchsorted(edges, current))  # edges[j] == current
    return slice(j + 1, None) if DIRECTION[operator] > 0 else slice(0, j + 1)


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


def _cells(
    values: Sequence[np.ndarray], thresholds: Sequence[np.ndarray], operators: Sequence[str]
) -> tuple[np.ndarray, list[int]]:
    """Each row's cell of the bucket table (its bucket per criterion), and the table's shape."""
    cells: np.ndarray | None = None
    shape: list[int] = []
    for v, t, op in zip(values, thresholds, operators, strict=True):
        b, size = buckets(v, np.asarray(t), op)
        cells = b if cells is None else cells * size + b
        shape.append(size)
    assert cells is not None
    return cells, shape


def sweep_one(
    values: np.ndarray, thresholds: np.ndarray, operator: str, outcomes: Outcomes
) -> Sums:
    """``sweep`` for one criterion: the rows' buckets among the thresholds (``positions``: no
    sort of the rows), one ``bincount`` per outcome, and sums accumulated over the buckets
    from the strict end (a small suffix is never the difference of two large sums).
    """
    return sweep([values], [thresholds], [operator], outcomes)


def masked_sums(kept: np.ndarray, outcomes: Outcomes) -> Sums:
    """The same sums over the rows where ``kept`` is True (0-d arrays): one fixed selection."""
    pnl = outcomes.pnl[kept]
    simulated = np.count_nonzero(kept & outcomes.simulated) if outcomes.simulated.any() else 0
    gross_profit = np.maximum(pnl, 0.0).sum()
    gross_loss = np.minimum(pnl, 0.0).sum()
    return Sums(
        trades=np.asarray(len(pnl), dtype=np.int64),
        simulated=np.asarray(simulated, dtype=np.int64),
        wins=np.asarray(np.count_nonzero(kept & outcomes.win), dtype=np.int64),
        pnl=np.asarray(gross_profit + gross_loss),
        gross_profit=np.asarray(gross_profit),
        gross_loss=np.asarray(gross_loss),
        cost=np.asarray(outcomes.cost[kept].sum()),
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
    cells, shape = _cells(values, thresholds, operators)
    n_cells = int(np.prod(shape))
    keys = groups.astype(np.intp) * n_cells + cells
    ranks = [_ranks(np.asarray(t)) for t in thresholds]
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
