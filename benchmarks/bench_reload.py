"""Reloading trades: a warm ``load_trades`` (from the on-disk cache) against a cold one.

A sandbox world big enough for at least 20k trades under ``tradingStatus=all`` (seed 7, scale
5: 20,252 trades) is built once in the benchmark data directory and served over HTTP from a copy
(so quota spent never accumulates in the kept world). Cases, each one ``load_trades(
trading_status="all")`` of every page (1,000 trades a page):

* **cold**: a new ``Client`` on an empty cache directory: every page is a request;
* **warm (same client)**: the client that loaded the same trades before, same call again;
* **warm (new client)**: a new ``Client`` on that cache directory: proves the pages come from
  the cache on disk, not from anything held in memory.

A warm load is answered by the frame cache (``quantscope._http.framecache``): the pages' cache
entries are checked (present, fresh, same ``created_at``) and the typed frame stored by the
first load is read back (Arrow); no page is decoded and no frame built. A cold load pays for storing
that frame. For comparison, the warm load without the frame cache (every page decoded, the
frame rebuilt and stored again; the frame cache emptied before each run) is timed on its own
afterwards and reported among the facts.

Client construction is not timed (it opens the cache file; ``Case.setup``), the load is.
A middleware on the sandbox counts the requests it receives, so every warm run is checked to
have sent none (besides ``provenance["requests"] == 0``); afterwards a probe request on each
side of two more warm loads shows ``X-RateLimit-Remaining`` lowered by the probe alone.
The trades list is cached for 10 minutes (``_http.cache.CACHE_RULES``): a run of this benchmark
takes far less, and the checks above would catch an expiry.

Run: ``python -m benchmarks.bench_reload [--scale N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import requests

from benchmarks._common import (
    BenchResult,
    Case,
    bench_data_dir,
    measure,
    print_result,
    ratio,
)
from quantscope._http.client import Client
from quantscope._http.framecache import FrameCache
from quantscope.loaders.trades import load_trades
from quantscope.sandbox.app import create_app
from quantscope.sandbox.datadir import copy_world, ensure_world
from quantscope.sandbox.serve import SandboxServer

DEFAULT_SCALE = 5  # the smallest scale with >= 20k trades under tradingStatus=all (seed 7)
DEFAULT_REPEAT = 5
MIN_TRADES = 20_000
PAGE_SIZE = 1000

COLD = "cold"
WARM = "warm (same client)"
WARM_NEW = "warm (new client)"
PAGES_ONLY = "warm, frame cache emptied"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]


class RequestCounter:
    """ASGI middleware that counts the HTTP requests reaching the sandbox."""

    def __init__(self, app: ASGIApp, counts: list[int]) -> None:
        self.app = app
        self.counts = counts

    async def __call__(
        self,
        scope: Scope,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "http":
            self.counts[0] += 1
        await self.app(scope, receive, send)


@dataclass
class _Observed:
    """What the warm runs saw: provenance and the server's request count, per run."""

    provenance: list[dict[str, Any]] = field(default_factory=list)
    server_requests: list[int] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)


def _remaining(url: str, key: str) -> int:
    """``X-RateLimit-Remaining`` after one request (the probe itself costs one)."""
    response = requests.get(url + "/api/trades/stats", headers={"X-API-Key": key}, timeout=60)
    response.raise_for_status()
    return int(response.headers["X-RateLimit-Remaining"])


