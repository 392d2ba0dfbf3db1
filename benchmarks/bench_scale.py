"""The sandbox at scale: page cost by position, throughput against a bare app, full loads.

On a ``--scale`` world (default 10: ~480k evaluations, ~33k executed trades) served from a copy
by a sandbox in a child process, in one run:

* **page position**: the first and the last page (100 rows) of ``/api/trades`` and of
  ``/api/eval-results``, each request repeated, interleaved, best of N. The targets compare the
  last page with the first (within 1.5x). The first visit of each last page (a cold jump, which
  climbs the keyset ladder once) is timed apart and reported;
* **throughput**: requests/s of the sandbox on a 100-row page of trades and of evaluations,
  against a bare FastAPI app that answers a static body of the same bytes, served the same way
  (uvicorn in a child process); the load generator is this process, ``threads`` threads each
  on its own keep-alive ``http.client`` connection, for ``seconds`` per round, rounds
  interleaved, best of N. Target: the sandbox at least a quarter of the bare app. Every answer
  is checked to be a 200 (the quota is reset between rounds). Each round also records the
  server process's CPU seconds per request answered: the CPU ratio (bare / sandbox) is what
  a quiet machine's requests/s ratio would approach when the server is the bottleneck;
* **full loads** (unless ``--no-loads``; ``--loads-only`` runs them alone):
  ``load_trades()`` (best of ``repeat``) and ``load_evaluations()`` (one run) by a fresh client
  and cache in a child process, at scale 1 and at ``--scale``, each after a one-row load of
  the same loader (imports and first-use caches are not the load's memory): the client's wall
  and CPU time, and the loading process's peak RSS growth (``ru_maxrss``, which counts the
  file pages it maps) and peak anonymous RSS growth over the frame's own size
  (``memory_usage(deep=True)``). Targets: scale N within 1.2x N of scale 1 (12x for 10),
  peak growth at scale N under 4x the frame.

Run: ``python -m benchmarks.bench_scale [--repeat N] [--scale N] [--no-loads | --loads-only]``.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import math
import multiprocessing
import os
import resource
import sqlite3
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import closing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import orjson

from benchmarks._common import (
    BenchResult,
    Case,
    Ratio,
    Timing,
    bench_data_dir,
    measure,
    print_result,
    ratio,
)
from benchmarks.bench_loadpath import ChildSandbox
from quantscope.sandbox.datadir import WorldInfo, copy_world, ensure_world
from quantscope.sandbox.plans import get_plan

DEFAULT_REPEAT = 3
DEFAULT_SCALE = 10
PAGE = 100
REQUESTS_PER_RUN = 5  # requests of the same page in one timed run (page position)

TRADES = "/api/trades"
EVALS = "/api/eval-results"


class Http:
    """One keep-alive connection with the enterprise key; ``get`` returns (status, body)."""

    def __init__(self, url: str, key: str | None) -> None:
        parts = urlsplit(url)
        self._conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
        self._headers = {} if key is None else {"X-API-Key": key}

    def get(self, path: str) -> tuple[int, bytes]:
        self._conn.request("GET", path, headers=self._headers)
        response = self._conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self._conn.close()


#: Requests a sandbox throughput round may send: the enterprise key's daily limit (5,000)
#: less a margin, since the quota is reset only between rounds (a reset during a round would
#: be a write from another connection, a cost the real service does not have).
ROUND_CAP = get_plan("enterprise").daily_limit - 4 * 8


def _reset_quota(info: WorldInfo) -> None:
    with closing(sqlite3.connect(info.db_path)) as conn, conn:
        conn.execute("DELETE FROM quota")


# --- the bare app ------------------------------------------------------------------------------


def _serve_bare(info: WorldInfo, bodies: dict[str, bytes], conn: Connection) -> None:
    """The child process: a bare FastAPI app answering ``bodies[path]``, under the sandbox's
    own uvicorn settings (``SandboxServer``), until told to stop."""
    from fastapi import FastAPI
    from starlette.responses import Response

    from quantscope.sandbox.serve import SandboxServer

    app = FastAPI()
    for path, body in bodies.items():

        def endpoint(body: bytes = body) -> Response:
            return Response(body, media_type="application/json")

        app.add_api_route(path, endpoint, methods=["GET"])
    with SandboxServer(info, app=app) as server:
        conn.send(server.url)
        while conn.recv() == "stats":
            conn.send(time.process_time())


class ChildBare:
    """The bare app in a child process (a context manager); ``url`` where it listens."""

    def __init__(self, info: WorldInfo, bodies: dict[str, bytes]) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve_bare, args=(info, bodies, child))
        self._process.daemon = True
        self._process.start()
        child.close()
        self.url: str = self._conn.recv()

    def cpu(self) -> float:
        """CPU seconds of the bare app's process so far."""
        self._conn.send("stats")
        return float(self._conn.recv())

    def __enter__(self) -> ChildBare:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.send("stop")
        self._process.join(timeout=30)
        if self._process.is_alive():
            self._process.kill()


