"""Typed frames as Arrow IPC streams and back, for the frame cache (``_http.framecache``).

Writing is pyarrow's (``pa.Table.from_pandas``) plus a record of what reading back needs
(``META_KEY``): each column's exact dtype (``dtype_tag``), the index and the attrs.

Reading builds the loaders' columns straight from the stream's buffers, zero-copy, over a
**writable** buffer that the caller owns (``frame_from_arrow``): numbers, datetimes,
nullable integers' values and categorical codes are NumPy views of it, so the frame is as
writable as a loader's (pandas 3 writes ``df.loc[i, c] = x`` into a column's array in place
and fails on a read-only one: it does not copy on write for that), and no column is copied.
Only what Arrow lays out otherwise is converted: validity bitmaps (to NaN, NaT, -1 codes or
masks) and booleans (bit-packed); strings stay Arrow arrays (pandas' ``string[pyarrow]``,
immutable by design). Every column is checked against its recorded dtype; a frame of any
other dtype, layout or an inconsistent stream (a code out of its categories' range) takes
pyarrow's full conversion instead (after a full validation of the stream), whose read-only
columns are then copied. Nothing read is executed (no pickle): a stream copied from a
colleague is data only, and what the columns' views rely on is checked (buffer sizes,
string offsets inside their data, codes inside their categories) before it is used.
"""

from __future__ import annotations

import gc
import json
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray, BooleanArray, DatetimeArray, IntegerArray

from quantscope._versions import VERIFIED_PANDAS, installed_within

__all__ = [
    "META_KEY",
    "ArrowStream",
    "arrow_stream",
    "dtype_tag",
    "frame_from_arrow",
    "frame_to_arrow",
]

#: pandas' internals are read only on a verified pandas: ``DatetimeArray._simple_new`` (its
#: private constructor: a view, no validation pass; elsewhere the public ``tz_localize`` /
#: ``tz_convert``, which copies) and the block list of ``_own_columns`` (elsewhere a deep copy).
_PANDAS_INTERNALS = installed_within("pandas", VERIFIED_PANDAS)
_VIEW_ZONED = _PANDAS_INTERNALS and hasattr(DatetimeArray, "_simple_new")


def zoned(values: np.ndarray, zone: Any) -> Any:
    """UTC ``datetime64`` ``values`` as a ``DatetimeArray`` in ``zone``."""
    if _VIEW_ZONED:
        unit = np.datetime_data(values.dtype)[0]
        return DatetimeArray._simple_new(values, dtype=pd.DatetimeTZDtype(unit, zone))
    return pd.array(values).tz_localize("UTC").tz_convert(zone)


META_KEY = b"quantscope"  # schema metadata: what Arrow alone would not give back


def dtype_tag(dtype: Any) -> str:
    """``dtype`` as text that tells apart what ``str(dtype)`` does not (string storage and
    missing value; a categorical's categories dtype and order).
    """
    if isinstance(dtype, pd.CategoricalDtype):
        return f"category[{dtype_tag(dtype.categories.dtype)}, ordered={dtype.ordered}]"
    if isinstance(dtype, pd.StringDtype):
        return f"{dtype}[{dtype.storage}, {dtype.na_value}]"
    return str(dtype)


def frame_to_arrow(frame: pd.DataFrame) -> memoryview:
    """``frame`` as an Arrow IPC stream: its columns, index and attrs (JSON, in the pandas
    metadata), plus what reading it back fast needs (``META_KEY``: each column's dtype, the
    index, the value dtype of any categorical column without categories, which Arrow would
    give back as ``object``). Raises when Arrow cannot hold the frame (an object column of
    mixed values) or when its attrs are not JSON (pyarrow would drop them).
    """
    sink = pa.BufferOutputStream()
    arrow_stream(frame).write_to(sink)
    return memoryview(sink.getvalue())


