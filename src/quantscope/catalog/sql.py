"""``Catalog.sql``: DuckDB over the catalog, one view per resource.

Each view reads exactly the files the manifest lists (never a stray file of an interrupted
sync) with ``hive_partitioning``, so the partition keys (``quant_id``, ``month``,
``snapshot``, ``timeframe``, ``token_id``) are columns and a ``WHERE`` on them prunes files
before any is opened. Remote catalogs (fsspec URLs) are read through the fsspec filesystem
registered with DuckDB.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from quantscope.catalog.layout import RESOURCES
from quantscope.catalog.manifest import Manifest, Store

__all__ = ["connection", "run_sql"]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connection(store: Store, manifest: Manifest) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per resource the catalog holds."""
    con = duckdb.connect()
    prefix = ""
    if not store.local:
        con.register_filesystem(store.fs)
        protocol = store.fs.protocol
        prefix = f"{protocol[0] if isinstance(protocol, tuple) else protocol}://"
    for name in RESOURCES:
        files = [prefix + store.path(p["file"]) for _, p in sorted(manifest.of(name).items())]
        if not files:
            continue
        listed = ", ".join(_quote(f) for f in files)
        con.execute(
            f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}], "
            "hive_partitioning = true)"
        )
    return con


def run_sql(store: Store, manifest: Manifest, query: str) -> pd.DataFrame:
    """The result of ``query`` as a pandas frame."""
    con = connection(store, manifest)
    try:
        return con.execute(query).df()
    finally:
        con.close()