def run(
    repeat: int = DEFAULT_REPEAT,
    *,
    scale: int = DEFAULT_SCALE,
    seed: int = 7,
    page_size: int = PAGE_SIZE,
    min_trades: int = MIN_TRADES,
    data_dir: Path | str | None = None,
) -> BenchResult:
    """Measure cold and warm reloads of every trade of a ``scale`` world, ``repeat`` runs each.

    Raises:
        ValueError: when the world holds fewer than ``min_trades`` trades.
    """
    info = ensure_world(data_dir if data_dir is not None else bench_data_dir(), seed, scale)
    counts = [0]
    with tempfile.TemporaryDirectory(prefix="quantscope-bench-") as tmp_name:
        tmp = Path(tmp_name)
        served = copy_world(info, tmp / "world")
        app = create_app(served)
        app.add_middleware(RequestCounter, counts=counts)
        with SandboxServer(served, app=app) as server:
            url, key = server.url, server.keys["enterprise"]

            def client(cache_dir: Path) -> Client:
                return Client(url, key, cache_dir=str(cache_dir), progress=False)

            def load(c: Client) -> pd.DataFrame:
                return load_trades(trading_status="all", page_size=page_size, client=c)

            warm_dir = tmp / "warm-cache"
            warm_client = client(warm_dir)
            first = load(warm_client)  # fills the warm cache
            n_trades = len(first)
            if n_trades < min_trades:
                raise ValueError(
                    f"scale {scale} serves {n_trades} trades, fewer than {min_trades}: "
                    "use a larger scale"
                )
            cold_dirs = (tmp / f"cold-cache-{i}" for i in itertools.count())
            observed = {WARM: _Observed(), WARM_NEW: _Observed()}

            def warm_run(name: str) -> Callable[[Client], object]:
                def body(c: Client) -> object:
                    before = counts[0]
                    frame = load(c)
                    seen = observed[name]
                    seen.server_requests.append(counts[0] - before)
                    seen.provenance.append(frame.attrs["quantscope"])
                    seen.rows.append(len(frame))
                    return frame

                return body

            def check(results: Mapping[str, object]) -> None:
                for frame in results.values():
                    assert isinstance(frame, pd.DataFrame)
                    pd.testing.assert_frame_equal(frame, first)

            cases: list[Case[Client]] = [
                Case(COLD, load, lambda: client(next(cold_dirs)), Client.close),
                Case(WARM, warm_run(WARM), lambda: warm_client),
                Case(WARM_NEW, warm_run(WARM_NEW), lambda: client(warm_dir), Client.close),
            ]
            timings = measure(cases, repeat, check=check)
            frames = FrameCache.beside(warm_client.settings.cache_path)
            stored_frames, stored_bytes = frames.stats()

            def emptied() -> Client:
                frames.clear()
                return warm_client

            # The warm load as it was before the frame cache, for comparison (not interleaved).
            pages_only = measure([Case(PAGES_ONLY, load, emptied)], repeat, check=check)[PAGES_ONLY]

            # The quota as the service reports it, around two more warm loads.
            before = _remaining(url, key)
            load(warm_client)
            fresh = client(warm_dir)
            try:
                load(fresh)
            finally:
                fresh.close()
            after = _remaining(url, key)
            warm_client.close()

    warm_runs = [p for seen in observed.values() for p in seen.provenance]
    server_warm = sum(n for seen in observed.values() for n in seen.server_requests)
    facts = {
        "trades": n_trades,
        "pages per load": first.attrs["quantscope"]["pages"],
        "requests per cold load (provenance)": first.attrs["quantscope"]["requests"],
        "warm runs checked": len(warm_runs),
        "requests in warm runs (provenance, summed)": sum(p["requests"] for p in warm_runs),
        "requests received by the sandbox during warm runs": server_warm,
        "X-RateLimit-Remaining around two warm loads": f"{before} -> {after} (probe: -1)",
        "frame cache after the runs": f"{stored_frames} frame, {stored_bytes / 1e6:.1f} MB",
        f"{PAGES_ONLY}: best / median wall (s), best CPU (s)": (
            f"{pages_only.best:.3f} / {pages_only.median:.3f}, {pages_only.best_cpu:.3f}"
        ),
        f"cold / {PAGES_ONLY} (best wall; CPU)": (
            f"{timings[COLD].best / pages_only.best:.2f}x; "
            f"{timings[COLD].best_cpu / pages_only.best_cpu:.2f}x"
        ),
    }
    checks = {
        "warm runs: provenance requests == 0 and from_cache": all(
            p["requests"] == 0 and p["from_cache"] for p in warm_runs
        ),
        "warm runs: no request reached the sandbox": server_warm == 0,
        "X-RateLimit-Remaining unchanged by warm loads": after == before - 1,
    }
    ratios = [
        ratio(timings, COLD, WARM, 20.0, at_least=True),
        ratio(timings, COLD, WARM_NEW, 20.0, at_least=True),
    ]
    return BenchResult(
        "reload",
        {"trades": n_trades, "scale": scale, "repeat": repeat, "page size": page_size},
        timings,
        ratios,
        facts,
        checks,
    )


def main(argv: Sequence[str] | None = None) -> BenchResult:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_reload")
    parser.add_argument("--scale", type=int, default=DEFAULT_SCALE)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    args = parser.parse_args(argv)
    result = run(args.repeat, scale=args.scale)
    print_result(result)
    return result


if __name__ == "__main__":
    main()
