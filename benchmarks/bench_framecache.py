"""The frame cache's warm reload: Arrow (what it stores) against pickle (what it stored before).

The frame is the typed trades frame of 100k trades that ``load_trades`` builds: the decode
benchmark's pages (the sandbox's trades replicated with new values, ``bench_decode.make_pages``)
decoded the way the loader does (``bench_decode.decode_ours``), with a provenance in its attrs.
It is stored once in each of two frame caches on disk, in the same run:

* **arrow**: ``quantscope._http.framecache.FrameCache`` as shipped (an Arrow IPC stream per row);
* **pickle (baseline)**: the same class with pickle (protocol 5) as its ``encode``/``decode``,
  as the frame cache was before: kept here only, as the baseline to beat. A pickle is never
  read by quantscope itself (a copied cache must not run code).

Each case is one warm ``FrameCache.get``: the row's entries checked (a stand-in that says
"unchanged": the HTTP cache's side is the same for both and measured by ``reload``), the blob
read from SQLite, the frame rebuilt, checked equal to the original after the warm-up. The
target: the Arrow reload no slower than the pickle one (ratio <= 1.0). Storing (``put``) is
timed too, and the blobs' sizes reported.

Run: ``python -m benchmarks.bench_framecache [--trades N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import pickle
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from benchmarks._common import BenchResult, Case, measure, print_result, ratio
from benchmarks.bench_decode import decode_ours, make_pages
from quantscope._http.cache import CacheEntry
from quantscope._http.framecache import FrameCache

DEFAULT_TRADES = 100_000
DEFAULT_REPEAT = 7

ARROW = "arrow"
PICKLE = "pickle (baseline)"
ARROW_PUT = "arrow: store"
PICKLE_PUT = "pickle (baseline): store"
ENTRIES = (CacheEntry("page", datetime(2026, 11, 24, tzinfo=UTC)),)


def _pickle_loads(blob: bytes) -> pd.DataFrame:
    """The format-1 frame cache's read: ``pickle.loads`` with the collector paused."""
    paused = gc.isenabled()
    gc.disable()
    try:
        frame = pickle.loads(blob)
    finally:
        if paused:
            gc.enable()
    assert isinstance(frame, pd.DataFrame)
    return frame


class PickleFrameCache(FrameCache):
    """The frame cache as it was (pickled frames), for this baseline only."""

    encode = staticmethod(lambda frame: pickle.dumps(frame, protocol=5))
    read_blob = staticmethod(lambda blob: blob.read())  # one copy, into new bytes
    decode = staticmethod(_pickle_loads)


class _Unchanged:
    def unchanged(self, entries: Sequence[CacheEntry]) -> bool:
        return True


def trades_frame(n_trades: int, data_dir: Path | str | None = None) -> pd.DataFrame:
    """The typed frame of ``n_trades`` trades, with a loader's provenance in its attrs."""
    pages, _ = make_pages(n_trades, data_dir=data_dir)
    frame = decode_ours(pages)
    frame.attrs["quantscope"] = {
        "endpoint": "/api/trades",
        "params": {"tradingStatus": "all"},
        "fetched_at": "2026-11-24T00:00:00+00:00",
        "from_cache": False,
        "pages": len(pages),
        "requests": len(pages),
        "service": "bench",
        "stale": False,
    }
    return frame


def run(
    repeat: int = DEFAULT_REPEAT,
    *,
    n_trades: int = DEFAULT_TRADES,
    data_dir: Path | str | None = None,
) -> BenchResult:
    """Measure warm reloads (and stores) of ``n_trades`` trades, Arrow against pickle."""
    frame = trades_frame(n_trades, data_dir)
    unchanged = _Unchanged()
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-") as tmp:
        arrow = FrameCache(Path(tmp) / "arrow.sqlite")
        pickled = PickleFrameCache(Path(tmp) / "pickle.sqlite")
        for cache in (arrow, pickled):
            if not cache.put("trades", frame, ENTRIES):
                raise RuntimeError(f"{type(cache).__name__} did not store the frame")

        def get(cache: FrameCache) -> pd.DataFrame:
            hit = cache.get("trades", unchanged)
            assert hit is not None
            return hit.frame

        def check(results: Mapping[str, object]) -> None:
            for got in results.values():
                assert isinstance(got, pd.DataFrame)
                pd.testing.assert_frame_equal(got, frame)
                assert got.attrs == frame.attrs

        timings = measure(
            [Case(ARROW, lambda _: get(arrow)), Case(PICKLE, lambda _: get(pickled))],
            repeat,
            check=check,
        )
        stores = measure(
            [
                Case(ARROW_PUT, lambda _: arrow.put("trades", frame, ENTRIES)),
                Case(PICKLE_PUT, lambda _: pickled.put("trades", frame, ENTRIES)),
            ],
            repeat,
        )
        sizes = {ARROW: arrow.stats()[1], PICKLE: pickled.stats()[1]}
    timings.update(stores)
    facts = {
        "trades": len(frame),
        "columns": len(frame.columns),
        "stored MB (arrow / pickle)": f"{sizes[ARROW] / 1e6:.1f} / {sizes[PICKLE] / 1e6:.1f}",
        "string columns": int((frame.dtypes == "string").sum()),
        "string dtype": repr(frame["token_symbol"].dtype),
    }
    ratios = [
        ratio(timings, ARROW, PICKLE, 1.0, at_least=False),
        ratio(timings, ARROW_PUT, PICKLE_PUT, None),
    ]
    return BenchResult(
        "framecache",
        {"trades": len(frame), "repeat": repeat},
        timings,
        ratios,
        facts,
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_framecache")
    parser.add_argument("--trades", type=int, default=DEFAULT_TRADES)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args(argv)
    result = run(args.repeat, n_trades=args.trades)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
