"""The rows a sweep runs over, as arrays: values, outcomes, and each row's current threshold.

``sample`` turns a features frame (and optional simulated entries) into numpy arrays once;
``current`` finds the threshold each row was (or is) held to, from an explicit value, the
playbook, or the thresholds the details recorded. Written for a million rows: columns are
read once, keys are factorised (hash tables, categorical codes) instead of grouped as Python
objects, and a current threshold shared by every row stays a scalar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from quantscope.backtest._compiled import (
    Variant,
    decide_patterns,
    grouped_slices,
    take_rows,
)
from quantscope.backtest._kernel import Outcomes
from quantscope.backtest._part import KEYS, Group, Groups, Part, groups_of
from quantscope.backtest._rules import (
    DIRECTION,
    OPERATORS,
    PlaybookArg,
    playbooks_by_quant,
)
from quantscope.backtest.features import check_criteria
from quantscope.backtest.replay import decide_rows, passed_variants


@dataclass(frozen=True)
class PerGroup:
    """Current thresholds that differ between rows, kept coded: each row's (quant, class,
    config type) combination and each combination's threshold, never a float per row.
    """

    group: np.ndarray  # intp (n,): index into ``of`` (``Groups.row``)
    of: np.ndarray  # float64: each combination's threshold, NaN where unknown or absent
    present: np.ndarray  # bool, like ``of``: the combinations some row has

    def per_row(self) -> np.ndarray:
        """Each row's current threshold (NaN: unknown)."""
        return self.of.take(self.group)


Current = float | PerGroup | None  # one threshold for all rows, one per group, or unknown


@dataclass
class Sample:
    """The rows of a sweep: real trades, then the simulated entries that can be admitted."""

    sources: list[Part] = field(repr=False)  # real rows, then simulated rows
    values: list[np.ndarray]  # one float64 array per criterion
    outcomes: Outcomes
    real_total: int  # real trades with every value, the PnL and the cost
    dropped: int  # real trades left out: a value, the PnL or the cost missing
    either: Sample | None = None  # replay: rows kept when either of two criteria passes

    @cached_property
    def parts(self) -> list[pd.DataFrame]:
        """The rows of each source as frames (copied on first use: most sweeps never ask)."""
        return [p.rows() for p in self.sources]

    def token_frames(self) -> list[pd.DataFrame]:
        """The ``token_id`` column of each source's rows (no column where it has none):
        what ``_inputs.token_codes`` reads, without copying the rest of the rows (nor
        gathering rows of no column).
        """
        return [
            p.rows(["token_id"])
            if "token_id" in p.frame.columns
            else pd.DataFrame(index=pd.RangeIndex(len(p)))
            for p in self.sources
        ]

    @cached_property
    def groups(self) -> Groups:
        """Each row's (quant, class, config type) combination."""
        return groups_of(self.sources)


def usable(frame: pd.DataFrame, criteria: Sequence[str]) -> np.ndarray:
    """Rows with every value, the PnL and the cost."""
    missing = np.zeros(len(frame), dtype=bool)
    for name in (*criteria, "pnl_usd", "buy_cost_usd"):
        column = frame[name]
        if column.dtype == np.float64:  # a numpy column: no pandas pass
            values = column.to_numpy()
            if len(values) and not np.isnan(values.min()):  # min is NaN when any is
                continue  # none missing: no mask to build
            missing |= np.isnan(values)
        else:
            missing |= column.isna().to_numpy()
    return ~missing


def variants(criteria: Sequence[str]) -> list[Variant]:
    """Every pass/fail combination of ``criteria`` as ``(forced, failing)``: variant ``j``
    forces criterion ``i`` to pass for the bits ``i`` set in ``j``, to fail otherwise.
    """
    return [
        (
            [c for i, c in enumerate(criteria) if j >> i & 1],
            [c for i, c in enumerate(criteria) if not j >> i & 1],
        )
        for j in range(1 << len(criteria))
    ]


def _verdicts(part: Part, criteria: Sequence[str], playbook: PlaybookArg) -> np.ndarray:
    """The playbook's verdict on each row for every pass/fail combination of ``criteria``.

    Column ``j`` of the (n, 2**k) answer: the rule's verdict under ``variants(criteria)[j]``
    (the other criteria as their values say). Weights are never negative, so each row's
    verdict can only go from fail to pass as more of ``criteria`` pass. The rows' rule
    slices come from the part's key codes, the ones the current thresholds read
    (``replay.passed_variants``'s answer, without coding the keys again); a frame whose
    config types are a column of their own, or lacks a key, goes through ``passed_variants``.
    """
    wanted = variants(criteria)
    if "config_type" in part.frame.columns or not set(KEYS) <= set(part.frame.columns):
        return passed_variants(playbook, part.rows(), wanted)
    groups = part.groups()
    rows = grouped_slices(playbook, groups.row, groups.keys, groups.size)
    names = dict.fromkeys(c for rules in rows.slices for c in rules.criteria)
    columns = {c: part.column(c, np.float64, np.nan) for c in names if c in part.frame.columns}
    found = decide_patterns(rows, columns, wanted)
    return take_rows(found.passed, found.key)


