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
from typing import cast

import numpy as np
import pandas as pd

from quantscope.backtest._compiled import key_codes
from quantscope.backtest._kernel import Outcomes
from quantscope.backtest._rules import (
    CONFIG_TYPE_OF_EVALUATION,
    DIRECTION,
    OPERATORS,
    PlaybookArg,
    playbooks_by_quant,
)
from quantscope.backtest.features import check_criteria
from quantscope.backtest.replay import decide_rows, passed_variants

_KEYS = ("quant_id", "market_cap_class", "evaluation_type")
Current = float | np.ndarray | None  # one threshold for all rows, one per row, or unknown
Group = tuple[int, str, str]  # (quant id, market-cap class, config type)


class Part:
    """Some rows of a frame, not copied: the frame and a mask of the rows taken (None: all).

    A sweep takes a few rows out of a million-row frame several times; pandas copies every
    column on a boolean selection, while a sweep reads four or five of them.
    """

    def __init__(self, frame: pd.DataFrame, keep: np.ndarray | None = None) -> None:
        self.frame = frame
        self.keep = None if keep is None or keep.all() else keep
        self.size = len(frame) if self.keep is None else int(np.count_nonzero(self.keep))
        self._codes: dict[str, tuple[np.ndarray, list[object]]] = {}

    def __len__(self) -> int:
        return self.size

    def rows(self) -> pd.DataFrame:
        """The rows as a frame of their own (a copy when some are left out)."""
        return self.frame if self.keep is None else self.frame[self.keep]

    def column(self, name: str, dtype: type, na_value: object) -> np.ndarray:
        """One column of the rows as a numpy array."""
        found = self.frame[name].to_numpy(dtype=dtype, na_value=na_value)
        return found if self.keep is None else found[self.keep]

    def codes(self, name: str) -> tuple[np.ndarray, list[object]]:
        """``_compiled.key_codes`` of one column of the rows (-1: missing)."""
        if name not in self._codes:
            found, uniques = key_codes(self.frame[name])
            self._codes[name] = (found if self.keep is None else found[self.keep]), uniques
        return self._codes[name]


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

    @cached_property
    def groups(self) -> tuple[np.ndarray, list[Group]]:
        """Each row's (quant, class, config type) as an index into the list of those present
        (-1 when one of them is missing)."""
        return _groups(self.sources)


def usable(frame: pd.DataFrame, criteria: Sequence[str]) -> np.ndarray:
    """Rows with every value, the PnL and the cost."""
    ok = np.ones(len(frame), dtype=bool)
    for name in (*criteria, "pnl_usd", "buy_cost_usd"):
        ok &= frame[name].notna().to_numpy()
    return ok


def _rows(frame: pd.DataFrame, keep: np.ndarray) -> Part:
    return Part(frame, keep)


