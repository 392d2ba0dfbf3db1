"""Tolerant parsers for the service's display strings: ``"$1.2K"``, ``"+12.5%"``, ``"0.5 SOL"``.

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

`parse_numbers` is the vectorised form the loaders call on 100k-row columns. It never parses
cell by cell in Python: it joins the column into one string, rewrites the display syntax with a
handful of C-speed ``str`` passes that only act in positions where the grammar allows them
(``"\\x00$"``, ``"K\\x00"``, ...), checks the thousands separators with one regex scan, splits,
and converts with ``float`` through ``np.fromiter``. Whatever the rewrite cannot handle is left
malformed on purpose, so ``float`` rejects it, and only those cells (and missing ones) go
through the scalar parser. Both paths therefore give the same answer; tests/test_parse.py
checks it on random input and benchmarks/bench_parse.py measures the speed.
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
# Unicode minus signs become "-", every whitespace character other than " " becomes " " (the
# ASCII control whitespace \t\n\r\v\f\x1c-\x1f included: float() strips those, re's \s does
# not, so both paths normalise them first). Any other character is left alone.
# Every character with str.isspace() except " " (a test checks the list is complete).
_OTHER_SPACES: Final = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
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
_POISON: Final = "#"
_NA_TOKEN: Final = "NaN"
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")
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
_CHUNK: Final = 512  # float() is retried cell by cell only inside chunks that failed
# Deduplicate before parsing when a column is long and its first rows repeat (see _parse_column).
_DEDUPE_MIN_ROWS: Final = 4_096
_DEDUPE_SAMPLE: Final = 1_024
_DEDUPE_MAX_DISTINCT: Final = 256


def _as_text(value: object) -> str:
    """The text a cell stands for: strings as they are, other JSON-ish values made into text.

    Missing values (None, NaN, pd.NA, NaT) become ``""``; finite numbers their exact decimal
    text; booleans, infinities and other objects a string that does not parse.
    """
    if isinstance(value, str):
        return str(value)
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool | np.bool_):
        return _POISON
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating | Decimal):
        if value != value:  # NaN
            return ""
        return repr(float(value)) if math.isfinite(value) else _POISON
    return _POISON


def _classify(value: object) -> tuple[float, str | None, int]:
    """Parse one cell with the reference grammar: (number, unit or None, outcome)."""
    text = value if type(value) is str else _as_text(value)
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
    """
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        return _parse_categorical(values)
    numbers, bad = _parse_column(_cells(values))
    return numbers, int(np.count_nonzero(bad))


def _cells(values: pd.Series | pd.Index | Sequence[object] | np.ndarray) -> _Cells:
    """The column as an indexable sequence (a Series, Index or array becomes an object array)."""
    if isinstance(values, pd.Series | pd.Index):
        return values.to_numpy(dtype=object)
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

    Columns of many rows whose first rows repeat a lot (a sample of _DEDUPE_SAMPLE rows with at
    most _DEDUPE_MAX_DISTINCT distinct texts) are parsed once per distinct text, then spread
    back; others in one pass (benchmarks/bench_parse.py measures both).
    """
    n = len(cells)
    if n == 0:
        return np.empty(0, dtype=np.float64), np.zeros(0, dtype=bool)
    texts: _Cells = cells
    try:
        joined = _SEP.join(cells)  # type: ignore[arg-type]
    except TypeError:  # None, NaN, numbers: made into text (all-str keys also make dedup safe)
        str_texts = [c if type(c) is str else _as_text(c) for c in cells]
        joined = _SEP.join(str_texts)
        texts = str_texts
    if n >= _DEDUPE_MIN_ROWS and len(set(texts[:_DEDUPE_SAMPLE])) <= _DEDUPE_MAX_DISTINCT:
        distinct = list(dict.fromkeys(texts))
        if len(distinct) * 4 <= n:
            position = {text: i for i, text in enumerate(distinct)}
            codes = np.fromiter(map(position.__getitem__, texts), dtype=np.intp, count=n)
            numbers, bad = _parse_texts(distinct, _SEP.join(distinct))
            return numbers[codes], bad[codes]
    return _parse_texts(texts, joined)


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
    for i in np.flatnonzero(~np.isfinite(numbers)).tolist():
        number, _unit, outcome = _classify(texts[i])
        numbers[i] = number
        bad[i] = outcome == _BAD
    return numbers, bad


def _fast_numbers(joined: str, n: int) -> np.ndarray | None:
    """Rewrite the joined column into plain float text and convert it in one go.

    Every rewrite is tied to a position where the grammar allows it (cell start ``\\x00``, cell
    end ``\\x00``, or a validated thousands separator), so a cell the rewrite does not fully
    handle stays malformed and float() rejects it (NaN, decided later by the scalar parser);
    a well-formed cell becomes the same decimal text the scalar parser gives float(). The
    rewrites cover the display strings as the sandbox writes them plus the common variants
    (``$-3.40``, ``1.2 k``, ``1.5 WETH``); rarer ones (padding, ``- $ 5``) take the scalar path.

    Args:
        joined: the n cells joined with ``_SEP``.
        n: the number of cells.

    Returns:
        float() of each rewritten cell (NaN where it refuses), or None when a cell contains
        the separator itself.
    """
    t = _SEP + joined + _SEP
    if not t.isascii():
        t = t.translate(_NORMALISE)
        if not t.isascii():  # e.g. "١٢" (float() reads non-ASCII digits; the grammar does not)
            t = _NON_ASCII.sub(_POISON, t)
    if any(c in t for c in _OTHER_SPACES[:9]):  # the ASCII ones
        t = t.translate(_NORMALISE)
    if "_" in t:  # float() would read "1_000"
        t = t.replace("_", _POISON)
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
    if _SEP + _SEP in t:  # empty cells; twice, for runs of them
        t = t.replace(_SEP + _SEP, _SEP + _NA_TOKEN + _SEP)
        t = t.replace(_SEP + _SEP, _SEP + _NA_TOKEN + _SEP)
    parts = t[1:-1].split(_SEP)
    if len(parts) != n:
        return None
    return _floats(parts)


def _floats(parts: list[str]) -> np.ndarray:
    """float() of every part, NaN where it raises; chunked so that a few bad parts stay cheap."""
    n = len(parts)
    try:
        return np.fromiter(map(float, parts), dtype=np.float64, count=n)
    except ValueError:
        pass
    out = np.empty(n, dtype=np.float64)
    for start in range(0, n, _CHUNK):
        chunk = parts[start : start + _CHUNK]
        try:
            out[start : start + len(chunk)] = np.fromiter(
                map(float, chunk), dtype=np.float64, count=len(chunk)
            )
        except ValueError:
            out[start : start + len(chunk)] = [_float_or_nan(p) for p in chunk]
    return out


def _float_or_nan(text: str) -> float:
    """float(text), or NaN when float() refuses it."""
    try:
        return float(text)
    except ValueError:
        return math.nan
