"""A deadline per call (issue 20, item 2): ``timeout_s`` bounds connect, headers and body of
every attempt and the waits between them together, not each socket read.

Servers that drip (``_helpers.drip``): a body, headers, a chunked body, and headers on a
connection reused from the pool. Each drip would last minutes; the call must end within its
deadline plus a margin generous for a loaded 2-core machine. The figures with
``timeout_s=2`` and ``5`` are in ``tests/reliability/test_key_secret.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import FAST, KEY, FakeService
from _helpers.drip import DripServer

import quantscope as qsc
from quantscope._http.client import Client

DEADLINE_S = 0.6
MARGIN_S = 3.0


def drip_client(url: str, tmp_path: Path, timeout_s: float = DEADLINE_S) -> Client:
    return Client(
        url, KEY, cache_dir=str(tmp_path), progress=False, timeout_s=timeout_s, retry=FAST
    )


@pytest.mark.parametrize("mode", ["body", "headers", "chunked", "second-headers"])
def test_a_dripping_server_is_cut_at_the_calls_deadline(tmp_path: Path, mode: str) -> None:
    with DripServer(mode) as server:
        client = drip_client(server.url, tmp_path)
        if mode == "second-headers":
            assert client.get("/api/trades").data == {"ok": True}  # the connection is pooled
        started = time.monotonic()
        with pytest.raises(qsc.APITimeoutError) as info:
            client.get("/api/trades", {"page": 2})
        took = time.monotonic() - started
        client.close()
    assert took < DEADLINE_S + MARGIN_S, f"{mode}: {took:.1f} s"
    assert server.dripped < 4000  # cut long before the drip ended
    message = str(info.value)
    assert "\n" not in message
    assert "did not answer in time" in message
    assert f"timeout_s={DEADLINE_S:g}" in message
    assert info.value.attempts == 1  # the deadline is the call's: no time left to retry


def test_a_dripped_write_is_cut_and_never_resent(tmp_path: Path) -> None:
    with DripServer("body") as server:
        client = drip_client(server.url, tmp_path)
        started = time.monotonic()
        with pytest.raises(qsc.APITimeoutError, match="may or may not have been applied"):
            client.put("/api/degen/config", {"quantId": 1})
        took = time.monotonic() - started
        client.close()
    assert took < DEADLINE_S + MARGIN_S
    assert server.served == 1


def test_retries_happen_within_the_deadline_and_a_wait_past_it_is_not_made(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    answers = iter([(503, {}, {}), (503, {}, {}), (200, {}, {"ok": 1})])
    service = serve(lambda s: next(answers))
    assert drip_client(service.url, tmp_path, timeout_s=30).get("/api/trades").data == {"ok": 1}
    assert service.count() == 3  # the policy's retries, well within the deadline

    # A Retry-After longer than the time left is not waited for: the 503 is reported at once.
    later = serve(lambda s: (503, {"Retry-After": "20"}, {}))
    client = drip_client(later.url, tmp_path / "2", timeout_s=5)
    sleeps: list[float] = []
    client._sender.sleep = sleeps.append
    with pytest.raises(qsc.ServerError):
        client.get("/api/trades")
    assert later.count() == 1
    assert sleeps == []
