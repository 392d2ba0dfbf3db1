"""The sandbox bounds what it holds: request bodies per route, and connections stuck in a body.

Issue 20's observations, one test each: a 100 MB PUT refused 403 was still read and parsed
(the server grew by 276 MB), a chunked body had no end, and connections whose head was complete
but whose body dripped counted as busy, so a few hundred of them refused new requests and
``/health``. The heavy versions (8 x 100 MB, 300 slow bodies) are in tests/reliability.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

import pytest
import requests
from _helpers import assert_error

from quantscope.sandbox import bodylimit, httpguard
from quantscope.sandbox.serve import SandboxServer

CONFIG = "/api/degen/config"
ANALYZE = "/api/refine-eval/analyze"
APPLY = "/api/refine-eval/recs/1/apply"


def _host_port(server: SandboxServer) -> tuple[str, int]:
    host, _, port = server.url.removeprefix("http://").rpartition(":")
    return host, int(port)


def _head(method: str, path: str, key: str, length: int | None) -> bytes:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nX-API-Key: {key}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\n\r\n"
    ).encode("ascii")


def _read_answer(sock: socket.socket, wait: float) -> bytes:
    """Everything the server sends within ``wait`` seconds or until it closes."""
    sock.settimeout(wait)
    received = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def _error(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower(), head
    error: dict[str, Any] = json.loads(body)["error"]
    return error


# --- the limits themselves ---------------------------------------------------------------


def test_each_write_route_has_its_own_limit() -> None:
    put, analyze = bodylimit.limit_for("PUT", CONFIG), bodylimit.limit_for("POST", ANALYZE)
    assert put == 256 * 1024
    assert analyze == 4 * 1024
    assert bodylimit.limit_for("POST", APPLY) == bodylimit.DEFAULT_LIMIT == 1024
    assert bodylimit.limit_for("GET", "/api/trades") == bodylimit.DEFAULT_LIMIT


def test_the_largest_legitimate_playbook_write_fits_with_headroom(
    fresh_sandbox: Any, api: Any
) -> None:
    """Every field of every entry of a playbook in one PUT: served, and 4x under the limit."""
    server = fresh_sandbox()
    session = api("enterprise", server)
    playbook = session.ok(CONFIG, quantId=1)
    changes = []
    for element in playbook:
        for criteria in element["categories"].values():
            for criterion in criteria:
                for config_type in criterion["configTypes"].values():
                    for interval, config_id in config_type["configIdsByInterval"].items():
                        for field, value in (
                            ("threshold", config_type["thresholds"][interval]),
                            ("weight", config_type["weights"][interval]),
                            ("required", config_type["requireds"][interval]),
                            ("disabled", config_type["disableds"][interval]),
                            ("extraInfo", config_type["extraInfos"][interval]),
                        ):
                            changes.append(
                                {"configId": config_id, "field": field, "newValue": value}
                            )
    body = json.dumps({"quantId": 1, "newConfigs": changes}).encode()
    assert len(changes) == 540
    assert 4 * len(body) <= bodylimit.limit_for("PUT", CONFIG), len(body)
    answer = session.put(CONFIG, data=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text[:300]
    assert len(answer.json()["updatedConfigs"]) == 108


# --- 413 before the body is read ---------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "plan"),
    [
        ("PUT", CONFIG, "enterprise"),
        ("PUT", CONFIG, "basic"),  # a plan without playbook writes: 413 all the same, unread
        ("POST", ANALYZE, "enterprise"),
        ("POST", APPLY, "enterprise"),
        ("GET", "/api/trades", "enterprise"),
        ("GET", "/health", "enterprise"),
    ],
)
def test_a_declared_oversized_body_is_413_before_any_byte_of_it(
    sandbox: SandboxServer, method: str, path: str, plan: str
) -> None:
    limit = bodylimit.limit_for(method, path)
    with socket.create_connection(_host_port(sandbox)) as sock:
        sock.sendall(_head(method, path, sandbox.keys[plan], 100_000_000))
        answer = _read_answer(sock, 5.0)  # not one byte of the body sent
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    error = _error(answer)
    assert (error["status"], error["code"]) == (413, "payload_too_large")
    assert f"{limit:,} bytes" in error["message"]
    assert path in error["message"]


def test_a_body_at_the_limit_is_read(sandbox: SandboxServer, api: Any) -> None:
    limit = bodylimit.limit_for("POST", ANALYZE)
    body = b'{"quantId": 999999}'
    body += b" " * (limit - len(body))
    answer = api("enterprise").post(
        ANALYZE, data=body, headers={"Content-Type": "application/json"}
    )
    assert_error(answer, 404, "not_found", "quantId")  # read and parsed: the quant is unknown
    over = api("enterprise").post(
        ANALYZE, data=body + b" ", headers={"Content-Type": "application/json"}
    )
    assert_error(over, 413, "payload_too_large", None)


def test_a_chunked_body_is_cut_off_at_the_limit(sandbox: SandboxServer) -> None:
    limit = bodylimit.limit_for("PUT", CONFIG)
    chunk = b"x" * 65536
    sent = 0
    with socket.create_connection(_host_port(sandbox)) as sock:
        sock.sendall(_head("PUT", CONFIG, sandbox.keys["enterprise"], None))
        with contextlib.suppress(OSError):  # the server closes once the limit is passed
            while sent < 40 * limit:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        answer = _read_answer(sock, 5.0)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert _error(answer)["code"] == "payload_too_large"
    assert sent < 40 * limit  # it stopped reading: the rest could not be sent


# --- connections stuck in a slow body ----------------------------------------------------


@pytest.fixture
def crowded(fresh_sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> SandboxServer:
    """A server that holds at most 20 connections and gives a request 30 s to arrive."""
    monkeypatch.setattr(httpguard.GuardedH11Protocol, "read_timeout_s", 30.0)
    monkeypatch.setattr(httpguard.GuardedH11Protocol, "max_connections", 20)
    return fresh_sandbox()


def test_connections_stuck_in_a_body_cannot_starve_new_requests(crowded: SandboxServer) -> None:
    key = crowded.keys["enterprise"]
    stuck = []
    try:
        for _ in range(40):  # twice the cap; each sends its head and 2 of 1,000 body bytes
            sock = socket.create_connection(_host_port(crowded))
            sock.sendall(_head("PUT", CONFIG, key, 1000) + b"{ ")
            stuck.append(sock)
        time.sleep(0.2)
        answered = []
        for path in ("/health", "/api/trades/stats?quantId=1", "/health"):
            answer = requests.get(crowded.url + path, headers={"X-API-Key": key}, timeout=5)
            answered.append(answer.status_code)
        assert answered == [200, 200, 200]
    finally:
        for sock in stuck:
            sock.close()


def test_a_slow_body_is_closed_at_the_read_deadline(
    fresh_sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(httpguard.GuardedH11Protocol, "read_timeout_s", 0.5)
    server = fresh_sandbox()
    with socket.create_connection(_host_port(server)) as sock:
        sock.sendall(_head("PUT", CONFIG, server.keys["enterprise"], 1000) + b"{")
        started = time.monotonic()
        answer = _read_answer(sock, 5.0)
        assert time.monotonic() - started < 3.0
    assert answer == b""  # closed without an answer, as a stalled head is


# --- uvicorn's private protocol: a verified range, and a fallback ------------------------


@pytest.mark.parametrize("version", ["0.29.0", "0.54.0", "0.54.1"])
def test_verified_uvicorn_versions_get_the_guarded_protocol(version: str) -> None:
    assert httpguard.protocol_for(version) is httpguard.GuardedH11Protocol


@pytest.mark.parametrize("version", ["0.55.0", "1.0.0", "0.28.1", "dev"])
def test_another_uvicorn_falls_back_to_plain_h11_with_a_warning(
    version: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert httpguard.protocol_for(version) == "h11"
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert version in caplog.records[0].getMessage()


def test_the_fallback_still_serves_and_limits_bodies(
    fresh_sandbox: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "__version__", "9.0.0")
    server = fresh_sandbox()
    assert requests.get(server.url + "/health", timeout=5).json()["status"] == "ok"
    with socket.create_connection(_host_port(server)) as sock:
        sock.sendall(_head("PUT", CONFIG, server.keys["enterprise"], 100_000_000))
        answer = _read_answer(sock, 5.0)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert "9.0.0" in caplog.text


# --- the OpenAPI document states the limits and the rules ------------------------------


def test_openapi_states_413_and_the_rules_across_parameters(sandbox: SandboxServer) -> None:
    paths = requests.get(sandbox.url + "/openapi.json", timeout=60).json()["paths"]
    for path, operations in paths.items():
        for method, operation in operations.items():
            assert {"400", "413", "414"} <= set(operation["responses"]), (method, path)
    described = paths["/api/trades"]["get"]["responses"]["413"]["description"]
    for method, route in bodylimit.BODY_LIMITS:
        assert f"{method} {route} {bodylimit.BODY_LIMITS[method, route]:,} bytes" in described
    assert f"any other request {bodylimit.DEFAULT_LIMIT:,}" in described
    rules = {
        ("/api/trades", "get"): "`startDate` <= `endDate`",
        ("/api/eval-results", "get"): "`timeFrom` <= `timeTo`",
        ("/api/eval-count", "get"): "`timeFrom` <= `timeTo`",
        ("/api/eval-timeseries", "get"): "more than 1,000 buckets",
        ("/api/refine-eval/analyze", "post"): "fewer closed trades than `minCompletedTrades`",
    }
    for (path, method), rule in rules.items():
        assert rule in paths[path][method]["responses"]["422"]["description"], path
