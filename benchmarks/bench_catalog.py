"""The Parquet catalog: reading one quant-month into the typed frame, and DuckDB at scale.

A synthetic catalog of ``--trades`` (default 1M) trades with every column of the loader's
``trades`` frame (``_typed.schemas.TRADES``: categories, nullable ints, UTC datetimes, strings) is
written through the catalog's own writer (``catalog.write.write_partition``) and manifest:
10 quants over 3 months, one Parquet file per quant-month (~33k trades each), rows in the
loader's order (newest first). Cases, each reading one quant-month:

* **floor**: ``pyarrow.parquet.read_table(file).to_pandas()`` of the same file: no window
  filter, no dtypes of the loader (object/str columns, int64 where the loader has Int64);
* **catalog**: ``cat.trades(quant_id=q, start=..., end=...)``: the manifest read, the window
  applied as the service does, and the loader's exact frame (Int64, boolean, string,
  categories sorted as the loader makes them, the loader's row order checked), every file
  checked against its manifest record (``catalog.integrity``: confined path, size, footer
  digest, page CRC-32s, rows; issue 20);
* **unchecked**: the same call with the file read as before issue 20 (``pq.read_table`` of
  the path, no check): the cost of the checks is ``catalog / unchecked``, in the same run.

Target: catalog / floor <= 1.5 (issue 12). Then a second catalog of ``--big`` (default 10M)
trades (100 quant-months of 100k) and a DuckDB group-by over all of it through ``cat.sql``
(per quant and month: count, PnL sum, mean ROI), and the same query narrowed to one quant
(hive pruning: only that quant's files are opened); reported in seconds and rows per second.

Run: ``python -m benchmarks.bench_catalog [--trades N] [--big N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import quantscope.catalog.read as catalog_read
from benchmarks._common import BenchResult, Case, Timing, measure, print_result, ratio
from quantscope._typed.schemas import TRADES
from quantscope.catalog.layout import RESOURCES, Resource, with_keys
from quantscope.catalog.manifest import Manifest, Store
from quantscope.catalog.read import open_catalog
from quantscope.catalog.write import partition_dir, write_partition

TARGET = 1.5
DEFAULT_TRADES = 1_000_000
DEFAULT_BIG = 10_000_000
DEFAULT_REPEAT = 7
QUANTS = 10
MONTHS = ("2026-07", "2026-08", "2026-09")
FLOOR = "floor: read_table().to_pandas()"
OURS = "cat.trades(quant_id, start, end)"
UNCHECKED = "cat.trades, files unchecked (before issue 20)"
GROUP_BY = "DuckDB group-by, all trades"
PRUNED = "DuckDB group-by, one quant"

_VOCAB = {
    "quant_name": ["Atlas", "Borealis", "Cinder"],
    "chain": ["BASE", "BSC", "SOLANA"],
    "status": ["Closed", "Open"],
    "result": ["Breakeven", "Loss", "Profit"],
    "decision": ["APPROVE", "DELAY", "RECOMMEND", "REJECT"],
    "evaluation_type": ["TOKEN_BUY", "TOKEN_SELL", "TOKEN_STATUS"],
}


def month_trades(n: int, month: str, first_id: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` trades of one month with the loader's columns and dtypes, newest first."""
    start = pd.Timestamp(f"{month}-01", tz="UTC").value // 1_000_000
    span = (pd.Timestamp(f"{month}-01", tz="UTC") + pd.offsets.MonthBegin(1)).value // 1_000_000
    opened = np.sort(rng.choice(np.arange(start, span, 1000), n, replace=False))[::-1]
    data: dict[str, Any] = {}
    tokens = [f"TOK{i}" for i in range(500)]
    for col in TRADES.columns:
        kind = col.dtype
        if col.name == "trade_id":
            data[col.name] = pd.array(np.arange(first_id + n, first_id, -1), dtype="Int64")
        elif col.name == "opened_at":
            data[col.name] = pd.to_datetime(opened, unit="ms", utc=True).as_unit("ms")
        elif kind == "Int64":
            data[col.name] = pd.array(rng.integers(1, 100_000, n), dtype="Int64")
        elif kind == "float64":
            data[col.name] = rng.normal(0, 100, n).round(2)
        elif kind == "boolean":
            data[col.name] = pd.array(rng.random(n) < 0.5, dtype="boolean")
        elif kind == "category":
            vocab = _VOCAB.get(col.name, ["A", "B"])
            data[col.name] = pd.Categorical.from_codes(rng.integers(0, len(vocab), n), vocab)
        elif kind == "string":
            data[col.name] = pd.array(
                np.asarray(tokens, dtype=object)[rng.integers(0, 500, n)], dtype="string"
            )
        else:  # datetimes
            stamps = opened + rng.integers(0, 86_400_000, n)
            data[col.name] = pd.to_datetime(stamps, unit="ms", utc=True).as_unit("ms")
    return pd.DataFrame(data, columns=TRADES.names)