def throughput(
    url: str,
    key: str | None,
    path: str,
    threads: int,
    seconds: float,
    max_requests: int | None = None,
) -> tuple[float, int]:
    """Requests/s of ``threads`` keep-alive clients on ``path`` for ``seconds`` (or until
    ``max_requests`` are answered: the sandbox's daily quota, which a fast server reaches
    within a round), and how many requests were answered; every answer must be a 200."""
    counts = [0] * threads
    cap = math.inf if max_requests is None else max_requests
    failures: list[str] = []
    start = threading.Barrier(threads + 1)
    stop_at = [math.inf]

    def worker(i: int) -> None:
        client = Http(url, key)
        try:
            start.wait()
            while time.perf_counter() < stop_at[0] and sum(counts) < cap:
                status, _ = client.get(path)
                if status != 200:
                    failures.append(f"{path}: {status}")
                    return
                counts[i] += 1
        finally:
            client.close()

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    began = time.perf_counter()
    stop_at[0] = began + seconds
    start.wait()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - began
    if failures:
        raise RuntimeError(f"non-200 answers under load: {failures[:3]}")
    return sum(counts) / elapsed, sum(counts)


# --- full loads in a child process ---------------------------------------------------------------


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _anon_bytes() -> int:
    """The process's anonymous resident memory (its heaps: not the file pages it maps)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


class _AnonPeak:
    """The highest ``_anon_bytes`` seen, sampled every few milliseconds in a thread (the kernel
    keeps a high-water mark of the whole RSS only)."""

    def __init__(self) -> None:
        self.peak = _anon_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _anon_bytes())

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.peak, _anon_bytes())


class Loaded(NamedTuple):
    """One full load in a child process: wall and CPU seconds, rows, the frame's bytes
    (``memory_usage(deep=True)``), and the growth of the peak RSS and of the peak anonymous
    RSS over the process's before the load."""

    seconds: float
    cpu: float
    rows: int
    frame_bytes: int
    growth: int
    anon_growth: int


def _load(url: str, key: str, kind: str, cache_dir: str, conn: Connection) -> None:
    """The child process: one full load, after a one-row load of the same loader (so imports
    and first-use caches are not counted as the load's memory); sends a ``Loaded``."""
    from quantscope._http.client import Client
    from quantscope.loaders.evaluations import load_evaluations
    from quantscope.loaders.trades import load_trades

    loader = load_trades if kind == "trades" else load_evaluations
    client = Client(url, key, cache_dir=cache_dir, progress=False)
    loader(client=client, page_size=1, max_pages=1)
    gc.collect()
    before, anon = _rss_bytes(), _AnonPeak()
    anon_before = anon.peak
    start, cpu = time.perf_counter(), time.process_time()
    frame = loader(client=client)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    anon_peak = anon.stop()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    frame_bytes = int(frame.memory_usage(deep=True).sum())
    growth, anon_growth = max(0, peak - before), max(0, anon_peak - anon_before)
    conn.send(Loaded(seconds, cpu, len(frame), frame_bytes, growth, anon_growth))
    client.close()


def full_load(url: str, key: str, kind: str, cache_dir: Path) -> Loaded:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_load, args=(url, key, kind, str(cache_dir), child))
    process.start()
    child.close()
    result = parent.recv()
    process.join(timeout=60)
    return Loaded(*result)


# --- the run -------------------------------------------------------------------------------------


