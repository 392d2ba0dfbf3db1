"""The environment's proxy settings: read once per client, and used (through a real proxy)."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from quantscope._http.client import Client, connect, set_default_client
from quantscope.sandbox.serve import SandboxServer

_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "host"})


class _Forwarding(BaseHTTPRequestHandler):
    """A forwarding HTTP proxy: records each absolute URL asked, relays it to its origin."""

    seen: list[str]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never itself

    def do_GET(self) -> None:
        self.seen.append(self.path)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        request = urllib.request.Request(self.path, headers=headers)
        try:
            answer = self.opener.open(request, timeout=30)
        except urllib.error.HTTPError as exc:
            answer = exc
        body = answer.read()
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            if name.lower() not in _HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Handler", (_Forwarding,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_a_proxy_set_in_the_environment_before_connect_is_used(
    sandbox: SandboxServer,
    proxy: tuple[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    address, seen = proxy
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", address)
    monkeypatch.setenv("http_proxy", address)
    client = connect(sandbox.url, sandbox.keys["enterprise"], cache_dir=tmp_path, progress=False)
    try:
        first = client.get("/api/trades/stats", {"quantId": 1})
        second = client.get("/api/trades/stats", {"quantId": 2})  # the settings read once
    finally:
        set_default_client(None)
        client.close()
    assert [s.split("?")[0] for s in seen] == [f"{sandbox.url}/api/trades/stats"] * 2
    assert ["quantId=1" in seen[0], "quantId=2" in seen[1]] == [True, True]
    assert first.provenance.requests == 1
    assert second.provenance.requests == 1
    assert first.data != second.data  # each quant's own answer, relayed


def test_without_a_proxy_in_the_environment_requests_go_straight(
    sandbox: SandboxServer,
    proxy: tuple[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _address, seen = proxy
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=tmp_path, progress=False) as c:
        assert c.get("/api/trades/stats", {"quantId": 1}).provenance.requests == 1
    assert seen == []
