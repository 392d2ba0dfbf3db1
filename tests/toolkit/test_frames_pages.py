"""A frame joined from pages converted one at a time (``_typed.frames.Columns``, what a paged load
keeps) is the frame ``build_frame`` makes of all the records at once: values, dtypes,
categories, missing values and the one DataQualityWarning."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quantscope._typed.frames import Col, Columns, DataQualityWarning, FrameSpec, build_frame

SPEC = FrameSpec(
    "paged",
    (
        Col("id", "id", "int"),
        Col("chain", "chain", "category"),
        Col("pnl_usd", "pnl", "number_text"),
        Col("price", "price", "float", scale=0.5),
        Col("op", "extra.operator", "category"),
        Col("extra", "extra", "object"),
        Col("flag", "flag", "bool"),
        Col("at", "at", "iso"),
        Col("day", "day", "trade_date"),
        Col("ts", "ts", "epoch_ms"),
        Col("note", "note", "string"),
        Col("info", "info", "json"),
    ),
)

MISSING = st.sampled_from([None, "", "n/a"])
TEXT = st.text(alphabet="abcXYZ $%,.-+0123456789", max_size=8)
NUMBER = st.one_of(
    st.integers(-(10**6), 10**6), st.floats(allow_nan=False, allow_infinity=False, width=32)
)
# The documented exception (Columns' docstring): a number column mixing JSON booleans and
# unparseable text on different pages; booleans are left out of number columns here.
VALUES: dict[str, Any] = {
    "id": st.one_of(st.none(), st.integers(-(10**9), 10**9), st.just("12"), st.just("1.5"), TEXT),
    "chain": st.one_of(st.none(), st.sampled_from(["SOLANA", "BASE", "BSC", "Ünï"]), NUMBER),
    "pnl": st.one_of(MISSING, NUMBER, st.sampled_from(["+$1,234.50", "-12.5%", "0.5 SOL"]), TEXT),
    "price": st.one_of(st.none(), NUMBER, st.just("3.25"), TEXT),
    "extra": st.one_of(
        st.none(), st.fixed_dictionaries({"operator": st.sampled_from(["V_GTE_T", "V_LT_T"])})
    ),
    "flag": st.one_of(st.none(), st.booleans(), st.just("yes"), st.just(1)),
    "at": st.one_of(
        MISSING, st.just("2026-09-30T12:00:00.000Z"), st.just("2026-10-01T00:00:00+02:00"), TEXT
    ),
    "day": st.one_of(MISSING, st.just("2026-09-30 12:00:01"), st.integers(0, 5), TEXT),
    "ts": st.one_of(st.none(), st.integers(1_700_000_000_000, 1_800_000_000_000), TEXT),
    "note": st.one_of(st.none(), st.text(max_size=12), st.integers(0, 3)),
    "info": st.one_of(st.none(), st.lists(st.integers(0, 3), max_size=2), st.booleans()),
}
RECORD = st.fixed_dictionaries({}, optional=VALUES)


def built(make: Any) -> tuple[pd.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = make()
    return frame, [str(w.message) for w in caught if issubclass(w.category, DataQualityWarning)]


def same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    for col in SPEC.names:
        if isinstance(want[col].dtype, pd.CategoricalDtype):
            assert list(got[col].cat.categories) == list(want[col].cat.categories)
            assert got[col].cat.categories.dtype == want[col].cat.categories.dtype


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(RECORD, max_size=24),
    cuts=st.lists(st.integers(0, 24), max_size=5),
)
def test_pages_joined_are_the_frame_of_all_records(records: list[Any], cuts: list[int]) -> None:
    bounds = sorted({0, len(records), *(c for c in cuts if c <= len(records))})
    pages = [records[a:b] for a, b in itertools.pairwise(bounds)]
    want, want_warned = built(lambda: build_frame(records, SPEC))
    joined = Columns.join([Columns.of(p, SPEC) for p in pages], SPEC)
    got, got_warned = built(lambda: build_frame(joined, SPEC))
    same(got, want)
    assert got_warned == want_warned
    assert joined.first == (records[0] if records else None)


def test_the_parts_are_left_whole_and_one_arrow_chunk_per_text_column() -> None:
    pages = [[{"id": i, "note": f"n{i}", "chain": c}] for i, c in enumerate(["BSC", "BASE"])]
    parts = [Columns.of(p, SPEC) for p in pages]
    frame = Columns.join(parts, SPEC).frame()
    assert list(frame["note"]) == ["n0", "n1"]
    assert list(frame["chain"].cat.categories) == ["BASE", "BSC"]
    assert frame["note"].array.__arrow_array__().num_chunks == 1
    assert [p.length for p in parts] == [1, 1]
    assert list(parts[0].arrays["note"]) == ["n0"]
    again = Columns.join(parts, SPEC).frame()  # the parts can be joined again (a fault's check)
    same(again, frame)


@pytest.mark.parametrize("pages", [[], [[]], [[], []]])
def test_no_rows(pages: list[list[Any]]) -> None:
    joined = Columns.join([Columns.of(p, SPEC) for p in pages], SPEC)
    same(joined.frame(), build_frame([], SPEC))
    assert joined.first is None
