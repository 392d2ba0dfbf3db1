"""The pass rule as a kernel: rows coded by their playbook slice, verdicts from pass patterns.

A replay decides a million rows with a few dozen rule slices. The slow way groups the rows by
text keys and gathers each group's values through pandas; here every key is an integer code
(``row_slices``: categorical codes, small-range quant ids, config types mapped on the
categories, never on the rows), and each row is reduced to its *pass pattern*: one bit per
enabled criterion, set when ``op(value, threshold)`` holds under its own slice's threshold.
The rule's verdict depends on nothing else (weights, flags and pass marks are the slice's), so
it is computed once per distinct (slice, pattern) by ``_rules.decide`` itself, on one
representative row each, and read back into row order: the answers are those of
``decide`` to the last bit, whatever the weights, in O(n * k) integer work instead of
pandas grouping (benchmarks/bench_replay.py).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from quantscope.backtest._rules import (
    CONFIG_TYPE_OF_EVALUATION,
    OPERATORS,
    PlaybookArg,
    RuleSlice,
    decide,
    playbooks_by_quant,
)

#: Pattern bits per integer word (the words are combined by factorising, so any count works).
WORD_BITS = 62

Variant = tuple[Collection[str], Collection[str]]  # (forced, failing) criteria


@dataclass(frozen=True)
class RowSlices:
    """Each row's rule slice as an index into ``slices`` (-1: no quant, class or type)."""

    index: np.ndarray  # intp (n,): numpy gathers by intp indices as they are (int32: ~3x)
    slices: list[RuleSlice]
    config_codes: np.ndarray | None  # int32 (n,): index into config_names, -1 where missing
    config_names: list[str]  # (None: not coded, the verdicts never read them)


def key_codes(series: pd.Series) -> tuple[np.ndarray, list[object]]:
    """Integer codes of a key column (-1: missing) and the values they stand for.

    Categorical columns give their codes; small-range integers (quant ids) a subtraction;
    anything else a hash factorisation. No per-row Python objects.
    """
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.cat.codes.to_numpy().astype(np.int32), list(series.cat.categories)
    if pd.api.types.is_integer_dtype(series.dtype) and len(series) and not series.hasnans:
        raw = series.to_numpy(dtype=np.int64)
        low, high = int(raw.min()), int(raw.max())
        if high - low < 1 << 16:
            used = np.flatnonzero(np.bincount(raw - low, minlength=high - low + 1))
            position = np.full(high - low + 1, -1, dtype=np.int32)
            position[used] = np.arange(len(used))
            ids: list[object] = list((used + low).tolist())
            return position[raw - low], ids
    codes, uniques = pd.factorize(series)
    return codes.astype(np.int32), list(uniques)


def _config_codes(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Each row's playbook config type as a code (the ``config_type`` column, else the
    evaluation type mapped), mapping the distinct values, not the rows.
    """
    if "config_type" in frame.columns:
        codes, names = key_codes(frame["config_type"])
        return codes, [str(n) for n in names]
    if "evaluation_type" not in frame.columns:
        raise ValueError("the rows need an evaluation_type (or config_type) column")
    codes, kinds = key_codes(frame["evaluation_type"])
    configs = [CONFIG_TYPE_OF_EVALUATION.get(str(k)) for k in kinds]
    present = sorted({c for c in configs if c is not None})
    remap = np.array([-1 if c is None else present.index(c) for c in configs] + [-1], np.int32)
    return remap[codes], present


def row_slices(playbook: PlaybookArg, frame: pd.DataFrame) -> RowSlices:
    """The slice deciding each row: its quant's playbook, its class, its config type.

    Raises the ValueError of ``playbooks_by_quant`` (a playbook of another quant, a quant
    without one) and names a (quant, class, type) present in the rows that has no slice.
    """
    quant, quants = key_codes(frame["quant_id"])
    klass, classes = key_codes(frame["market_cap_class"])
    kind, kinds = _config_codes(frame)
    n_c, n_k = max(len(classes), 1), max(len(kinds), 1)
    combined = ((quant * n_c + klass) * n_k + kind).astype(np.intp)  # a few thousand at most
    size = max(len(quants), 1) * n_c * n_k
    if len(combined) and min(quant.min(), klass.min(), kind.min()) < 0:
        combined[(quant < 0) | (klass < 0) | (kind < 0)] = -1
    present = np.flatnonzero(np.bincount(combined[combined >= 0], minlength=size))
    triples = []
    for code in present.tolist():
        q, rest = divmod(code, n_c * n_k)
        c, k = divmod(rest, n_k)
        triples.append((int(quants[q]), str(classes[c]), kinds[k]))  # type: ignore[call-overload]  # key_codes' uniques are typed object
    books = playbooks_by_quant(playbook, {q for q, _, _ in triples})
    position, slices = _slice_table(books, dict(zip(present.tolist(), triples, strict=True)), size)
    return RowSlices(position.take(combined), slices, kind, list(kinds))


def _slice_table(
    books: Mapping[int, Mapping[tuple[str, str], RuleSlice]],
    keys: Mapping[int, tuple[int, str, str]],
    size: int,
) -> tuple[np.ndarray, list[RuleSlice]]:
    """Each combination code's slice (an index into the list; -1, and the last entry: none)."""
    position = np.full(size + 1, -1, dtype=np.intp)
    slices: list[RuleSlice] = []
    for code, (q, mc_class, config_type) in keys.items():
        rules = books[q].get((mc_class, config_type))
        if rules is None:
            raise ValueError(f"quant {q}'s playbook has no {config_type} slice for {mc_class}")
        position[code] = len(slices)
        slices.append(rules)
    return position, slices


