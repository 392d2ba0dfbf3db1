"""Where a catalog keeps each resource, and how a typed frame becomes Parquet and back.

A catalog is a directory (or an fsspec URL) of hive-partitioned Parquet files::

    manifest.json                                       the only index (catalog.manifest)
    trades/quant_id=1/month=2026-09/part-<hash>.parquet  by quant and month of opened_at
    evaluations/quant_id=1/month=2026-09/...            by quant and month of created_at
    eval_details/quant_id=1/month=2026-09/...           by quant and month of created_at
    ohlcv/timeframe=1h/token_id=58/...                  one token's candles
    signals|playbook|recommendations/quant_id=1/snapshot=2026-11-24/...   one per day

A partition is one file (``part-<content hash>.parquet``), rewritten whole when it changes;
readers read only the files the manifest lists, so a file written by an interrupted sync is
never seen. Files hold exactly the loader's columns (docs/frames.md) as Arrow types, minus a
partition key the frame also has as a column (``quant_id`` of evaluations: the path holds it);
``object`` columns (``extra_info``) are stored as JSON text; a categorical column's dictionary
is its whole category set (the spec's enumeration, used or not). ``RESOURCES`` is the registry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from quantscope._typed import schemas as _schemas
from quantscope._typed.frames import FrameSpec, with_categories

__all__ = [
    "RESOURCES",
    "SCHEMA_VERSION",
    "Resource",
    "arrow_schema",
    "from_table",
    "to_table",
    "with_keys",
]

#: Bumped when the layout or the manifest changes incompatibly.
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Resource:
    """One resource of the catalog: its frame spec and how it is partitioned and kept.

    ``kind``: ``month`` (by quant and the month of ``time``; immutable once the month ended
    ``settle`` before a sync and nothing in it is ``open``), ``snapshot`` (by quant and day:
    what it was when synced), ``token`` (by timeframe and token; candles closed before the
    last sync never change). ``key``: the columns that identify a row (updates vs additions).
    ``order``: the loader's row order (column, ascending) pairs.
    """

    name: str
    spec: FrameSpec
    kind: str
    key: tuple[str, ...]
    time: str | None = None
    settle: timedelta = timedelta(0)
    order: tuple[tuple[str, bool], ...] = ()

    @property
    def partition_keys(self) -> tuple[str, ...]:
        return {
            "month": ("quant_id", "month"),
            "snapshot": ("quant_id", "snapshot"),
            "token": ("timeframe", "token_id"),
        }[self.kind]

    def file_columns(self) -> list[str]:
        """The spec's columns kept in the files (a partition key lives in the path)."""
        names = self.spec.names
        if self.spec.index is not None:
            names = [self.spec.index, *[n for n in names if n != self.spec.index]]
        return [n for n in names if n not in self.partition_keys]


RESOURCES: dict[str, Resource] = {
    r.name: r
    for r in (
        Resource(
            "trades",
            _schemas.TRADES,
            "month",
            key=("trade_id",),
            time="opened_at",
            order=(("opened_at", False), ("trade_id", False)),
        ),
        Resource(
            "evaluations",
            _schemas.EVALUATIONS,
            "month",
            key=("evaluation_id",),
            time="created_at",
            settle=timedelta(days=2),  # roi_24h is filled in a day after detection
            order=(("created_at", False), ("evaluation_id", False)),
        ),
        Resource(
            "eval_details",
            _schemas.EVAL_DETAILS,
            "month",
            key=("evaluation_id", "result_id"),
            time="created_at",
        ),
        Resource("ohlcv", _schemas.OHLCV, "token", key=("timestamp",)),
        Resource("signals", _schemas.SIGNALS, "snapshot", key=()),
        Resource("playbook", _schemas.PLAYBOOK, "snapshot", key=()),
        Resource("recommendations", _schemas.RECOMMENDATIONS, "snapshot", key=()),
    )
}

_ARROW = {
    "Int64": pa.int64(),
    "float64": pa.float64(),
    "boolean": pa.bool_(),
    "category": pa.dictionary(pa.int32(), pa.string()),
    "string": pa.string(),
    "datetime64[ms, UTC]": pa.timestamp("ms", tz="UTC"),
    "object": pa.string(),  # JSON text
}


def arrow_schema(resource: Resource) -> pa.Schema:
    """The Arrow schema of ``resource``'s files (the manifest records it)."""
    dtypes = resource.spec.dtypes()
    return pa.schema([pa.field(n, _ARROW[dtypes[n]]) for n in resource.file_columns()])


def _json_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    return json.dumps(value, separators=(",", ":"), allow_nan=True)


