"""``Catalog.sql``: DuckDB over the catalog, one view per resource.

Each view reads exactly the files the manifest lists (never a stray file of an interrupted
sync) with ``hive_partitioning``, so the partition keys (``quant_id``, ``month``,
``snapshot``, ``timeframe``, ``token_id``) are columns and a ``WHERE`` on them prunes files
before any is opened. Remote catalogs (fsspec URLs) are read through the fsspec filesystem
registered with DuckDB.

A file whose manifest path leaves the catalog is refused before any view is made
(``catalog.integrity``); DuckDB reads the files itself and checks no page checksum, so a query
that fails on a damaged file (missing, cut short, an unreadable footer) is reported as the
``CatalogIntegrityError`` naming it, and ``Catalog.verify`` checks every byte before a query
whose answer must be certain.
"""

from __future__ import annotations

import re

import duckdb
import pandas as pd

from quantscope._errors import CatalogIntegrityError
from quantscope.catalog.integrity import OUTSIDE, Problem, confined, damaged_error, scan
from quantscope.catalog.layout import RESOURCES
from quantscope.catalog.manifest import Manifest, Store

__all__ = ["connection", "run_sql"]


#: What DuckDB raises on a file it cannot read as Parquet (missing, cut short, no footer).
_DAMAGE = (duckdb.IOException, duckdb.InvalidInputException)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connection(store: Store, manifest: Manifest) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per resource the catalog holds (a view
    over a damaged first file raises its ``CatalogIntegrityError`` message when queried).
    """
    return _connect(store, manifest)[0]


def _connect(
    store: Store, manifest: Manifest
) -> tuple[duckdb.DuckDBPyConnection, dict[str, CatalogIntegrityError]]:
    """The connection, and the views whose files DuckDB could not open (name -> error)."""
    outside = [
        Problem(name, str(p.get("file")), OUTSIDE)
        for name, p in sorted(manifest.partitions.items())
        if confined(store, p) is None
    ]
    if outside:
        raise damaged_error(store, outside)
    con = duckdb.connect()
    prefix = ""
    if not store.local:
        con.register_filesystem(store.fs)
        protocol = store.fs.protocol
        prefix = f"{protocol[0] if isinstance(protocol, tuple) else protocol}://"
    broken: dict[str, CatalogIntegrityError] = {}
    for name in RESOURCES:
        files = [prefix + store.path(p["file"]) for _, p in sorted(manifest.of(name).items())]
        if not files:
            continue
        listed = ", ".join(_quote(f) for f in files)
        try:
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listed}], "
                "hive_partitioning = true)"
            )
        except _DAMAGE:  # its first file: a view that says so, the other views still work
            found = scan(store, manifest.of(name)) or [Problem(name, "?", "unreadable")]
            broken[name] = damaged_error(store, found)
            con.execute(
                f"CREATE VIEW {name} AS SELECT * FROM range(1) "
                f"WHERE error({_quote(str(broken[name]))}) IS NULL"
            )
    return con, broken


def run_sql(store: Store, manifest: Manifest, query: str) -> pd.DataFrame:
    """The result of ``query`` as a pandas frame; a query that fails on a damaged file raises
    the ``CatalogIntegrityError`` naming it (module docstring).
    """
    con, broken = _connect(store, manifest)
    try:
        return con.execute(query).df()
    except duckdb.Error as exc:
        named = [e for view, e in broken.items() if re.search(rf"\b{view}\b", query)]
        if named:
            raise named[0] from None
        if not isinstance(exc, _DAMAGE):
            raise
        damaged = scan(store, manifest.partitions)
        hit = [p for p in damaged if p.file in str(exc)]
        if hit or damaged:
            raise damaged_error(store, hit or damaged) from None
        raise
    finally:
        con.close()
