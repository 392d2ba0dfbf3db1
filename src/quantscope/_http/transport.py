"""The wire under the HTTP cache: whole bodies read against a deadline, the key scrubbed from
every answer, and credentials kept to the configured origin.

* **A deadline per call.** requests' ``timeout`` bounds each socket operation, so a server
  that drips a body (or its headers) a byte at a time holds a call for as long as it likes.
  ``deadline(seconds)`` sets the deadline of a call (the client sets ``timeout_s`` around all
  its attempts); ``WholeBodyAdapter`` bounds each send by it over connect, headers and body
  together: every socket operation waits at most the time left, and a watchdog
  (``_Watchdog``: one daemon thread for the process) shuts the connection's socket down when
  the deadline passes, which ends a read blocked on a dripping server. The send then raises
  ``DeadlineExceeded`` (a ``requests.Timeout``). Without a call deadline, the ``timeout``
  requests passes is the deadline of that send.
* **The key is scrubbed** from every answer's body and headers as it is read (``scrub_key``,
  ``_secret``): the literal key and every JSON spelling of it, before requests-cache stores
  the answer or anything decodes it.
* **Credentials go only to the configured origin** (scheme, host, port). requests strips only
  ``Authorization`` when a redirect leaves the host and re-sends ``X-API-Key``;
  ``guard_redirect`` (called by the session's ``rebuild_auth``) strips every credential
  header from a request redirected to another origin and refuses the redirect with
  ``RedirectRefusedError``, naming both origins.

The deadline reaches the header phase through the connection classes of the adapter's pools
(``pool_classes_by_scheme``: a connection registers its socket with the send's watch when it
waits for the answer). Through a SOCKS proxy, whose pools are urllib3's own, the watch starts
with the body; per-operation timeouts still bound the rest.
"""

from __future__ import annotations

import heapq
import io
import itertools
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests import PreparedRequest, Response
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from quantscope._errors import RedirectRefusedError
from quantscope._secret import KEY_HEADERS, scrubber

