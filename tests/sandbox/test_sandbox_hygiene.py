"""The sandbox against a hostile client: bad ids, exact limits, HTTP framing, stalled sockets.

Issue 14's defects, one test each: recommendation ids out of range (a 500 for ids ≥ 2^63),
``search`` over 200 characters, ``"apply": null``, the 405's ``Allow`` header, the journal
switch racing the first requests, ``Content-Length`` with ``Transfer-Encoding`` (request
smuggling), a 1 MB URL, half-sent and idle connections.
"""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from typing import Any

import pytest
import requests
from _helpers import assert_error

from quantscope.sandbox import httpguard
from quantscope.sandbox.datadir import WorldInfo, copy_world
from quantscope.sandbox.serve import SandboxServer
from quantscope.sandbox.store import BUSY_TIMEOUT_S, Store

APPLY = "/api/refine-eval/recs/{}/apply"


def _host_port(server: SandboxServer) -> tuple[str, int]:
    host, _, port = server.url.removeprefix("http://").rpartition(":")
    return host, int(port)


def raw_exchange(server: SandboxServer, data: bytes, wait: float = 5.0) -> bytes:
    """Send ``data`` on a fresh connection; everything the server sends until it closes."""
    with socket.create_connection(_host_port(server), timeout=wait) as sock:
        with contextlib.suppress(OSError):  # it may close while a huge request is being sent
            sock.sendall(data)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return received


def _body(response: bytes) -> bytes:
    return response.partition(b"\r\n\r\n")[2]


# --- 5xx on bad input, and the contract's 422s -------------------------------------------------


@pytest.mark.parametrize("rec_id", [str(2**63), str(2**64 + 5), "0", "-1"])
def test_recommendation_ids_out_of_range_are_422(sandbox: Any, api: Any, rec_id: str) -> None:
    assert_error(api("enterprise").post(APPLY.format(rec_id)), 422, "invalid_parameter", "id")


@pytest.mark.parametrize("path", ["/api/trades", "/api/eval-results", "/api/alpha-signals"])
def test_search_is_at_most_200_characters(sandbox: Any, api: Any, path: str) -> None:
    session = api("enterprise")
    assert session.get(path, params={"search": "x" * 200}).status_code == 200
    assert_error(
        session.get(path, params={"search": "x" * 201}), 422, "invalid_parameter", "search"
    )


def test_analyze_refuses_a_null_apply(fresh_sandbox: Any, api: Any) -> None:
    session = api("enterprise", fresh_sandbox())
    body = {"apply": None, "quantId": 1}
    assert_error(session.post("/api/refine-eval/analyze", json=body), 422, "invalid_body", "apply")


