"""Typed frames from JSON records, driven by declarative column specs.

A ``FrameSpec`` lists each column once: its name, where it comes from in a record (a dotted
path), what kind of value it holds on the wire and a scale (percent -> fraction is 0.01).
``build_frame`` turns a list of records into a DataFrame with exactly those columns and dtypes,
column by column (never cell by cell): the loaders have no casting code of their own. The
records are JSON objects, or ``Item`` structs that a typed page decoder (``_typed.decode``) built
from them, or a mix of both (a page that fell back to plain JSON): each item type knows its
spec and reads its own columns (``Item.columns``), so the frame is the same either way and no
registry maps types back to specs. ``series_of`` is the same for a one-record answer that is
a Series (counts, statistics).

Conventions (shared/DESIGN.md): datetimes ``datetime64[ms, UTC]``; integers that may be missing
``Int64``; flags ``boolean``; money and amounts ``float64`` with the unit in the name;
enumerations ``category`` whose categories are the spec's whole set (``Col.categories``), so
two loads concatenate as categoricals whatever rows each holds; a value outside the set is
kept (an extra category after the set's) and counted in the frame's one ``DataQualityWarning``
and in ``checks["unknown"]``; free text ``string``; ratios fractions. Values that cannot be
parsed become missing and are counted in that warning, never an exception.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from quantscope._errors import DataQualityWarning
from quantscope._typed.parse import parse_numbers
from quantscope._versions import VERIFIED_PANDAS, installed_within

KINDS = frozenset(
    {
        "int",  # JSON integer or numeric text -> Int64
        "float",  # JSON number -> float64
        "number_text",  # numeric or display text ("$1,234.50", "+12.5%", "0.5 SOL") -> float64
        "bool",  # JSON boolean -> boolean
        "category",  # enumeration -> category
        "string",  # free text -> string
        "iso",  # ISO 8601 text -> datetime64[ms, UTC]
        "trade_date",  # "YYYY-MM-DD HH:MM:SS" (UTC; "" when absent) -> datetime64[ms, UTC]
        "epoch_ms",  # integer epoch milliseconds -> datetime64[ms, UTC]
        "object",  # nested JSON kept as Python objects
        "json",  # nested JSON kept as compact JSON text -> string (extra info: travels)
    }
)


_DTYPES = {
    "int": "Int64",
    "float": "float64",
    "number_text": "float64",
    "bool": "boolean",
    "category": "category",
    "string": "string",
    "iso": "datetime64[ms, UTC]",
    "trade_date": "datetime64[ms, UTC]",
    "epoch_ms": "datetime64[ms, UTC]",
    "object": "object",
    "json": "string",
}


@dataclass(frozen=True)
class Col:
    """One column: frame name, dotted source path, wire kind, scale and a line of docs.

    ``categories``: an enumeration's whole set of values, as the API spec (and
    docs/service-contract.md where the spec leaves it open) lists them; a ``category``
    column without one (quant names, criterion keys: open sets) has the categories of the
    values loaded, sorted.
    """

    name: str
    source: str
    kind: str
    doc: str = ""
    scale: float = 1.0
    categories: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown column kind {self.kind!r} for {self.name}")
        if self.categories and self.kind != "category":
            raise ValueError(f"categories given for {self.name}, a {self.kind} column")
        if list(self.categories) != sorted(set(self.categories)):
            raise ValueError(f"categories of {self.name} must be sorted and distinct")

    @property
    def dtype(self) -> str:
        return _DTYPES[self.kind]


@dataclass(frozen=True)
class FrameSpec:
    """The columns of one kind of frame, and the column that indexes it (if any).

    ``required`` names the columns whose source field the API spec promises in every record
    (a value, never absent or null): ``build_frame`` counts the records lacking one and says
    so in its ``DataQualityWarning`` and in ``attrs["quantscope"]["checks"]["missing"]``.
    """

    name: str
    columns: tuple[Col, ...]
    index: str | None = None
    doc: str = ""
    required: tuple[str, ...] = ()  # a name of no column is ignored (a spec derived by
    # ``dataclasses.replace(spec, columns=...)`` keeps its parent's; the schemas' specs are tested)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def dtypes(self) -> dict[str, str]:
        return {c.name: c.dtype for c in self.columns}


class Item(msgspec.Struct, gc=False):
    """Base of the item structs a typed page decoder generates for one spec.

    A generated type sets ``spec`` and overrides ``columns``, so that ``build_frame`` can read
    a run of its items column by column without a registry of types.
    """

    spec: ClassVar[FrameSpec | None] = None

    @classmethod
    def columns(cls, items: Sequence[Any]) -> dict[str, list[Any]]:
        """Each source path's values over ``items`` (all of this type)."""
        raise NotImplementedError  # pragma: no cover - generated types override it

    @classmethod
    def values_at(cls, items: Sequence[Any], path: str) -> list[Any] | None:
        """The values of one source path over ``items`` (all of this type); None when the
        spec reads nothing there (the paging checks' item ids).
        """
        return None  # pragma: no cover - generated types override it


