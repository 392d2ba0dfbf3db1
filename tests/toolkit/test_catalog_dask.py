"""A study on worker processes reading the catalog from an object store (issue 22, item 4).

A synthetic catalog (2 quants x 2 months x 800 trades, written by the catalog's own writer:
``tools/synthetic_catalog.py``) in a bucket of moto's S3 server on loopback; a ``LocalCluster``
of 2 worker processes (1 thread each, a memory limit) computes every quant's ``summary()`` and
screen (``catalog.distributed.run_study``), equal to the same study run in this process. The
workers get their S3 credentials from their environment: the task carries only the endpoint.
The 10-million-trade run is ``benchmarks/bench_dask.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from quantscope.catalog.distributed import quants_of, run_study, worker_peak_rss
from tools.synthetic_catalog import generate

pytestmark = pytest.mark.slow

URL = "s3://study/small"
SCREEN = {"resamples": 100, "flips": 100}
MEMORY_LIMIT = 1024**3


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    """moto's S3 server on a free loopback port, the bucket ``study`` holding the synthetic
    catalog; the credentials in this process's environment (the workers inherit it)."""
    boto3 = pytest.importorskip("boto3")
    moto_server = pytest.importorskip("moto.server")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_DEFAULT_REGION", "us-east-1")
        env.delenv("QUANTSCOPE_API_KEY", raising=False)
        try:
            server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            server.start()
        except Exception as exc:  # any reason: the test cannot run here
            pytest.skip(f"moto's S3 server cannot start here ({exc})")
        host, port = server.get_host_and_port()
        options = {"endpoint_url": f"http://{host}:{port}"}
        boto3.client("s3", **options).create_bucket(Bucket="study")
        generate(
            URL, quants=2, months=2, trades_per_month=800, detail_days=31, storage_options=options
        )
        yield options
        server.stop()


@pytest.fixture(scope="module")
def cluster_client(s3: dict[str, Any]) -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=MEMORY_LIMIT,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_study_on_worker_processes_equals_the_single_process_one(
    s3: dict[str, Any], cluster_client: Any
) -> None:
    assert quants_of(URL, storage_options=s3) == [1, 2]
    kwargs: dict[str, Any] = {
        "storage_options": s3,
        "screen_start": "2026-02-01",
        "screen_options": SCREEN,
    }
    spread = run_study(URL, client=cluster_client, **kwargs)
    here = run_study(URL, **kwargs)

    pd.testing.assert_frame_equal(spread.summary, here.summary)
    pd.testing.assert_frame_equal(spread.screen, here.screen)
    assert spread.summary["trades"].sum() + spread.summary["open_trades"].sum() == 2 * 2 * 800
    assert sorted(spread.screen["quant_id"].unique().tolist()) == [1, 2]
    assert len(spread.screen) == 2 * 3 * 4  # quants x classes x criteria
    assert spread.screen_design == here.screen_design
    assert spread.screen_design[1]["unused_groups"] == []

    pids = cluster_client.run(os.getpid)
    assert len(set(pids.values())) == 2
    assert os.getpid() not in pids.values()
    peaks = worker_peak_rss(cluster_client)
    assert len(peaks) == 2
    assert all(0 < p < MEMORY_LIMIT for p in peaks.values())


def test_peak_rss_is_the_process_own_not_its_parents() -> None:
    """A process started by a big one reports its own peak: ``getrusage``'s ``ru_maxrss``
    would carry the parent's size across the ``exec`` (a worker spawned by a driver holding
    the whole S3 server would report the driver)."""
    ballast = np.ones(500 * 2**20 // 8)  # this process: over 500 MiB resident
    code = "from quantscope.catalog.distributed import peak_rss; print(peak_rss())"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(ballast.sum()) > 0
    assert 0 < int(child.stdout) < 400 * 2**20
