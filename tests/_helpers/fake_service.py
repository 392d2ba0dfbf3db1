"""A tiny scripted HTTP service on loopback, for the faults the sandbox cannot produce.

``FakeService`` answers each request with ``handler(seen)``; the ``serve`` fixture (conftest)
starts one per call with ``start_fake``. ``fake_client`` is a quantscope Client on it with fast
retries; ``ok`` is a 200 answer. ``script_client`` is a Client answered in-process by a
``quantscope.testing`` handler (no socket): the simpler choice for faults a ``Reply`` or a raised
requests exception can state; the loopback server stays for what needs a real socket (drips,
a connection dropped mid-write, proxies).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from quantscope._config import RetryPolicy
from quantscope._http.client import Client
from quantscope.testing import Handler

KEY = "local-test-key-0123456789"
FAST = RetryPolicy(max_retries=3, backoff_base_s=0.001, backoff_max_s=0.01)
DROP = "drop"  # close the connection without answering
HANG = "hang"  # answer after the client's timeout
CUT = "cut"  # a 200 whose body stops half-way (Content-Length promises more), then closes


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


@dataclass
class FakeService:
    """Answers each request with ``handler(seen)`` -> (status, headers, body) | DROP | HANG.

    Every answer carries X-RateLimit-* for a daily ``limit``; ``remaining`` goes down by one per
    request, as the contract counts (429 excepted).
    """

    handler: Callable[[Seen], Any]
    limit: int = 100
    remaining: int = 100
    reset_at: float = field(default_factory=lambda: time.time() // 86400 * 86400 + 86400)
    seen: list[Seen] = field(default_factory=list)
    url: str = ""

    def count(self, path: str | None = None) -> int:
        return sum(1 for s in self.seen if path is None or s.path == path)


def handler_class(service: FakeService) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            seen = Seen(self.command, parts.path, dict(parse_qsl(parts.query)), dict(self.headers))
            service.seen.append(seen)
            answer = service.handler(seen)
            if answer == DROP:
                self.close_connection = True
                self.connection.close()
                return
            if answer == CUT:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "4000")
                self.end_headers()
                self.wfile.write(b'{"trades": [' + b'{"id": 1},' * 100)
                self.wfile.flush()
                self.close_connection = True
                self.connection.close()
                return
            if answer == HANG:
                time.sleep(0.5)
                answer = (200, {}, {"late": True})
            status, headers, body = answer
            if status != 429:
                service.remaining = max(0, service.remaining - 1)
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-RateLimit-Limit", str(service.limit))
            self.send_header("X-RateLimit-Remaining", str(service.remaining))
            self.send_header("X-RateLimit-Reset", str(int(service.reset_at)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = _serve

    return Handler


def start_fake(service: FakeService) -> ThreadingHTTPServer:
    """Serve ``service`` on a free loopback port in a daemon thread; sets ``service.url``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class(service))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    service.url = f"http://127.0.0.1:{server.server_port}"
    return server


def ok(body: Any = None) -> tuple[int, dict[str, str], Any]:
    return 200, {}, {"ok": True} if body is None else body


def fake_client(service: FakeService, tmp_path: Path, **kwargs: Any) -> Client:
    """A quantscope Client on ``service`` with a cache in ``tmp_path`` and fast retries."""
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("progress", False)
    return Client(service.url, KEY, cache_dir=str(tmp_path), **kwargs)


def script_client(handler: Handler, tmp_path: Path, **kwargs: Any) -> Client:
    """A quantscope Client on ``http://fake`` answered in-process by ``handler``, with a cache
    in ``tmp_path`` and fast retries."""
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("progress", False)
    return Client("http://fake", KEY, cache_dir=str(tmp_path), transport=handler, **kwargs)
