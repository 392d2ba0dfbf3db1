"""A synthetic catalog of any size, written through the catalog's own writer and manifest.

For studies and benchmarks bigger than the sandbox's worlds (``benchmarks/bench_dask.py``:
10 million trades): the files are what ``qsc.sync`` writes (``catalog.write.write_partition``:
the loaders' columns and dtypes, one content-addressed zstd file per partition, page CRCs,
footer digests) and the manifest is ``catalog.manifest``'s, so ``qsc.open_catalog`` reads it
with every check, and DuckDB, Dask or polars read the files as any catalog's.

What it holds (seeded, so the same arguments write the same bytes):

* ``trades/quant_id=Q/month=YYYY-MM``: ``trades_per_month`` executed trades of each quant in
  each of ``months`` months from ``first_month``, opened uniformly in the month (whole
  seconds), held an exponential ~6 h; 2 % of the last month's trades are still open. Tokens
  are drawn from ``tokens``, each with a fixed market cap (10^5 to 10^8 USD: the three
  classes in about equal shares). Each trade's ROI is noise plus a small edge when its
  evaluation's first criterion is high, so a screen has something to find.
* ``eval_details/quant_id=Q/month=YYYY-MM``: the ``criteria`` results of the evaluations
  that bought the trades opened in the last ``detail_days`` days of the last month (the
  window a study screens), with the manifest's ``ids`` span as a sync records it.

Run: ``python -m tools.synthetic_catalog s3://research/study --quants 20 --months 10
--trades-per-month 50000`` (``--endpoint-url`` for an S3 server; credentials from the
environment, ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from quantscope._typed import schemas as _schemas
from quantscope.catalog.layout import RESOURCES
from quantscope.catalog.manifest import Manifest, Store, now_iso
from quantscope.catalog.write import partition_dir, write_partition

SOURCE = {"generator": "tools/synthetic_catalog.py"}
CRITERIA_OPERATORS = ("V_GTE_T", "V_LTE_T")
HOLD_MEAN_S = 6 * 3600


def _month_bounds(first: str, i: int) -> tuple[pd.Timestamp, pd.Timestamp]:
    start = pd.Timestamp(first + "-01", tz="UTC") + pd.DateOffset(months=i)
    return start, start + pd.DateOffset(months=1)


def _typed(columns: Mapping[str, Any], spec: Any, n: int) -> pd.DataFrame:
    """A frame with exactly the spec's columns and dtypes (missing columns all NA)."""
    out = {}
    for name, dtype in spec.dtypes().items():
        values = columns.get(name)
        if values is None:
            values = pd.Series([None] * n, dtype="object")
        out[name] = (
            pd.Series(values).astype(dtype)
            if dtype != "category"
            else (pd.Series(values).astype("string").astype("category"))
        )
    return pd.DataFrame(out)


