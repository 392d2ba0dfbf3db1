"""Writing one partition: the frame as one Parquet file named by its content hash.

A partition is written whole to a new file (``part-<sha256 prefix>.parquet``) beside the one
the manifest lists; the caller swaps the manifest afterwards (``manifest.Store.save``), then
removes the file it replaced. The bytes are deterministic (no time in them: the file's
key-value metadata holds the resource, the partition, the schema version and the request
that made it; when is in the manifest), so the same rows give the same hash on any machine.
Every data page carries its CRC-32 (``write_page_checksum``) and the record keeps the SHA-256
of the footer too, so a read can check the file cheaply (``catalog.integrity``).
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

__all__ = ["partition_dir", "write_partition"]


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
    sink = pa.BufferOutputStream()
    pq.write_table(
        table,
        sink,
        compression="zstd",
        row_group_size=max(1, len(frame)),
        write_page_checksum=True,
    )
    return bytes(sink.getvalue().to_pybytes())


def write_partition(
    store: Store,
    resource: Resource,
    keys: Mapping[str, Any],
    frame: pd.DataFrame,
    source: Any,
) -> dict[str, Any]:
    """Write ``frame`` as the new file of partition ``keys``; its manifest record (not yet
    in the manifest). ``source``: the endpoint and parameters the rows came from."""
    data = encode(resource, frame, keys, source)
    digest = hashlib.sha256(data).hexdigest()
    relative = f"{partition_dir(resource, keys)}/part-{digest[:16]}.parquet"
    store.write_bytes(relative, data)
    return {
        "resource": resource.name,
        "keys": {k: str(v) for k, v in keys.items()},
        "file": relative,
        "rows": len(frame),
        "bytes": len(data),
        "sha256": digest,
        "footer_sha256": footer_digest(data),
    }
