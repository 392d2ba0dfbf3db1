"""A study on a distributed engine: 10 million trades in S3, worker processes, bounded memory.

Issue 22, item 4. Steps, each timed:

1. moto's S3 server on loopback (``moto.server.ThreadedMotoServer``, in this process) with a
   bucket; the credentials in the environment (``AWS_ACCESS_KEY_ID``...), never in a task;
2. a synthetic catalog written into it through the catalog's own writer and manifest
   (``tools/synthetic_catalog.py``): ``--quants`` x ``--months`` x ``--trades-per-month``
   trades (default 20 x 10 x 50,000 = 10,000,000), the criterion values of the last
   ``--detail-days`` days' buys;
3. a ``dask.distributed.LocalCluster`` of ``--workers`` worker **processes** (1 thread each,
   ``--memory-limit`` each: the nanny restarts a worker that passes 95 % of it);
4. ``catalog.distributed.run_study`` on the cluster: every quant's ``summary()`` over all its
   trades and its screen over the detail window, one task per quant and question, each
   reading its partitions from S3; then each worker's peak RSS (``worker_peak_rss``);
5. the same study in this process, one task after the other, for every quant (or the first
   ``--subset``): the distributed rows must equal it exactly (``assert_frame_equal``).

Run (it takes minutes): ``nice -n 10 python -m benchmarks.bench_dask``; the small version is
``tests/toolkit/test_catalog_dask.py``. Results: ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from quantscope.catalog.distributed import peak_rss, run_study, worker_peak_rss
from tools.synthetic_catalog import generate

URL = "s3://research/study10m"


def _mb(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def run(args: argparse.Namespace) -> dict[str, Any]:
    import boto3
    import distributed
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    facts: dict[str, Any] = {}
    clock = time.perf_counter()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    options = {"endpoint_url": f"http://{host}:{port}"}
    boto3.client("s3", **options).create_bucket(Bucket="research")
    try:
        clock = time.perf_counter()
        written = generate(
            URL,
            quants=args.quants,
            months=args.months,
            trades_per_month=args.trades_per_month,
            detail_days=args.detail_days,
            storage_options=options,
        )
        facts["generate"] = time.perf_counter() - clock
        facts.update(written)
        screen_start = pd.Timestamp("2026-01-01", tz="UTC") + pd.DateOffset(months=args.months)
        study_kw: dict[str, Any] = {
            "storage_options": options,
            "screen_start": screen_start - pd.Timedelta(days=args.detail_days),
            "screen_options": {"resamples": args.resamples, "flips": args.resamples},
        }
        clock = time.perf_counter()
        with (
            distributed.LocalCluster(
                n_workers=args.workers,
                threads_per_worker=1,
                processes=True,
                memory_limit=args.memory_limit,
                dashboard_address=None,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            facts["cluster start"] = time.perf_counter() - clock
            clock = time.perf_counter()
            spread = run_study(URL, client=client, **study_kw)
            facts["distributed study"] = time.perf_counter() - clock
            facts["worker peak RSS"] = worker_peak_rss(client)  # each worker's own (VmHWM)
            facts["driver RSS (moto's objects, the generator)"] = peak_rss()
            facts["workers at the end"] = len(client.scheduler_info()["workers"])
        subset = spread.quants[: args.subset] if args.subset else spread.quants
        clock = time.perf_counter()
        here = run_study(URL, subset, **study_kw)
        facts["single-process subset"] = time.perf_counter() - clock
        pd.testing.assert_frame_equal(spread.summary.loc[subset], here.summary)
        pd.testing.assert_frame_equal(
            spread.screen[spread.screen["quant_id"].isin(subset)].reset_index(drop=True),
            here.screen,
        )
        facts["equal"] = f"summary {len(subset)} quants x {here.summary.shape[1]} metrics, " + (
            f"screen {len(here.screen)} rows: assert_frame_equal passed"
        )
        facts["rows summarised"] = int(
            spread.summary["trades"].sum() + spread.summary["open_trades"].sum()
        )
        facts["screen rows"] = len(spread.screen)
        facts["screened trades"] = int(
            spread.screen.groupby(["quant_id", "market_cap_class"])["test_trades"].first().sum()
        )
    finally:
        server.stop()
    return facts


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_dask")
    parser.add_argument("--quants", type=int, default=20)
    parser.add_argument("--months", type=int, default=10)
    parser.add_argument("--trades-per-month", type=int, default=50_000)
    parser.add_argument("--detail-days", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GiB")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--subset", type=int, default=0, help="quants compared (0: all)")
    args = parser.parse_args(argv)
    facts = run(args)
    for name, value in facts.items():
        if isinstance(value, float):
            value = f"{value:.1f} s"
        elif name.startswith("driver RSS"):
            value = _mb(value)
        elif isinstance(value, dict):
            value = ", ".join(f"{_mb(v)}" for v in value.values())
        print(f"{name:>26}: {value}")
    print(f"{'memory limit per worker':>26}: {args.memory_limit}")
    return facts


if __name__ == "__main__":
    main()