def test_analyze_takes_integers_written_with_a_zero_fraction(fresh_sandbox: Any, api: Any) -> None:
    session = api("enterprise", fresh_sandbox())
    answer = session.post("/api/refine-eval/analyze", json={"quantId": 1.0, "apply": "false"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["recommendationsApplied"] == 0
    assert_error(
        session.post("/api/refine-eval/analyze", json={"quantId": 0}),
        422,
        "invalid_body",
        "quantId",
    )


def test_a_playbook_put_takes_a_quant_id_written_with_a_zero_fraction(
    fresh_sandbox: Any, api: Any
) -> None:
    session = api("enterprise", fresh_sandbox())
    config = session.get("/api/degen/config", params={"quantId": 1}).json()
    entry = config[0]["categories"]["Security"][0]["configTypes"]["BUYING"]
    change = {"configId": entry["configIdsByInterval"]["noTime"], "field": "weight", "newValue": 3}
    answer = session.put("/api/degen/config", json={"quantId": 1.0, "newConfigs": [change]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["updatedConfigs"][0]["weight"] == 3


def test_405_lists_every_method_served_on_the_path(sandbox: Any, api: Any) -> None:
    session = api("enterprise")
    answer = session.delete("/api/degen/config")
    assert_error(answer, 405, "method_not_allowed")
    assert answer.headers["Allow"] == "GET, PUT"
    assert session.get(APPLY.format(1)).headers["Allow"] == "POST"


def test_openapi_states_the_enforced_text_rules(sandbox: Any) -> None:
    doc = requests.get(sandbox.url + "/openapi.json", timeout=60).json()
    trades = {p["name"]: p["schema"] for p in doc["paths"]["/api/trades"]["get"]["parameters"]}
    assert trades["search"]["anyOf"][0]["maxLength"] == 200
    assert trades["chain"]["anyOf"][0]["pattern"].startswith("^(?:[Ss][Oo]")
    assert "pattern" in trades["startDate"]["anyOf"][0]
    apply = doc["paths"]["/api/refine-eval/recs/{id}/apply"]["post"]["parameters"][0]["schema"]
    assert (apply["minimum"], apply["maximum"]) == (1, 2**63 - 1)
    analyze = doc["components"]["schemas"]["AnalyzeBody"]["properties"]
    assert analyze["quantId"]["anyOf"][0]["minimum"] == 1
    assert analyze["quantId"]["anyOf"][0]["maximum"] == 2**63 - 1  # not the float 2^63
    assert {"type": "null"} not in analyze["apply"]["anyOf"]


@pytest.mark.parametrize(
    ("param", "value"),
    [("startDate", "2026-02-29"), ("startDate", "0000-01-01"), ("chain", "ſolana"), ("chain", "")],
)
def test_text_the_schema_refuses_is_refused(sandbox: Any, api: Any, param: str, value: str) -> None:
    assert_error(
        api("enterprise").get("/api/trades", params={param: value}), 422, "invalid_parameter"
    )


def test_extreme_dates_answer_instead_of_failing(sandbox: Any, api: Any) -> None:
    window = {"timeFrom": "0001-01-01T00:00:00+23:59", "timeTo": "0001-01-02"}
    body = api("enterprise").ok("/api/eval-timeseries", **window)
    assert body["timeseries"][0]["timestamp"] == "0001-01-01T00:00:00.000Z"
    assert body["timeseries"][0]["evaluations"] == 0


# --- the database's first concurrent requests ---------------------------------------------------


def test_a_store_switches_to_wal_before_serving_and_waits_for_locks(
    sandbox_world: WorldInfo, tmp_path: Any
) -> None:
    info = copy_world(sandbox_world, tmp_path)
    with closing(sqlite3.connect(info.db_path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
    store = Store(info.db_path)
    with closing(sqlite3.connect(info.db_path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.connect().execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_S * 1000


@pytest.mark.slow  # five fresh servers
def test_first_concurrent_requests_to_a_fresh_world_never_fail(
    sandbox_world: WorldInfo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for round_ in range(5):
        info = copy_world(sandbox_world, tmp_path_factory.mktemp(f"fresh{round_}"))
        with SandboxServer(info) as server:
            key = {"X-API-Key": info.keys["enterprise"]}

            def hit(i: int, url: str = server.url, headers: dict[str, str] = key) -> int:
                path = "/api/trades/stats" if i % 2 else "/api/degen/config?quantId=1"
                return requests.get(url + path, headers=headers, timeout=60).status_code

            with ThreadPoolExecutor(16) as pool:
                assert set(pool.map(hit, range(32))) == {200}


# --- HTTP framing and stalled connections -------------------------------------------------------


def test_content_length_with_transfer_encoding_is_refused_and_nothing_after_it_runs(
    sandbox: Any,
) -> None:
    key = sandbox.keys["enterprise"].encode()
    smuggled = b"GET /api/trades/stats HTTP/1.1\r\nHost: x\r\nX-API-Key: " + key + b"\r\n\r\n"
    request = (
        b"POST /api/refine-eval/analyze HTTP/1.1\r\nHost: x\r\nX-API-Key: " + key + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: 60\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled
    )
    answer = raw_exchange(sandbox, request)
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # the smuggled request never ran
    assert b'"code":"bad_request"' in _body(answer)
    assert b"connection: close" in answer.lower()


@pytest.mark.parametrize("size", [10_000, 1_000_000])
def test_an_over_long_url_is_414_with_the_json_error_body(sandbox: Any, size: int) -> None:
    request = b"GET /api/trades?search=" + b"a" * size + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    answer = raw_exchange(sandbox, request)
    assert answer.startswith(b"HTTP/1.1 414 "), answer[:200]
    assert b'"code":"uri_too_long"' in _body(answer)


def test_a_malformed_request_gets_the_json_error_body(sandbox: Any) -> None:
    answer = raw_exchange(sandbox, b"GET /health HTTP/1.1\r\nHost x\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert b'"code":"bad_request"' in _body(answer)


@pytest.fixture
def impatient(fresh_sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> SandboxServer:
    """A server that gives a request 0.5 s to arrive and holds at most 20 connections."""
    monkeypatch.setattr(httpguard.GuardedH11Protocol, "read_timeout_s", 0.5)
    monkeypatch.setattr(httpguard.GuardedH11Protocol, "max_connections", 20)
    return fresh_sandbox()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


@pytest.mark.parametrize("sent", [b"", b"GET /health HTTP/1.1\r\nHost: x\r\n"])
def test_idle_and_half_sent_requests_are_closed(impatient: SandboxServer, sent: bytes) -> None:
    with socket.create_connection(_host_port(impatient)) as sock:
        sock.sendall(sent)
        started = time.monotonic()
        assert _closed_within(sock, 5.0)
        assert time.monotonic() - started < 3.0


def _dripped_until_closed(sock: socket.socket, request: bytes) -> bool:
    """Send ``request`` a byte every 50 ms; True once the server closed the connection."""
    try:
        for byte in request:
            sock.sendall(bytes([byte]))
            time.sleep(0.05)
            if _closed_within(sock, 0.001):
                return True
    except OSError:  # the server closed it while a byte was on its way
        return True
    return False


def test_a_slow_drip_cannot_keep_a_connection(impatient: SandboxServer) -> None:
    with socket.create_connection(_host_port(impatient)) as sock:
        started = time.monotonic()
        assert _dripped_until_closed(
            sock, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
        )
        assert time.monotonic() - started < 3.0


def test_idle_connections_cannot_starve_health(impatient: SandboxServer) -> None:
    idle = [socket.create_connection(_host_port(impatient)) for _ in range(60)]
    try:
        for _ in range(3):
            answer = requests.get(impatient.url + "/health", timeout=5)
            assert answer.json()["status"] == "ok"
    finally:
        for sock in idle:
            sock.close()


def test_idle_connections_write_no_log(impatient: SandboxServer, caplog: Any) -> None:
    caplog.set_level("DEBUG")
    idle = [socket.create_connection(_host_port(impatient)) for _ in range(40)]
    time.sleep(1.5)
    for sock in idle:
        sock.close()
    assert [r.getMessage() for r in caplog.records if r.levelname != "DEBUG"] == []