def build_catalog(path: Path, n: int, quants: int, months: Sequence[str], seed: int = 7) -> Path:
    """A catalog of ``n`` synthetic trades, ``quants`` x ``months`` partitions."""
    shutil.rmtree(path, ignore_errors=True)
    store, manifest = Store(path), Manifest.new()
    rng = np.random.default_rng(seed)
    per = max(1, n // (quants * len(months)))
    first = 0
    resource = RESOURCES["trades"]
    for quant in range(1, quants + 1):
        for month in months:
            keys = {"quant_id": quant, "month": month}
            frame = month_trades(per, month, first, rng)
            first += per
            record = write_partition(store, resource, keys, frame, {"synthetic": True})
            manifest.partitions[partition_dir(resource, keys)] = record
    store.save(manifest)
    return path


def _read_unchecked(store: Store, resource: Resource, record: Mapping[str, Any]) -> pa.Table:
    """A partition's file read as before issue 20: the path, no check."""
    return with_keys(resource, pq.read_table(store.path(record["file"])), record["keys"])


@contextlib.contextmanager
def unchecked() -> Iterator[None]:
    """Meanwhile, the catalog reads its files unchecked (the baseline of the checks' cost)."""
    checked = catalog_read.read_checked
    catalog_read.read_checked = _read_unchecked
    try:
        yield
    finally:
        catalog_read.read_checked = checked


def _unchecked_trades(cat: Any, start: str, end: str) -> pd.DataFrame:
    with unchecked():
        frame: pd.DataFrame = cat.trades(2, start=start, end=end)
    return frame


def _check(results: Mapping[str, object]) -> None:
    floor, ours = results[FLOOR], results[OURS]
    assert isinstance(floor, pd.DataFrame)
    assert isinstance(ours, pd.DataFrame)
    before = results[UNCHECKED]
    assert isinstance(before, pd.DataFrame)
    pd.testing.assert_frame_equal(ours, before)
    assert len(floor) == len(ours)
    assert list(floor.columns) == list(ours.columns)
    assert (floor["trade_id"].to_numpy() == ours["trade_id"].to_numpy("int64")).all()


def run(
    n_trades: int = DEFAULT_TRADES,
    repeat: int = DEFAULT_REPEAT,
    *,
    big: int = DEFAULT_BIG,
    big_repeat: int = 3,
    workdir: Path | None = None,
) -> BenchResult:
    """Time one quant-month against the floor on ``n_trades``, DuckDB over ``big``."""
    root = Path(workdir or tempfile.mkdtemp(prefix="quantscope-bench-catalog-"))
    small = build_catalog(root / "small", n_trades, QUANTS, MONTHS)
    cat = open_catalog(small)
    part = cat.partitions[f"trades/quant_id=2/month={MONTHS[1]}"]
    file = str(small / part["file"])
    first = pd.Timestamp(f"{MONTHS[1]}-01", tz="UTC")
    start = first.isoformat()
    end = (first + pd.offsets.MonthBegin(1) - pd.Timedelta(seconds=1)).isoformat()
    cases: list[Case[None]] = [
        Case(FLOOR, lambda _: pq.read_table(file).to_pandas()),
        Case(OURS, lambda _: cat.trades(2, start=start, end=end)),
        Case(UNCHECKED, lambda _: _unchecked_trades(cat, start, end)),
    ]
    timings = measure(cases, repeat, check=_check)
    typed = cat.trades(2, start=start, end=end)
    big_path = build_catalog(root / "big", big, 10, [f"2026-{m:02d}" for m in range(1, 11)])
    big_cat = open_catalog(big_path)
    query = (
        "SELECT quant_id, month, count(*) AS trades, sum(pnl_usd) AS pnl_usd, avg(roi) AS roi "
        "FROM trades {where} GROUP BY ALL ORDER BY ALL"
    )
    sql_cases: list[Case[None]] = [
        Case(GROUP_BY, lambda _: big_cat.sql(query.format(where=""))),
        Case(PRUNED, lambda _: big_cat.sql(query.format(where="WHERE quant_id = 3"))),
    ]
    sql_timings = measure(sql_cases, big_repeat)
    grouped = big_cat.sql(query.format(where=""))
    rows = int(grouped["trades"].sum())
    all_timings: dict[str, Timing] = {**timings, **sql_timings}
    facts = {
        "quant-month read": f"{len(typed):,} trades, {len(typed.columns)} columns, "
        f"{part['bytes'] / 1e6:.1f} MB file",
        "typed frame": "Int64, boolean, string, category (sorted), datetime64[ms, UTC]",
        "DuckDB group-by": f"{rows:,} trades in {len(grouped)} groups, "
        f"{rows / sql_timings[GROUP_BY].best / 1e6:.0f}M trades/s",
        "DuckDB, one quant": f"{sql_timings[PRUNED].best * 1e3:.0f} ms (10 of 100 files read)",
    }
    for made in (small, big_path) if workdir is not None else (root,):
        shutil.rmtree(made, ignore_errors=True)
    return BenchResult(
        "catalog",
        {"trades": n_trades, "big": big, "repeat": repeat, "quant-months": QUANTS * len(MONTHS)},
        all_timings,
        [
            ratio(all_timings, OURS, FLOOR, TARGET, at_least=False),
            ratio(all_timings, OURS, UNCHECKED, None),
            ratio(all_timings, GROUP_BY, PRUNED, None),
        ],
        facts,
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_catalog")
    parser.add_argument("--trades", type=int, default=DEFAULT_TRADES)
    parser.add_argument("--big", type=int, default=DEFAULT_BIG)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args(argv)
    result = run(args.trades, args.repeat, big=args.big)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
