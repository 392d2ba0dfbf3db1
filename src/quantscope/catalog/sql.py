"""``Catalog.sql``: DuckDB over the catalog, one view per resource.

Each view reads exactly the files the manifest lists (never a stray file of an interrupted
sync) with ``hive_partitioning``, so the partition keys (``quant_id``, ``month``,
``snapshot``, ``timeframe``, ``token_id``) are columns and a ``WHERE`` on them prunes files
before any is opened. Remote catalogs (fsspec URLs) are read through the fsspec filesystem
registered with DuckDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import pandas as pd

from quantscope.catalog.layout import RESOURCES

if TYPE_CHECKING:
    from quantscope.catalog.read import Catalog

__all__ = ["connection", "run_sql"]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connection(catalog: Catalog) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per resource the catalog holds."""
    con = duckdb.connect()
    store = catalog.store
    prefix = ""
    if not store.local:
        con.register_filesystem(store.fs)
        protocol = store.fs.protocol
        prefix = f"{protocol[0] if isinstance(protocol, tuple) else protocol}://"
    manifest = catalog.manifest
    for name in RESOURCES:
        files = [prefix + store.path(p["file"]) for _, p in sorted(manifest.of(name).items())]
        if not files:
            continue
        listed = ", ".join(_quote(f) for f in files)
        con.execute(
            f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}], "
            "hive_partitioning = true, union_by_name = true)"
        )
    return con


def run_sql(catalog: Catalog, query: str) -> pd.DataFrame:
    """The result of ``query`` as a pandas frame."""
    con = connection(catalog)
    try:
        return con.execute(query).df()
    finally:
        con.close()
