"""The largest request body each route takes: 413 before the body is read, chunked bodies cut off.

Without a limit the server read whatever came: FastAPI reads and parses a route's whole body
before its dependencies run, so a 100 MB PUT refused 403 (a Basic key) still grew the server
by 276 MB, and eight at once took it from 280 to 1,814 MB.

``BODY_LIMITS`` gives each write route its largest legitimate body with headroom; every other
request (GET, a recommendation's apply, unknown paths) takes at most ``DEFAULT_LIMIT`` bytes,
which it ignores. The gate (app.py) checks a declared ``Content-Length`` before the key, before
routing and before any byte of the body is read; a body without one (chunked) is counted as
the application reads it (``LimitedReceive``) and cut off once it passes the limit. Either way
the answer is 413 ``payload_too_large`` with ``Connection: close``, so the rest of the body is
never read: the server holds at most the limit plus uvicorn's read window (64 KiB, after which
it stops reading the socket until the application asks for more).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import Message, Receive

from quantscope.sandbox.errors import ApiError

# The largest legitimate body of each write route, with headroom (docs/service-contract.md):
# * PUT /api/degen/config: every field of every entry of a quant's playbook (108 entries x 5
#   fields, extraInfo objects included) is ~62 KB of compact JSON: 4x that, for indentation.
# * POST /api/refine-eval/analyze: three scalar fields, ~100 bytes: 4 KiB.
BODY_LIMITS: dict[tuple[str, str], int] = {
    ("PUT", "/api/degen/config"): 256 * 1024,
    ("POST", "/api/refine-eval/analyze"): 4 * 1024,
}
DEFAULT_LIMIT = 1024  # any other request: a body is ignored; `{}` or `null` is still served


def limit_for(method: str, path: str) -> int:
    """The largest body, in bytes, that ``method path`` takes."""
    return BODY_LIMITS.get((method, path), DEFAULT_LIMIT)


def too_large(method: str, path: str, limit: int) -> ApiError:
    """413 ``payload_too_large`` naming the route's limit; it closes the connection."""
    return ApiError(
        413,
        "payload_too_large",
        f"the body of {method} {path} may be at most {limit:,} bytes",
        headers={"Connection": "close"},
    )


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The request's ``Content-Length`` (None when absent or not a number)."""
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when a body without ``Content-Length`` passes its limit.

    An HTTPException, so FastAPI's body reading passes it on unchanged to the app's handler
    (any other exception there becomes a 400), which answers ``error`` (app.py).
    """

    def __init__(self, error: ApiError) -> None:
        super().__init__(status_code=413, detail=error.message)
        self.error = error


class LimitedReceive:
    """An ASGI ``receive`` that counts body bytes and raises ``BodyTooLarge`` past ``limit``."""

    def __init__(self, receive: Receive, method: str, path: str, limit: int) -> None:
        self._receive = receive
        self._route = (method, path)
        self._limit = self._left = limit

    async def __call__(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self._left -= len(message.get("body", b""))
            if self._left < 0:
                raise BodyTooLarge(too_large(*self._route, self._limit))
        return message
