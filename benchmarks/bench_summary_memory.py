"""summary()'s peak memory against the frame it summarises (issue 22: at most 2x at 1e7).

Each size runs in a fresh child process (nothing else allocated beside the frame): the frame
is built (``bench_summary.synthetic_trades``: 5 % open positions, 3 quants, ties in close
time), its size taken with ``memory_usage(deep=True)``, then ``summary()`` runs under
``tracemalloc`` (numpy reports its buffers to it), whose peak is what summary() allocated
over the frame at its highest point.

Run: ``python -m benchmarks.bench_summary_memory [--trades 1000000 10000000]``.

Results (2026-11-28, x86_64, 2 shared cores, Python 3.11, pandas 3.1, numpy 2.4):

    trades        frame     peak before   peak after    after / frame
    1,000,000     51 MB       168 MB         97 MB          1.91x
    10,000,000   510 MB     1,681 MB        973 MB          1.91x

Before: 3.30x at both sizes. The numbers of summary() are the same bits as before (all 36
metrics, both sizes). Where it went: one group carries no per-row codes (a broadcast 0
instead of three int64 arrays), the sort key is built in place, intermediates are dropped as
the next is built, and the drawdown's peak and recovery are found by binary search among the
peaks' positions instead of four row-sized scans.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence

TARGET = 2.0
DEFAULT_TRADES = (1_000_000, 10_000_000)

_CHILD = """
import json, sys, tracemalloc
from benchmarks.bench_summary import synthetic_trades
from quantscope import analytics as A
frame = synthetic_trades(int(sys.argv[1]))
size = int(frame.memory_usage(deep=True).sum())
tracemalloc.start()
A.summary(frame)
print(json.dumps({"frame": size, "peak": tracemalloc.get_traced_memory()[1]}))
"""


def measure(n_trades: int) -> dict[str, int]:
    """``{"frame": bytes, "peak": bytes}`` of summary() over ``n_trades`` trades, in a child."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n_trades)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: Sequence[str] | None = None) -> list[dict[str, int]]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_summary_memory")
    parser.add_argument("--trades", type=int, nargs="+", default=list(DEFAULT_TRADES))
    args = parser.parse_args(argv)
    rows = []
    print(f"{'trades':>12} {'frame':>10} {'peak':>10} {'peak / frame':>13}")
    for n in args.trades:
        got = measure(n)
        ratio = got["peak"] / got["frame"]
        mark = "ok" if ratio <= TARGET else f"over {TARGET}x"
        frame_mb, peak_mb = got["frame"] / 1e6, got["peak"] / 1e6
        print(f"{n:>12,} {frame_mb:>7.0f} MB {peak_mb:>7.0f} MB {ratio:>12.2f}x {mark}")
        rows.append({"trades": n, **got})
    return rows


if __name__ == "__main__":
    main()
