"""build_frame's tolerance rules on hand-made records (no service needed)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from quantscope._typed import frames as _frames
from quantscope._typed.frames import Col, DataQualityWarning, FrameSpec, build_frame, series_of

SPEC = FrameSpec(
    "things",
    (
        Col("id", "id", "int"),
        Col("chain", "chain", "category"),
        Col("pnl_usd", "pnl", "number_text"),
        Col("roi", "roi", "number_text", scale=0.01),
        Col("op", "extra.operator", "category"),
        Col("extra", "extra", "object"),
        Col("deep", "a.b.c", "float"),
        Col("flag", "flag", "bool"),
        Col("at", "at", "iso"),
        Col("day", "day", "trade_date"),
        Col("ts", "ts", "epoch_ms"),
        Col("note", "note", "string"),
    ),
)


def record(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "7",
        "chain": "SOLANA",
        "pnl": "+$1,234.50",
        "roi": "-12.50%",
        "extra": {"operator": "V_GTE_T", "range": {"min": 0, "max": 1}},
        "a": {"b": {"c": 2.5}},
        "flag": True,
        "at": "2026-09-30T12:00:00.000Z",
        "day": "2026-09-30 12:00:01",
        "ts": 1790000000000,
        "note": "hello",
    }
    base.update(overrides)
    return base


def test_values_and_dtypes() -> None:
    frame = build_frame([record(), record(id=8, chain="BASE")], SPEC)
    assert {c: str(t) for c, t in frame.dtypes.items()} == SPEC.dtypes()
    first = frame.iloc[0]
    assert first["id"] == 7
    assert first["pnl_usd"] == 1234.5
    assert first["roi"] == -0.125
    assert first["op"] == "V_GTE_T"
    assert first["extra"]["range"] == {"min": 0, "max": 1}
    assert first["deep"] == 2.5
    assert bool(first["flag"]) is True
    assert first["at"] == pd.Timestamp("2026-09-30T12:00:00Z")
    assert first["day"] == pd.Timestamp("2026-09-30T12:00:01Z")
    assert first["ts"] == pd.Timestamp(1790000000000, unit="ms", tz="UTC")
    assert list(frame["chain"].cat.categories) == ["BASE", "SOLANA"]


def test_missing_and_odd_shapes_become_missing_not_errors() -> None:
    odd = record(a=None, extra="not an object", day="", at=None, flag=None, note=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = build_frame([odd], SPEC)  # absent values are missing, not unparseable
    row = frame.iloc[0]
    assert np.isnan(row["deep"])
    assert pd.isna(row["op"])
    assert pd.isna(row["day"])
    assert pd.isna(row["at"])
    assert pd.isna(row["flag"])
    assert pd.isna(row["note"])


def test_unparseable_values_are_counted_in_one_warning() -> None:
    bad = [record(pnl="n/a"), record(roi="lots", day="yesterday"), record(id="7.5")]
    with pytest.warns(DataQualityWarning) as caught:
        frame = build_frame(bad, SPEC)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "4 value(s)" in message
    for name in ("pnl_usd (1)", "roi (1)", "day (1)", "id (1)"):
        assert name in message
    assert frame["pnl_usd"].isna().sum() == 1
    assert frame["id"].isna().sum() == 1


def test_flags_all_booleans_or_not_convert_alike() -> None:
    """A column of booleans only (converted in one step) and one with missing or odd values
    (value by value) give the same flags; the odd value is counted, a missing one is not."""
    spec = FrameSpec("flags", (Col("flag", "flag", "bool"),))
    plain = build_frame([{"flag": True}, {"flag": False}, {"flag": True}], spec)
    assert plain["flag"].tolist() == [True, False, True]
    assert str(plain["flag"].dtype) == "boolean"
    with pytest.warns(DataQualityWarning, match=r"flag \(1\)"):
        mixed = build_frame([{"flag": True}, {"flag": None}, {"flag": "yes"}, {}], spec)
    assert mixed["flag"].tolist() == [True, pd.NA, pd.NA, pd.NA]
    converted, bad = _frames.convert([1, True], spec.columns[0])  # 1 is not a JSON boolean
    assert converted.tolist() == [pd.NA, True]
    assert bad == 1


def test_unknown_enum_values_are_kept() -> None:
    frame = build_frame([record(chain="ARBITRUM"), record()], SPEC)
    assert list(frame["chain"]) == ["ARBITRUM", "SOLANA"]


def test_all_missing_categories_and_empty_input() -> None:
    frame = build_frame([record(chain=None)], SPEC)
    assert frame["chain"].isna().all()
    assert len(frame["chain"].cat.categories) == 0
    empty = build_frame([], SPEC)
    assert len(empty) == 0
    assert {c: str(t) for c, t in empty.dtypes.items()} == SPEC.dtypes()


def test_absent_keys_behave_like_nulls() -> None:
    sparse = record()
    for key in ("note", "flag", "day", "at", "ts", "chain", "pnl", "extra", "a"):
        del sparse[key]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # absent is missing, never "unparseable"
        frame = build_frame([sparse, record()], SPEC)
    row = frame.iloc[0]
    for name in ("note", "flag", "day", "at", "ts", "chain", "pnl_usd", "op", "deep"):
        assert pd.isna(row[name]), name
    assert row["extra"] is None
    assert frame.iloc[1]["note"] == "hello"


def test_series_of_one_record_converts_each_value_by_its_kind() -> None:
    spec = FrameSpec(
        "counts",
        (
            Col("total", "total", "float"),
            Col("pass_rate", "percentPassed", "number_text", scale=0.01),
        ),
    )
    got = series_of({"total": 40, "percentPassed": "12.5%", "other": 1}, spec, "counts")
    pd.testing.assert_series_equal(
        got, pd.Series([40.0, 0.125], index=["total", "pass_rate"], name="counts")
    )
    with pytest.warns(DataQualityWarning, match="pass_rate"):
        bad = series_of({"percentPassed": "n/a"}, spec, "counts")
    assert bad.isna().all()
    assert str(bad.dtype) == "float64"
    mixed = FrameSpec("m", (Col("n", "n", "int"), Col("s", "s", "string")))
    assert str(series_of({"n": 3, "s": "x"}, mixed, "m").dtype) == "object"


def test_text_columns_are_what_pandas_makes_of_the_values() -> None:
    """``string`` columns go straight into one Arrow array; values Arrow does not take as text
    (numbers, booleans) are written as text the way pandas writes them."""
    for values in (
        [None, "a", float("nan"), "", "é" * 3],
        ["x", 1, None, True],
        [None],
        [],
    ):
        got = _frames._strings(values)
        want = pd.array(values, dtype="string")
        assert type(got) is type(want)
        assert got.dtype == want.dtype
        assert list(got) == list(want)
        assert got.equals(want)
