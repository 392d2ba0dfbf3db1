"""A loopback server that drips its answers a byte at a time, for the deadline of a call.

``DripServer(mode, interval_s)`` serves keep-alive connections; per request, by ``mode``:

* ``"body"``: the headers at once (``Content-Length`` 4,000), then the body a byte per
  ``interval_s``;
* ``"headers"``: the status line and a header a byte per ``interval_s`` (never complete);
* ``"chunked"``: ``Transfer-Encoding: chunked``, one one-byte chunk per ``interval_s``;
* ``"second-headers"``: the first request of a connection answered at once, the next ones'
  headers dripped (a connection reused from the pool).

``served`` counts requests; ``dripped`` counts bytes dripped. A body drip takes 4,000 x
``interval_s`` seconds to finish: far longer than any deadline the tests set.
"""

from __future__ import annotations

import socket
import socketserver
import threading

__all__ = ["DripServer"]

_OK = b'{"ok": true}'


class DripServer:
    def __init__(self, mode: str, interval_s: float = 0.05) -> None:
        self.mode = mode
        self.interval_s = interval_s
        self.served = 0
        self.dripped = 0
        self._stop = threading.Event()
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                server._handle(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> DripServer:
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def _drip(self, conn: socket.socket, data: bytes) -> None:
        for i in range(len(data)):
            if self._stop.wait(self.interval_s):
                return
            conn.sendall(data[i : i + 1])
            self.dripped += 1

    def _handle(self, conn: socket.socket) -> None:
        pending = b""
        on_this_connection = 0
        try:
            while not self._stop.is_set():
                while b"\r\n\r\n" not in pending:
                    got = conn.recv(65536)
                    if not got:
                        return
                    pending += got
                head, _, pending = pending.partition(b"\r\n\r\n")
                length = _content_length(head)
                while len(pending) < length:
                    pending += conn.recv(65536)
                pending = pending[length:]
                self.served += 1
                on_this_connection += 1
                self._answer(conn, on_this_connection)
        except OSError:
            return

    def _answer(self, conn: socket.socket, nth: int) -> None:
        mode = self.mode
        if mode == "second-headers":
            mode = "ok" if nth == 1 else "headers"
        if mode == "ok":
            conn.sendall(_head(len(_OK)) + _OK)
        elif mode == "body":
            conn.sendall(_head(4000))
            self._drip(conn, b'{"pad": "' + b"x" * 3986 + b'"}')
        elif mode == "headers":
            # a header line that never ends (http.client allows 65,536 bytes a line)
            self._drip(conn, b"HTTP/1.1 200 OK\r\nX-Pad: " + b"y" * 60000)
        elif mode == "chunked":
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            while not self._stop.wait(self.interval_s):
                conn.sendall(b"1\r\n \r\n")
                self.dripped += 1
        else:  # pragma: no cover
            raise ValueError(mode)


def _head(length: int) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(length).encode() + b"\r\n\r\n"
    )


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip() or 0)
    return 0
