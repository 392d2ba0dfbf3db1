"""The rows a sweep reads, not copied: a frame, the positions of the rows taken, and the values
a replay moved; the rows' key codes computed once per frame.

A sweep takes most rows of a million-row frame several times (the usable ones, then those a
replayed rule keeps, then those it keeps when either of two criteria passes). pandas copies
every column on each selection while a sweep reads five of them, and a boolean mask costs ~6x
a gather by index (``take``). A ``Part`` keeps the frame, an index array of its rows and the
columns a replay moved, reads a column only when asked, and codes the key columns (quant,
class, evaluation type) once for the whole frame: the parts cut from one frame share those
codes and the rows' (quant, class, config type) combinations (``groups``), which the replay's
rule slices and the current thresholds both read (benchmarks/bench_replay.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from quantscope.backtest._compiled import key_codes
from quantscope.backtest._rules import CONFIG_TYPE_OF_EVALUATION

Group = tuple[int, str, str]  # (quant id, market-cap class, config type)
Codes = tuple[np.ndarray, list[object]]  # each row's code (-1: missing), the values coded

#: The key columns of a row's group, in the order they are combined.
KEYS = ("quant_id", "market_cap_class", "evaluation_type")
#: Integer keys spanning fewer values than this are coded as offsets (``Part.codes``).
OFFSET_RANGE = 1 << 12


@dataclass(frozen=True)
class Groups:
    """Each row's (quant, class, config type) as a code of the combinations of the values
    the key columns hold (no per-row Python objects, no compaction of the codes).
    """

    row: np.ndarray  # intp (n,): the row's combination, ``size`` where a key is missing
    size: int  # combinations; code ``size`` stands for rows without one
    present: np.ndarray  # bool (size + 1,): the combinations some row has
    keys: dict[int, Group]  # the present combinations whose evaluation type has a config


class _Shared:
    """What the parts of one frame compute once: key codes and groups over all its rows."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.codes: dict[str, Codes] = {}
        self.groups: Groups | None = None

    def coded(self, name: str) -> Codes:
        if name not in self.codes:
            series = self.frame[name]
            if isinstance(series.dtype, pd.CategoricalDtype):  # the codes as they are (int8)
                found = cast(pd.Categorical, series.array)  # its codes: a view, no Series
                self.codes[name] = found.codes, list(found.categories)
            else:
                self.codes[name] = _offsets(series) or key_codes(series)
        return self.codes[name]

    def grouped(self) -> Groups:
        if self.groups is None:
            self.groups = combine([self.coded(k) for k in KEYS])
        return self.groups


