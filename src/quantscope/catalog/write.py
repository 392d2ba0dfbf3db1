"""Writing one partition: the frame as one Parquet file named by its content hash.

A partition is written whole to a new file (``part-<sha256 prefix>.parquet``) beside the one
the manifest lists; the caller swaps the manifest afterwards (``manifest.Store.save``), then
removes the file it replaced. The bytes are deterministic (no time in them: the file's
key-value metadata holds the resource, the partition, the schema version and the request
that made it; when is in the manifest: the record's ``synced_at``, and ``provenance``, what the
rows' load said of itself), so the same rows give the same hash with the same pyarrow.
Every data page carries its CRC-32 (``write_page_checksum``) and the record keeps the SHA-256
of the footer too, so a read can check the file cheaply (``catalog.integrity``).

The file also carries the ``pandas`` schema metadata that ``pa.Table.from_pandas`` writes
(``pandas_metadata``), so a reader outside quantscope gets the loader's dtypes back: plain
``pd.read_parquet`` returns ``Int64``, ``boolean``, ``string``, categoricals with the spec's
whole category set (the dictionary holds it) and UTC timestamps; polars and DuckDB read the
same logical types from the Arrow schema. quantscope's own reader does not need it
(``layout.from_table``), so files written before it read as they always did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from quantscope.catalog.integrity import footer_digest
from quantscope.catalog.layout import SCHEMA_VERSION, Resource, to_table
from quantscope.catalog.manifest import Store

__all__ = [
    "PROVENANCE_KEYS",
    "fetched_provenance",
    "pandas_metadata",
    "partition_dir",
    "write_partition",
]


def partition_dir(resource: Resource, keys: Mapping[str, Any]) -> str:
    """``trades/quant_id=1/month=2026-09``: the hive directory of one partition."""
    parts = "/".join(f"{k}={keys[k]}" for k in resource.partition_keys)
    return f"{resource.name}/{parts}"


def encode(resource: Resource, frame: pd.DataFrame, keys: Mapping[str, Any], source: Any) -> bytes:
    """The Parquet bytes of one partition (zstd, one row group, a CRC-32 per page)."""
    metadata = {
        "quantscope.resource": resource.name,
        "quantscope.partition": json.dumps(dict(keys), sort_keys=True),
        "quantscope.schema_version": str(SCHEMA_VERSION),
        "quantscope.source": json.dumps(source, sort_keys=True, default=str),
    }
    table = to_table(resource, frame, metadata)
    table = table.replace_schema_metadata(
        {**(table.schema.metadata or {}), b"pandas": pandas_metadata(resource, frame)}
    )
    sink = pa.BufferOutputStream()
    pq.write_table(
        table,
        sink,
        compression="zstd",
        row_group_size=max(1, len(frame)),
        write_page_checksum=True,
    )
    return bytes(sink.getvalue().to_pybytes())


def pandas_metadata(resource: Resource, frame: pd.DataFrame) -> bytes:
    """The ``pandas`` schema metadata of ``frame``'s file (its file columns, no index, no
    attrs: the bytes hold no time), as ``pa.Table.from_pandas`` makes it from the dtypes.
    """
    flat = frame.reset_index() if resource.spec.index is not None else frame
    dtypes = resource.spec.dtypes()
    columns = resource.file_columns()
    empty = pd.DataFrame(
        {
            name: flat[name].iloc[:0].astype("string" if dtypes[name] == "object" else dtypes[name])
            if dtypes[name] != "category"
            else flat[name].iloc[:0]
            for name in columns
        },
        columns=columns,
    )
    empty.attrs = {}
    return bytes(pa.Table.from_pandas(empty, preserve_index=False).schema.metadata[b"pandas"])


def write_partition(
    store: Store,
    resource: Resource,
    keys: Mapping[str, Any],
    frame: pd.DataFrame,
    source: Any,
) -> dict[str, Any]:
    """Write ``frame`` as the new file of partition ``keys``; its manifest record (not yet
    in the manifest). ``source``: the endpoint and parameters the rows came from.
    """
    data = encode(resource, frame, keys, source)
    digest = hashlib.sha256(data).hexdigest()
    relative = f"{partition_dir(resource, keys)}/part-{digest[:16]}.parquet"
    store.write_bytes(relative, data)
    record = {
        "resource": resource.name,
        "keys": {k: str(v) for k, v in keys.items()},
        "file": relative,
        "rows": len(frame),
        "bytes": len(data),
        "sha256": digest,
        "footer_sha256": footer_digest(data),
    }
    fetched = fetched_provenance(frame)
    if fetched:
        record["provenance"] = fetched
    return record


#: What a partition's record keeps of its rows' load (``attrs["quantscope"]``): where and
#: when they were fetched. The manifest holds it, not the file, whose bytes hold no time.
PROVENANCE_KEYS = ("endpoint", "params", "fetched_at", "service", "from_cache", "requests")


def fetched_provenance(frame: pd.DataFrame) -> dict[str, Any]:
    """What ``frame``'s attrs say of its load (``PROVENANCE_KEYS``; JSON-safe, no key:
    ``Provenance.as_dict``'s values); empty when the frame carries none (rows merged from
    several loads).
    """
    held = frame.attrs.get("quantscope")
    if not isinstance(held, Mapping):
        return {}
    return {k: held[k] for k in PROVENANCE_KEYS if k in held}