class ArrowStream:
    """``frame_to_arrow``'s stream before it is written: its size (``nbytes``, from a pass
    that writes nothing) and ``write_to`` any file-like object, piece by piece, so that a
    store of the frame never holds the whole stream in memory (the table's columns share the
    frame's arrays where Arrow's layout is pandas': numbers, datetimes, codes, strings).
    """

    __slots__ = ("_nbytes", "table")

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self._nbytes: int | None = None

    @property
    def nbytes(self) -> int:
        if self._nbytes is None:
            sink = pa.MockOutputStream()
            self.write_to(sink)
            self._nbytes = int(sink.size())
        return self._nbytes

    def write_to(self, sink: Any) -> None:
        """The stream into ``sink``: a pyarrow stream, or any object with ``write(buffer)``."""
        table = self.table
        if not isinstance(sink, pa.NativeFile):
            sink = pa.PythonFile(sink, mode="w")
        with pa.ipc.new_stream(sink, table.schema) as writer:
            if table.num_rows:
                writer.write_table(table)
            else:  # write_table writes no batch then: the categories would be lost
                columns = [column.combine_chunks() for column in table.columns]
                writer.write_batch(pa.record_batch(columns, schema=table.schema))


def arrow_stream(frame: pd.DataFrame) -> ArrowStream:
    """``frame`` ready to be written as ``frame_to_arrow``'s stream (same raises)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pyarrow only warns when it drops the attrs
        # The attrs travel in quantscope's own metadata (``extra``): pyarrow reads the columns of
        # a frame without them (pandas deep-copies attrs into every column it hands out).
        table = pa.Table.from_pandas(pd.DataFrame(frame, copy=False) if frame.attrs else frame)
    pandas_meta = json.loads((table.schema.metadata or {})[b"pandas"])
    index: dict[str, Any]
    (first, *more) = pandas_meta["index_columns"] or [None]
    if isinstance(first, dict) and first.get("kind") == "range" and not more:
        index = {"range": [first["start"], first["stop"], first["step"]], "name": first["name"]}
    else:
        index = {"columns": pandas_meta["index_columns"], "names": list(frame.index.names)}
    extra = {
        "dtypes": [str(d) for d in frame.dtypes],
        "tags": [dtype_tag(d) for d in frame.dtypes],
        "index_tags": [
            dtype_tag(frame.index.get_level_values(level).dtype)
            for level in range(frame.index.nlevels)
            if "columns" in index  # not a range: stored as columns after the frame's
        ],
        "columns": [str(c) for c in frame.columns],
        "fast": all(isinstance(c, str) for c in frame.columns) and frame.columns.is_unique,
        "index": index,
        "attrs": frame.attrs,
        "empty_categories": {
            str(col): str(dtype.categories.dtype)
            for col, dtype in frame.dtypes.items()
            if isinstance(dtype, pd.CategoricalDtype) and len(dtype.categories) == 0
        },
    }
    table = table.replace_schema_metadata(
        {**(table.schema.metadata or {}), META_KEY: json.dumps(extra).encode()}
    )
    return ArrowStream(table)


def frame_from_arrow(blob: Any) -> pd.DataFrame:
    """The frame ``frame_to_arrow`` wrote, from ``blob`` (any buffer; nothing in it is run).

    When ``blob`` is writable (the frame cache reads each row into a new NumPy buffer), the
    frame's columns are views of it: the frame owns ``blob`` from then on. A read-only
    ``blob`` (``bytes``) is first copied into such a buffer, once. The cyclic garbage
    collector is paused meanwhile: many new objects, none holding a cycle.
    """
    base = np.frombuffer(blob, np.uint8)
    if not base.flags.writeable:
        base = base.copy()
    buffer = pa.py_buffer(base)
    table = pa.ipc.open_stream(buffer).read_all()
    extra = json.loads((table.schema.metadata or {}).get(META_KEY, b"{}"))
    paused = gc.isenabled()
    gc.disable()
    try:
        frame = _Views(base, buffer.address).frame(table, extra) if extra.get("fast") else None
        if frame is None:
            table.validate(full=True)  # the conversion trusts offsets and codes
            frame = _own_columns(table.to_pandas(split_blocks=True, use_threads=False))
            for col, dtype in extra.get("empty_categories", {}).items():
                if col in frame.columns:
                    categories = pd.Index([], dtype=dtype)
                    frame[col] = frame[col].astype(pd.CategoricalDtype(categories))
    finally:
        if paused:
            gc.enable()
    return frame


class _Views:
    """Columns built over ``base``, the writable buffer an IPC stream was read from
    (``address``: where it starts, as pyarrow sees it).
    """

    def __init__(self, base: np.ndarray, address: int) -> None:
        self.base = base
        self.address = address

    def frame(self, table: pa.Table, extra: dict[str, Any]) -> pd.DataFrame | None:
        """The frame of ``table`` as ``extra`` recorded it; None when any column differs."""
        names, index_spec = extra["columns"], extra["index"]
        keys = [] if "range" in index_spec else index_spec["columns"]
        tags = [*extra.get("tags", ()), *extra.get("index_tags", ())]
        if table.column_names != [*names, *keys] or len(tags) != table.num_columns:
            return None
        arrays = []
        for tag, column in zip(tags, table.columns, strict=True):
            built = self.column(column, tag)
            if built is None:
                return None
            arrays.append(built)
        if "range" in index_spec:
            index = pd.RangeIndex(*index_spec["range"], name=index_spec["name"])
        elif len(keys) == 1:
            index = pd.Index(arrays[-1], name=index_spec["names"][0])
        else:
            index = pd.MultiIndex.from_arrays(arrays[len(names) :], names=index_spec["names"])
        frame = pd.DataFrame(dict(zip(names, arrays, strict=False)), index=index, copy=False)
        if [str(d) for d in frame.dtypes] != extra["dtypes"]:
            return None
        frame.attrs = extra["attrs"]
        return frame

    def column(self, column: pa.ChunkedArray, tag: str) -> Any:
        """One column by its recorded dtype ``tag``; None when it cannot be built so."""
        if column.num_chunks > 1:
            return None
        array = column.chunk(0) if column.num_chunks else column.combine_chunks()
        build = _BUILDERS.get(array.type.id)
        built = build(self, array, tag) if build is not None and array.offset == 0 else None
        if built is None or dtype_tag(built.dtype) != tag:
            return None
        return built

    def view(self, buffer: pa.Buffer | None, dtype: Any, length: int) -> np.ndarray | None:
        """``length`` values of ``dtype`` in ``buffer``: a view of ``base`` when ``buffer``
        lies in it (aligned); None when the buffer is missing or too short.
        """
        if length == 0:
            return np.empty(0, dtype)
        if buffer is None:
            return None
        nbytes = length * np.dtype(dtype).itemsize
        if buffer.size < nbytes:
            return None
        start = buffer.address - self.address
        if start >= 0 and start + nbytes <= self.base.size:
            values: np.ndarray = self.base[start : start + nbytes].view(dtype)
            if values.flags.aligned:
                return values
        return np.frombuffer(buffer, dtype, length).copy()  # not ours (never seen): a copy

    def invalid(self, array: pa.Array) -> np.ndarray | None:
        """Where ``array`` holds nulls (a new bool array); None when it holds none."""
        if array.null_count == 0:
            return None
        nulls: npt.NDArray[np.bool_] = _bits(array.buffers()[0], len(array)) == 0
        return nulls

    def numbers(self, array: pa.Array, tag: str) -> Any:
        """NumPy numbers (NaN where null), nullable integers (``Int64``: values and mask)."""
        values = self.view(array.buffers()[1], array.type.to_pandas_dtype(), len(array))
        if values is None:
            return None
        invalid = self.invalid(array)
        if tag[:1] in ("I", "U"):  # pandas' nullable integers: Int64, UInt8, ...
            mask = np.zeros(len(array), bool) if invalid is None else invalid
            return IntegerArray(values, mask)
        if invalid is not None:
            if values.dtype.kind != "f":
                return None  # a NumPy integer column holds no missing value
            values[invalid] = np.nan
        return values

    def timestamps(self, array: pa.Array, tag: str) -> Any:
        """Datetimes of the stream's unit and zone (NaT where null)."""
        unit, zone = array.type.unit, array.type.tz
        values = self.view(array.buffers()[1], np.int64, len(array))
        if values is None:
            return None
        invalid = self.invalid(array)
        if invalid is not None:
            values[invalid] = np.iinfo(np.int64).min  # NaT
        dtype = np.dtype(f"M8[{unit}]")
        values = values.view(dtype)
        if zone is None:
            return values
        return zoned(values, zone)

    def booleans(self, array: pa.Array, tag: str) -> Any:
        """Booleans (bit-packed in Arrow: unpacked into a new array), nullable or NumPy's."""
        values = _bits(array.buffers()[1], len(array)).view(bool)
        invalid = self.invalid(array)
        if tag == "bool":
            return values if invalid is None else None
        return BooleanArray(values, np.zeros(len(array), bool) if invalid is None else invalid)

    def strings(self, array: pa.Array, tag: str) -> Any:
        """pandas' Arrow strings over the stream's own buffers (immutable: no copy needed),
        once their offsets are checked to stay inside their data (what pyarrow's read does
        not check, and a string read past its buffer would be read from elsewhere).
        """
        dtype = _STRING_DTYPES.get(tag)
        _, offsets_buffer, data = array.buffers()
        width = np.int64 if pa.types.is_large_string(array.type) else np.int32
        offsets = self.view(offsets_buffer, width, len(array) + 1) if len(array) else None
        if dtype is None or (offsets is not None and not _inside(offsets, data)):
            return None
        return ArrowStringArray(pa.chunked_array([array]), dtype=dtype)

    def categories(self, array: pa.DictionaryArray, tag: str) -> Any:
        """A categorical: the codes a view (-1 where null, checked in range), the categories
        built from the dictionary by the recorded dtype.
        """
        indices, dictionary = array.indices, array.dictionary
        inner = tag.removeprefix("category[").rpartition(", ordered=")[0]
        if indices.offset or dictionary.offset or not pa.types.is_signed_integer(indices.type):
            return None
        codes = self.view(indices.buffers()[1], indices.type.to_pandas_dtype(), len(indices))
        build = _BUILDERS.get(dictionary.type.id)
        values = build(self, dictionary, inner) if build is not None else None
        if codes is None or values is None or dictionary.null_count:
            return None
        invalid = self.invalid(indices)
        if invalid is not None:
            codes[invalid] = -1
        if len(codes) and (codes.min() < -1 or codes.max() >= len(dictionary)):
            return None
        dtype = pd.CategoricalDtype(pd.Index(values), ordered=array.type.ordered)
        return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def _inside(offsets: np.ndarray, data: pa.Buffer | None) -> bool:
    """Whether string ``offsets`` rise from 0 or more to at most the data's size."""
    size = 0 if data is None else data.size
    return bool(offsets[0] >= 0 and offsets[-1] <= size and (offsets[1:] >= offsets[:-1]).all())