def _tree(paths: Sequence[str]) -> dict[str, Any]:
    """Dotted source paths as a tree, so each nested parent is read once per record."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for key in path.split("."):
            node = node.setdefault(key, {})
    return tree


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


# pandas' Cython row->column extraction (what pd.DataFrame(records) uses); private API, read
# only on a verified pandas (``_versions.VERIFIED_PANDAS``), so the pure-Python path below stays
# as the fallback (benchmarks/README.md; tests/toolkit/test_private_fallbacks.py).
def _fast_extractor() -> Any:
    if not installed_within("pandas", VERIFIED_PANDAS):
        return None
    try:
        from pandas._libs.lib import dicts_to_array
    except ImportError:  # pragma: no cover - a verified pandas has it
        return None
    return dicts_to_array


_dicts_to_array: Any = _fast_extractor()


def _extract(values: Sequence[Any], keys: list[str]) -> list[Any]:
    """``[v.get(key) for v in values]`` for each key. Missing values are None, or NaN on the
    fast path (the converters treat both as missing: JSON itself has no NaN).
    """
    if _dicts_to_array is None:
        return [[v.get(k) if type(v) is dict else _get(v, k) for v in values] for k in keys]
    rows = values if isinstance(values, list) else list(values)
    try:
        table = _dicts_to_array(rows, keys)
    except (TypeError, AttributeError):  # a null or non-object value where an object nests
        rows = [v if type(v) is dict else dict(v) if isinstance(v, Mapping) else {} for v in rows]
        table = _dicts_to_array(rows, keys)
    return [table[:, j] for j in range(len(keys))]


def _fill(values: Sequence[Any], tree: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
    keys = list(tree)
    for key, column in zip(keys, _extract(values, keys), strict=True):
        out[prefix + key] = column  # a path may be both a column and a parent of columns
        if tree[key]:
            _fill(column, tree[key], f"{prefix}{key}.", out)


def column_values(records: Sequence[Any], paths: Sequence[str]) -> dict[str, Any]:
    """Each dotted path's values over the records (missing anywhere on the path: None)."""
    out: dict[str, Any] = {}
    _fill(records if isinstance(records, list) else list(records), _tree(paths), "", out)
    return out


def _as_float(values: list[Any]) -> tuple[np.ndarray, int]:
    try:  # NumPy reads None as NaN for a float64 array (no copy of the list without them)
        return np.array(values, dtype=np.float64), 0
    except (TypeError, ValueError):  # text where a number was expected: parse it tolerantly
        return parse_numbers(values)


