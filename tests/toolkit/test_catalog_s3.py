"""The catalog on an S3-compatible object store: moto's S3 server on loopback, through s3fs.

A sync into ``s3://bucket/study`` (the endpoint given as fsspec storage options) makes the
same partitions, byte for byte, as a sync into a local directory; the frames read back equal
the local catalog's; ``cat.sql`` answers through DuckDB with the s3fs filesystem registered
(no httpfs extension: nothing is downloaded); ``qsc.connect(catalog="s3://...")`` answers the
loaders with the endpoint from fsspec's configuration; a bundle exports from the bucket.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import fsspec
import pandas as pd
import pytest
from moto.server import ThreadedMotoServer

import quantscope as qsc
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer

pytestmark = pytest.mark.slow

QUANTS = [1, 2]
START, END = "2026-07-01", "2026-08-31"
URL = "s3://research/study"


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    """A moto S3 server on a free loopback port with the bucket ``research``; the storage
    options that reach it."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    ).create_bucket(Bucket="research")
    yield {
        "endpoint_url": endpoint,
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"region_name": "us-east-1"},
    }
    server.stop()


@pytest.fixture(scope="module")
def catalogs(
    own_sandbox: SandboxServer, s3: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, qsc.SyncReport]:
    """The same sync into a local directory and into the bucket (one cache: one fetch)."""
    local = tmp_path_factory.mktemp("s3-local") / "study"
    cache = tmp_path_factory.mktemp("s3-cache")
    with Client(
        own_sandbox.url, own_sandbox.keys["enterprise"], cache_dir=str(cache), progress=False
    ) as c:
        kwargs: dict[str, Any] = {"quant_id": QUANTS, "start": START, "end": END, "client": c}
        qsc.sync(local, **kwargs)
        report = qsc.sync(URL, storage_options=s3, **kwargs)
    return local, report


def _neutral(partitions: dict[str, dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {k: (p["file"], p["rows"], p["sha256"], p.get("sealed")) for k, p in partitions.items()}


def test_sync_to_s3_makes_the_local_catalog(
    catalogs: tuple[Path, qsc.SyncReport], s3: dict[str, Any]
) -> None:
    local, report = catalogs
    assert report.status == "complete"
    here = qsc.open_catalog(local)
    there = qsc.open_catalog(URL, storage_options=s3)
    assert _neutral(there.partitions) == _neutral(here.partitions)
    fs = fsspec.filesystem("s3", **s3)
    stored = {p.removeprefix("research/study/") for p in fs.find("research/study")}
    assert stored == {"manifest.json", *(p["file"] for p in here.partitions.values())}
    for quant in QUANTS:
        got, want = there.trades(quant), here.trades(quant)
        assert len(got) == len(want) > 0
        assert got.attrs["quantscope"]["catalog"] == URL
        got.attrs, want.attrs = {}, {}
        pd.testing.assert_frame_equal(got, want)
        got = there.evaluations(quant, start="2026-08-01", end="2026-08-31")
        want = here.evaluations(quant, start="2026-08-01", end="2026-08-31")
        got.attrs, want.attrs = {}, {}
        pd.testing.assert_frame_equal(got, want)
    assert there.playbook(1).equals(here.playbook(1))


def test_sql_on_s3_answers_as_on_disk(
    catalogs: tuple[Path, qsc.SyncReport], s3: dict[str, Any]
) -> None:
    query = (
        "SELECT quant_id, month, count(*) AS n, round(sum(pnl_usd), 6) AS pnl FROM trades "
        "WHERE month = '2026-08' GROUP BY ALL ORDER BY quant_id"
    )
    there = qsc.open_catalog(URL, storage_options=s3).sql(query)
    here = qsc.open_catalog(catalogs[0]).sql(query)
    pd.testing.assert_frame_equal(there, here)
    assert there["quant_id"].tolist() == QUANTS
    assert (there["n"] > 0).all()


def test_connect_and_bundle_from_s3(
    catalogs: tuple[Path, qsc.SyncReport],
    s3: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # qsc.connect(catalog=URL) takes no storage options: fsspec's configuration supplies them
    # (fsspec.config.conf, or FSSPEC_S3_ENDPOINT_URL=... in the environment).
    monkeypatch.setitem(fsspec.config.conf, "s3", dict(s3))
    want = qsc.open_catalog(catalogs[0]).trades(2, start="2026-08-01", end="2026-08-31")
    try:
        qsc.connect(catalog=URL)
        got = qsc.load_trades(2, start="2026-08-01", end="2026-08-31")
    finally:
        qsc.set_default_client(None)
    got.attrs, want.attrs = {}, {}
    pd.testing.assert_frame_equal(got, want)
    bundle = qsc.export_bundle(
        tmp_path / "s3.qsbundle", URL, quant_id=2, start="2026-08-01", storage_options=s3
    )
    opened = qsc.open_bundle(bundle.path)
    copy = qsc.open_catalog(opened.catalog).trades(2)
    local = qsc.open_catalog(catalogs[0]).trades(2, start="2026-08-01")
    copy.attrs, local.attrs = {}, {}
    pd.testing.assert_frame_equal(copy, local)