def to_table(resource: Resource, frame: pd.DataFrame, metadata: Mapping[str, str]) -> pa.Table:
    """``frame`` (a loader's frame, rows in order) as the Arrow table of one file; attrs are
    left out (the manifest and ``metadata``, the file's key-value metadata, keep provenance).
    """
    flat = frame.reset_index() if resource.spec.index is not None else frame
    dtypes = resource.spec.dtypes()
    arrays = []
    schema = arrow_schema(resource)
    for field in schema:
        column = flat[field.name]
        if dtypes[field.name] == "object":
            arrays.append(pa.array([_json_text(v) for v in column.tolist()], pa.string()))
        elif dtypes[field.name] == "category":
            arrays.append(_dictionary(column))
        else:
            arrays.append(pa.Array.from_pandas(column, type=field.type))
    meta = {k.encode(): v.encode() for k, v in metadata.items()}
    return pa.Table.from_arrays(arrays, schema=schema.with_metadata(meta))


def _dictionary(column: pd.Series) -> pa.DictionaryArray:
    """A categorical column as Arrow's dictionary: the codes, and every category (the spec's
    whole set, used or not), so a reader of the file gets the categories a load has.
    """
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype("category")
    values = column.array
    assert isinstance(values, pd.Categorical)
    codes = values.codes.astype(np.int32)
    indices = pa.array(codes, pa.int32(), mask=codes < 0)
    dictionary = pa.array(np.asarray(values.categories, dtype=object), pa.string())
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _types(arrow_type: pa.DataType) -> Any:
    if pa.types.is_int64(arrow_type):
        return pd.Int64Dtype()
    if pa.types.is_boolean(arrow_type):
        return pd.BooleanDtype()
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return pd.StringDtype("pyarrow")
    return None


def _categorical(column: pd.Series, fixed: tuple[str, ...]) -> pd.Categorical:
    """Categories as ``_typed.frames.build_frame`` makes them: ``fixed`` (the spec's whole set)
    then the other values present, sorted (an open set: the values present, sorted); the
    file's dictionary, narrowed and reordered, never a pass over the values as text.
    """
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype("category")
    values = column.array
    assert isinstance(values, pd.Categorical)
    used = np.unique(values.codes[values.codes >= 0])
    present = np.asarray(values.categories, dtype=object)[used]
    order = np.argsort(present)
    remap = np.full(len(values.categories) + 1, -1, dtype=np.int32)  # [-1] stays missing
    remap[used[order]] = np.arange(len(used), dtype=np.int32)
    codes = remap[values.codes.astype(np.int64)]
    cats = pd.Index(present[order], dtype="str")
    return with_categories(pd.Categorical.from_codes(codes, categories=cats, validate=False), fixed)


def with_keys(resource: Resource, table: pa.Table, keys: Mapping[str, Any]) -> pa.Table:
    """``table`` of one file plus the partition keys the spec has as columns (from the path)."""
    dtypes = resource.spec.dtypes()
    for name, value in keys.items():
        if name in dtypes and name not in table.column_names:
            column = pa.array([int(value)] * table.num_rows, pa.int64())
            table = table.append_column(name, column)
    return table


def from_table(resource: Resource, table: pa.Table) -> pd.DataFrame:
    """The loader's typed frame of ``table`` (``with_keys``' tables, concatenated): exactly
    the spec's columns and dtypes, categories as the loader makes them, a RangeIndex (or the
    spec's index).
    """
    spec = resource.spec
    dtypes = spec.dtypes()
    order = spec.names if spec.index is None else [spec.index, *spec.names]
    wanted = list(dict.fromkeys(c for c in order if c in table.column_names))
    frame = table.select(wanted).to_pandas(types_mapper=_types, ignore_metadata=True)
    held = dict(zip(frame.columns, frame.dtypes, strict=True))
    fixed = {c.name: c.categories for c in spec.columns}
    columns: dict[str, Any] = {}
    for name, dtype in dtypes.items():
        if name not in held:
            columns[name] = pd.array([None] * len(frame), dtype=dtype)
            if fixed[name]:
                columns[name] = with_categories(columns[name], fixed[name])
            continue
        column = frame[name]
        if dtype == "category":
            columns[name] = _categorical(column, fixed[name])
        elif dtype == "object":
            columns[name] = _from_json(column)
        elif str(held[name]) != dtype:
            columns[name] = column.astype(dtype)
        else:
            columns[name] = column
    frame = pd.DataFrame(columns, index=pd.RangeIndex(len(frame)), columns=spec.names, copy=False)
    if spec.index is not None:
        frame = frame.set_index(spec.index)
    return frame


def _from_json(column: pd.Series) -> np.ndarray:
    out = np.empty(len(column), dtype=object)
    out[:] = [None if v is None or v is pd.NA else json.loads(v) for v in column.tolist()]
    return out