def _objects(values: list[Any]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


_ENCODE_JSON = msgspec.json.Encoder()


def _json_texts(values: list[Any]) -> list[str | None]:
    """Nested JSON as compact text (keys in served order), missing as None: Arrow has no
    faithful type for JSON of varying shapes, text travels to Parquet, Feather and any SQL
    engine unchanged (``json.loads`` or DuckDB's ``json_extract`` read it back).
    """
    encode = _ENCODE_JSON.encode
    missing = (None, msgspec.UNSET)
    return [None if v in missing or v != v else encode(v).decode() for v in values]


def _to_datetime(values: list[Any], kind: str) -> tuple[pd.Series, int]:
    arr = _objects(values)
    present_mask = ~pd.isna(arr) & (arr != "")
    present = int(present_mask.sum())
    if kind == "epoch_ms":
        nums = pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce")
        out = pd.to_datetime(nums, unit="ms", utc=True)
    else:
        fmt = "%Y-%m-%d %H:%M:%S" if kind == "trade_date" else "ISO8601"
        arr[~present_mask] = None
        if pd.api.types.infer_dtype(arr, skipna=True) not in ("string", "empty"):
            # a number or other non-text: unparseable (pandas would read numbers as epochs)
            arr[[type(v) is not str for v in arr]] = None
        out = pd.to_datetime(pd.Series(arr, dtype=object), format=fmt, utc=True, errors="coerce")
    out = out.dt.as_unit("ms")
    return out, present - int(out.notna().sum())


_ARROW_STRINGS = pd.StringDtype().storage == "pyarrow"  # pandas 3 with pyarrow: always here


def _strings(values: list[Any]) -> Any:
    """Text as the ``string`` dtype. With Arrow storage, text and missing values (None, NaN)
    go straight into one Arrow array (what ``pd.array(values, dtype="string")`` makes, without
    its checks per value; benchmarks/README.md, decode); anything else (numbers) takes pandas'
    way, which writes them as text. Otherwise (Python storage) equal texts are shared
    (``_shared``).
    """
    if _ARROW_STRINGS:
        try:
            return pd.arrays.ArrowStringArray(
                pa.array(values, type=pa.large_string(), from_pandas=True)
            )
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return pd.array(values, dtype="string")
    return pd.array(_shared(values), dtype="string")


def _shared(values: Sequence[Any]) -> list[Any]:
    """``values`` with equal texts as one object each: a column of few distinct texts (token
    symbols, addresses) then pickles, and unpickles from the frame cache, as those few.
    """
    seen: dict[str, str] = {}
    return [seen.setdefault(v, v) if type(v) is str else v for v in values]


def _categorical(values: list[Any]) -> pd.Categorical:
    """Categories sorted (as pd.Categorical(list) makes them); unknown values are kept."""
    codes, uniques = pd.factorize(_objects(values))
    if not len(uniques):  # every value missing
        return pd.Categorical.from_codes(codes, categories=pd.Index([], dtype="str"))
    if not all(type(u) is str for u in uniques):  # numbers etc.: the text of each value
        return pd.Categorical(  # NaN: a missing key on the fast extraction path
            [None if v is None or (type(v) is float and v != v) else str(v) for v in values]
        )
    order = np.argsort(uniques)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = np.where(codes >= 0, rank[codes], -1)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques[order], dtype="str"))


def with_categories(values: pd.Categorical, fixed: Sequence[str]) -> pd.Categorical:
    """``values`` (text categories) over ``fixed``, the spec's whole set, then the values
    outside it that occur, sorted (kept, never made missing); no pass over the rows as text.
    """
    if not fixed:
        return values
    present = values.categories
    if len(present) and values.codes.size:
        used = np.zeros(len(present), dtype=bool)
        used[values.codes[values.codes >= 0]] = True
        present = present[used]
    extra = sorted(set(present.astype(str)) - set(fixed)) if len(present) else []
    categories = pd.Index([*fixed, *extra], dtype="str")
    if values.categories.equals(categories):
        return values
    return values.set_categories(categories)


def outside(values: Any, fixed: Sequence[str]) -> int:
    """How many of ``values`` (a categorical ``with_categories`` made) lie outside ``fixed``."""
    if not fixed or not isinstance(values, pd.Categorical):
        return 0
    return int((values.codes >= len(fixed)).sum())


def _all_bool(values: Sequence[Any]) -> bool:
    return len(values) > 0 and set(map(type, values)) == {bool}


