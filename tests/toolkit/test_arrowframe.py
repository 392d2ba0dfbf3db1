"""Frames to Arrow IPC and back (``quantscope._typed.arrowframe``), as the frame cache stores them.

Every dtype the loaders use, with missing values, comes back equal and writable, built as
views of the one buffer the stream was read into (pandas 3 writes into a column's array in
place, so a read-only column would make ``df.loc[i, c] = x`` fail); any other frame goes
through pyarrow's full conversion and comes back equal and writable too; a stream whose
codes point outside its categories is an error, never a wrong frame. No service involved:
the conversion alone (the frame cache's loads through the sandbox are in test_framecache).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from quantscope._http.cache import CacheEntry
from quantscope._http.framecache import FILENAME, FrameCache
from quantscope._typed import arrowframe as _arrowframe
from quantscope._typed.arrowframe import frame_from_arrow, frame_to_arrow

ROWS = 5
ENTRIES = [CacheEntry("page", datetime(2026, 1, 1, tzinfo=UTC))]


class Same:
    def unchanged(self, entries: Any) -> bool:
        return True


def utc(*days: int | None) -> pd.Series:
    return pd.Series(
        [None if d is None else pd.Timestamp(2026, 1, d, tz="UTC") for d in days],
        dtype="datetime64[ms, UTC]",
    )


def every_dtype() -> pd.DataFrame:
    """One column of each dtype the loaders make (and a few more), missing values included."""
    frame = pd.DataFrame(
        {
            "pnl_usd": [1.5, np.nan, -2.25, 0.0, 1e300],
            "ratio32": np.array([0.5, 1.0, np.nan, 2.0, 3.0], dtype="float32"),
            "count": np.array([1, 2, 3, 4, 2**62], dtype="int64"),
            "trade_id": pd.array([1, None, 3, 2**62, -7], dtype="Int64"),
            "small": pd.array([1, None, 3, 255, 0], dtype="UInt8"),
            "passed": pd.array([True, None, False, True, False], dtype="boolean"),
            "flag": np.array([True, False, True, True, False]),
            "opened_at": utc(1, 2, None, 4, 5),
            "naive": pd.Series(pd.to_datetime(["2026-01-01", None, "2026-01-03", None, None])),
            "micro": pd.Series(pd.date_range("2026-01-01", periods=ROWS, freq="s", tz="UTC")),
            "chain": pd.Categorical(["solana", None, "base", "solana", "bsc"]),
            "stage": pd.Categorical(["a", "b", "c", None, "a"], ordered=True),
            "level": pd.Categorical([3, 1, None, 2, 3]),
            "token_symbol": pd.array(["A", None, "Ω", "", "D"], dtype="string"),
            "note": pd.Series(["x", None, "y", "z", "é"], dtype="str"),
        }
    )
    frame.attrs = {"quantscope": {"endpoint": "/api/x", "params": {"a": "1"}, "pages": 2}}
    return frame


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many frames were read by pyarrow's full conversion (a spy; the conversion runs)."""
    seen: list[int] = []
    own = _arrowframe._own_columns

    def spy(frame: pd.DataFrame) -> pd.DataFrame:
        seen.append(len(frame))
        return own(frame)

    monkeypatch.setattr(_arrowframe, "_own_columns", spy)
    return seen


def writable(frame: pd.DataFrame) -> None:
    """Write into every column in place, as a user does, and read the values back."""
    first = frame.index[0]
    for column in frame.columns:
        value = frame[column].dropna().iloc[-1]
        frame.loc[first, column] = value
        assert frame.loc[first, column] == value, column


def test_every_loader_dtype_comes_back_equal_as_views(fallbacks: list[int]) -> None:
    original = every_dtype()
    blob = np.frombuffer(frame_to_arrow(original), np.uint8).copy()
    got = frame_from_arrow(blob)
    assert fallbacks == []  # no column needed pyarrow's conversion
    pd.testing.assert_frame_equal(got, original)
    assert got.attrs == original.attrs
    # Numbers, datetimes and codes are views of the buffer: no copy was made.
    assert np.shares_memory(got["pnl_usd"].to_numpy(), blob)
    assert np.shares_memory(got["count"].to_numpy(), blob)
    assert np.shares_memory(got["opened_at"].array._ndarray, blob)
    assert np.shares_memory(got["chain"].array.codes, blob)
    writable(got)
    assert got.loc[0, "pnl_usd"] == 1e300
    assert got.loc[0, "chain"] == "bsc"


