"""An in-process transport: a Python handler answers the client's requests, with no socket.

As httpx's ``MockTransport``: ``InProcessTransport(handler, origin)`` is a requests transport
adapter that hands each ``PreparedRequest`` to ``handler`` and turns the ``Reply`` it returns
into a real ``requests.Response`` through public means (a urllib3 ``HTTPResponse`` over the
body, ``HTTPAdapter.build_response``). It is a ``WholeBodyAdapter`` whose wire is the handler:
the body is read whole against the call's deadline and the key scrubbed from it as on the
network, so requests-cache, the retries, the quota headers and the errors all run unchanged.

A handler simulates a network fault by raising requests' exception for it
(``requests.ReadTimeout``, ``requests.ConnectionError``); a ``Reply`` whose ``Content-Length``
promises more than its body is a body cut half-way (the read fails as a socket's would).

The handler sees only requests for ``origin``, the configured service's: a request for any
other origin is refused before the handler is called (a redirect away is already refused by
``_http.transport.guard_redirect``), so a transport is never a way for the key to leave.
"""

from __future__ import annotations

import http
import http.client
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import requests
import urllib3
from requests import PreparedRequest, Response

from quantscope._http.transport import WholeBodyAdapter, origin_of

__all__ = ["Handler", "InProcessTransport", "Reply"]


@dataclass(frozen=True)
class Reply:
    """What a handler answers: a status, headers and a body (``json`` encoded, or ``body``).

    ``Content-Type`` is ``application/json`` for a ``json`` reply and ``Content-Length`` the
    body's length unless ``headers`` set them; a ``Content-Length`` larger than the body
    makes a body cut half-way.
    """

    status: int = 200
    json: Any = None
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def content(self) -> bytes:
        """The body's bytes as sent."""
        if self.body is not None:
            return self.body
        return b"" if self.json is None else orjson.dumps(self.json)


#: A handler: the request the client sends -> the reply (or it raises a requests exception).
Handler = Callable[[PreparedRequest], Reply]


class _Wire(io.BytesIO):
    """A body as the socket gives it: ending before the ``promised`` length fails the read
    with ``http.client.IncompleteRead``, as http.client's does.
    """

    def __init__(self, body: bytes, promised: int) -> None:
        super().__init__(body)
        self.missing = max(0, promised - len(body))

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        if self.missing and (not data or size is None or size < 0 or len(data) < size):
            raise http.client.IncompleteRead(data, self.missing)
        return data


def _headers(reply: Reply, body: bytes) -> dict[str, str]:
    headers = {k.lower(): (k, v) for k, v in reply.headers.items()}
    out = dict(headers.values())
    if "content-length" not in headers:
        out["Content-Length"] = str(len(body))
    if "content-type" not in headers and reply.body is None:
        out["Content-Type"] = "application/json"
    return out


class InProcessTransport(WholeBodyAdapter):
    """A requests transport adapter whose answers come from ``handler`` (see the module).

    ``origin`` is the configured service's URL; only requests for its scheme, host and port
    reach the handler. Mount it on a session for both schemes; quantscope's client does so
    when it is given ``transport=handler``.
    """

    def __init__(self, handler: Handler, origin: str) -> None:
        super().__init__()
        self.handler = handler
        self.origin = origin_of(origin)

    def _exchange(self, request: PreparedRequest, stream: bool, kwargs: dict[str, Any]) -> Response:
        if origin_of(str(request.url or "")) != self.origin:
            raise requests.exceptions.InvalidURL(
                f"the in-process transport answers only for its configured origin, not "
                f"{request.method} {request.url}; nothing was sent"
            )
        reply = self.handler(request)
        if not isinstance(reply, Reply):
            raise TypeError(f"a transport handler returns a Reply, not {type(reply).__name__}")
        body = reply.content()
        headers = _headers(reply, body)
        length = next(v for k, v in headers.items() if k.lower() == "content-length")
        promised = int(length) if str(length).strip().isdigit() else len(body)
        try:
            reason = http.HTTPStatus(reply.status).phrase
        except ValueError:
            reason = ""
        raw = urllib3.HTTPResponse(
            body=_Wire(body, promised),
            headers=headers,
            status=reply.status,
            reason=reason,
            preload_content=False,
            request_method=request.method,
            request_url=request.url,
        )
        return self.build_response(request, raw)