def _verdicts(frame: pd.DataFrame, criteria: Sequence[str], playbook: PlaybookArg) -> np.ndarray:
    """The playbook's verdict on each row for every pass/fail combination of ``criteria``.

    Column ``j`` of the (n, 2**k) answer: the rule's verdict when criterion ``i`` counts as
    passed for the bits ``i`` set in ``j`` and as failed otherwise (the other criteria as
    their values say). Weights are never negative, so each row's verdict can only go from
    fail to pass as more of ``criteria`` pass.
    """
    variants = [
        (
            [c for i, c in enumerate(criteria) if j >> i & 1],
            [c for i, c in enumerate(criteria) if not j >> i & 1],
        )
        for j in range(1 << len(criteria))
    ]
    return passed_variants(playbook, frame, variants)


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
    always-passing), or *either*: those rows are returned apart, as the second frame; the
    rows kept at a cell among them are all of them but those failing both thresholds (a
    filter with the negated operators).
    """
    frame = part.rows()  # a copy only when rows were left out (then they are few)
    table = _verdicts(frame, criteria, playbook)
    values = {c: frame[c].to_numpy(dtype=np.float64) for c in criteria}
    if len(criteria) == 1:
        (c,) = criteria
        values[c] = np.where(table[:, 0], _always(ops[0]), values[c])
        keep, either = table[:, 1], np.zeros(len(frame), dtype=bool)
    else:
        (a, b), (op_a, op_b) = criteria, ops
        anyway, a_alone, b_alone, both = table.T
        either = a_alone & b_alone & ~anyway
        values[a] = np.where(anyway | (b_alone & ~a_alone), _always(op_a), values[a])
        values[b] = np.where(anyway | (a_alone & ~b_alone), _always(op_b), values[b])
        keep = both & ~either
    moved = frame.assign(**values)
    return _rows(moved, keep), _rows(moved, either)


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
    real = _rows(features, usable(features, criteria))
    real_total = len(real)
    candidates = None
    if simulated is not None and len(simulated):
        if playbook is None:
            raise ValueError(
                "simulated entries need the playbook: it decides which failed evaluations a "
                "looser threshold would admit"
            )
        candidates = _rows(simulated, usable(simulated, criteria))
    if rule != "replay":
        parts = [real]
        if candidates is not None:
            assert playbook is not None
            rescued = decide_rows(playbook, candidates.rows(), forced=criteria)["passed"]
            parts.append(_rows(candidates.rows(), rescued.fillna(False).to_numpy(dtype=bool)))
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


def _codes(parts: Sequence[Part], name: str) -> tuple[np.ndarray, list[object]]:
    """Codes of one column of several parts in one shared numbering (-1: missing)."""
    numbering: dict[object, int] = {}
    codes = []
    for part in parts:
        local, uniques = part.codes(name)
        ids = [numbering.setdefault(u, len(numbering)) for u in uniques]
        if len(parts) == 1 and ids == list(range(len(ids))):
            codes.append(local)  # already the shared numbering
            continue
        remap = np.array([*ids, -1], dtype=np.int32)
        codes.append(remap[local])  # local -1 (missing) picks the trailing -1
    return (np.concatenate(codes) if codes else np.zeros(0, np.int32)), list(numbering)


def _groups(parts: Sequence[Part]) -> tuple[np.ndarray, list[Group]]:
    quant, quants = _codes(parts, "quant_id")
    klass, classes = _codes(parts, "market_cap_class")
    kind, kinds = _codes(parts, "evaluation_type")
    configs = [CONFIG_TYPE_OF_EVALUATION.get(str(k)) for k in kinds]
    combined = (quant * len(classes) + klass) * len(kinds) + kind  # int32
    if len(combined) and min(quant.min(), klass.min(), kind.min()) < 0:
        combined[(quant < 0) | (klass < 0) | (kind < 0)] = -1
    size = len(quants) * len(classes) * len(kinds)
    present = np.flatnonzero(np.bincount(combined[combined >= 0], minlength=size))
    position = np.full(size + 1, -1, dtype=np.int32)  # the last entry: unknown rows (-1)
    groups: list[Group] = []
    for code in present.tolist():
        q, rest = divmod(code, len(classes) * len(kinds))
        c, k = divmod(rest, len(kinds))
        if configs[k] is not None:
            position[code] = len(groups)
            groups.append((int(cast(int, quants[q])), str(classes[c]), str(configs[k])))
    return position[combined], groups


def current(
    rows: Sample,
    decided: Mapping[tuple[int, str], Mapping[str, float]],
    criterion: str,
    given: float | None,
    playbook: PlaybookArg | None,
) -> Current:
    """The current threshold of the rows: ``given``, else the playbook's for each row's
    quant, class and config type, else the one the row was decided under; None if unknown.

    A scalar when every row shares it (the common case: one quant and class), else an array
    with NaN where unknown.
    """
    if given is not None:
        return float(given)
    if playbook is None and not decided:
        return None
    shared = _shared(rows, decided, criterion, playbook)
    if shared is not None:
        return shared
    group, groups = rows.groups
    lookup = np.append(_thresholds(groups, decided, criterion, playbook), np.nan)
    present = np.flatnonzero(np.bincount(group + 1, minlength=len(groups) + 1)) - 1
    used = np.unique(lookup[present])  # lookup[-1] (unknown group) is NaN
    if len(used) == 1 and not np.isnan(used[0]):
        return float(used[0])
    return lookup[group]


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


def _present(parts: Sequence[Part], name: str) -> list[object] | None:
    """The distinct values of one column of some parts, or None when one is missing."""
    found: dict[object, None] = {}
    for part in parts:
        codes, uniques = part.codes(name)
        if len(codes) and codes.min() < 0:
            return None
        used = np.flatnonzero(np.bincount(codes, minlength=len(uniques)))
        found.update(dict.fromkeys(uniques[u] for u in used.tolist()))
    return list(found)


def _shared(
    rows: Sample,
    decided: Mapping[tuple[int, str], Mapping[str, float]],
    criterion: str,
    playbook: PlaybookArg | None,
) -> float | None:
    """The current threshold when every row certainly shares it, without grouping the rows.

    Checked over every combination of the quants, classes and types present (a superset of
    the combinations the rows have): when they all agree, so do the rows. None otherwise.
    """
    keys = [_present(rows.sources, c) for c in _KEYS]
    if any(k is None for k in keys):
        return None
    quants, classes, kinds = (k or [] for k in keys)
    configs = {CONFIG_TYPE_OF_EVALUATION.get(str(k)) for k in kinds}
    if None in configs:
        return None
    groups = [(int(cast(int, q)), str(c), str(k)) for q in quants for c in classes for k in configs]
    found = np.unique(_thresholds(groups, decided, criterion, playbook))
    return float(found[0]) if len(found) == 1 and not np.isnan(found[0]) else None


def known_values(cur: Current) -> np.ndarray | None:
    """The distinct known current thresholds (None when unknown)."""
    if cur is None:
        return None
    values = np.atleast_1d(np.asarray(cur, dtype=np.float64))
    distinct = pd.unique(values) if len(values) > 1 else values  # a hash: few distinct values
    return np.sort(distinct[~np.isnan(distinct)])


def baseline(rows: Sample, ops: Sequence[str], currents: Sequence[Current]) -> np.ndarray:
    """The rows the current thresholds keep. A real trade whose current threshold is unknown
    stays (it was traded); a simulated entry needs a known threshold it passes."""
    simulated = rows.outcomes.simulated
    kept = np.ones(len(simulated), dtype=bool)
    for v, op, cur in zip(rows.values, ops, currents, strict=True):
        if cur is None:
            kept &= ~simulated
            continue
        per_row = np.broadcast_to(np.asarray(cur, dtype=np.float64), v.shape)
        known = ~np.isnan(per_row)
        passes = OPERATORS[op](v, np.where(known, per_row, 0.0))
        kept &= np.where(known, passes, ~simulated)
    return kept