def trades_partition(
    rng: np.random.Generator,
    quant: int,
    start: pd.Timestamp,
    end: pd.Timestamp,
    n: int,
    first_id: int,
    caps: np.ndarray,
    edge: np.ndarray,
    *,
    last: bool,
) -> pd.DataFrame:
    """One quant-month of trades (newest first, as the loader orders them)."""
    lo, hi = start.value // 1_000_000, end.value // 1_000_000
    opened = (rng.integers(lo, hi, n) // 1000) * 1000
    held = np.round(rng.exponential(HOLD_MEAN_S, n)).astype(np.int64) * 1000
    is_open = last & (rng.random(n) < 0.02)
    token = rng.integers(0, caps.size, n)
    cost = np.round(rng.uniform(50, 500, n), 2)
    roi = rng.normal(0.0, 0.3, n) + 0.04 * edge
    pnl = np.round(cost * roi, 2)
    ids = np.arange(first_id, first_id + n, dtype=np.int64)
    closed_ms = np.where(is_open, np.iinfo(np.int64).min, opened + held)
    frame = _typed(
        {
            "trade_id": ids,
            "quant_name": np.full(n, f"Quant {quant}", dtype=object),
            "token_id": token + 1,
            "token_symbol": np.char.add("T", (token + 1).astype(str)).astype(object),
            "chain": np.where(token % 3 == 0, "BASE", "SOLANA").astype(object),
            "opened_at": pd.to_datetime(opened, unit="ms", utc=True),
            "closed_at": pd.to_datetime(closed_ms.view("datetime64[ms]"), utc=True),
            "duration_s": held / 1000.0,
            "status": np.where(is_open, "Open", "Closed").astype(object),
            "result": np.where(pnl > 0, "Profit", "Loss").astype(object),
            "buy_cost_usd": cost,
            "sell_revenue_usd": np.where(is_open, np.nan, cost + pnl),
            "pnl_usd": pnl,
            "roi": pnl / cost,
            "decision": np.full(n, "BUY", dtype=object),
            "evaluation_id": ids,
            "evaluation_type": np.full(n, "TOKEN_BUY", dtype=object),
            "evaluation_passed": np.ones(n, dtype=bool),
            "evaluated_at": pd.to_datetime(opened, unit="ms", utc=True),
        },
        _schemas.TRADES,
        n,
    )
    order = np.lexsort((-ids, -opened))
    return frame.iloc[order].reset_index(drop=True)


def details_partition(
    rng: np.random.Generator, quant: int, trades: pd.DataFrame, values: np.ndarray, caps: np.ndarray
) -> pd.DataFrame:
    """The criterion results of the evaluations that bought ``trades`` (ascending ids)."""
    trades = trades.sort_values("evaluation_id").reset_index(drop=True)
    n, k = values.shape
    ids = np.repeat(trades["evaluation_id"].to_numpy(np.int64), k)
    crit = np.tile(np.arange(k), n)
    ops = np.array(CRITERIA_OPERATORS)[crit % 2]
    thresholds = np.where(crit % 2 == 0, 0.3, 0.7)
    flat = values.reshape(-1)
    passed = np.where(ops == "V_GTE_T", flat >= thresholds, flat <= thresholds)
    token = np.repeat(trades["token_id"].to_numpy(np.int64), k)
    return _typed(
        {
            "evaluation_id": ids,
            "quant_id": np.full(n * k, quant, dtype=np.int64),
            "token_id": token,
            "chain": np.repeat(trades["chain"].astype(object).to_numpy(), k),
            "evaluation_type": np.full(n * k, "TOKEN_BUY", dtype=object),
            "evaluation_passed": np.ones(n * k, dtype=bool),
            "market_cap_usd": caps[token - 1],
            "result_id": np.arange(n * k, dtype=np.int64) + ids.min() * k,
            "criterion_id": crit + 1,
            "criterion": np.char.add("crit_", crit.astype(str)).astype(object),
            "operator": ops.astype(object),
            "value": flat,
            "threshold": thresholds,
            "weight": np.ones(n * k),
            "passed": passed,
            "created_at": pd.to_datetime(
                np.repeat(trades["evaluated_at"].to_numpy("datetime64[ms]"), k), utc=True
            ),
        },
        _schemas.EVAL_DETAILS,
        n * k,
    )


def generate(
    url: str,
    *,
    quants: int = 20,
    months: int = 10,
    trades_per_month: int = 50_000,
    detail_days: int = 5,
    tokens: int = 400,
    criteria: int = 4,
    first_month: str = "2026-01",
    seed: int = 22,
    storage_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the catalog at ``url`` (module docstring); returns what it holds."""
    store = Store(url, storage_options)
    manifest = Manifest.new()
    rng = np.random.default_rng(seed)
    caps = 10 ** rng.uniform(5, 8, tokens)
    facts = {"trades": 0, "details": 0, "files": 0, "bytes": 0}
    for q in range(1, quants + 1):
        for m in range(months):
            start, end = _month_bounds(first_month, m)
            last = m == months - 1
            values = rng.random((trades_per_month, criteria))
            first_id = ((q - 1) * months + m) * trades_per_month + 1
            frame = trades_partition(
                rng, q, start, end, trades_per_month, first_id, caps, values[:, 0] > 0.5, last=last
            )
            keys = {"quant_id": q, "month": start.strftime("%Y-%m")}
            _record(store, manifest, "trades", keys, frame, sealed=not last)
            facts["trades"] += len(frame)
            if last and detail_days:
                since = end - pd.Timedelta(days=detail_days)
                window = (frame["opened_at"] >= since).to_numpy()
                rows = frame[window]
                row_values = values[(rows["trade_id"].to_numpy(np.int64) - first_id)]
                details = details_partition(
                    rng, q, rows, row_values[np.argsort(rows["evaluation_id"].to_numpy())], caps
                )
                ids = details["evaluation_id"].astype("int64")
                _record(
                    store,
                    manifest,
                    "eval_details",
                    keys,
                    details,
                    sealed=True,
                    ids=[int(ids.min()), int(ids.max())],
                    empty=[],
                )
                facts["details"] += len(details)
    store.save(manifest)
    for record in manifest.partitions.values():
        facts["files"] += 1
        facts["bytes"] += int(record["bytes"])
    return facts


def _record(
    store: Store,
    manifest: Manifest,
    resource: str,
    keys: Mapping[str, Any],
    frame: pd.DataFrame,
    **extra: Any,
) -> None:
    res = RESOURCES[resource]
    record = write_partition(store, res, keys, frame, {**SOURCE, "resource": resource})
    record.update(synced_at=now_iso(), **extra)
    manifest.partitions[partition_dir(res, keys)] = record


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m tools.synthetic_catalog")
    parser.add_argument("url")
    parser.add_argument("--quants", type=int, default=20)
    parser.add_argument("--months", type=int, default=10)
    parser.add_argument("--trades-per-month", type=int, default=50_000)
    parser.add_argument("--detail-days", type=int, default=5)
    parser.add_argument("--endpoint-url", default=None)
    args = parser.parse_args(argv)
    options = {"endpoint_url": args.endpoint_url} if args.endpoint_url else None
    facts = generate(
        args.url,
        quants=args.quants,
        months=args.months,
        trades_per_month=args.trades_per_month,
        detail_days=args.detail_days,
        storage_options=options,
    )
    print(facts)
    return facts


if __name__ == "__main__":
    main()