__all__ = [
    "DeadlineExceeded",
    "WholeBodyAdapter",
    "deadline",
    "guard_redirect",
    "origin_of",
    "scrub_key",
    "time_left",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``, lower-cased, with the scheme's default port."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme, 0)


def _shown(origin: tuple[str, str, int]) -> str:
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    default = _DEFAULT_PORTS.get(scheme) == port
    return f"{scheme}://{host}" if default else f"{scheme}://{host}:{port}"


def guard_redirect(prepared: PreparedRequest, response: Response, origin: str | None) -> None:
    """Before a redirect is followed: a request leaving ``origin`` (the configured service's;
    None: the redirected request's own) loses every credential header, and the redirect is
    refused (``RedirectRefusedError``, naming both origins and what to do).
    """
    start = origin_of(origin or str(response.request.url or ""))
    target = origin_of(str(prepared.url or ""))
    if target == start:
        return
    for name in [n for n in prepared.headers if n.lower() in KEY_HEADERS]:
        del prepared.headers[name]
    method = response.request.method or "GET"
    path = urlsplit(str(response.request.url or "")).path
    raise RedirectRefusedError(
        f"{method} {path}: the service at {_shown(start)} answered {response.status_code}, a "
        f"redirect to another origin ({_shown(target)}); quantscope sends the API key only to "
        f"the configured origin, so it did not follow. If the service has moved there, set "
        f"QUANTSCOPE_URL (or connect(url=...)) to {_shown(target)}",
        origin=_shown(start),
        target=_shown(target),
        status_code=response.status_code,
    )


def scrub_key(body: bytes, response: Response, request: PreparedRequest) -> bytes:
    """``body`` with the request's API key replaced by ``***`` in every spelling a JSON
    decoder reads as the key (``_secret``), and the same in the answer's headers: whatever a
    service echoes (an error page quoting the request, a debug field, an escaped string), the
    key never reaches the cache file, a frame or a message. One linear pass for a body without
    escapes; figures in docs/reliability.md.
    """
    key = request.headers.get("X-API-Key")
    if not key:
        return body
    secret = scrubber(key if isinstance(key, str) else key.decode("latin-1"))
    for name, value in list(response.headers.items()):
        scrubbed = secret.scrub_text(value)
        if scrubbed != value:
            response.headers[name] = scrubbed
    cleaned = secret.scrub_bytes(body)
    if cleaned is not body and "Content-Length" in response.headers:
        response.headers["Content-Length"] = str(len(cleaned))
    return cleaned


# --- the deadline of a call ---------------------------------------------------------------


class DeadlineExceeded(requests.exceptions.Timeout):
    """The call's deadline passed before the answer was complete (connect, headers, body)."""


_CALL = threading.local()


@contextmanager
def deadline(seconds: float) -> Iterator[float]:
    """Run a call (every attempt and wait of it) under a deadline ``seconds`` from now; yields
    the deadline on ``time.monotonic``'s clock. Nested calls keep the earlier deadline.
    """
    outer = getattr(_CALL, "deadline", None)
    mine = time.monotonic() + seconds
    _CALL.deadline = mine if outer is None else min(outer, mine)
    try:
        yield _CALL.deadline
    finally:
        _CALL.deadline = outer


def time_left() -> float | None:
    """Seconds left before the current call's deadline (0 when passed); None without one."""
    end = getattr(_CALL, "deadline", None)
    return None if end is None else max(0.0, end - time.monotonic())


class _Watch:
    """One send's deadline: what to shut down when it passes, and whether it did."""

    def __init__(self, end: float) -> None:
        self.end = end
        self.fired = False
        self._active = True
        self._stops: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    def add(self, stop: Callable[[], None]) -> None:
        with self._lock:
            if self._active:
                self._stops.append(stop)
                return
        stop()  # the deadline already passed: stop at once

    def fire(self) -> None:
        with self._lock:
            if not self._active:
                return
            self._active, self.fired = False, True
            stops = list(self._stops)
        for stop in stops:
            # already closed, or (urllib3's response.shutdown) already back in the pool
            with suppress(OSError, RuntimeError, ValueError):
                stop()

    def finish(self) -> None:
        with self._lock:
            self._active = False
            self._stops.clear()


class _Watchdog:
    """One daemon thread firing the watches whose deadline passed (started on first use).

    A send costs one heap push under a lock; the thread wakes only for the earliest
    deadline, and watches that finished in time are dropped when their turn comes.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Watch]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, end: float) -> _Watch:
        one = _Watch(end)
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="quantscope-deadlines", daemon=True
                )
                self._thread.start()
            earliest = not self._heap or end < self._heap[0][0]
            heapq.heappush(self._heap, (end, next(self._order), one))
            if earliest:
                self._wake.notify()
        return one

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap:
                    self._wake.wait()
                end, _, one = self._heap[0]
                wait = end - time.monotonic()
                if wait > 0:
                    self._wake.wait(wait)
                    continue
                heapq.heappop(self._heap)
            one.fire()


_WATCHDOG = _Watchdog()
_SEND = threading.local()  # the watch of the send running on this thread


def _shutdown(sock: Any) -> Callable[[], None]:
    def stop() -> None:
        # The plain socket's shutdown, also for TLS: ends a read blocked in another thread
        # without touching the TLS object that read is using.
        if isinstance(sock, socket.socket):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        else:
            sock.shutdown(socket.SHUT_RDWR)

    return stop


class _WatchedResponse:
    """Mixin of the pools' connections: waiting for an answer registers the connection's
    socket with the current send's watch, so the deadline also bounds headers that drip.
    """

    sock: Any

    def getresponse(self) -> Any:
        watch = getattr(_SEND, "watch", None)
        if watch is not None and self.sock is not None:
            watch.add(_shutdown(self.sock))
        return super().getresponse()  # type: ignore[misc]  # the pool's connection class follows in the MRO


class _HTTPConnection(_WatchedResponse, HTTPConnection):
    pass


class _HTTPSConnection(_WatchedResponse, HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


class WholeBodyAdapter(HTTPAdapter):
    """Reads an answer's body in one call instead of requests' 10 kB chunks, within the
    call's deadline, and scrubs the key from it.

    A page of 1,000 evaluations is 2.4 MB: requests' ``Response.content`` pulled it through
    urllib3's Python layers in ~230 reads, a quarter of a cold ``load_evaluations``'s client CPU
    (benchmarks/README.md, loadpath). Streamed requests (``stream=True``) are left as they are
    (their body is read later, outside the deadline).
    """

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOLS)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_POOLS)
        return manager

    def send(  # type: ignore[override]  # requests' keywords pass through **kwargs
        self, request: PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> Response:
        end = self._deadline(kwargs.get("timeout"))
        if end is None:
            return self._send(request, stream, kwargs)
        left = end - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded("the call's deadline passed before the request was sent")
        kwargs["timeout"] = _capped(kwargs.get("timeout"), left)
        watch = _WATCHDOG.watch(end)
        _SEND.watch = watch
        try:
            return self._send(request, stream, kwargs, watch)
        except requests.RequestException as exc:
            if watch.fired or time.monotonic() >= end:
                raise DeadlineExceeded(
                    f"no complete answer within the call's deadline ({type(exc).__name__})"
                ) from exc
            raise
        finally:
            _SEND.watch = None
            watch.finish()

    @staticmethod
    def _deadline(timeout: Any) -> float | None:
        """The send's deadline: the call's, or else now + the read timeout given."""
        call = getattr(_CALL, "deadline", None)
        if call is not None:
            return float(call)
        read = timeout[1] if isinstance(timeout, tuple) else timeout
        if isinstance(read, int | float) and read > 0:
            return time.monotonic() + float(read)
        return None

    def _send(
        self,
        request: PreparedRequest,
        stream: bool,
        kwargs: dict[str, Any],
        watch: _Watch | None = None,
    ) -> Response:
        response = self._exchange(request, stream, kwargs)
        if stream:
            return response
        if watch is not None:
            stop = getattr(response.raw, "shutdown", None)
            if callable(stop):
                watch.add(stop)
        # Read to the end (urllib3 then hands the connection back to the pool itself),
        # turning urllib3's failures into requests' exceptions as ``iter_content`` does.
        try:
            body = response.raw.read(decode_content=True)
        except urllib3.exceptions.ProtocolError as exc:
            raise requests.exceptions.ChunkedEncodingError(exc) from exc
        except urllib3.exceptions.DecodeError as exc:
            raise requests.exceptions.ContentDecodingError(exc) from exc
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise requests.exceptions.ConnectionError(exc) from exc
        except urllib3.exceptions.SSLError as exc:
            raise requests.exceptions.SSLError(exc) from exc
        except OSError as exc:  # a socket shut down under a blocked read
            raise requests.exceptions.ConnectionError(exc) from exc
        if watch is not None and watch.fired:
            # The watchdog shut the socket while the last bytes came: whatever was read is
            # not known to be whole.
            raise DeadlineExceeded("the call's deadline passed while the body was read")
        # The body, scrubbed, becomes the answer's raw stream (``raw`` is requests' public
        # attribute): ``Response.content`` reads it back in one piece through ``stream``.
        response.raw = _ReadBody(scrub_key(body or b"", response, request), response, request)
        return response

    def _exchange(self, request: PreparedRequest, stream: bool, kwargs: dict[str, Any]) -> Response:
        """One request on the wire: requests' own ``HTTPAdapter.send`` (an in-process
        transport, ``_http.inprocess``, answers here instead).
        """
        return super().send(request, stream=stream, **kwargs)


class _ReadBody(urllib3.HTTPResponse):
    """An answer's raw stream over a body already read whole, decoded and scrubbed.

    ``stream`` (what requests' ``Response.content`` reads through) hands the body back in one
    piece, never decoding it again, instead of requests' 10 kB chunks; the status, reason and
    headers are the answer's. Only urllib3's public constructor and methods are used.
    """

    def __init__(self, body: bytes, response: Response, request: PreparedRequest) -> None:
        self.whole = body
        super().__init__(
            body=io.BytesIO(body),
            headers=dict(response.headers),
            status=response.status_code,
            reason=response.reason,
            preload_content=False,
            decode_content=False,
            enforce_content_length=False,
            request_method=request.method,
            request_url=request.url,
        )

    def stream(
        self, amt: int | None = None, decode_content: bool | None = None
    ) -> Generator[bytes, None, None]:
        """The whole body, once (``amt`` is not needed: it is already in memory); then the
        stream is closed, as a socket's is at its end.
        """
        data, self.whole = self.whole, b""
        self.close()
        if data:
            yield data


def _capped(timeout: Any, left: float) -> Any:
    """requests' ``timeout`` with each part at most ``left`` seconds (a urllib3 ``Timeout``
    object as it is: the watchdog still ends the send at the deadline).
    """
    if isinstance(timeout, tuple):
        return tuple(left if t is None else min(float(t), left) for t in timeout)
    if timeout is None or isinstance(timeout, int | float):
        return left if timeout is None else min(float(timeout), left)
    return timeout
