"""The catalog is plain Parquet: Dask, polars and DuckDB read it, and an fsspec URL works.

Dask computes the per-quant summary with quantscope's own analytics, one task per quant's
partitions, and gets the in-memory numbers; polars and Dask's ``read_parquet`` read the hive
layout directly. ``memory://`` stands in for an object store here (an S3 test with a local
S3 server is left for when s3fs can be installed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

import quantscope as qs
import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

QUANTS = [1, 2, 3]


@pytest.fixture(scope="module")
def client(
    own_sandbox: SandboxServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    cache = tmp_path_factory.mktemp("engines-cache")
    with Client(
        own_sandbox.url, own_sandbox.keys["enterprise"], cache_dir=str(cache), progress=False
    ) as c:
        yield c


@pytest.fixture(scope="module")
def catalog(client: Client, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("engines") / "cat"
    qs.sync(path, quant_id=QUANTS, resources=["trades"], client=client)
    return path


def _summary(path: str, quant: int) -> pd.Series:
    """What one Dask task computes: quantscope's summary of one quant's partitions."""
    return qs.open_catalog(path).trades(quant).quant.summary()


def test_dask_per_quant_summary_equals_the_in_memory_one(catalog: Path, client: Client) -> None:
    tasks = [dask.delayed(_summary)(str(catalog), q) for q in QUANTS]
    computed = dask.compute(*tasks, scheduler="threads")
    for quant, got in zip(QUANTS, computed, strict=True):
        want = L.load_trades(quant, client=client).quant.summary()
        pd.testing.assert_series_equal(got, want)
        closed = L.load_trades(quant, position_closed=True, client=client)
        assert got["trades"] == len(closed) > 0


# dask 2026's read_parquet calls reset_index(inplace=True), deprecated in pandas 3.1: theirs.
@pytest.mark.filterwarnings("ignore:The inplace keyword:pandas.errors.Pandas4Warning")
def test_dask_and_polars_read_the_hive_layout(catalog: Path, client: Client) -> None:
    frames = {q: L.load_trades(q, client=client) for q in QUANTS}
    want = pd.Series({q: f["pnl_usd"].sum() for q, f in frames.items()})
    ddf = dd.read_parquet(str(catalog / "trades"), columns=["pnl_usd", "quant_id"])
    got = ddf.groupby("quant_id")["pnl_usd"].sum().compute()
    got.index = got.index.astype(int)
    pd.testing.assert_series_equal(
        got.sort_index(), want.sort_index(), check_names=False, check_index_type=False
    )
    lazy = pl.scan_parquet(str(catalog / "trades" / "**" / "*.parquet"), hive_partitioning=True)
    polars = (
        lazy.filter(pl.col("quant_id") == 2)
        .select(pl.len().alias("n"), pl.col("pnl_usd").sum().alias("pnl"))
        .collect()
    )
    assert polars["n"].to_list() == [len(frames[2])]
    assert polars["pnl"][0] == pytest.approx(frames[2]["pnl_usd"].sum())


def test_files_carry_provenance_and_the_manifest_their_hashes(catalog: Path) -> None:
    import hashlib

    cat = qs.open_catalog(catalog)
    for part in cat.partitions.values():
        data = (catalog / part["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == part["sha256"]
        meta = pq.read_metadata(catalog / part["file"]).metadata
        assert meta[b"quantscope.resource"] == b"trades"
        assert meta[b"quantscope.partition"].decode() in (
            f'{{"month": "{part["keys"]["month"]}", "quant_id": {part["keys"]["quant_id"]}}}',
        )
    run = cat.runs[0]
    assert run["request"]["quant_ids"] == QUANTS
    assert run["status"] == "complete"


def test_a_catalog_at_an_fsspec_url(client: Client) -> None:
    url = "memory://quantscope-test-catalog"
    qs.sync(url, quant_id=1, resources=["trades", "playbook"], client=client)
    cat = qs.open_catalog(url)
    pd.testing.assert_frame_equal(cat.trades(1), L.load_trades(1, client=client))
    pd.testing.assert_frame_equal(cat.playbook(1), L.load_playbook(1, client=client))
    months = cat.sql("SELECT month, count(*) AS n FROM trades GROUP BY month ORDER BY month")
    assert months["n"].sum() == len(cat.trades(1))
    again = qs.sync(url, quant_id=1, resources=["trades"], client=client)
    assert again.rows_added == 0