def grouped_slices(
    playbook: PlaybookArg, row: np.ndarray, keys: Mapping[int, tuple[int, str, str]], size: int
) -> RowSlices:
    """``row_slices`` from combination codes already made (``_part.Groups``: each row's code
    ``row``, ``size`` where a key is missing; ``keys`` the (quant, class, config type) of
    each code present), so a sweep codes its rows' keys once for the rule and the current
    thresholds. The same slices and errors as ``row_slices``, without the rows' config
    types (``decide_rows`` reads them, the verdicts do not).
    """
    books = playbooks_by_quant(playbook, {q for q, _, _ in keys.values()})
    position, slices = _slice_table(books, keys, size)
    return RowSlices(position.take(row), slices, None, [])


def _pattern_words(
    rows: RowSlices, columns: Mapping[str, np.ndarray], fixed: Collection[str] = ()
) -> tuple[list[np.ndarray], int]:
    """Each row's slice (``index + 1``) in the low bits of the first word, then one bit per
    enabled criterion of the union but ``fixed`` ones: it passes or fails by its row's
    slice's operator and threshold. Returns the words and the bits used in the last one.
    Written ``SCAN`` rows at a time (the per-row thresholds, verdicts and shifted bits of a
    chunk stay in the cache).
    """
    union: dict[str, None] = {}
    for rules in rows.slices:
        for c, off in zip(rules.criteria, rules.disabled, strict=True):
            if not off and c not in fixed:
                union.setdefault(c)
    # A criterion missing from the columns fails in every slice: one pattern, no bit.
    tests = [(columns[c], _Passes(rows, c)) for c in union if c in columns]
    places, word, bit = [], 0, int(len(rows.slices) + 1).bit_length()
    for _ in tests:
        if bit == WORD_BITS:
            word, bit = word + 1, 0
        places.append((word, bit))
        bit += 1
    n = len(rows.index)
    words = [np.zeros(n, dtype=np.int64) for _ in range(word + 1)]
    for start in range(0, n, SCAN):
        chunk = slice(start, start + SCAN)
        index = rows.index[chunk]
        np.add(index, 1, out=words[0][chunk], casting="unsafe")
        for (values, passes), (w, b) in zip(tests, places, strict=True):
            found = np.left_shift(passes(values[chunk], index), b, dtype=np.int64)
            np.bitwise_or(words[w][chunk], found, out=words[w][chunk])
    return words, bit


class _Passes:
    """Whether each row's value passes its own slice's threshold of one criterion (False
    where the slice lacks or disables it, or the value is missing), for a chunk of rows.
    """

    def __init__(self, rows: RowSlices, criterion: str) -> None:
        rules_of = []
        for s, rules in enumerate(rows.slices):
            if criterion in rules.criteria:
                j = rules.index(criterion)
                if not rules.disabled[j]:
                    rules_of.append((s, rules.operators[j], float(rules.thresholds[j])))
        distinct = {(op, t) for _, op, t in rules_of}
        self.shared = None
        if len(distinct) == 1 and len(rules_of) == len(rows.slices):
            self.shared = next(iter(distinct))  # one threshold for every row: no gather
        self.tables = {}
        for op in {op for _, op, _ in rules_of}:
            threshold = np.full(len(rows.slices) + 1, np.nan)  # the last: rows without a slice
            for s, op_s, t in rules_of:
                if op_s == op:
                    threshold[s] = t
            self.tables[op] = threshold

    def __call__(self, values: np.ndarray, index: np.ndarray) -> np.ndarray:
        if self.shared is not None:
            op, t = self.shared
            return np.asarray(OPERATORS[op](values, t))
        out = np.zeros(len(values), dtype=bool)
        for op, threshold in self.tables.items():
            out |= OPERATORS[op](values, threshold.take(index))  # NaN thresholds fail
        return out


#: Patterns of at most this many bits are counted in a dense table, not hashed.
DENSE_BITS = 22
#: Patterns of at most this many bits are the rows' keys as they are (no compaction pass).
DIRECT_BITS = 12
#: Rows scattered at a time while looking for one row of each key (``_representatives``).
SCAN = 1 << 16