def convert(values: list[Any], col: Col) -> tuple[Any, int]:
    """One column's values as its declared dtype, and how many could not be parsed."""
    kind = col.kind
    bad = 0
    result: Any
    if kind == "float":
        result, bad = _as_float(values)
    elif kind == "number_text":
        result, bad = parse_numbers(values)
    elif kind == "int":
        arr, bad = _as_float(values)
        frac = np.isfinite(arr) & (arr != np.round(arr))
        bad += int(frac.sum())
        arr[frac] = np.nan
        result = (
            pd.array([None if np.isnan(x) else int(x) for x in arr.tolist()], dtype="Int64")
            if np.isnan(arr).any()
            else pd.array(arr.astype(np.int64), dtype="Int64")
        )
    elif kind == "bool" and _all_bool(values):  # the usual column: no value missing or odd
        result = pd.arrays.BooleanArray(
            np.array(values, dtype=np.bool_), np.zeros(len(values), dtype=np.bool_)
        )
    elif kind == "bool":
        ok = [v if isinstance(v, bool) else None for v in values]
        bad = sum(
            1
            for v, o in zip(values, ok, strict=True)
            if o is None and v is not None and v == v  # v != v: NaN, a missing key
        )
        result = pd.array(ok, dtype="boolean")
    elif kind == "category":
        result = with_categories(_categorical(values), col.categories)
    elif kind == "string":
        result = _strings(values)
    elif kind in ("iso", "trade_date", "epoch_ms"):
        series, bad = _to_datetime(values, kind)
        return series.array, bad
    elif kind == "json":
        result = _strings(_json_texts(values))
    else:  # object: nested JSON as Python objects, missing as None
        result = _objects(values)
        result[pd.isna(result)] = None
    if col.scale != 1.0 and kind in ("float", "number_text"):
        result = result * col.scale
    return result, bad


def _source_values(rows: list[Any], spec: FrameSpec) -> dict[str, Any]:
    """Each of ``spec``'s source paths' values over ``rows`` (objects, ``Item`` structs decoded
    for ``spec``, or a mix: read run by run, in order).
    """
    paths = [c.source for c in spec.columns]
    if next((r for r in rows if isinstance(r, Item)), None) is None:
        return column_values(rows, paths)
    columns: dict[str, Any] = {p: [] for p in paths}
    start = 0
    while start < len(rows):
        kind = type(rows[start])
        end = start + 1
        while end < len(rows) and type(rows[end]) is kind:
            end += 1
        run = rows[start:end]
        if issubclass(kind, Item) and kind.spec == spec:
            part = kind.columns(run)
        else:
            part = column_values(run, paths)
        for p in paths:
            columns[p].extend(part[p])
        start = end
    return columns