def run(
    repeat: int = DEFAULT_REPEAT,
    *,
    scale: int = DEFAULT_SCALE,
    seed: int = 7,
    threads: int = 4,
    seconds: float = 3.0,
    loads: bool = True,
    data_dir: Path | str | None = None,
) -> BenchResult:
    """Measure page cost by position, throughput against a bare app and (``loads``) full loads."""
    where = data_dir if data_dir is not None else bench_data_dir()
    big = ensure_world(where, seed, scale)
    facts: dict[str, Any] = {}
    checks: dict[str, bool] = {}
    timings: dict[str, Timing] = {}
    ratios: list[Ratio] = []
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-") as tmp_name:
        tmp = Path(tmp_name)
        served = copy_world(big, tmp / "big")
        with ChildSandbox(served) as server:
            key = server.keys["enterprise"]
            probe = Http(server.url, key)
            first_trades = f"{TRADES}?pageSize={PAGE}&page=1"
            status, body = probe.get(first_trades)
            n_trades = orjson.loads(body)["pagination"]["total"]
            last_trades = f"{TRADES}?pageSize={PAGE}&page={-(-n_trades // PAGE)}"
            first_evals = f"{EVALS}?limit={PAGE}&offset=0"
            _, body = probe.get(first_evals)
            n_evals = orjson.loads(body)["total"]
            last_evals = f"{EVALS}?limit={PAGE}&offset={(n_evals - 1) // PAGE * PAGE}"
            for name, path in (("trades", last_trades), ("evaluations", last_evals)):
                began = time.perf_counter()
                status, _ = probe.get(path)
                facts[f"first visit of the last {name} page (cold jump, ladder climbed once)"] = (
                    f"{time.perf_counter() - began:.3f} s"
                )
                assert status == 200

            def pages(path: str) -> Case[None]:
                def run_case(_: None) -> None:
                    for _ in range(REQUESTS_PER_RUN):
                        got, _body = probe.get(path)
                        assert got == 200, (path, got)

                return Case(path, run_case)

            names = {
                first_trades: "trades, first page",
                last_trades: "trades, last page",
                first_evals: "evaluations, first page",
                last_evals: "evaluations, last page",
            }
            _reset_quota(served)
            measured = measure([pages(p) for p in names], repeat)
            for path, t in measured.items():
                timings[names[path]] = Timing(names[path], t.runs, t.cpu_runs, t.thread_runs)
            ratios.append(
                ratio(timings, "trades, last page", "trades, first page", 1.5, at_least=False)
            )
            ratios.append(
                ratio(
                    timings,
                    "evaluations, last page",
                    "evaluations, first page",
                    1.5,
                    at_least=False,
                )
            )

            # Throughput: the same bytes from a bare app.
            bodies = {TRADES: probe.get(first_trades)[1], EVALS: probe.get(first_evals)[1]}
            probe.close()
            facts["page bodies (100 rows)"] = (
                f"trades {len(bodies[TRADES]):,} B, evaluations {len(bodies[EVALS]):,} B"
            )
            with ChildBare(served, bodies) as bare:
                rates: dict[str, list[float]] = {}

                def sandbox_cpu() -> float:
                    return server.stats()[2]

                cpu_per_request: dict[str, list[float]] = {}
                for _ in range(repeat):
                    for label, (url, k, path, cpu) in {
                        "bare app, trades body": (bare.url, None, TRADES, bare.cpu),
                        "sandbox, trades page": (server.url, key, first_trades, sandbox_cpu),
                        "bare app, evaluations body": (bare.url, None, EVALS, bare.cpu),
                        "sandbox, evaluations page": (server.url, key, first_evals, sandbox_cpu),
                    }.items():
                        _reset_quota(served)
                        cpu_before = cpu()
                        rate, answered = throughput(
                            url, k, path, threads, seconds, None if k is None else ROUND_CAP
                        )
                        rates.setdefault(label, []).append(rate)
                        cpu_per_request.setdefault(label, []).append(
                            (cpu() - cpu_before) / answered
                        )
            for label, values in rates.items():
                # seconds per request, so that ratio(bare, sandbox) = sandbox rps / bare rps;
                # the CPU "run" is the server process's CPU seconds per request answered
                timings[label] = Timing(
                    label, tuple(1.0 / v for v in values), tuple(cpu_per_request[label])
                )
                facts[f"requests/s, {label}"] = (
                    f"best {max(values):.0f} (runs {', '.join(f'{v:.0f}' for v in values)}); "
                    f"server CPU per request best {min(cpu_per_request[label]) * 1e3:.3f} ms"
                )
            ratios.append(
                ratio(
                    timings,
                    "bare app, trades body",
                    "sandbox, trades page",
                    0.25,
                    name="trades: sandbox requests/s / bare app's",
                )
            )
            ratios.append(
                ratio(
                    timings,
                    "bare app, evaluations body",
                    "sandbox, evaluations page",
                    0.25,
                    name="evaluations: sandbox requests/s / bare app's",
                )
            )
        if loads:
            _full_loads(where, seed, scale, tmp, repeat, timings, ratios, facts, checks)
    return BenchResult(
        "scale",
        {
            "scale": scale,
            "trades": n_trades,
            "evaluations": n_evals,
            "threads": threads,
            "seconds per round": seconds,
            "repeat": repeat,
        },
        timings,
        ratios,
        facts,
        checks,
    )