def _always(op: str) -> float:
    """A value that passes every threshold under ``op``."""
    return np.inf if DIRECTION[op] > 0 else -np.inf


def _by_rule(
    part: Part, criteria: Sequence[str], ops: Sequence[str], playbook: PlaybookArg
) -> tuple[Part, Part]:
    """The rows of a replayed sweep as hard filters: each row's verdict as ``criteria`` move.

    With one criterion a row either passes anyway (its value becomes one that passes every
    threshold), passes only when the criterion does (kept as is), or never passes (dropped).
    With two, a row may also need both (kept as is), only one of them (the other's value made
    always-passing), or *either*: those rows are returned apart, as the second part; the
    rows kept at a cell among them are all of them but those failing both thresholds (a
    filter with the negated operators). The parts share the frame and its key codes; the
    moved values are the only columns copied (at the rows kept).
    """
    table = _verdicts(part, criteria, playbook)
    values = [part.column(c, np.float64, np.nan) for c in criteria]
    if len(criteria) == 1:
        moves = [table[:, 0]]
        keep, either = table[:, 1], None
    else:
        anyway, a_alone, b_alone, both = table.T
        either = a_alone & b_alone & ~anyway
        moves = [anyway | (b_alone & ~a_alone), anyway | (a_alone & ~b_alone)]
        keep = both & ~either

    def cut(at: np.ndarray) -> Part:
        moved = {}
        for c, op, v, move in zip(criteria, ops, values, moves, strict=True):
            moved[c] = v.take(at)  # a copy: the frame's own values stay
            moved[c][move.take(at)] = _always(op)
        return part.subset(at, moved)

    none = np.zeros(0, dtype=np.intp)
    return cut(np.flatnonzero(keep)), cut(none if either is None else np.flatnonzero(either))


def sample(
    features: pd.DataFrame,
    criteria: Sequence[str],
    ops: Sequence[str],
    simulated: pd.DataFrame | None,
    playbook: PlaybookArg | None,
    rule: str,
) -> Sample:
    """The arrays of a sweep over ``criteria`` (see ``sweep.what_if`` for ``rule``).

    Under ``rule="replay"`` the rows whose verdict needs either of two criteria are in
    ``Sample.either`` (a sample of their own, swept with the negated operators).
    """
    check_criteria(features, criteria, "what_if")
    real = Part(features, usable(features, criteria))
    real_total = len(real)
    candidates = None
    if simulated is not None and len(simulated):
        if playbook is None:
            raise ValueError(
                "simulated entries need the playbook: it decides which failed evaluations a "
                "looser threshold would admit"
            )
        candidates = Part(simulated, usable(simulated, criteria))
    if rule != "replay":
        parts = [real]
        if candidates is not None:
            assert playbook is not None
            rescued = decide_rows(playbook, candidates.rows(), forced=criteria)["passed"]
            parts.append(Part(candidates.rows(), rescued.fillna(False).to_numpy(dtype=bool)))
        return _arrays(parts, criteria, real_total, len(features) - real_total)
    if playbook is None or len(criteria) > 2:
        raise ValueError('rule="replay" needs the playbook and one or two criteria')
    kept, either = _by_rule(real, criteria, ops, playbook)
    parts, either_parts = [kept], [either]
    if candidates is not None:
        admitted, admitted_either = _by_rule(candidates, criteria, ops, playbook)
        parts.append(admitted)
        either_parts.append(admitted_either)
    rows = _arrays(parts, criteria, real_total, len(features) - real_total)
    if sum(len(p) for p in either_parts):
        rows.either = _arrays(either_parts, criteria, 0, 0)
    return rows


def _arrays(parts: list[Part], criteria: Sequence[str], real_total: int, dropped: int) -> Sample:
    """The values and outcomes of ``parts`` (real rows first, then simulated ones)."""

    def floats(name: str) -> np.ndarray:
        arrays = [p.column(name, np.float64, np.nan) for p in parts]
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

    win = np.concatenate([p.column("profitable", bool, False) for p in parts])
    flags = np.zeros(sum(len(p) for p in parts), dtype=bool)
    flags[len(parts[0]) :] = True
    return Sample(
        parts,
        [floats(c) for c in criteria],
        Outcomes(win, floats("pnl_usd"), floats("buy_cost_usd"), flags),
        real_total=real_total,
        dropped=dropped,
    )


