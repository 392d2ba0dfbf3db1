"""The sandbox bounds what it holds, at the scale issue 20 measured (figures: docs/reliability.md).

* **Large bodies.** A 100 MB PUT refused 403 to a Basic key grew the server by 276 MB, and
  eight at once with an Enterprise key took it from 280 to 1,814 MB: the body was read and
  parsed before anything was checked. Now each is answered 413 before its body is read (or cut
  off at the limit when chunked), and the server's memory stays flat.
* **Slow bodies.** 300 connections whose head is complete and whose body drips counted as busy
  and were never evicted: they refused 30 of 40 new requests, ``/health`` too. Now a connection
  waiting on its client's body is evicted like an idle one, and every probe is answered.

The server is a process of its own (``quantscope sandbox serve``) over a copy of the world, so
its resident memory is its own.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from reliability._server_process import ServerProcess

from quantscope.sandbox.datadir import WorldInfo, copy_world

pytestmark = [pytest.mark.slow, pytest.mark.reliability]

CONFIG = "/api/degen/config"
BODY_BYTES = 100_000_000
PARALLEL = 8
MAX_GROWTH_BYTES = 32 * 1024 * 1024  # "flat": the interpreter's own noise is a few MB
SLOW_CONNECTIONS = 300  # above the server's cap of 256 open connections
PROBES = 40


@pytest.fixture
def server(sandbox_world: WorldInfo, tmp_path: Path) -> Iterator[ServerProcess]:
    info = copy_world(sandbox_world, tmp_path / "world")
    process = ServerProcess(info.data_dir).start()
    try:
        yield process
    finally:
        process.stop()


def _address(process: ServerProcess) -> tuple[str, int]:
    host, _, port = process.url.removeprefix("http://").rpartition(":")
    return host, int(port)


def _head(key: str, length: int | None) -> bytes:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (
        f"PUT {CONFIG} HTTP/1.1\r\nHost: x\r\nX-API-Key: {key}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode("ascii")


def _send_big_body(process: ServerProcess, key: str, chunked: bool) -> bytes:
    """A 100 MB PUT (declared or chunked) sent as fast as the server takes it; its answer."""
    piece = b"[" + b"1," * 32767 + b"1]"  # 64 KiB of valid JSON text, repeated
    with socket.create_connection(_address(process), timeout=30) as sock:
        sock.sendall(_head(key, None if chunked else BODY_BYTES))
        with contextlib.suppress(OSError):  # the server closes once it has answered
            for _ in range(BODY_BYTES // len(piece)):
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sock.sendall(b"0\r\n\r\n" if chunked else b"")
        answer = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                answer += chunk
    return answer


class PeakRss:
    """The server's resident memory, sampled every 20 ms in a thread; ``peak`` the highest."""

    def __init__(self, process: ServerProcess) -> None:
        self.process = process
        self.before = self.peak = process.rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            with contextlib.suppress(OSError, RuntimeError):
                self.peak = max(self.peak, self.process.rss_bytes())

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.rss_bytes())

    @property
    def growth(self) -> int:
        return self.peak - self.before


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("plan", "chunked"), [("enterprise", False), ("enterprise", True)])
def test_eight_parallel_100_mb_bodies_leave_memory_flat(
    server: ServerProcess, sandbox_world: WorldInfo, plan: str, chunked: bool
) -> None:
    key = sandbox_world.keys[plan]
    with PeakRss(server) as rss, ThreadPoolExecutor(PARALLEL) as pool:
        answers = list(pool.map(lambda _: _send_big_body(server, key, chunked), range(PARALLEL)))
    statuses = [answer[:12].decode("ascii", "replace") for answer in answers]
    print(
        f"{PARALLEL} x 100 MB ({'chunked' if chunked else 'Content-Length'}, {plan}): server RSS "
        f"{rss.before / 2**20:.0f} -> peak {rss.peak / 2**20:.0f} MB "
        f"(+{rss.growth / 2**20:.1f} MB); answers {statuses}"
    )
    assert statuses == ["HTTP/1.1 413"] * PARALLEL
    assert rss.growth < MAX_GROWTH_BYTES
    assert requests.get(server.url + "/health", timeout=10).status_code == 200


@pytest.mark.timeout(120)
def test_a_100_mb_body_refused_to_a_basic_key_is_never_read(
    server: ServerProcess, sandbox_world: WorldInfo
) -> None:
    with PeakRss(server) as rss:
        answer = _send_big_body(server, sandbox_world.keys["basic"], chunked=False)
    print(f"1 x 100 MB to a Basic key: server RSS +{rss.growth / 2**20:.1f} MB")
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert rss.growth < MAX_GROWTH_BYTES


@pytest.mark.timeout(120)
def test_300_slow_bodies_refuse_no_new_request(
    server: ServerProcess, sandbox_world: WorldInfo
) -> None:
    key = sandbox_world.keys["enterprise"]
    slow: list[socket.socket] = []
    try:
        started = time.monotonic()
        for _ in range(SLOW_CONNECTIONS):  # each: a whole head, then 2 of 1,000 body bytes
            sock = socket.create_connection(_address(server), timeout=10)
            sock.sendall(_head(key, 1000) + b"{ ")
            slow.append(sock)
        time.sleep(1.0)  # the server reads every head and starts every request: all "busy"
        refused = []
        for i in range(PROBES):
            path = "/health" if i % 2 else "/api/trades/stats?quantId=1"
            try:
                answer = requests.get(server.url + path, headers={"X-API-Key": key}, timeout=5)
                if answer.status_code != 200:
                    refused.append(f"{path}: {answer.status_code}")
            except requests.RequestException as exc:
                refused.append(f"{path}: {type(exc).__name__}")
        elapsed = time.monotonic() - started
        print(
            f"{SLOW_CONNECTIONS} slow-body connections: {len(refused)} of {PROBES} probes "
            f"refused, in {elapsed:.1f} s"
        )
        assert refused == []
        # all within the read deadline (10 s): it was the eviction, not the deadline, that helped
        assert elapsed < 10.0
    finally:
        for sock in slow:
            sock.close()
