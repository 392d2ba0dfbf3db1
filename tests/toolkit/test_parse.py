"""Display strings, both directions: the sandbox's formatters against the toolkit's parsers.

``quantscope.sandbox.display`` writes what the service serves and ``quantscope._typed.parse`` reads
it; formatting with one and parsing with the other is the cross-check between server and client. The
vectorised parser is checked against the scalar one on random, partly hostile columns.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantscope._typed.parse import parse_native, parse_number, parse_numbers
from quantscope.sandbox import display

# --- strategies -------------------------------------------------------------------------------

# Magnitudes spread evenly over the decades 1e-9 .. 1e12 (token prices to market caps), plus
# hypothesis's own float choices in that range (bounds, integers) and exact binary ties (k/8
# has a 5 in the third decimal), where round-half-even shows.
_decades = st.builds(
    lambda mantissa, exponent: mantissa * 10.0**exponent,
    st.floats(1.0, 10.0, exclude_max=True),
    st.integers(-9, 11),
)
_magnitudes = _decades | st.floats(1e-9, 1e12) | st.integers(0, 8 * 10**6).map(lambda k: k / 8)
amounts = st.builds(lambda x, negative: -x if negative else x, _magnitudes, st.booleans()) | (
    st.sampled_from([0.0, -0.0, 0.004, -0.004, 0.005, -0.005, 999.995, 999_995.0])
)
chains = st.sampled_from(sorted(display.NATIVE_UNITS))


def _is_missing(cell: object) -> bool:
    """The documented notion of a missing cell, written independently of the parser."""
    if cell is None or cell is pd.NA:
        return True
    if isinstance(cell, float):
        return math.isnan(cell)
    return isinstance(cell, str) and not cell.strip()


# --- the formatters: examples decided once ----------------------------------------------------


@pytest.mark.parametrize(
    ("func", "x", "expected"),
    [
        (display.usd, 1234.5, "$1,234.50"),
        (display.usd, 0.0, "$0.00"),
        (display.usd, -3.4, "-$3.40"),
        (display.usd, -0.004, "$0.00"),  # rounds to zero: no minus
        (display.usd, 1_234_567.891, "$1,234,567.89"),
        (display.usd, 0.125, "$0.12"),  # exact tie: half to even
        (display.usd, 0.375, "$0.38"),  # exact tie: half to even
        (display.usd, 2.675, "$2.67"),  # 2.675 is stored as 2.67499999...
        (display.signed_usd, 12.34, "+$12.34"),
        (display.signed_usd, -3.4, "-$3.40"),
        (display.signed_usd, 0.0, "+$0.00"),
        (display.signed_usd, -0.0, "+$0.00"),
        (display.signed_usd, -0.004, "+$0.00"),
        (display.signed_usd, -0.005, "-$0.01"),  # -0.005 is stored just below -0.005
        (display.signed_usd, 1234.5, "+$1,234.50"),
        (display.signed_pct, 12.5, "+12.50%"),
        (display.signed_pct, -3.4, "-3.40%"),
        (display.signed_pct, -0.001, "+0.00%"),
        (display.signed_pct, 1234.567, "+1234.57%"),
        (display.price, 0.00001234, "$0.00001234"),
        (display.price, 1.234, "$1.234"),
        (display.price, 1234.0, "$1,234"),
        (display.price, 12345.6, "$12,350"),
        (display.price, 1.2, "$1.200"),
        (display.price, 0.5, "$0.5000"),
        (display.price, 9.9996, "$10.00"),  # rounding carries into a new digit
        (display.price, 0.0, "$0.000"),
        (display.price, 1.234e-9, "$0.000000001234"),
        (display.price, -1.234, "-$1.234"),
        (display.price, 2.5e12, "$2,500,000,000,000"),
        (display.compact_usd, 999.5, "$999.50"),
        (display.compact_usd, 999.994, "$999.99"),
        (display.compact_usd, 999.995, "$1.00K"),
        (display.compact_usd, 999_994.0, "$999.99K"),
        (display.compact_usd, 999_995.0, "$1.00M"),
        (display.compact_usd, 999_999.0, "$1.00M"),
        (display.compact_usd, 1_230_000.0, "$1.23M"),
        (display.compact_usd, 4.5e9, "$4.50B"),
        (display.compact_usd, 1.23457e12, "$1,234.57B"),
        (display.compact_usd, -2500.0, "-$2.50K"),
        (display.compact_usd, 0.0, "$0.00"),
        (display.plain, 125000.5, "125000.5"),
        (display.plain, 3.0, "3"),
        (display.plain, 1e-7, "0.0000001"),
        (display.plain, 1e16, "10000000000000000"),
        (display.plain, -2.5, "-2.5"),
        (display.plain, -0.0, "0"),
        (display.plain, 0.1 + 0.2, "0.30000000000000004"),
        (display.plain, 12345678901234567890, "12345678901234567890"),
    ],
)
def test_formatter_examples(func, x, expected):
    assert func(x) == expected


@pytest.mark.parametrize(
    ("x", "chain", "expected"),
    [
        (0.5234, "SOLANA", "0.523400 SOL"),
        (1.0, "BASE", "1.000000 ETH"),
        (12.3456789, "BSC", "12.345679 BNB"),
        (-0.0000001, "SOLANA", "0.000000 SOL"),
        (1234.5, "SOLANA", "1234.500000 SOL"),
    ],
)
def test_native_examples(x, chain, expected):
    assert display.native(x, chain) == expected


@pytest.mark.parametrize(
    "func",
    [
        display.usd,
        display.signed_usd,
        display.signed_pct,
        display.price,
        display.compact_usd,
        display.plain,
    ],
)
@pytest.mark.parametrize("x", [math.nan, math.inf, -math.inf])
def test_formatters_refuse_non_finite(func, x):
    with pytest.raises(ValueError, match="non-finite"):
        func(x)


def test_native_refuses_unknown_chain():
    with pytest.raises(ValueError, match="unknown chain 'solana'"):
        display.native(1.0, "solana")


# --- format then parse: the round trips -------------------------------------------------------


@given(amounts)
def test_usd_round_trips_to_the_cent(x):
    text = display.usd(x)
    assert re.fullmatch(r"-?\$\d{1,3}(,\d{3})*\.\d{2}", text)
    assert parse_number(text) == round(x, 2)


@given(amounts)
def test_signed_usd_round_trips_to_the_cent(x):
    text = display.signed_usd(x)
    assert re.fullmatch(r"[+-]\$\d{1,3}(,\d{3})*\.\d{2}", text)
    assert parse_number(text) == round(x, 2)
    assert (text[0] == "-") == (round(x, 2) < 0)


@given(amounts)
def test_signed_pct_round_trips_to_the_hundredth(x):
    text = display.signed_pct(x)
    assert re.fullmatch(r"[+-]\d+\.\d{2}%", text)
    assert parse_number(text) == round(x, 2)  # percent units both ways
    assert (text[0] == "-") == (round(x, 2) < 0)


@given(amounts, chains)
def test_native_round_trips_to_six_decimals_with_its_unit(x, chain):
    text = display.native(x, chain)
    assert re.fullmatch(r"-?\d+\.\d{6} (SOL|ETH|BNB)", text)
    assert parse_native(text) == (round(x, 6), display.NATIVE_UNITS[chain])
    assert parse_number(text) == round(x, 6)


@given(amounts)
def test_price_round_trips_to_four_significant_digits(x):
    text = display.price(x)
    assert "e" not in text.lower()
    assert re.fullmatch(r"-?\$(\d{1,3}(,\d{3})*|\d+\.\d+)", text)
    digits = re.sub(r"[-$,.]", "", text).lstrip("0")
    if "." in text:
        assert len(digits) == 4 or x == 0  # exactly 4 significant digits shown
    else:
        assert len(digits) >= 4
        assert set(digits[4:]) <= {"0"}
    parsed = parse_number(text)
    assert parsed == float(f"{x:.3e}")
    assert abs(parsed - x) <= 5e-4 * abs(x)


_SUFFIX_DIVISOR = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9}


@given(amounts)
def test_compact_usd_round_trips_to_its_two_decimals(x):
    text = display.compact_usd(x)
    match = re.fullmatch(r"-?\$(\d{1,3}(?:,\d{3})*\.\d{2})([KMB]?)", text)
    assert match
    mantissa, suffix = float(match[1].replace(",", "")), match[2]
    assert mantissa < 1000 or suffix == "B"  # never "$1000.00K"
    if suffix:  # the suffix is the smallest one that keeps the mantissa below 1000.00
        smaller = {"K": 1.0, "M": 1e3, "B": 1e6}[suffix]
        assert round(abs(x) / smaller, 2) >= 1000
    divisor = _SUFFIX_DIVISOR[suffix]
    parsed = parse_number(text)
    assert abs(parsed - x) <= 0.005 * divisor * (1 + 1e-9) + abs(x) * 1e-15
    if abs(x) >= 1:  # 3 significant digits at least
        assert abs(parsed - x) <= 5e-3 * abs(x)


@given(st.floats(allow_nan=False, allow_infinity=False) | _decades)
def test_plain_round_trips_exactly(x):
    text = display.plain(x)
    assert re.fullmatch(r"-?\d+(\.\d*[1-9])?", text)  # no exponent, no trailing zeros
    assert parse_number(text) == x


@given(st.integers(-(10**15), 10**15))
def test_plain_integers_and_thousands_separators(n):
    assert parse_number(display.plain(n)) == float(n)
    assert parse_number(f"{n:,}") == float(n)
    assert parse_number(f"${n:,}.50".replace("$-", "-$")) == float(f"{n}.50")


@given(
    st.integers(0, 999),
    st.integers(0, 99),
    st.sampled_from(["k", "K", "m", "M", "b", "B"]),
    st.sampled_from(["", " ", "$", "-$", "+$", "$-"]),
)
def test_kmb_suffixes_scale_exactly(whole, cents, suffix, prefix):
    text = f"{prefix}{whole}.{cents:02d}{suffix}"
    exponent = {"k": 3, "m": 6, "b": 9}[suffix.lower()]
    sign = "-" if "-" in prefix else ""
    assert parse_number(text) == float(f"{sign}{whole}.{cents:02d}e{exponent}")


_TOLERATED = {
    "swapcase": str.swapcase,
    "pad": lambda s: f" \t{s}\u00a0 ",
    "unicode minus": lambda s: s.replace("-", "\u2212"),
    "sign after $": lambda s: re.sub(r"^([+-])\$", r"$\1", s),
    "space before suffix": lambda s: re.sub(r"([0-9])([KMB%]|[A-Z]{3})$", r"\1 \2", s),
}


@given(
    st.one_of(
        amounts.map(display.usd),
        amounts.map(display.signed_usd),
        amounts.map(display.signed_pct),
        amounts.map(display.price),
        amounts.map(display.compact_usd),
        st.builds(display.native, amounts, chains),
    ),
    st.lists(st.sampled_from(sorted(_TOLERATED)), unique=True),
)
def test_tolerated_variants_read_the_same(text, variants):
    varied = text
    for name in variants:
        varied = _TOLERATED[name](varied)
    assert parse_number(varied) == parse_number(text)
    numbers, n_bad = parse_numbers([varied, text])
    assert numbers[0] == numbers[1] == parse_number(text)
    assert n_bad == 0


# --- tolerant inputs: decided by hand ---------------------------------------------------------

OK, MISSING, BAD = "ok", "missing", "bad"


@pytest.mark.parametrize(
    ("cell", "expected", "outcome"),
    [
        ("$-3.40", -3.4, OK),
        ("-$3.40", -3.4, OK),
        ("+$1", 1.0, OK),
        ("1.2k", 1200.0, OK),
        (" +12.5 % ", 12.5, OK),  # percent units: the caller divides
        ("\u22125%", -5.0, OK),  # unicode minus
        ("\u2013 5", -5.0, OK),  # en dash as minus, space after the sign
        ("$ - 5", -5.0, OK),
        ("1,234", 1234.0, OK),
        ("$1,234,567.5", 1234567.5, OK),
        ("1.5e-7", 1.5e-7, OK),
        ("$1.23M", 1.23e6, OK),
        ("$1.23b", 1.23e9, OK),
        ("5 k", 5000.0, OK),
        (".5k", 500.0, OK),
        ("5.", 5.0, OK),
        ("0.523400 SOL", 0.5234, OK),
        ("2 wbnb", 2.0, OK),
        ("+$0.00", 0.0, OK),
        ("\t5\n", 5.0, OK),
        ("5\u00a0%", 5.0, OK),
        (7, 7.0, OK),  # a JSON number where a string was expected
        (-2.5, -2.5, OK),
        ("", math.nan, MISSING),
        ("   ", math.nan, MISSING),
        (None, math.nan, MISSING),
        (math.nan, math.nan, MISSING),
        (pd.NA, math.nan, MISSING),
        ("n/a", math.nan, BAD),
        ("$1,2,3", math.nan, BAD),  # not 123: the groups are malformed
        ("1,5", math.nan, BAD),  # a decimal comma is not silently read as 15
        ("1234,567", math.nan, BAD),
        ("1.234,567", math.nan, BAD),
        ("12 345", math.nan, BAD),
        ("$$5", math.nan, BAD),
        ("$-$5", math.nan, BAD),
        ("+-5", math.nan, BAD),
        ("5-", math.nan, BAD),
        ("5k%", math.nan, BAD),
        ("5 k%", math.nan, BAD),
        ("5k SOL", math.nan, BAD),
        ("1e3k", math.nan, BAD),
        ("1e-3,000", math.nan, BAD),  # a separator after an exponent
        ("1,234e2", 123400.0, OK),
        ("5kSOL", math.nan, BAD),
        ("5%SOL", math.nan, BAD),
        ("5 SOL%", math.nan, BAD),
        ("5 solana", math.nan, BAD),
        ("nan", math.nan, BAD),
        ("inf", math.nan, BAD),
        ("1e999", math.nan, BAD),  # overflows: not a number the service could mean
        ("1_000", math.nan, BAD),
        ("0\x01", math.nan, BAD),
        (" SOL", math.nan, BAD),
        ("\u0661\u0662", math.nan, BAD),  # Arabic-Indic digits
        (".", math.nan, BAD),
        ("$", math.nan, BAD),
        ("-", math.nan, BAD),
        ("%", math.nan, BAD),
        (True, math.nan, BAD),
        (math.inf, math.nan, BAD),
        (b"5", math.nan, BAD),
    ],
)
def test_tolerant_inputs(cell, expected, outcome):
    got = parse_number(cell)
    assert got == expected or (math.isnan(got) and math.isnan(expected))
    numbers, n_bad = parse_numbers([cell])
    assert numbers[0] == got or (math.isnan(numbers[0]) and math.isnan(got))
    assert n_bad == (outcome == BAD)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("0.523400 SOL", (0.5234, "SOL")),
        ("1.5 WETH", (1.5, "ETH")),
        ("2 wbnb", (2.0, "BNB")),
        ("0.1 eth", (0.1, "ETH")),
        ("3 BNB", (3.0, "BNB")),
        ("0.5", (0.5, None)),
        ("$1.2K", (1200.0, None)),
    ],
)
def test_parse_native_reports_the_unit(cell, expected):
    assert parse_native(cell) == expected


@pytest.mark.parametrize("cell", ["", None, "n/a", "5 solana", "SOL"])
def test_parse_native_without_a_number(cell):
    number, unit = parse_native(cell)
    assert math.isnan(number)
    assert unit is None


@pytest.mark.parametrize("space", [chr(c) for c in range(0x110000) if chr(c).isspace()])
def test_every_unicode_space_is_whitespace(space):
    cell = f"{space}-5{space}%{space}"
    assert parse_number(cell) == -5.0
    numbers, n_bad = parse_numbers([cell, space])  # a lone space character is missing
    assert numbers[0] == -5.0
    assert math.isnan(numbers[1])
    assert n_bad == 0


# --- the vectorised parser against the scalar one ---------------------------------------------

_TOKENS = [
    "0", "1", "5", "9", "12", "999", "1,234", ",", ",5", ".", "$", "+", "-", "\u2212", " ",
    "\t", "\u00a0", "%", "k", "K", "m", "M", "b", "B", "e", "E", "e-", "sol", "SOL", " eth",
    "WETH", "bnb", "wbnb", "nan", "inf", "_", "a", "n/a", "#", "\x01", "\u0661",
]  # fmt: skip
_token_soup = st.lists(st.sampled_from(_TOKENS), max_size=8).map("".join)
# Strings near the grammar's edge: a valid string with up to two tokens inserted at random
# places ("5k" -> "5ksol", "$5" -> "$$5", "-$5" -> "$-$5", "55" -> "5k5"). One defect at a time is
# what shows a rewrite done in the wrong order or in the wrong place, as a disagreement with the
# scalar parser.
_valid_number = st.builds(
    lambda n, grouped, frac: (f"{n:,}" if grouped else str(n)) + frac,
    st.integers(0, 10**10),
    st.booleans(),
    st.sampled_from(["", "", ".", ".5", ".25", ".125", ".0001"]),
)
_valid = st.builds(
    lambda *parts: "".join(parts),
    st.sampled_from(["", "", "", " ", "\t"]),
    st.sampled_from(["", "", "+", "-", "\u2212"]),
    st.sampled_from(["", "$"]),
    st.sampled_from(["", "", "", "+", "-"]),
    _valid_number,
    st.sampled_from(["", "", "", "", "e3", "E-2", "e+1", "e308", "e999"]),
    st.sampled_from(["", "", "k", "M", "b", "%", " %", " SOL", "eth", " WETH", " wbnb"]),
    st.sampled_from(["", "", "", " ", "\n"]),
)
_insertions = st.lists(st.tuples(st.integers(0, 40), st.sampled_from(_TOKENS)), max_size=2)


def _insert(text: str, insertions: list[tuple[int, str]]) -> str:
    for position, token in insertions:
        position = min(position, len(text))
        text = text[:position] + token + text[position:]
    return text


_near_grammar = st.builds(_insert, _valid, _insertions)
_hostile = _token_soup | _near_grammar
_displayed = st.one_of(
    amounts.map(display.usd),
    amounts.map(display.signed_usd),
    amounts.map(display.signed_pct),
    amounts.map(display.price),
    amounts.map(display.compact_usd),
    amounts.map(display.plain),
    st.builds(display.native, amounts, chains),
)
_others = st.sampled_from([None, math.nan, pd.NA, 0, 7, -3.5, 1e300, math.inf, True, b"5"])
cells = st.one_of(_hostile, _displayed, _others)


def _assert_agrees(column, numbers, n_bad):
    expected = np.array([parse_number(cell) for cell in column], dtype=np.float64)
    assert numbers.dtype == np.float64
    assert numbers.shape == (len(column),)
    np.testing.assert_array_equal(numbers, expected)
    assert n_bad == sum(
        math.isnan(value) and not _is_missing(cell)
        for cell, value in zip(column, expected, strict=True)
    )


@given(st.lists(cells, max_size=40))
def test_vectorised_agrees_with_scalar(column):
    numbers, n_bad = parse_numbers(column)
    _assert_agrees(column, numbers, n_bad)
    # The fast path decides some things per column (one bad thousands separator sends every
    # grouped cell to the scalar parser), so each cell is also checked on its own.
    for cell in column:
        numbers, n_bad = parse_numbers([cell])
        _assert_agrees([cell], numbers, n_bad)


@settings(max_examples=300, deadline=None)
@given(_near_grammar)
def test_vectorised_agrees_cell_by_cell_near_the_grammar(cell):
    numbers, n_bad = parse_numbers([cell])
    _assert_agrees([cell], numbers, n_bad)


_BASES = [
    "$1,234.50", "-$3.40", "+$12.34", "$-3.40", "12.50%", "-3.40%", "0.523400 SOL", "1.5 WETH",
    "2 wbnb", "$0.00001234", "$1.234", "$12,350", "$1.23M", "$4.50b", "$999.50", "125000.5",
    "1234567", "1.234567", "55", "5k", "5 K", ".5", "5.", "1,234e2", "1e-3000", "1e308",
    "1.5E-7", "1000",
]  # fmt: skip
_EDITS = [
    "0", "5", ",", ",000", ".", "$", "+", "-", "\u2212", " ", "\t", "%", "k", "M", "b", "e",
    "E", "e3", "e-3", "_", "#", "\u0661", "sol", "ETH", "wbnb", "k%", "%k", "n/a",
]  # fmt: skip


def _neighbours(text: str) -> list[str]:
    """Every string one edit away: an _EDITS token inserted anywhere, a character deleted."""
    inserted = [text[:i] + token + text[i:] for i in range(len(text) + 1) for token in _EDITS]
    deleted = [text[:i] + text[i + 1 :] for i in range(len(text))]
    return inserted + deleted


@pytest.mark.parametrize("base", _BASES)
def test_vectorised_agrees_one_edit_away_from_valid(base):
    """Systematic, where hypothesis is random: each rewrite rule of the fast path meets the
    strings that would fool it if it were applied in the wrong place or order ("5ksol", "$$5",
    "$-$5", "5k%", "5k5", "1,2345", "1.234,567", "1e-3,000", "1_000")."""
    for cell in _neighbours(base):
        numbers, n_bad = parse_numbers([cell])
        _assert_agrees([cell], numbers, n_bad)
    column = _neighbours(base)
    numbers, n_bad = parse_numbers(column)
    _assert_agrees(column, numbers, n_bad)


@settings(max_examples=20, deadline=None)
@given(st.lists(cells, min_size=1, max_size=12), st.lists(_displayed, min_size=1, max_size=50))
def test_vectorised_agrees_on_long_columns(rare, common):
    """Long columns take the chunked float fallback (a few bad cells among many good ones)."""
    column = common * (1500 // len(common) + 1) + rare
    numbers, n_bad = parse_numbers(column)
    _assert_agrees(column, numbers, n_bad)


@settings(max_examples=20, deadline=None)
@given(st.lists(cells, min_size=1, max_size=30))
def test_vectorised_agrees_on_repetitive_columns(distinct):
    """Long columns with few distinct values are parsed once per value, then spread back."""
    column = distinct * (12_000 // len(distinct) + 1)
    numbers, n_bad = parse_numbers(column)
    _assert_agrees(column, numbers, n_bad)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(_hostile, _displayed, st.sampled_from([None, math.nan])), max_size=40))
def test_every_container_gives_the_same_result(column):
    numbers, n_bad = parse_numbers(column)
    objects = np.empty(len(column), dtype=object)
    objects[:] = column
    containers = [
        tuple(column),
        objects,
        pd.Series(column, dtype=object),
        pd.Series(column, dtype="str"),
        pd.Series(column, dtype="category"),
    ]
    for container in containers:
        other, other_bad = parse_numbers(container)
        np.testing.assert_array_equal(other, numbers)
        assert other_bad == n_bad


def test_unparseable_count_is_exact():
    column = ["$1", "", None, "n/a", "nan", math.nan, "  ", "1,5", "+12.50%", "1.2k", "SOL"]
    numbers, n_bad = parse_numbers(column)
    np.testing.assert_array_equal(
        numbers, [1.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, 12.5, 1200.0, np.nan]
    )
    assert n_bad == 4  # "n/a", "nan", "1,5", "SOL"; the empty, None, NaN and blank are missing


def test_one_bad_group_does_not_spoil_the_good_ones():
    column = ["$1,234.50", "+$12,345.00", "$1,2,3", "$999.00"] * 1000
    numbers, n_bad = parse_numbers(column)
    np.testing.assert_array_equal(numbers[:4], [1234.5, 12345.0, np.nan, 999.0])
    assert n_bad == 1000


def test_cells_holding_the_separator_still_parse():
    numbers, n_bad = parse_numbers(["1\x002", "$3.50", ""])
    np.testing.assert_array_equal(numbers, [np.nan, 3.5, np.nan])
    assert n_bad == 1


def test_a_single_string_is_not_a_column():
    with pytest.raises(TypeError, match="use parse_number"):
        parse_numbers("$1.00")


def test_empty_and_fresh_output():
    numbers, n_bad = parse_numbers([])
    assert numbers.dtype == np.float64
    assert numbers.shape == (0,)
    assert n_bad == 0
    series = pd.Series(["$1.00", "$2.00"] * 3000, dtype="category")
    numbers, n_bad = parse_numbers(series)
    numbers[0] = 99.0  # writable, and not shared with anything the caller owns
    assert parse_numbers(series)[0][0] == 1.0
