r"""Tolerant parsers for the service's display strings: ``"$1.2K"``, ``"+12.5%"``, ``"0.5 SOL"``.

The service sends many numbers as display strings (docs/service-contract.md, Trades). The
sandbox writes them one way; the real service may write them slightly differently, so the
toolkit reads a tolerant grammar (case-insensitive, whitespace allowed around every part)::

    [sign] [$] [sign] number [exponent] [suffix]

* sign: ``+``, ``-`` or a unicode minus (U+2212, U+2013, U+FE63, U+FF0D); at most one, before
  or after the ``$`` (``-$3.40``, ``$-3.40``).
* number: digits with an optional fraction (``12``, ``12.``, ``.5``, ``12.50``); the integer part
  may use ``,`` thousands separators, but then every group after the first has exactly 3 digits
  and the first at most 3 (``1,234,567.5``). ``$1,2,3`` and ``1,5`` are unparseable, never 123
  or 15: a misread decimal comma would be silently wrong by orders of magnitude.
* exponent: ``e``/``E`` with an optional sign (``1.5e-7``), not combined with K/M/B.
* suffix, one at most: ``K``/``M``/``B`` (x 1e3, 1e6, 1e9), ``%`` (the number is returned in
  percent units: ``"+12.5%"`` gives 12.5, the caller divides), or a native unit ``SOL``,
  ``ETH``, ``BNB``, ``WETH``, ``WBNB`` (the amount is returned; `parse_native` also returns the
  unit, wrapped coins reported as their native coin).

Results are finite floats or NaN. ``None``, NaN, ``pd.NA``, ``""`` and whitespace-only text are
*missing*; any other text that does not fit the grammar (``"n/a"``, ``"nan"``, ``"inf"``,
``"1e999"``, ``"1,5"``) is *unparseable*: NaN too, and counted by `parse_numbers` so the loaders
can warn. Numbers that arrive as JSON numbers instead of strings are taken as they are (booleans
are unparseable). A K/M/B value is the decimal read as one number (``"1.23M"`` is exactly
``float("1.23e6")``), so it carries no extra rounding error.

`parse_numbers` is the vectorised form the loaders call on 100k-row columns. It does not parse
cell by cell in Python: it joins the column into one string, rewrites the display syntax with a
few C-speed ``str`` passes that act only where the grammar allows them (``"\x00$"`` at a cell
start, ``"K\x00"`` at a cell end, ...), checks the thousands separators with one regex scan,
and reads the result with ``np.fromstring`` (or ``float`` on the split parts when that refuses
a part). Whatever the rewrite does not handle
is left malformed on purpose, so ``float`` rejects it, and only those cells (and missing ones)
go through the scalar parser: both paths give the same numbers, which tests/test_parse.py checks
on random and systematically perturbed input. benchmarks/bench_parse.py measures the speed
(5-17x the per-cell loop on 100k rows). Long columns whose values repeat are parsed once per
distinct value; categorical Series once per category.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Final

import numpy as np
import pandas as pd

__all__ = ["parse_native", "parse_number", "parse_numbers"]

# Outcome of parsing one cell.
_OK: Final = 0
_MISSING: Final = 1
_BAD: Final = 2

_MINUS_SIGNS: Final = "\u2212\u2013\ufe63\uff0d"
# Every character with str.isspace() except " ", the 9 ASCII ones first (tests check the list).
_OTHER_SPACES: Final = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# Unicode minus signs become "-" and other whitespace " ": float() strips \x1c or \u3000 but the
# grammar's \s (ASCII) does not, so both paths normalise first. Other characters stay.
_NORMALISE: Final = {ord(c): "-" for c in _MINUS_SIGNS} | {ord(c): " " for c in _OTHER_SPACES}

_GRAMMAR: Final = re.compile(
    r"""
    (?P<sign>[+-])? \s*
    (?: \$ \s* )?
    (?P<sign2>[+-])? \s*
    (?P<int> \d{1,3}(?:,\d{3})+ | \d+ )?
    (?: \. (?P<frac>\d*) )?
    (?P<exp> e[+-]?\d+ )?
    \s*
    (?P<suffix> [kmb%] | w?eth | w?bnb | sol )?
    """,
    re.VERBOSE | re.IGNORECASE | re.ASCII,
)
_SUFFIX_EXPONENT: Final = {"k": "e3", "m": "e6", "b": "e9"}
_UNITS: Final = {"sol": "SOL", "eth": "ETH", "weth": "ETH", "bnb": "BNB", "wbnb": "BNB"}

# Vectorised path. Cells are joined with _SEP; _POISON is a character float() rejects, used to
# send a cell to the scalar parser; _NA_TOKEN fills empty cells so that float() does not refuse
# them (the scalar parser then tells missing from unparseable by the original text).
_SEP: Final = "\x00"
_FIELD_SEP: Final = "\x01"  # np.fromstring refuses "\x00" as a separator
_TO_FIELD_SEP: Final = {ord(_SEP): ord(_FIELD_SEP)}
_POISON: Final = "#"
_NA_TOKEN: Final = "NaN"
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")
# ASCII characters that cannot be part of float text after the rewrites become _POISON (1:1,
# so str.translate takes its fast path). Only digits, ".", "e", signs, " " and _SEP stay.
_NOT_FLOAT: Final = {c: ord(_POISON) for c in range(128) if chr(c) not in "0123456789.e+- \x00"}
# A thousands separator that breaks the rules: not after a digit, not followed by exactly three
# digits, after a first group of 4+ digits, or inside a fraction. Every branch starts at the
# comma, so the regex engine only stops at commas.
_BAD_COMMA: Final = re.compile(
    r",(?:(?<![0-9],)|(?![0-9]{3}(?![0-9]))|(?<=[0-9]{4},)"
    r"|(?<=\.[0-9],)|(?<=\.[0-9]{2},)|(?<=\.[0-9]{3},))"
)
# Units in the order they are rewritten (wrapped names first, so "5 WETH" is one unit), each
# with a letter whose absence proves the unit absent.
_UNIT_PROBES: Final = (("weth", "w"), ("wbnb", "w"), ("eth", "h"), ("bnb", "n"), ("sol", "l"))
# A column: a list or tuple of cells, or a 1-d object array.
_Cells = Sequence[object] | np.ndarray
# Factorize before parsing when a long column probably has fewer distinct texts than half its
# rows (_repeats_a_lot); measured in benchmarks/bench_parse.py.
_DEDUPE_MIN_ROWS: Final = 10_000
_DEDUPE_SAMPLE: Final = 2_048
_DEDUPE_MAX_RATIO: Final = 0.5


def _as_text(value: object) -> str:
    """The text a cell stands for: strings as they are, other JSON-ish values made into text.

    Missing values (what ``pd.isna`` calls missing: None, NaN, pd.NA, NaT) become ``""``;
    finite numbers their exact decimal text; booleans, infinities and other objects a string
    that does not parse.
    """
    if isinstance(value, str):
        return str(value)
    try:
        missing = bool(pd.isna(value))  # the vectorised path uses pd.isna too
    except (TypeError, ValueError):  # array-like cell
        return _POISON
    if missing:
        return ""
    if isinstance(value, bool | np.bool_):
        return _POISON
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating | Decimal):
        return repr(float(value)) if math.isfinite(value) else _POISON
    return _POISON


def _classify(value: object) -> tuple[float, str | None, int]:
    """Parse one cell with the reference grammar: (number, unit or None, outcome)."""
    text = value if type(value) is str else _as_text(value)
    if not text:
        return math.nan, None, _MISSING
    if not (text.isascii() and text.isprintable()):
        text = text.translate(_NORMALISE)
    text = text.strip()
    if not text:
        return math.nan, None, _MISSING
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        return math.nan, None, _BAD
    sign, sign2, integer, frac, exponent, suffix = match.group(
        "sign", "sign2", "int", "frac", "exp", "suffix"
    )
    if (sign and sign2) or (integer is None and not frac):
        return math.nan, None, _BAD
    suffix = (suffix or "").lower()
    if suffix in _SUFFIX_EXPONENT:
        if exponent:
            return math.nan, None, _BAD
        exponent = _SUFFIX_EXPONENT[suffix]
    number = (integer or "").replace(",", "")
    if frac is not None:
        number += "." + frac
    result = float(f"{sign or sign2 or ''}{number}{exponent or ''}")
    if not math.isfinite(result):
        return math.nan, None, _BAD
    return result, _UNITS.get(suffix), _OK


def parse_number(text: object) -> float:
    """Read one display string as a float; NaN when it is missing or does not parse.

    ``"-$3.40"`` and ``"$-3.40"`` give -3.4, ``"1.2k"`` 1200.0, ``" +12.5 % "`` 12.5 (percent
    units), ``"0.5 SOL"`` 0.5, ``""``/``None``/``"n/a"`` NaN. See the module docstring.
    """
    return _classify(text)[0]


def parse_native(text: object) -> tuple[float, str | None]:
    """Read a native-coin amount: ``"0.523400 SOL"`` gives ``(0.5234, "SOL")``.

    The unit is ``"SOL"``, ``"ETH"`` or ``"BNB"`` (``WETH``/``WBNB`` are reported as ``ETH``/
    ``BNB``: a wrapped coin is worth one native coin), ``None`` when the text has no unit.
    Unparseable or missing text gives ``(nan, None)``.
    """
    number, unit, _ = _classify(text)
    return number, unit


def parse_numbers(
    values: pd.Series | Sequence[str | None] | np.ndarray,
) -> tuple[np.ndarray, int]:
    """Read a column of display strings at C speed; same results as `parse_number` per cell.

    Args:
        values: the column: a Series (any dtype; a categorical one is parsed once per
            category), a list, tuple or object array of strings, with missing values as
            ``None``/NaN/``pd.NA``/``""``.

    Returns:
        A new float64 array of the numbers (NaN where missing or unparseable), and how many
        non-missing cells did not parse, for the caller's warning.

    Raises:
        TypeError: for a single string (which is a sequence of characters).
    """
    if isinstance(values, str):
        raise TypeError("parse_numbers takes a column of strings; use parse_number for one")
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        return _parse_categorical(values)
    numbers, bad = _parse_column(_cells(values))
    return numbers, int(np.count_nonzero(bad))


def _cells(values: pd.Series | pd.Index | Sequence[object] | np.ndarray) -> _Cells:
    """The column as an indexable sequence (a Series, Index or array becomes an object array)."""
    if isinstance(values, pd.Series | pd.Index):
        cells: np.ndarray = values.to_numpy(dtype=object)
        return cells
    if isinstance(values, np.ndarray):
        return values.astype(object, copy=False).ravel()
    return values


def _parse_categorical(values: pd.Series) -> tuple[np.ndarray, int]:
    """Parse each category once, then spread the results over the rows by code."""
    cat_numbers, cat_bad = _parse_column(_cells(values.cat.categories))
    codes = values.cat.codes.to_numpy()
    present = codes >= 0
    numbers = np.full(len(codes), np.nan)
    numbers[present] = cat_numbers[codes[present]]
    return numbers, int(np.count_nonzero(cat_bad[codes[present]]))


def _parse_column(cells: _Cells) -> tuple[np.ndarray, np.ndarray]:
    """Numbers and an unparseable mask for a column of cells.

    Long columns that repeat a lot are factorized and parsed once per distinct text (factorizing
    costs about a third of parsing, so it pays below ~50 % distinct); others in one pass.
    """
    n = len(cells)
    if n == 0:
        return np.empty(0, dtype=np.float64), np.zeros(0, dtype=bool)
    texts: _Cells = cells
    try:
        joined = _SEP.join(cells)  # type: ignore[arg-type]  # a non-str cell raises TypeError, caught below
    except TypeError:  # not all str: missing cells become "" at C speed, the rest one by one
        # A copy that is ours to write to (a Series' object array may be its own storage).
        if isinstance(cells, np.ndarray):
            filled = cells.copy()
        else:
            filled = np.fromiter(cells, dtype=object, count=n)
        filled[pd.isna(filled)] = ""
        try:
            joined = _SEP.join(filled)
            texts = filled
        except TypeError:  # numbers, booleans, ...: made into text (all-str also makes dedup safe)
            str_texts = [c if type(c) is str else _as_text(c) for c in filled]
            joined = _SEP.join(str_texts)
            texts = str_texts
    if n >= _DEDUPE_MIN_ROWS and _repeats_a_lot(texts):
        if not isinstance(texts, np.ndarray):
            texts = np.fromiter(texts, dtype=object, count=n)
        codes, distinct = pd.factorize(texts)  # all str: no missing code
        numbers, bad = _parse_texts(distinct, _SEP.join(distinct))
        return numbers[codes], bad[codes]
    return _parse_texts(texts, joined)


def _repeats_a_lot(texts: _Cells) -> bool:
    """Whether a column probably has fewer distinct texts than _DEDUPE_MAX_RATIO of its rows.

    Birthday estimate on an evenly spread sample: s draws from D equally likely values repeat
    about s*s / (2*D) times, so D is about s*s / (2*repeats). Skewed columns (many repeats of a
    few values) read as fewer distinct values than they have, which is the right bias: their
    repeats are what deduplication saves.
    """
    n = len(texts)
    sample = texts[:: max(n // _DEDUPE_SAMPLE, 1)]
    repeats = len(sample) - len(set(sample))
    return 2 * repeats * _DEDUPE_MAX_RATIO * n >= len(sample) ** 2


def _parse_texts(texts: _Cells, joined: str) -> tuple[np.ndarray, np.ndarray]:
    """Numbers and an unparseable mask: the fast path, then the scalar parser where it gave up."""
    n = len(texts)
    numbers = _fast_numbers(joined, n)
    if numbers is None:  # a cell holds the separator character: parse cell by cell
        parsed = [_classify(text) for text in texts]
        return (
            np.fromiter((p[0] for p in parsed), dtype=np.float64, count=n),
            np.fromiter((p[2] == _BAD for p in parsed), dtype=bool, count=n),
        )
    bad = np.zeros(n, dtype=bool)
    # Cells the fast path did not turn into a finite number: missing ones, and anything it left
    # malformed on purpose. The scalar parser decides those.
    suspects = np.flatnonzero(~np.isfinite(numbers))
    if suspects.size:
        outcomes = [_classify(texts[i]) for i in suspects.tolist()]
        numbers[suspects] = [outcome[0] for outcome in outcomes]
        bad[suspects] = [outcome[2] == _BAD for outcome in outcomes]
    return numbers, bad


def _fast_numbers(joined: str, n: int) -> np.ndarray | None:
    r"""Rewrite the joined column into plain float text and convert it in one go.

    Every rewrite is tied to a position where the grammar allows it (cell start ``\x00``, cell
    end ``\x00``, or a validated thousands separator), so a cell the rewrite does not fully
    handle stays malformed and float() rejects it (NaN, decided later by the scalar parser);
    a well-formed cell becomes the same decimal text the scalar parser gives float(). The
    rewrites cover the display strings as the sandbox writes them plus the common variants
    (``$-3.40``, ``1.2 k``, ``1.5 WETH``); rarer ones (padding, ``- $ 5``) take the scalar path.

    Args:
        joined: the n cells joined with ``_SEP``.
        n: the number of cells.

    Returns:
        The number each rewritten cell reads as (NaN where it does not read as one), or None
        when a cell contains the separator itself.
    """
    t = _SEP + joined + _SEP
    if not t.isascii():
        t = t.translate(_NORMALISE)
        if not t.isascii():  # e.g. "١٢" (float() reads non-ASCII digits; the grammar does not)
            t = _NON_ASCII.sub(_POISON, t)
    if any(c in t for c in _OTHER_SPACES[:9]):  # the ASCII ones
        t = t.translate(_NORMALISE)
    t = t.lower()
    # A unit at the cell end becomes a space: float() ignores it, and no suffix rewrite below
    # (which all need their character right before the separator) can apply after it, so
    # "5k SOL" and "5 SOL%" stay malformed. One-character tests skip absent units cheaply.
    for name, probe in _UNIT_PROBES:
        if probe in t:
            t = t.replace(name + _SEP, " " + _SEP)
    if "," in t:  # an exponent or a bad group anywhere sends every grouped cell to the scalar path
        t = t.replace(",", _POISON if "e" in t or _BAD_COMMA.search(t) else "")
    for letter, exponent in _SUFFIX_EXPONENT.items():  # before %, so "5 k%" stays malformed
        if letter in t:
            if " " in t:
                t = t.replace(" " + letter + _SEP, exponent + _SEP)
            t = t.replace(letter + _SEP, exponent + _SEP)
    if "%" in t:
        t = t.replace("%" + _SEP, _SEP)
    if "$" in t:  # signed prefixes first, so "$-$5" stays malformed
        if "-" in t:
            t = t.replace(_SEP + "-$", _SEP + "-")
        if "+" in t:
            t = t.replace(_SEP + "+$", _SEP + "+")
        t = t.replace(_SEP + "$", _SEP)
    # Cells with a character no float text has are blanked (so one "n/a" does not make
    # np.fromstring refuse the whole column), among them "_" (float() reads "1_000") and
    # _FIELD_SEP (np.fromstring would split the cell).
    t = t.translate(_NOT_FLOAT)
    if _POISON in t:
        t = _blank_cells_with(_POISON, t, limit=n // 8)
    if " " in t:  # np.fromstring reads a blank field as -1.0: strip fields' leading spaces
        while _SEP + " " in t:
            t = t.replace(_SEP + " ", _SEP)
    if _SEP + _SEP in t:  # empty cells; a second pass for runs of them
        t = t.replace(_SEP + _SEP, _SEP + _NA_TOKEN + _SEP)
        if _SEP + _SEP in t:
            t = t.replace(_SEP + _SEP, _SEP + _NA_TOKEN + _SEP)
    body = t[1:-1]
    # np.fromstring reads the fields in C without making 100k str and float objects (half the
    # cost of split + float()); on a non-blank field it takes what float() takes, minus
    # "1_000", with the same correctly rounded result (tests check both). It stops at the first
    # field it refuses (ValueError); then float() goes over the parts, the refused ones NaN.
    try:
        numbers = np.fromstring(body.translate(_TO_FIELD_SEP), sep=_FIELD_SEP)
    except ValueError:
        pass
    else:
        if len(numbers) == n:
            return numbers
    parts = body.split(_SEP)
    if len(parts) != n:
        return None
    return _floats(parts)


def _blank_cells_with(mark: str, t: str, limit: int) -> str:
    """Empty every cell of the joined text ``t`` that contains ``mark`` (at most ``limit``).

    Past ``limit`` cells the text is returned unchanged: finding cells one by one would cost
    more than the float() path that takes over when np.fromstring refuses them.
    """
    pieces: list[str] = []
    done = 0
    pos = t.find(mark)
    while pos >= 0:
        if len(pieces) > limit:
            return t
        start = t.rfind(_SEP, 0, pos) + 1
        end = t.find(_SEP, pos)
        pieces.append(t[done:start])
        done = end
        pos = t.find(mark, end)
    pieces.append(t[done:])
    return "".join(pieces)


def _floats(parts: list[str]) -> np.ndarray:
    """float() of every part, NaN where it raises.

    One C-level pass: ``list.extend`` keeps what it appended before float() raised, and the
    shared iterator resumes after the part that failed, so a bad part costs one exception
    rather than a Python call per part.
    """
    numbers: list[float] = []
    remaining = iter(parts)
    while True:
        try:
            numbers.extend(map(float, remaining))
        except ValueError:
            numbers.append(math.nan)
        else:
            return np.array(numbers, dtype=np.float64)