class Columns:
    """A frame in the making: a run of records' columns already converted to their dtypes.

    ``Columns.of(records, spec)`` converts a run (a batch of pages of a paged load, as they
    arrive: ``loaders._fold``); ``rows(start, stop)`` is a slice of one;
    ``Columns.join(parts, spec)`` puts runs end to end (each column's arrays concatenated once,
    categories from the union of the runs', sorted); ``frame()`` makes the DataFrame and the
    one ``DataQualityWarning``. ``build_frame`` is ``Columns.of(records, spec).frame()``, so
    a frame joined from pages is the one built from all their records at once: every
    conversion is per value, except that a number column holding JSON booleans in one run
    and unparseable text in another reads each run on its own (the booleans stay 1.0/0.0).
    The records themselves are not kept (``first``, the first of them, names a bad answer).
    """

    __slots__ = ("absent", "arrays", "first", "length", "problems", "spec", "unknown")

    def __init__(
        self,
        spec: FrameSpec,
        length: int,
        arrays: dict[str, Any],
        problems: dict[str, int],
        first: Any = None,
        absent: dict[str, int] | None = None,
        unknown: dict[str, int] | None = None,
    ) -> None:
        self.spec = spec
        self.length = length
        self.arrays = arrays
        self.problems = problems  # unparseable values, per column
        self.first = first
        self.absent = absent or {}  # required values absent or null, per column
        self.unknown = unknown or {}  # values outside an enumeration's set, per column

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any] | Item], spec: FrameSpec) -> Columns:
        """``records`` (JSON objects, ``Item`` structs for ``spec``, or a mix) converted."""
        rows = records if isinstance(records, list) else list(records)
        return cls.of_values(_source_values(rows, spec), len(rows), spec, rows[0] if rows else None)

    @classmethod
    def of_values(
        cls, columns: Mapping[str, Sequence[Any]], length: int, spec: FrameSpec, first: Any = None
    ) -> Columns:
        """The values already extracted (each source path's over ``length`` records, missing as
        None or NaN, as ``column_values`` gives them) converted.
        """
        arrays: dict[str, Any] = {}
        problems: dict[str, int] = {}
        absent: dict[str, int] = {}
        unknown: dict[str, int] = {}
        required = spec.required
        for col in spec.columns:
            arrays[col.name], bad = convert(columns[col.source], col)  # type: ignore[arg-type]  # convert reads any sequence; typed list for its callers
            if bad:
                problems[col.name] = bad
            strange = outside(arrays[col.name], col.categories)
            if strange:
                unknown[col.name] = strange
            if required and col.name in required:
                lacking = int(pd.isna(arrays[col.name]).sum()) - bad
                if lacking:
                    absent[col.name] = lacking
        return cls(spec, length, arrays, problems, first, absent, unknown)

    @classmethod
    def join(cls, parts: Sequence[Columns], spec: FrameSpec) -> Columns:
        """``parts`` end to end, in order (none: no rows); the parts are left as they were."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return cls.of([], spec)
        found: dict[str, dict[str, int]] = {"problems": {}, "absent": {}, "unknown": {}}
        for col in spec.columns:
            for key, counts in found.items():
                n = sum(getattr(p, key).get(col.name, 0) for p in parts)
                if n:
                    counts[col.name] = n
        arrays = {
            c.name: _concat([p.arrays[c.name] for p in parts], c.categories) for c in spec.columns
        }
        first = next((p.first for p in parts if p.length), None)
        length = sum(p.length for p in parts)
        return cls(
            spec, length, arrays, found["problems"], first, found["absent"], found["unknown"]
        )

    def rows(self, start: int, stop: int) -> Columns:
        """Rows ``start:stop`` (views where the arrays allow). Unparseable and absent-value
        counts are per run, not per row: the slice starting at 0 keeps them all, the others
        none.
        """
        arrays = {name: values[start:stop] for name, values in self.arrays.items()}
        problems = dict(self.problems) if start == 0 else {}
        absent = dict(self.absent) if start == 0 else {}
        unknown = dict(self.unknown) if start == 0 else {}
        first = self.first if start == 0 else None
        length = max(0, min(stop, self.length) - start)
        return Columns(self.spec, length, arrays, problems, first, absent, unknown)

    def checks(self) -> dict[str, dict[str, int]]:
        """What the conversion found, for ``attrs["quantscope"]["checks"]``: unparseable
        values and required values absent or null, per column (empty: nothing).
        """
        found: dict[str, dict[str, int]] = {}
        if self.problems:
            found["unparseable"] = dict(self.problems)
        if self.absent:
            found["missing"] = dict(self.absent)
        if self.unknown:
            found["unknown"] = dict(self.unknown)
        return found

    def frame(self, *, warn: bool = True, stacklevel: int = 2) -> pd.DataFrame:
        """The DataFrame of exactly ``spec``'s columns and dtypes, with what the conversion
        found in ``attrs["quantscope"]["checks"]`` (``checks``); when ``warn``, one
        DataQualityWarning naming the columns of unparseable values and of required values
        absent or null, with their counts (``stacklevel`` as ``warnings.warn`` would take it
        in the caller).
        """
        spec = self.spec
        frame = pd.DataFrame(
            self.arrays, index=pd.RangeIndex(self.length), columns=spec.names, copy=False
        )
        frame = frame.astype(spec.dtypes())
        if spec.index is not None:
            frame = frame.set_index(spec.index)
        found = self.checks()
        if found:
            frame.attrs["quantscope"] = {"checks": found}
        if found and warn:
            warnings.warn(
                quality_message(spec.name, found), DataQualityWarning, stacklevel=stacklevel + 1
            )
        return frame


def quality_message(name: str, found: Mapping[str, Mapping[str, int]]) -> str:
    """The one DataQualityWarning line of a frame's conversion checks (``Columns.checks``)."""
    parts = []
    for key, what in (
        ("unparseable", "value(s) could not be parsed and are missing"),
        ("missing", "promised value(s) are absent or null"),
        ("unknown", "value(s) lie outside the spec's set and are kept as extra categories"),
    ):
        counts = found.get(key)
        if counts:
            detail = ", ".join(f"{column} ({n})" for column, n in counts.items())
            parts.append(f"{sum(counts.values())} {what}: {detail}")
    return f"{name}: " + "; ".join(parts)


