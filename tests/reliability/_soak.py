"""The 60-second mixed soak as a job: four clients against a server process of its own.

``SoakJob(world, workdir)()`` copies the world, serves it with the quota gate lifted (the soak
measures the server, not 429s), warms it up for ``WARM_UP_S``, then runs ``CLIENTS`` clients
for ``SOAK_S`` seconds over a mix of pages, details, playbook writes, analyses and
applications, sampling the server's resident memory after the warm-up, half-way and at the end,
and asks ``/health`` last. It returns what it saw; ``test_soak.py`` asserts on it.
``conftest.py`` starts it in a thread when the session begins (it mostly waits on its server),
so it runs alongside the fuzz and the fault tests. ``cancel()`` ends it early.
"""

from __future__ import annotations

import itertools
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests
from reliability._server_process import ServerProcess

from quantscope.sandbox.datadir import WorldInfo, copy_world

SOAK_S = 60.0
WARM_UP_S = 5.0
CLIENTS = 4

READS = (
    "/api/trades?pageSize=100&page={n}",
    "/api/trades/{n}",
    "/api/trades/stats?quantId=1",
    "/api/eval-results?limit=20&offset={n}",
    "/api/eval-details?evaluationId={n}",
    "/api/eval-history?evaluationId={n}",
    "/api/eval-timeseries?timeFrom=2026-09-01&timeTo=2026-09-30",
    "/api/eval-ohlcv?tokenId={t}&timeframe=4h",
    "/api/alpha-signals?limit=20",
    "/api/degen/config?quantId=2",
    "/api/refine-eval/dashboard",
)


@dataclass(frozen=True)
class SoakResult:
    seen: Counter[str]  # "ok", or "<status> <method> <url>" of each unexpected answer
    rss_before: int  # bytes, after the warm-up
    rss_half: int
    rss_after: int
    health: str  # /health's status after the minute
    cancelled: bool
    server_cpu_s: float


class SoakJob:
    """The soak, to its end, when called; ``cancel()`` from another thread stops it early."""

    def __init__(self, world: WorldInfo, workdir: Path) -> None:
        self.world = world
        self.workdir = workdir
        self._cancelled = threading.Event()

    def __call__(self) -> SoakResult:
        copy_world(self.world, self.workdir)
        server = ServerProcess(self.workdir, unmetered=True).start()
        try:
            return self._soak(server)
        finally:
            server.stop(signal.SIGKILL)

    def _soak(self, server: ServerProcess) -> SoakResult:
        key = self.world.keys["enterprise"]
        self._client(server, key, 0, time.monotonic() + WARM_UP_S)
        rss_before = server.rss_bytes()
        until = time.monotonic() + SOAK_S
        with ThreadPoolExecutor(CLIENTS) as pool:
            running = [
                pool.submit(self._client, server, key, c * 1000, until) for c in range(CLIENTS)
            ]
            self._cancelled.wait(max(0.0, until - SOAK_S / 2 - time.monotonic()))
            rss_half = server.rss_bytes()
            results = [future.result() for future in running]
        rss_after = server.rss_bytes()
        health = requests.get(server.url + "/health", timeout=10).json()["status"]
        return SoakResult(
            sum(results, Counter()),
            rss_before,
            rss_half,
            rss_after,
            str(health),
            self._cancelled.is_set(),
            server.cpu_seconds(),
        )

    def _client(self, server: ServerProcess, key: str, seed: int, until: float) -> Counter[str]:
        session = requests.Session()
        session.headers["X-API-Key"] = key
        seen: Counter[str] = Counter()
        config = session.get(server.url + "/api/degen/config?quantId=3", timeout=60).json()
        security = config[0]["categories"]["Security"][0]
        cid = security["configTypes"]["BUYING"]["configIdsByInterval"]
        for i in itertools.count(seed):
            if time.monotonic() > until or self._cancelled.is_set():
                break
            n = 1 + (i * 7919) % 3000
            if i % 25 == 0:
                body = {
                    "quantId": 3,
                    "newConfigs": [
                        {"configId": cid["noTime"], "field": "weight", "newValue": (i % 10) / 2}
                    ],
                }
                answer = session.put(server.url + "/api/degen/config", json=body, timeout=60)
            elif i % 97 == 0:
                answer = session.post(
                    server.url + "/api/refine-eval/analyze", json={"quantId": 2}, timeout=60
                )
            elif i % 53 == 0:
                recs = session.get(server.url + "/api/refine-eval/dashboard?quantId=2", timeout=60)
                pending = recs.json()["data"]["recentRecommendations"]
                if not pending:
                    continue
                answer = session.post(
                    f"{server.url}/api/refine-eval/recs/{pending[0]['id']}/apply", timeout=60
                )
            else:
                path = READS[i % len(READS)].format(n=n, t=1 + n % 90)
                answer = session.get(server.url + path, timeout=60)
            ok = answer.status_code < 300 or (
                answer.status_code in (404, 409) and "recs/" in answer.url
            )
            seen["ok" if ok else f"{answer.status_code} {answer.request.method} {answer.url}"] += 1
        session.close()
        return seen

    def cancel(self) -> None:
        self._cancelled.set()
