"""Run the benchmarks: ``python -m benchmarks [NAME ...] [--repeat N] [--out FILE]``.

Each benchmark module has ``run(repeat=...) -> BenchResult``; ``BENCHMARKS`` lists them by
name (add yours there). Reports are printed as Markdown, ready for benchmarks/README.md; the
exit status is 1 when a target is not met, so a script can tell.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks._common import BenchResult, machine, print_result

#: name -> module (``benchmarks.<module>.run``), in the order they run.
BENCHMARKS: dict[str, str] = {
    "build": "bench_build",
    "catalog": "bench_catalog",
    "decode": "bench_decode",
    "evaldetail": "bench_evaldetail",
    "first_page": "bench_first_page",
    "framecache": "bench_framecache",
    "loadpath": "bench_loadpath",
    "parse": "bench_parse",
    "rank": "bench_rank",
    "refactor": "bench_refactor",
    "reload": "bench_reload",
    "replay": "bench_replay",
    "scale": "bench_scale",
    "screen": "bench_screen",
    "summary": "bench_summary",
    "sweep": "bench_sweep",
}


def run_one(name: str, repeat: int | None = None) -> BenchResult:
    """Run one benchmark by name with its default sizes (and ``repeat`` when given)."""
    module = importlib.import_module(f"benchmarks.{BENCHMARKS[name]}")
    return module.run() if repeat is None else module.run(repeat=repeat)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help=f"of {', '.join(BENCHMARKS)} (default: all)"
    )
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per case")
    parser.add_argument("--out", type=Path, default=None, help="also write the reports here")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    names = args.names or list(BENCHMARKS)
    print(f"# benchmarks on {machine()}\n", flush=True)
    results = []
    for name in names:
        result = run_one(name, args.repeat)
        print_result(result)
        results.append(result)
    if args.out is not None:
        args.out.write_text("\n".join(r.report() for r in results), encoding="utf-8")
    return 0 if all(r.all_met for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