def _full_loads(
    where: Path | str,
    seed: int,
    scale: int,
    tmp: Path,
    repeat: int,
    timings: dict[str, Timing],
    ratios: list[Ratio],
    facts: dict[str, Any],
    checks: dict[str, bool],
) -> None:
    """load_trades (``repeat`` runs, best) and load_evaluations (one run: minutes at scale 10)
    at scale 1 and ``scale``, each by a fresh client and cache in a child process. Times are
    the loading process's wall and CPU (the sandbox's part is reported apart); memory is the
    growth of its peak RSS (``ru_maxrss``: file pages it maps count too) and of its peak
    anonymous RSS (sampled), over the frame's ``memory_usage(deep=True)``."""
    runs: dict[str, list[Loaded]] = {}
    for world_scale in (1, scale):
        info = copy_world(ensure_world(where, seed, world_scale), tmp / f"load-{world_scale}")
        with ChildSandbox(info) as server:
            for kind, times in (("trades", repeat), ("evaluations", 1)):
                label = f"load_{kind}, scale {world_scale}"
                for n in range(times):
                    _reset_quota(info)
                    cache = tmp / f"cache-{kind}-{world_scale}-{n}"
                    requests_before, inside_before, cpu_before = server.stats()
                    got = full_load(server.url, server.keys["enterprise"], kind, cache)
                    requests_after, inside_after, cpu_after = server.stats()
                    runs.setdefault(label, []).append(got)
                best = min(runs[label], key=lambda r: r.seconds)
                mb = 2**20
                facts[f"{label}: rows, frame, client's peak RSS growth / anonymous (last run)"] = (
                    f"{got.rows:,} rows, {got.frame_bytes / mb:.1f} MB, {got.growth / mb:.0f} MB "
                    f"({got.growth / got.frame_bytes:.1f}x the frame) / {got.anon_growth / mb:.0f}"
                    f" MB ({got.anon_growth / got.frame_bytes:.1f}x)"
                )
                facts[f"{label}: the client's wall / CPU (best run)"] = (
                    f"{best.seconds:.2f} s / {best.cpu:.2f} s"
                )
                facts[f"{label}: the sandbox's part (last run)"] = (
                    f"{requests_after - requests_before} requests, "
                    f"{inside_after - inside_before:.2f} s inside the server, "
                    f"{cpu_after - cpu_before:.2f} s of its CPU"
                )
                if world_scale == scale:  # at scale 1 the fixed costs are most of the growth
                    checks[f"{label}: client's peak RSS growth < 4x the frame"] = (
                        got.growth < 4 * got.frame_bytes
                    )
                    checks[f"{label}: client's peak anonymous RSS growth < 4x the frame"] = (
                        got.anon_growth < 4 * got.frame_bytes
                    )
    for label, loads in runs.items():
        timings[label] = Timing(label, tuple(r.seconds for r in loads), tuple(r.cpu for r in loads))
    for kind in ("trades", "evaluations"):
        ratios.append(
            ratio(
                timings,
                f"load_{kind}, scale {scale}",
                f"load_{kind}, scale 1",
                1.2 * scale,
                at_least=False,
            )
        )


def run_loads(
    repeat: int = DEFAULT_REPEAT,
    *,
    scale: int = DEFAULT_SCALE,
    seed: int = 7,
    data_dir: Path | str | None = None,
) -> BenchResult:
    """The full loads alone (``--loads-only``): no page-position or throughput rounds."""
    where = data_dir if data_dir is not None else bench_data_dir()
    facts: dict[str, Any] = {"load average (1, 5, 15 min) at the start": os.getloadavg()}
    checks: dict[str, bool] = {}
    timings: dict[str, Timing] = {}
    ratios: list[Ratio] = []
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-") as tmp_name:
        _full_loads(where, seed, scale, Path(tmp_name), repeat, timings, ratios, facts, checks)
    facts["load average (1, 5, 15 min) at the end"] = os.getloadavg()
    return BenchResult(
        "scale (full loads)",
        {"scale": scale, "repeat": repeat},
        timings,
        ratios,
        facts,
        checks,
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_scale")
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--scale", type=int, default=DEFAULT_SCALE)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--no-loads", dest="loads", action="store_false")
    parser.add_argument("--loads-only", action="store_true", help="the full loads alone")
    args = parser.parse_args(argv)
    if args.loads_only:
        loads = run_loads(args.repeat, scale=args.scale)
        print_result(loads)
        return loads
    result = run(
        args.repeat, scale=args.scale, threads=args.threads, seconds=args.seconds, loads=args.loads
    )
    print_result(result)
    return result


if __name__ == "__main__":
    main()
