"""The sandbox's HTTP connection hygiene: read deadlines, a connection cap, JSON protocol errors.

uvicorn's h11 protocol (uvicorn 0.54, h11 0.16) arms its keep-alive timer only after a response
is complete: a connection that never sends a byte, or sends half a request, is held open forever
(slowloris), and a thousand such connections exhaust the process's file descriptors until
``/health`` times out. Its protocol errors (a request head over h11's 16 KB limit, a malformed
request line) are answered with a plain-text ``Invalid HTTP request received.``.

``GuardedH11Protocol`` (a subclass, passed to uvicorn as ``http=``) adds:

* a **read deadline**: a request must arrive whole (head and body) within ``READ_TIMEOUT_S`` of
  the connection opening or of the previous response; otherwise the connection is closed
  quietly (one debug line, never a warning per connection);
* a **connection cap**: above ``MAX_CONNECTIONS`` open connections, those that have waited
  longest on their client are closed to make room: idle ones (between requests) and ones still
  sending a request, its head or its body (a head can be complete while the body drips). Only
  a connection whose request has arrived whole and is being answered is never evicted; when
  every other one is, the new connection is refused. So neither idle connections nor slow
  bodies can starve new clients and ``/health``;
* the contract's **JSON error body** for protocol errors: 414 ``uri_too_long`` for a request line
  longer than ``MAX_REQUEST_LINE`` bytes, 400 ``bad_request`` for any other malformed request.

It reads uvicorn's private h11 protocol (``self.conn``, ``self.cycle``, ``self.connections``,
``handle_events``), verified on uvicorn 0.29 to 0.54: pyproject.toml caps the ``[sandbox]``
extra below 0.55, and ``protocol_for(uvicorn.__version__)`` falls back to uvicorn's own ``h11``
(public settings only: ``timeout_keep_alive``, the body limits of the application) with one
warning on any other version, so a newer uvicorn still serves, without these guards.

Ambiguous framing (``Content-Length`` with ``Transfer-Encoding``) and URLs over ``MAX_URL`` bytes
that h11 still parses are refused by the application's gate (app.py), which answers with
``Connection: close`` so nothing after them on the connection is ever executed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from quantscope.sandbox.errors import error_body
from quantscope.sandbox.versions import Span, within

logger = logging.getLogger("quantscope.sandbox.http")

READ_TIMEOUT_S = 10.0  # a whole request must arrive within this after connect / last response
MAX_CONNECTIONS = 256  # open connections; far below the usual 1,024 file descriptors
MAX_URL = 8192  # bytes of path and query string
MAX_REQUEST_LINE = MAX_URL + 64  # method, URL and version


VERIFIED_UVICORN: Span = ((0, 29), (0, 55))  # [from, to): the versions whose internals this reads


def protocol_for(version: str) -> type[H11Protocol] | str:
    """``GuardedH11Protocol`` on a verified uvicorn version, else uvicorn's plain ``"h11"``."""
    if within(version, VERIFIED_UVICORN):
        return GuardedH11Protocol
    logger.warning(
        "uvicorn %s is not a version the sandbox's connection guard was verified on (0.29 to "
        "0.54): serving with uvicorn's own h11, without read deadlines or the connection cap",
        version,
    )
    return "h11"


def json_error_response(status: int, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response carrying the contract's error body, closing the connection."""
    body = orjson.dumps(error_body(status, code, message))
    reason = {400: "Bad Request", 414: "URI Too Long"}.get(status, "Error")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a read deadline, a connection cap and JSON protocol errors."""

    read_timeout_s = READ_TIMEOUT_S
    max_connections = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_since = 0.0  # loop time the connection began waiting for this request
        self._line_bytes = 0  # bytes of the current request line seen so far
        self._line_done = False

    # --- the read deadline -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn's H11Protocol's own signature
        super().connection_made(transport)
        self._make_room()
        self._arm_deadline()

    def _arm_deadline(self) -> None:
        self._cancel_deadline()
        self._line_bytes, self._line_done = 0, False
        self._waiting_since = self.loop.time()
        self._deadline = self.loop.call_later(self.read_timeout_s, self._on_deadline)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _on_deadline(self) -> None:
        self._deadline = None
        if not self.transport.is_closing() and self.conn.their_state is not h11.DONE:
            logger.debug("closing a connection that sent no whole request in time")
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE and not self._line_done:
            end = data.find(b"\n")
            self._line_bytes += len(data) if end < 0 else end
            self._line_done = end >= 0
            if self._line_bytes > MAX_REQUEST_LINE:
                self._refuse(414, "uri_too_long", f"the URL is longer than {MAX_URL} bytes")
                return
        super().data_received(data)
        if self.conn.their_state is h11.DONE:  # the whole request is in: the app has it
            self._cancel_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_deadline()  # the next request, on this kept-alive connection

    # --- the connection cap ------------------------------------------------------------------

    def _waiting_on_client(self) -> bool:
        """True unless the server is working on a request it has whole.

        Idle between requests, or still receiving one (its head, or its body: a head can be
        complete while the body drips), the connection waits on its client and may be evicted.
        """
        if self.cycle is None or self.cycle.response_complete:
            return True
        return self.conn.their_state is not h11.DONE

    def _make_room(self) -> None:
        excess = len(self.connections) - self.max_connections
        if excess <= 0:
            return
        # the connections waiting on their client longest first, idle or stuck mid-request
        waiting = sorted(
            (
                other
                for other in self.connections
                if other is not self
                and isinstance(other, GuardedH11Protocol)
                and other._waiting_on_client()
            ),
            key=lambda other: other._waiting_since,
        )
        for other in waiting[:excess]:
            other.transport.close()
            self.connections.discard(other)
            excess -= 1
        if excess > 0:  # every other connection has a whole request in progress: refuse this one
            self.transport.close()

    # --- protocol errors as the contract's JSON ----------------------------------------------

    def _refuse(self, status: int, code: str, message: str) -> None:
        self._cancel_deadline()
        if not self.transport.is_closing():
            self.transport.write(json_error_response(status, code, message))
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, "bad_request", f"malformed HTTP request ({msg.rstrip('.')})")
