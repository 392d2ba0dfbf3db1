"""How an answer is stored in the HTTP cache file: a small JSON head and the body's own bytes.

Never a pickle: a cache file copied from a colleague (or a bundle) is read without running
anything, and storing a 2.4 MB page costs one copy of its body instead of requests-cache's
default path (cattrs unstructures the response into a dict, ``pickle`` copies the body into
the pickle; benchmarks/README.md, loadpath). The serializer plugs into requests-cache as a
one-stage ``SerializerPipeline`` (``HTTP_SERIALIZER``).

A stored value (format 1)::

    offset  bytes  what
    0       8      MAGIC
    8       8      created_at: microseconds since the epoch (UTC), signed little-endian
    16      8      expires: the same; NO_EXPIRY when the answer never expires
    24      4      n: the length of the head
    28      n      the head: UTF-8 JSON of the rest (status, reason, url, encoding, elapsed,
                   headers, cookies, the request as stored, redirects: the request
                   of every hop with its credential headers ``REDACTED``)
    28 + n  ...    the body, as received (after ``_http.cache.scrub_key``); nothing when the body
                   is kept in a file beside the cache (large answers, ``_http.cachestore``: the
                   head then holds ``body_size``)

The two stamps sit at a fixed offset, so ``stamps_of`` reads them from the first ``STAMP_BYTES`` of
a row without building a response (``_http.cachestore._Responses.stamps``). A value that does not
start with ``MAGIC`` (a pickle written by requests-cache's default serializer, as quantscope stored
answers before; anything else) is not read at all: ``loads`` returns None, which requests-cache
takes for a miss, so the answer is asked again.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from requests.cookies import cookiejar_from_dict
from requests.structures import CaseInsensitiveDict
from requests_cache.models.request import CachedRequest
from requests_cache.models.response import CachedResponse
from requests_cache.serializers import SerializerPipeline, Stage

from quantscope._secret import KEY_HEADERS

__all__ = [
    "FORMAT_VERSION",
    "HTTP_SERIALIZER",
    "MAGIC",
    "STAMP_BYTES",
    "BodyElsewhere",
    "dumps",
    "loads",
    "stamps_of",
]

FORMAT_VERSION = 1  # also the cache file's ``PRAGMA user_version`` (``_http.cache.open_session``)
MAGIC = b"qs-http1"
NO_EXPIRY = -(2**63)
_PREFIX = struct.Struct("<8sqqI")
STAMP_BYTES = _PREFIX.size  # 28: magic, the two stamps and the head's length
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _micros(moment: datetime) -> int:
    """``moment`` as whole microseconds since the epoch (a naive time is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _MICROSECOND


def _moment(micros: int) -> datetime:
    """The inverse of ``_micros``, exact (no float on the way)."""
    return _EPOCH + timedelta(microseconds=micros)


def _text(data: bytes | str | None) -> str | None:
    """Bytes as JSON-safe text, losslessly (latin-1 maps every byte to one character)."""
    if data is None:
        return None
    return data if isinstance(data, str) else bytes(data).decode("latin-1")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode("latin-1")


def _stored_headers(headers: Any) -> dict[str, str]:
    """A request's headers as stored: a credential (``_secret.KEY_HEADERS``, any spelling)
    is kept as ``REDACTED``, whichever hop it was sent on. requests-cache redacts only the
    final request's ``X-API-Key`` (exact spelling); the requests of a redirect's hops
    (``history``, ``next``) would otherwise be written with the key.
    """
    return {
        name: "REDACTED" if name.lower() in KEY_HEADERS else value
        for name, value in (headers or {}).items()
    }


def _request_head(request: CachedRequest | None) -> dict[str, Any] | None:
    if request is None:
        return None
    return {
        "method": request.method,
        "url": request.url,
        "headers": _stored_headers(request.headers),
        "body": _text(request.body),
        "cookies": dict((request.cookies or {}).items()),
    }


def _field(head: dict[str, Any], name: str) -> Any:
    """A field of a stored head; None when absent (requests-cache's own default)."""
    return head.get(name)


def _request_of(head: dict[str, Any] | None) -> CachedRequest | None:
    if head is None:
        return None
    return CachedRequest(
        body=_bytes(head.get("body")),
        cookies=cookiejar_from_dict(head.get("cookies") or {}),
        headers=CaseInsensitiveDict(head.get("headers") or {}),
        method=_field(head, "method"),
        url=_field(head, "url"),
    )


def _head(response: CachedResponse, *, with_body: bool) -> dict[str, Any]:
    """The response's fields but its body (a redirect in ``history`` keeps its small body
    inside its head, and its stamps too).
    """
    elapsed = response.elapsed
    head: dict[str, Any] = {
        "status": response.status_code,
        "reason": response.reason,
        "url": response.url,
        "encoding": response.encoding,
        "elapsed": elapsed.total_seconds() if elapsed else 0.0,
        "headers": dict(response.headers or {}),
        "cookies": dict((response.cookies or {}).items()),
        "request": _request_head(response.request),
    }
    if response.history:
        head["history"] = [_head(r, with_body=True) for r in response.history]
    following = response.next  # requests' public view of the redirect's next request
    if following is not None:
        head["next"] = _request_head(CachedRequest.from_request(following))
    if with_body:
        head["body"] = _text(response.content)
        head["created_at"] = _micros(response.created_at) if response.created_at else None
        head["expires"] = _micros(response.expires) if response.expires else None
    return head


def _response_of(
    head: dict[str, Any], content: bytes, created_at: Any, expires: datetime | None
) -> CachedResponse:
    return CachedResponse(
        content=content,
        next=_request_of(head.get("next")),
        cookies=cookiejar_from_dict(head.get("cookies") or {}),
        created_at=created_at,
        elapsed=timedelta(seconds=head.get("elapsed") or 0.0),
        encoding=_field(head, "encoding"),
        expires=expires,
        headers=CaseInsensitiveDict(head.get("headers") or {}),
        history=[_history_item(h) for h in head.get("history") or ()],
        reason=_field(head, "reason"),
        request=_request_of(head.get("request")) or CachedRequest(),
        status_code=int(head.get("status") or 0),
        url=_field(head, "url"),
    )


def _history_item(head: dict[str, Any]) -> CachedResponse:
    created, expires = head.get("created_at"), head.get("expires")
    return _response_of(
        head,
        _bytes(head.get("body")) or b"",
        None if created is None else _moment(created),
        None if expires is None else _moment(expires),
    )


def dumps(response: CachedResponse, *, body_elsewhere: bool = False) -> bytes:
    """``response`` in the stored layout (see the module docstring): one copy of the body, or
    none with ``body_elsewhere`` (the head then records the body's size, and the caller keeps
    the body: ``_http.cachestore``).
    """
    fields = _head(response, with_body=False)
    content = response.content or b""
    if body_elsewhere:
        fields["body_size"] = len(content)
    head = json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode()
    created = _micros(response.created_at or datetime.now(UTC))
    expires = NO_EXPIRY if response.expires is None else _micros(response.expires)
    prefix = _PREFIX.pack(MAGIC, created, expires, len(head))
    return prefix + head if body_elsewhere else b"".join((prefix, head, content))


def stamps_of(prefix: bytes) -> tuple[datetime, datetime | None] | None:
    """``(created_at, expires)`` from the first ``STAMP_BYTES`` of a stored value; None for a
    value of another format (never read further).
    """
    if len(prefix) < STAMP_BYTES or prefix[: len(MAGIC)] != MAGIC:
        return None
    _, created, expires, _ = _PREFIX.unpack_from(prefix)
    return _moment(created), None if expires == NO_EXPIRY else _moment(expires)


def loads(
    value: bytes | memoryview | str | None, body: Callable[[], bytes | None] | None = None
) -> CachedResponse | None:
    """The stored answer; None (a miss) for a value that is not in this format, including
    every pickle: it is never unpickled, nor read past its first bytes. A body kept elsewhere
    is read by ``body()``; a missing one, or one of another size, is a miss too.
    """
    if not isinstance(value, bytes | memoryview) or bytes(value[: len(MAGIC)]) != MAGIC:
        return None
    data = bytes(value)
    if len(data) < STAMP_BYTES:
        return None
    _, created, expires, size = _PREFIX.unpack_from(data)
    end = STAMP_BYTES + size
    try:
        head = json.loads(data[STAMP_BYTES:end])
    except ValueError:  # a truncated or damaged row: a miss
        return None
    if not isinstance(head, dict) or len(data) < end:
        return None
    if "body_size" in head:
        content = body() if body is not None else None
        if content is None or len(content) != head["body_size"]:
            return None
    else:
        content = data[end:]
    return _response_of(
        head,
        content,
        _moment(created),
        None if expires == NO_EXPIRY else _moment(expires),
    )


class BodyElsewhere(NamedTuple):
    """A response to store without its body (kept in a file by ``_http.cachestore``): handed to
    requests-cache's storage like a response, serialized by ``HTTP_SERIALIZER`` as
    ``dumps(response, body_elsewhere=True)``.
    """

    response: CachedResponse

    @property
    def expires_unix(self) -> int | None:
        """What requests-cache's SQLite storage writes in its ``expires`` column."""
        return self.response.expires_unix


def _dumps_stored(value: CachedResponse | BodyElsewhere) -> bytes:
    if isinstance(value, BodyElsewhere):
        return dumps(value.response, body_elsewhere=True)
    return dumps(value)


# requests-cache's name of the serializer enters every cache key (``str(serializer)``), so
# answers stored in another format are never even looked up under the same key.
HTTP_SERIALIZER = SerializerPipeline(
    [Stage(dumps=_dumps_stored, loads=loads)],
    name=f"quantscope-http-{FORMAT_VERSION}",
    is_binary=True,
)