def _distinct(
    words: Sequence[np.ndarray], bits: int
) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """Each row's (slice, pattern) as a key ``0 .. m-1``, ``m``, the keys some row has, and
    one row of each of those.
    """
    n = len(words[0])
    if len(words) == 1 and bits <= DENSE_BITS:  # a count per possible word, no hashing
        (word,) = words
        used = np.flatnonzero(np.bincount(word, minlength=1))
        if bits <= DIRECT_BITS:  # the word is the key: a table of 2**bits rows, mostly unread
            key, m = word.astype(np.intp, copy=False), 1 << bits
        else:
            position = np.zeros(1 << bits, dtype=np.intp)
            position[used] = np.arange(len(used))
            key, m, used = position.take(word), len(used), np.arange(len(used))
    else:
        key, count = np.zeros(n, dtype=np.int64), 1
        for word in words:
            codes, uniques = pd.factorize(word)
            found, distinct = pd.factorize(key * len(uniques) + codes)
            key, count = found.astype(np.int64), len(distinct)
        key, m, used = key.astype(np.intp), count, np.arange(count)
    return key, m, used, _representatives(key, m, used)


def _representatives(key: np.ndarray, m: int, used: np.ndarray) -> np.ndarray:
    """One row of each of the keys ``used`` (any row will do: they decide alike), from the
    first ``SCAN`` rows on until every key has one: usually the first chunk, instead of a
    scatter of every row.
    """
    found = np.full(m, -1, dtype=np.intp)
    for start in range(0, len(key), SCAN):
        chunk = key[start : start + SCAN]
        found[chunk] = np.arange(start, start + len(chunk))
        if found.take(used).min(initial=0) >= 0:
            break
    return found.take(used)


@dataclass(frozen=True)
class Decided:
    """Verdicts of distinct (slice, pattern) keys, and each row's key."""

    key: np.ndarray  # intp (n,): index into the tables
    internal_score: np.ndarray  # float64 (m, v), NaN for rows without a slice
    required_ok: np.ndarray  # bool (m, v)
    passed: np.ndarray  # bool (m, v)
    decided: np.ndarray  # bool (m,): the key has a slice (False: no row has the key)


def decide_patterns(
    rows: RowSlices, columns: Mapping[str, np.ndarray], variants: Sequence[Variant]
) -> Decided:
    """The rule's verdict on every row for each ``(forced, failing)`` variant, computed once
    per distinct (slice, pass pattern) by ``_rules.decide`` on a representative row.

    ``columns`` maps criterion names to float64 arrays over the rows (NaN: missing); a
    criterion absent from it is missing on every row. A criterion every variant forces or
    fails has no bit: ``decide`` never reads its value (a sweep's own criterion).
    """
    named = [{*forced, *failing} for forced, failing in variants]
    fixed = set.intersection(*named) if named else set()
    key, m, used, representative = _distinct(*_pattern_words(rows, columns, fixed))
    slice_of = rows.index.take(representative)
    internal = np.full((m, len(variants)), np.nan)
    required_ok = np.zeros((m, len(variants)), dtype=bool)
    passed = np.zeros((m, len(variants)), dtype=bool)
    for s, rules in enumerate(rows.slices):
        mine = np.flatnonzero(slice_of == s)
        if not len(mine):
            continue
        at, picks = used[mine], representative[mine]
        values = np.column_stack(
            [
                columns[c][picks] if c in columns else np.full(len(picks), np.nan)
                for c in rules.criteria
            ]
        ).reshape(len(picks), len(rules.criteria))
        for j, (forced, failing) in enumerate(variants):
            verdict = decide(rules, values, _positions(rules, forced), _positions(rules, failing))
            internal[at, j] = verdict.internal_score
            required_ok[at, j] = verdict.required_ok
            passed[at, j] = verdict.passed
    decided = np.zeros(m, dtype=bool)
    decided[used] = slice_of >= 0
    return Decided(key, internal, required_ok, passed, decided)


def take_rows(table: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``table[key]`` for a small (m, v) table and many keys, one column at a time (a
    column-major answer: each column contiguous, as callers read them).
    """
    out = np.empty((table.shape[1], len(key)), dtype=bool)
    for j in range(table.shape[1]):
        np.take(table[:, j], key, out=out[j])
    return out.T


def _positions(rules: RuleSlice, names: Collection[str]) -> list[int]:
    return [rules.index(c) for c in names if c in rules.criteria]


def criterion_columns(frame: pd.DataFrame, slices: Sequence[RuleSlice]) -> dict[str, np.ndarray]:
    """The frame's columns of every criterion the slices name, as float64 (NaN: missing)."""
    names = dict.fromkeys(c for rules in slices for c in rules.criteria)
    return {
        c: frame[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in names if c in frame.columns
    }