def _bits(buffer: pa.Buffer | None, length: int) -> npt.NDArray[np.uint8]:
    """A bitmap (Arrow's order: least significant bit first) as ``length`` 0/1 bytes."""
    if length == 0:
        return np.zeros(0, np.uint8)
    if buffer is None or buffer.size * 8 < length:
        raise ValueError("an Arrow bitmap shorter than its array")
    packed = np.frombuffer(buffer, np.uint8)
    return np.unpackbits(packed, count=length, bitorder="little")


_STRING_DTYPES = {
    dtype_tag(dtype): dtype
    for dtype in (pd.StringDtype("pyarrow"), pd.StringDtype("pyarrow", na_value=np.nan))
}

_Builder = Callable[["_Views", Any, str], Any]

# Arrow type ids -> how the column is built over the buffer (anything else: full conversion).
_BUILDERS: dict[int, _Builder] = {
    **{
        t.id: _Views.numbers
        for t in (
            pa.float64(),
            pa.float32(),
            pa.int8(),
            pa.int16(),
            pa.int32(),
            pa.int64(),
            pa.uint8(),
            pa.uint16(),
            pa.uint32(),
            pa.uint64(),
        )
    },
    pa.timestamp("ms").id: _Views.timestamps,
    pa.bool_().id: _Views.booleans,
    pa.large_string().id: _Views.strings,
    pa.string().id: _Views.strings,
    pa.dictionary(pa.int8(), pa.string()).id: _Views.categories,
}


def _own_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (fresh from pyarrow's conversion) with its read-only NumPy blocks copied in
    place (pandas' private block list, checked: on another pandas, or when it is not as
    expected, a deep copy).
    """
    if not _PANDAS_INTERNALS:
        return frame.copy(deep=True)
    blocks = getattr(getattr(frame, "_mgr", None), "blocks", None)
    if not isinstance(blocks, tuple | list):
        return frame.copy(deep=True)
    for block in blocks:
        values = getattr(block, "values", None)
        # NumPy arrays, and arrays backed by one (datetimes with a zone, categorical codes).
        data = values if isinstance(values, np.ndarray) else getattr(values, "_ndarray", None)
        if values is not None and isinstance(data, np.ndarray) and not data.flags.writeable:
            block.values = values.copy()
    return frame