def current(
    rows: Sample,
    decided: Mapping[tuple[int, str], Mapping[str, float]],
    criterion: str,
    given: float | None,
    playbook: PlaybookArg | None,
) -> Current:
    """The current threshold of the rows: ``given``, else the playbook's for each row's
    quant, class and config type, else the one the row was decided under; None if unknown.

    A scalar when every row shares it (the common case: one quant and class), else the
    threshold of each (quant, class, config type) group present (``PerGroup``: NaN where
    unknown; rows with a key missing are unknown).
    """
    if given is not None:
        return float(given)
    if playbook is None and not decided:
        return None
    groups = rows.groups
    of = np.full(groups.size + 1, np.nan)  # absent combinations and rows without one: NaN
    of[list(groups.keys)] = _thresholds(list(groups.keys.values()), decided, criterion, playbook)
    used = np.unique(of[groups.present])
    if len(used) == 1 and not np.isnan(used[0]):
        return float(used[0])
    return PerGroup(groups.row, of, groups.present)


def _thresholds(
    groups: Sequence[Group],
    decided: Mapping[tuple[int, str], Mapping[str, float]],
    criterion: str,
    playbook: PlaybookArg | None,
) -> np.ndarray:
    """The current threshold of each group (NaN where unknown)."""
    out = np.full(len(groups), np.nan)
    if playbook is not None:
        slices = playbooks_by_quant(playbook, {q for q, _, _ in groups})
        for i, (q, cls, kind) in enumerate(groups):
            rules = slices[q].get((cls, kind))
            if rules is not None and criterion in rules.criteria:
                out[i] = rules.thresholds[rules.index(criterion)]
    else:
        for i, (q, cls, _) in enumerate(groups):
            out[i] = decided.get((q, cls), {}).get(criterion, np.nan)
    return out


def known_values(cur: Current) -> np.ndarray | None:
    """The distinct known current thresholds (None when unknown)."""
    if cur is None:
        return None
    values = cur.of[cur.present] if isinstance(cur, PerGroup) else np.array([cur], np.float64)
    return np.unique(values[~np.isnan(values)])


#: At most this many distinct combinations of current thresholds are folded into a sweep's
#: bucket table (``baseline_groups``); more, and the baseline is summed from a mask.
MAX_BASELINE_GROUPS = 64

Baseline = tuple[np.ndarray, np.ndarray | None, list[tuple[float, ...] | None]]


def baseline_groups(rows: Sample, currents: Sequence[Current]) -> Baseline | None:
    """``baseline``'s rule as groups, for ``_kernel.sweep_with_baseline``: each row's group
    (as an index into the second array, whose entries are the groups, when that is not
    None: the kernel reads it a chunk at a time, no gather over the rows here), and each
    group's current threshold per criterion (NaN: the criterion keeps the group's rows, real
    trades whose threshold is unknown) or None (kept by none: simulated entries with a
    threshold unknown). Rows of one group share their thresholds, so the baseline is a few
    bucket ranges of the sweep's own table. None when the currents are of different
    groupings or make more than ``MAX_BASELINE_GROUPS`` groups.
    """
    coded = [c for c in currents if isinstance(c, PerGroup)]
    if any(c.group is not coded[0].group for c in coded):
        return None
    simulated = rows.outcomes.simulated
    if coded:
        group, present = coded[0].group, np.flatnonzero(coded[0].present)
    else:  # no threshold differs by group: one group
        group, present = np.zeros(len(simulated), dtype=np.intp), np.zeros(1, dtype=np.intp)
    table = np.full((len(present), len(currents)), np.nan)
    for i, cur in enumerate(currents):
        if isinstance(cur, PerGroup):
            table[:, i] = cur.of[present]
        elif cur is not None:
            table[:, i] = cur
    index: dict[tuple[float | None, ...], int] = {}
    combos: list[tuple[float, ...] | None] = []
    code = np.zeros(len(coded[0].of) if coded else 1, dtype=np.intp)  # absent: no rows
    for g, found in zip(present.tolist(), table.tolist(), strict=True):
        key = tuple(None if np.isnan(x) else x for x in found)
        if key not in index:
            index[key] = len(combos)
            combos.append(tuple(found))
        code[g] = index[key]
    unknown = [i for i, c in enumerate(combos) if c is not None and np.isnan(c).any()]
    dropped = None
    if unknown and simulated.any():
        dropped = code.copy()  # a simulated entry needs every threshold known
        dropped[np.isin(code, unknown)] = len(combos)
        combos.append(None)
    if len(combos) > MAX_BASELINE_GROUPS:
        return None
    if dropped is not None:
        return np.where(simulated, dropped.take(group), code.take(group)), None, combos
    return group, code, combos


def baseline(rows: Sample, ops: Sequence[str], currents: Sequence[Current]) -> np.ndarray:
    """The rows the current thresholds keep. A real trade whose current threshold is unknown
    stays (it was traded); a simulated entry needs a known threshold it passes.
    """
    simulated = rows.outcomes.simulated
    kept = np.ones(len(simulated), dtype=bool)
    for v, op, cur in zip(rows.values, ops, currents, strict=True):
        if cur is None:
            kept &= ~simulated
            continue
        per_row = cur.per_row() if isinstance(cur, PerGroup) else np.full(v.shape, cur)
        known = ~np.isnan(per_row)
        passes = OPERATORS[op](v, np.where(known, per_row, 0.0))
        kept &= np.where(known, passes, ~simulated)
    return kept