def test_writes_into_a_read_frame_never_reach_the_next_read(fallbacks: list[int]) -> None:
    original = every_dtype()
    stored = bytes(frame_to_arrow(original))  # read-only: copied into a buffer once
    first = frame_from_arrow(stored)
    first.loc[first["pnl_usd"] > 0, "pnl_usd"] = -1.0
    first.iloc[0, first.columns.get_loc("opened_at")] = pd.Timestamp("2020-01-01", tz="UTC")
    first.fillna({"trade_id": 0, "passed": False}, inplace=True)
    first.mask(first[["count"]] > 2, 0, inplace=True)
    first.replace({"chain": {"solana": "base"}}, inplace=True)
    first.loc[1, "token_symbol"] = "changed"
    assert (first["pnl_usd"].dropna() <= 0).all()
    assert first["trade_id"].notna().all()

    again = frame_from_arrow(stored)
    pd.testing.assert_frame_equal(again, original)
    assert fallbacks == []


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: every_dtype().set_index(["trade_id", "chain"]), id="index-columns"),
        pytest.param(lambda: every_dtype().set_index("opened_at"), id="datetime-index"),
        pytest.param(lambda: every_dtype().iloc[:0], id="no-rows"),
        pytest.param(
            lambda: (
                every_dtype()
                .iloc[:0]
                .astype({"chain": "str"})
                .astype({"chain": pd.CategoricalDtype(pd.Index([], dtype="str"))})
            ),
            id="no-categories",
        ),
        pytest.param(lambda: every_dtype().iloc[::2], id="every-other-row"),
    ],
)
def test_other_shapes_come_back_equal_and_writable(make: Any, fallbacks: list[int]) -> None:
    original = make()
    got = frame_from_arrow(bytes(frame_to_arrow(original)))
    assert fallbacks == []
    pd.testing.assert_frame_equal(got, original)
    assert got.attrs == original.attrs
    if len(got):
        writable(got)


@pytest.mark.parametrize(
    "original",
    [
        pytest.param(pd.DataFrame({0: [1.0, 2.0], 1: ["a", "b"]}), id="integer-labels"),
        pytest.param(
            pd.DataFrame([[1.0, 2.0]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")])),
            id="tuple-labels",
        ),
        pytest.param(pd.DataFrame({"d": pd.to_timedelta([1, None], unit="s")}), id="timedelta"),
        pytest.param(pd.DataFrame({"f": pd.array([1.5, None], dtype="Float64")}), id="Float64"),
    ],
)
def test_other_dtypes_take_the_full_conversion(
    original: pd.DataFrame, fallbacks: list[int]
) -> None:
    got = frame_from_arrow(bytes(frame_to_arrow(original)))
    pd.testing.assert_frame_equal(got, original)
    assert len(fallbacks) == 1
    if len(got):
        got.iloc[0, 0] = got.iloc[-1, 0]  # writable: the conversion's columns were copied


def stream_with_a_code_out_of_range() -> np.ndarray:
    blob = np.frombuffer(frame_to_arrow(every_dtype()), np.uint8).copy()
    buffer = pa.py_buffer(blob)
    codes = pa.ipc.open_stream(buffer).read_all().column("chain").chunk(0).indices.buffers()[1]
    blob[codes.address - buffer.address] = 100  # 3 categories
    return blob


def test_a_code_outside_the_categories_is_an_error_not_a_frame(fallbacks: list[int]) -> None:
    with pytest.raises(pa.ArrowException, match="out of bounds"):
        frame_from_arrow(stream_with_a_code_out_of_range())
    assert len(fallbacks) == 0  # refused by the direct path, then by pyarrow's conversion


def test_the_frame_cache_drops_a_row_that_lies(tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / FILENAME)
    cache.encode = lambda frame: stream_with_a_code_out_of_range().tobytes()  # type: ignore[method-assign]
    assert cache.put("k", every_dtype(), ENTRIES)
    assert cache.stats()[0] == 1
    assert cache.get("k", Same()) is None  # a miss, and the row is gone
    assert cache.stats()[0] == 0


def test_string_offsets_past_their_data_are_never_read(fallbacks: list[int]) -> None:
    blob = np.frombuffer(frame_to_arrow(every_dtype()), np.uint8).copy()
    buffer = pa.py_buffer(blob)
    strings = pa.ipc.open_stream(buffer).read_all().column("token_symbol").chunk(0)
    offsets = strings.buffers()[1]
    start = offsets.address - buffer.address
    blob[start + 8 * ROWS : start + 8 * (ROWS + 1)] = np.array([2**40], np.int64).view(np.uint8)
    with pytest.raises(pa.ArrowException):
        frame_from_arrow(blob)
    assert fallbacks == []  # the direct path refused it; pyarrow's conversion raised