def _concat(parts: list[Any], fixed: Sequence[str] = ()) -> Any:
    """One column's converted arrays end to end, as ``convert`` would make the whole column
    (``fixed``: the column's ``Col.categories``).
    """
    head = parts[0]
    if isinstance(head, np.ndarray):
        return np.concatenate(parts)
    if isinstance(head, pd.Categorical):
        return with_categories(_join_categoricals(parts), fixed)
    joined = type(head)._concat_same_type(parts)
    if isinstance(joined, pd.arrays.ArrowStringArray):  # one Arrow chunk, as pd.array makes
        return pd.arrays.ArrowStringArray(joined.__arrow_array__().combine_chunks())
    return joined


def _join_categoricals(parts: list[pd.Categorical]) -> pd.Categorical:
    """Categoricals of text categories (``_categorical``'s) as one, categories sorted."""
    union: set[str] = set()
    for part in parts:
        union.update(part.categories)
    categories = pd.Index(sorted(union), dtype="str")
    codes = []
    for part in parts:
        own = part.codes
        if len(part.categories):
            mapping = categories.get_indexer(part.categories)
            own = np.where(own >= 0, mapping[np.maximum(own, 0)], -1)
        codes.append(own)
    return pd.Categorical.from_codes(np.concatenate(codes), categories=categories)


def build_frame(
    records: Sequence[Mapping[str, Any] | Item] | Columns,
    spec: FrameSpec,
    *,
    warn: bool = True,
    stacklevel: int = 3,
) -> pd.DataFrame:
    """Records -> a DataFrame with exactly ``spec``'s columns and dtypes.

    The records are JSON objects, ``Item`` structs decoded for ``spec``, or a mix (see the
    module docstring): the frame is the same. They may also be ``Columns`` already converted
    (a paged load's pages, joined). Unparseable values become missing; when ``warn`` is true
    their count is reported in one DataQualityWarning naming the columns.
    """
    columns = records if isinstance(records, Columns) else Columns.of(records, spec)
    return columns.frame(warn=warn, stacklevel=stacklevel)


def series_of(record: Mapping[str, Any], spec: FrameSpec, name: str) -> pd.Series:
    """One record as a Series named ``name``: ``spec``'s columns as its index, each value
    converted by its column's kind (as ``build_frame`` would) into one dtype for the Series,
    the columns' common dtype (all ``float64``, all ``Int64``), else ``object``.
    """
    return row_series(build_frame([record], spec, stacklevel=4), spec, name)


def row_series(frame: pd.DataFrame, spec: FrameSpec, name: str) -> pd.Series:
    """The first row of ``frame`` (``spec``'s typed frame of one record) as ``series_of``
    makes it: ``spec``'s columns as its index, in their common dtype (else ``object``), with
    the frame's attrs (what the checks found, provenance).
    """
    dtypes = set(spec.dtypes().values())
    dtype = dtypes.pop() if len(dtypes) == 1 else "object"
    values = [frame[c].iloc[0] for c in spec.names]
    series = pd.Series(values, index=pd.Index(spec.names), dtype=dtype, name=name)
    series.attrs.update(frame.attrs)
    return series


def frame_of_columns(
    columns: Mapping[str, Sequence[Any]],
    length: int,
    spec: FrameSpec,
    *,
    warn: bool = True,
    stacklevel: int = 2,
) -> pd.DataFrame:
    """``build_frame`` from the values already extracted: each source path's values over the
    ``length`` records (missing as None or NaN), as ``column_values`` gives them.
    """
    return Columns.of_values(columns, length, spec).frame(warn=warn, stacklevel=stacklevel)
