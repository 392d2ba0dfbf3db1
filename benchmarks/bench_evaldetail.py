"""GET /api/eval-details: the sandbox's CPU per request, before and after it computed once.

The calibration harness loads one eval-details answer per trade (~3,000 a world). On the
default world (seed 7, scale 1), two sandbox processes serve copies side by side, one on the
code before the change (``BEFORE``, exported by ``git archive``) and one on today's; each gets
the same requests (the buy evaluations of the first ``--requests`` trades, a warm-up round
first, so the criterion values of every pair are cached as in a long load), round after round
in turn (``measure``: a case's times are its server process's CPU seconds for the round). The
ratio today / before is judged on that CPU against 0.5; the warm-up's answers of both servers
are checked to be the same bytes.

Run: ``python -m benchmarks.bench_evaldetail [--requests N] [--repeat K]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path

import requests

from benchmarks._common import (
    BenchResult,
    Case,
    TimedElsewhere,
    bench_data_dir,
    measure,
    print_result,
    ratio,
)
from benchmarks.bench_loadpath import export_src
from quantscope.sandbox.datadir import copy_world, ensure_world

BEFORE = "b9c80f1"
"""``main`` before eval-details computed once (issue 22 item 2)."""

OLD = f"eval-details, sandbox before ({BEFORE})"
NEW = "eval-details, sandbox today"
DEFAULT_REPEAT = 5
DEFAULT_REQUESTS = 800
TARGET = 0.5  # the brief: the request at half the sandbox's cost

CHILD = Path(__file__).with_name("_evaldetail_child.py")
TODAY_SRC = Path(__file__).resolve().parents[1] / "src"


class Server:
    """One sandbox process over a copy of the world, on the ``src`` tree given."""

    def __init__(self, src: Path, data_dir: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(src)}
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(data_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdin is not None
        self.url = self.proc.stdout.readline().strip()

    def cpu(self) -> float:
        assert self.proc.stdout is not None
        assert self.proc.stdin is not None
        self.proc.stdin.write("cpu\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _requests(server: Server, session: requests.Session, ids: Sequence[int]) -> TimedElsewhere:
    """Every request of a round, timed by the server's CPU; the answers' digest as result."""
    digest = hashlib.sha256()
    wall, before = time.perf_counter(), server.cpu()
    for evaluation_id in ids:
        r = session.get(f"{server.url}/api/eval-details", params={"evaluationId": evaluation_id})
        r.raise_for_status()
        digest.update(r.content + b"\n")
    return TimedElsewhere(time.perf_counter() - wall, server.cpu() - before, digest.hexdigest())


def run(repeat: int = DEFAULT_REPEAT, requests_: int = DEFAULT_REQUESTS) -> BenchResult:
    """Both servers, ``repeat`` rounds of ``requests_`` requests each, interleaved."""
    info = ensure_world(bench_data_dir(), seed=7, scale=1)
    with closing(sqlite3.connect(info.db_path)) as conn:
        ids = [int(r[0]) for r in conn.execute("SELECT buy_eval_id FROM trades ORDER BY id")]
    ids = ids[:requests_]
    with tempfile.TemporaryDirectory(prefix="bench-evaldetail-") as tmp:
        before_src = export_src(BEFORE, Path(tmp) / "before")
        if before_src is None:
            raise SystemExit(f"commit {BEFORE} is not in this checkout: nothing to compare")
        servers = {
            OLD: Server(before_src, copy_world(info, Path(tmp) / "w1").data_dir),
            NEW: Server(TODAY_SRC, copy_world(info, Path(tmp) / "w2").data_dir),
        }
        try:
            with requests.Session() as session:
                session.headers["X-API-Key"] = info.keys["enterprise"]

                def check(results: Mapping[str, object]) -> None:
                    if results[OLD] != results[NEW]:
                        raise AssertionError("the two servers answered different bytes")

                cases = [
                    Case(name, lambda _, s=server: _requests(s, session, ids))
                    for name, server in servers.items()
                ]
                timings = measure(cases, repeat, check=check)  # the warm-up caches the values
        finally:
            for server in servers.values():
                server.close()
    per_request = {n: t.best_cpu / len(ids) * 1e3 for n, t in timings.items()}
    return BenchResult(
        name="evaldetail",
        params={"requests a round": len(ids), "repeat": repeat, "world": "seed 7, scale 1"},
        timings=timings,
        ratios=[ratio(timings, NEW, OLD, TARGET, at_least=False, basis="cpu")],
        facts={f"{n}: CPU per request (best)": f"{ms:.3f} ms" for n, ms in per_request.items()},
        checks={"the same bytes from both servers": True},
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=DEFAULT_REQUESTS)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args(argv)
    result = run(args.repeat, args.requests)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
