"""Races, quota races, restarts and kill -9 against the sandbox server, as assertions.

The facts of issue 14's battery ("held up"), kept true: concurrent playbook writes lose nothing,
one recommendation applied by eight threads succeeds once, a Basic key's 150 parallel requests
get exactly 100 answers and 50 × 429 (still 429 after SIGTERM and SIGKILL restarts), and a
server killed with SIGKILL in the middle of a large PUT or of ``analyze {"apply": "true"}``
leaves every write all-or-nothing and the database intact. The restart and crash tests run the
sandbox as its own process (``quantscope sandbox serve``) over a copy of the world.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from reliability._server_process import ServerProcess

from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

CONFIG = "/api/degen/config"
ANALYZE = "/api/refine-eval/analyze"
RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


def entries(session: requests.Session, url: str, quant: int) -> list[dict[str, Any]]:
    """Every config entry of a quant: its id and current settings."""
    answer = session.get(f"{url}{CONFIG}", params={"quantId": quant}, timeout=60)
    assert answer.status_code == 200, answer.text
    found = []
    for element in answer.json():
        for criteria in element["categories"].values():
            for criterion in criteria:
                for maps in criterion["configTypes"].values():
                    found.append({name: values["noTime"] for name, values in maps.items()})
    return found


def weights(session: requests.Session, url: str, quant: int) -> dict[str, float]:
    return {e["configIdsByInterval"]: e["weights"] for e in entries(session, url, quant)}


def integrity(db_path: Path) -> str:
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def keyed(key: str) -> requests.Session:
    session = requests.Session()
    session.headers["X-API-Key"] = key
    return session


# --- races on one in-process server ------------------------------------------------------------


@pytest.fixture
def server(fresh_sandbox: Callable[..., SandboxServer]) -> SandboxServer:
    return fresh_sandbox()


def test_concurrent_puts_on_distinct_entries_lose_nothing(server: SandboxServer) -> None:
    session = keyed(server.keys["enterprise"])
    targets = [(q, cid) for q in (1, 2) for cid in weights(session, server.url, q)][:200]
    assert len(targets) == 200
    wanted = {cid: round(1 + i / 1000, 3) for i, (_, cid) in enumerate(targets)}

    def put(target: tuple[int, str]) -> int:
        quant, cid = target
        change = {"configId": cid, "field": "weight", "newValue": wanted[cid]}
        body = {"quantId": quant, "newConfigs": [change]}
        return keyed(server.keys["enterprise"]).put(server.url + CONFIG, json=body).status_code

    with ThreadPoolExecutor(16) as pool:
        assert Counter(pool.map(put, targets)) == {200: 200}
    stored = {**weights(session, server.url, 1), **weights(session, server.url, 2)}
    lost = [cid for cid, value in wanted.items() if stored[cid] != value]
    assert lost == []
    assert integrity(server.info.db_path) == "ok"


def test_concurrent_puts_on_one_entry_leave_one_of_the_values(server: SandboxServer) -> None:
    session = keyed(server.keys["enterprise"])
    cid = next(iter(weights(session, server.url, 1)))
    values = [round(2 + i / 100, 2) for i in range(100)]

    def put(value: float) -> int:
        body = {
            "quantId": 1,
            "newConfigs": [{"configId": cid, "field": "weight", "newValue": value}],
        }
        return keyed(server.keys["enterprise"]).put(server.url + CONFIG, json=body).status_code

    with ThreadPoolExecutor(16) as pool:
        assert Counter(pool.map(put, values)) == {200: 100}
    assert weights(session, server.url, 1)[cid] in values


def test_one_recommendation_applied_by_eight_threads_succeeds_once(server: SandboxServer) -> None:
    session = keyed(server.keys["enterprise"])
    answer = session.post(server.url + ANALYZE, json={"quantId": 1}, timeout=120)
    assert answer.status_code == 200, answer.text
    dashboard = session.get(server.url + "/api/refine-eval/dashboard", timeout=60).json()
    rec_id = dashboard["data"]["recentRecommendations"][0]["id"]

    def apply(_: int) -> int:
        url = f"{server.url}/api/refine-eval/recs/{rec_id}/apply"
        return keyed(server.keys["enterprise"]).post(url, timeout=60).status_code

    with ThreadPoolExecutor(8) as pool:
        assert Counter(pool.map(apply, range(8))) == {200: 1, 409: 7}


def test_a_mixed_storm_of_writes_and_reads_has_no_server_error(server: SandboxServer) -> None:
    session = keyed(server.keys["enterprise"])
    cids = list(weights(session, server.url, 3))
    reads = [
        "/api/trades?pageSize=50",
        "/api/eval-results?limit=20",
        "/api/trades/stats",
        "/api/refine-eval/dashboard",
        f"{CONFIG}?quantId=3",
    ]

    def act(i: int) -> int:
        client = keyed(server.keys["enterprise"])
        if i % 2:
            return client.get(server.url + reads[i % len(reads)], timeout=60).status_code
        change = {"configId": cids[i % len(cids)], "field": "weight", "newValue": i / 10}
        body = {"quantId": 3, "newConfigs": [change]}
        return client.put(server.url + CONFIG, json=body, timeout=60).status_code

    with ThreadPoolExecutor(16) as pool:
        statuses = Counter(pool.map(act, range(240)))
    assert statuses == {200: 240}
    assert integrity(server.info.db_path) == "ok"


# --- the sandbox as a process: quota across restarts, kill -9 -----------------------------------


@pytest.fixture
def world_dir(sandbox_world: WorldInfo, tmp_path: Path) -> tuple[Path, WorldInfo]:
    info = copy_world(sandbox_world, tmp_path / "world")
    return tmp_path / "world", info


@pytest.fixture
def process(world_dir: tuple[Path, WorldInfo]) -> Iterator[ServerProcess]:
    running = ServerProcess(world_dir[0])
    yield running
    running.stop(signal.SIGKILL)


def test_a_basic_key_races_to_exactly_its_limit_and_stays_spent_across_restarts(
    process: ServerProcess, world_dir: tuple[Path, WorldInfo]
) -> None:
    key = world_dir[1].keys["basic"]
    process.start()

    def hit(_: int) -> requests.Response:
        return keyed(key).get(process.url + "/api/trades/stats", timeout=60)

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(hit, range(150)))
    assert Counter(a.status_code for a in answers) == {200: 100, 429: 50}
    for answer in answers:
        assert all(name in answer.headers for name in RATE_HEADERS)
        assert ("Retry-After" in answer.headers) == (answer.status_code == 429)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        process.stop(sig)
        process.start()
        assert hit(0).status_code == 429
    assert integrity(world_dir[1].db_path) == "ok"


def test_a_thousand_idle_connections_cannot_starve_health(
    world_dir: tuple[Path, WorldInfo], tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    server = ServerProcess(world_dir[0], log_path=log).start()
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    idle = []
    try:
        for _ in range(1000):
            with contextlib.suppress(OSError):  # the server may already drop the oldest
                idle.append(socket.create_connection((host, int(port)), timeout=5))
        for _ in range(5):
            started = time.monotonic()
            assert requests.get(server.url + "/health", timeout=5).json()["status"] == "ok"
            assert time.monotonic() - started < 5
    finally:
        for sock in idle:
            sock.close()
        server.stop()
    assert log.stat().st_size < 10_000, log.read_text()[-2000:]


KILL_AFTER_S = (0.05, 0.3, 1.5)  # per run: early, mid-flight, likely after the commit


def _all_or_nothing_after_kill(
    process: ServerProcess,
    db_path: Path,
    send: Callable[[], Any],
    snapshot: Callable[[], Any],
    delay: float,
) -> tuple[bool, bool]:
    """On a running ``process``: fire ``send`` in a thread, SIGKILL after ``delay``, restart.

    Returns (changed, healthy).
    """
    before = snapshot()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(send)
        time.sleep(delay)
        process.stop(signal.SIGKILL)
    assert integrity(db_path) == "ok"
    process.start()
    healthy = requests.get(process.url + "/health", timeout=10).json()["status"] == "ok"
    after = snapshot()
    process.stop(signal.SIGTERM)
    return after != before, healthy


@pytest.mark.parametrize("run", range(3))
def test_kill_9_in_a_large_put_writes_all_or_nothing(
    process: ServerProcess, world_dir: tuple[Path, WorldInfo], run: int
) -> None:
    info = world_dir[1]
    key = info.keys["enterprise"]
    changes: list[dict[str, Any]] = []

    def snapshot() -> set[float]:
        with contextlib.closing(sqlite3.connect(info.db_path)) as conn:
            return {
                w for (w,) in conn.execute("SELECT DISTINCT weight FROM config WHERE quant_id = 1")
            }

    def send() -> None:
        with contextlib.suppress(requests.RequestException):
            keyed(key).put(
                process.url + CONFIG, json={"quantId": 1, "newConfigs": changes}, timeout=30
            )

    process.start()
    changes.extend(
        {"configId": cid, "field": "weight", "newValue": 7.25 + run}
        for cid in weights(keyed(key), process.url, 1)
    )
    # the same process takes the PUT (one start less per run; the snapshot reads the database)
    changed, healthy = _all_or_nothing_after_kill(
        process, info.db_path, send, snapshot, KILL_AFTER_S[run]
    )
    assert healthy
    with contextlib.closing(sqlite3.connect(info.db_path)) as conn:
        count = conn.execute(
            "SELECT COUNT(*) FROM config WHERE quant_id = 1 AND weight = ?", (7.25 + run,)
        ).fetchone()[0]
    assert count in (0, len(changes)), f"{count} of {len(changes)} entries written"
    assert changed == (count == len(changes))


@pytest.mark.parametrize("run", range(3))
def test_kill_9_in_analyze_and_apply_writes_all_or_nothing(
    process: ServerProcess, world_dir: tuple[Path, WorldInfo], run: int
) -> None:
    info = world_dir[1]
    key = info.keys["enterprise"]

    def snapshot() -> tuple[int, int]:
        with contextlib.closing(sqlite3.connect(info.db_path)) as conn:
            recs = conn.execute("SELECT COUNT(*), TOTAL(applied) FROM recommendations").fetchone()
            return int(recs[0]), int(recs[1])

    def send() -> None:
        with contextlib.suppress(requests.RequestException):
            keyed(key).post(process.url + ANALYZE, json={"apply": "true"}, timeout=60)

    before = snapshot()  # the build's own analysis: unapplied recommendations only
    assert before[1] == 0
    process.start()
    _, healthy = _all_or_nothing_after_kill(
        process, info.db_path, send, snapshot, KILL_AFTER_S[run]
    )
    assert healthy
    made, applied = snapshot()
    # no run at all, or the whole run: the old ones superseded, every new one applied
    assert (made, applied) == before or made == applied
    with contextlib.closing(sqlite3.connect(info.db_path)) as conn:
        changed = conn.execute(
            "SELECT COUNT(*) FROM config AS c JOIN config_original AS o ON o.id = c.id "
            "WHERE c.threshold != o.threshold"
        ).fetchone()[0]
    assert changed == applied  # each applied recommendation moved its own entry, no other
    print(json.dumps({"run": run, "recommendations": made, "thresholds_changed": changed}))
