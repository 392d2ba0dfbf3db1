"""A 60-second mixed soak of the sandbox server: no error, and its memory stays bounded.

Four clients loop for ``SOAK_S`` seconds over a mix of pages, details, playbook writes,
analyses and applications on a server process of its own (quota gate lifted, so the soak
measures the server, not 429s). Every answer must be 2xx or an expected 409 (an application
that another client superseded or applied first), and the server's resident memory at the end
may exceed what it was after a warm-up by at most ``MAX_RSS_GROWTH`` bytes beyond what the
server's bounded caches may hold (``RenderedItems``' cap: a minute of pages can fill it), and
grow by at most ``MAX_LATE_GROWTH`` over the second half of the minute (a leak grows with the
requests served; a cache filling up levels off).
"""

from __future__ import annotations

import itertools
import signal
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from reliability._server_process import ServerProcess

from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.rendered import RenderedItems

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

SOAK_S = 60.0
WARM_UP_S = 5.0
CLIENTS = 4
MAX_RSS_GROWTH = 64 * 2**20
MAX_LATE_GROWTH = 32 * 2**20
CACHE_CAPS = RenderedItems().max_bytes

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


@pytest.fixture(scope="module")
def soaked(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("soak")
    copy_world(sandbox_world, directory)
    server = ServerProcess(directory, unmetered=True).start()
    yield server
    server.stop(signal.SIGKILL)


def _client(server: ServerProcess, key: str, seed: int, until: float) -> Counter[str]:
    session = requests.Session()
    session.headers["X-API-Key"] = key
    seen: Counter[str] = Counter()
    config = session.get(server.url + "/api/degen/config?quantId=3", timeout=60).json()
    cid = config[0]["categories"]["Security"][0]["configTypes"]["BUYING"]["configIdsByInterval"]
    for i in itertools.count(seed):
        if time.monotonic() > until:
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


def test_a_minute_of_mixed_load_gives_no_error_and_bounded_memory(
    soaked: ServerProcess, sandbox_world: WorldInfo
) -> None:
    key = sandbox_world.keys["enterprise"]
    warm_until = time.monotonic() + WARM_UP_S
    _client(soaked, key, 0, warm_until)
    rss_before = soaked.rss_bytes()
    until = time.monotonic() + SOAK_S
    with ThreadPoolExecutor(CLIENTS) as pool:
        running = [pool.submit(_client, soaked, key, c * 1000, until) for c in range(CLIENTS)]
        time.sleep(max(0.0, until - SOAK_S / 2 - time.monotonic()))
        rss_half = soaked.rss_bytes()
        results = [future.result() for future in running]
    rss_after = soaked.rss_bytes()
    seen = sum(results, Counter())
    growth, late = rss_after - rss_before, rss_after - rss_half
    print(
        f"soak: {sum(seen.values())} requests in {SOAK_S:.0f} s, RSS {rss_before / 2**20:.1f} -> "
        f"{rss_half / 2**20:.1f} (half-way) -> {rss_after / 2**20:.1f} MiB"
    )
    assert set(seen) == {"ok"}, seen
    assert growth <= MAX_RSS_GROWTH + CACHE_CAPS, f"RSS grew {growth / 2**20:.1f} MiB"
    assert late <= MAX_LATE_GROWTH, f"RSS grew {late / 2**20:.1f} MiB in the second half"
    assert requests.get(soaked.url + "/health", timeout=10).json()["status"] == "ok"