class Part:
    """Some rows of a frame: the frame, the positions of the rows taken (None: all of them),
    and columns whose values were moved (arrays over the part's rows, read instead of the
    frame's).
    """

    def __init__(self, frame: pd.DataFrame, keep: np.ndarray | None = None) -> None:
        self.frame = frame
        self.index = None if keep is None or keep.all() else np.flatnonzero(keep)
        self.moved: dict[str, np.ndarray] = {}
        self._shared = _Shared(frame)

    def __len__(self) -> int:
        return len(self.frame) if self.index is None else len(self.index)

    def subset(self, at: np.ndarray, moved: Mapping[str, np.ndarray]) -> Part:
        """The rows ``at`` (positions among this part's rows, ascending) with the columns of
        ``moved`` (values over those rows) in place of the frame's; key codes shared.
        """
        out = Part.__new__(Part)
        out.frame, out._shared = self.frame, self._shared
        if len(at) == len(self):  # every row: the positions as they are
            out.index, out.moved = self.index, dict(self.moved)
        else:
            out.index = at if self.index is None else self.index.take(at)
            out.moved = {k: v.take(at) for k, v in self.moved.items()}
        out.moved.update(moved)
        return out

    def rows(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The rows as a frame of their own (a copy when some are left out or moved), with
        every column or only ``columns`` (those the frame has).
        """
        frame = self.frame
        if columns is not None:
            frame = frame[[c for c in columns if c in frame.columns]]
        if self.index is not None:
            frame = frame.take(self.index)
        moved = {k: v for k, v in self.moved.items() if k in frame.columns}
        return frame.assign(**moved) if moved else frame

    def column(self, name: str, dtype: type, na_value: object) -> np.ndarray:
        """One column of the rows as a numpy array (the moved values where it was moved)."""
        if name in self.moved:
            return self.moved[name]
        found: np.ndarray = self.frame[name].to_numpy(dtype=dtype, na_value=na_value)
        return found if self.index is None else found.take(self.index)

    def codes(self, name: str) -> Codes:
        """Codes of one column of the rows (-1: missing) and the values they stand for:
        offsets from the smallest for integers of a small range (values may be absent),
        else ``_compiled.key_codes``; computed once for all the parts of the frame.
        """
        found, uniques = self._shared.coded(name)
        return (found if self.index is None else found.take(self.index)), uniques

    def groups(self) -> Groups:
        """Each row's (quant, class, config type) combination: the frame's, taken."""
        whole = self._shared.grouped()
        if self.index is None:
            return whole
        row = whole.row.take(self.index)
        present = np.bincount(row, minlength=whole.size + 1).astype(bool)
        keys = {c: g for c, g in whole.keys.items() if present[c]}
        return Groups(row, whole.size, present, keys)


def _offsets(series: pd.Series) -> Codes | None:
    """An integer column of a small range as offsets from its smallest value, and every
    value of the range (one subtraction: no hash, no pass to find the values present).
    """
    if not (pd.api.types.is_integer_dtype(series.dtype) and len(series)) or series.hasnans:
        return None
    raw = series.to_numpy(dtype=np.int64)
    low, high = int(raw.min()), int(raw.max())
    if high - low >= OFFSET_RANGE:
        return None
    if low >= 0 and high < OFFSET_RANGE:  # small ids (quants): the values are the codes
        return raw, list(range(high + 1))
    return raw - low, list(range(low, high + 1))  # a copy: ``raw`` may be the frame's


def shared_codes(parts: Sequence[Part], name: str) -> Codes:
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
    joined = (
        codes[0] if len(codes) == 1 else np.concatenate(codes) if codes else np.zeros(0, np.int32)
    )
    return joined, list(numbering)


def groups_of(parts: Sequence[Part]) -> Groups:
    """Each row's (quant, class, config type) combination over the parts, in order."""
    if len(parts) == 1:
        return parts[0].groups()
    return combine([shared_codes(parts, k) for k in KEYS])


def combine(coded: Sequence[Codes]) -> Groups:
    """The (quant, class, evaluation type) codes of the rows as one combination code each."""
    (quant, quants), (klass, classes), (kind, kinds) = coded
    configs = [CONFIG_TYPE_OF_EVALUATION.get(str(k)) for k in kinds]
    n_c, n_k = len(classes), len(kinds)
    size = len(quants) * n_c * n_k
    # int16 while combining (fewer bytes per pass), a copy: the codes may be cached
    combined: np.ndarray = np.array(quant, dtype=np.int16 if size < 1 << 15 else np.intp)
    if n_c > 1:
        combined *= n_c
        combined += klass
    if n_k > 1:
        combined *= n_k
        combined += kind
    if len(combined) and min(quant.min(), klass.min(), kind.min()) < 0:
        combined[(quant < 0) | (klass < 0) | (kind < 0)] = size
    combined = combined.astype(np.intp, copy=False)  # bincount and gathers take intp as it is
    present = np.bincount(combined, minlength=size + 1).astype(bool)
    keys: dict[int, Group] = {}
    for code in np.flatnonzero(present[:size]).tolist():
        q, rest = divmod(code, n_c * n_k)
        c, k = divmod(rest, n_k)
        if configs[k] is not None:
            keys[code] = (int(cast(int, quants[q])), str(classes[c]), str(configs[k]))
    return Groups(combined, size, present, keys)
