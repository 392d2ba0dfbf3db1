"""A proxy in front of a real server that rewrites its answers: real data, broken on purpose.

``rewriting(upstream, rewrite)`` is a ``FakeService`` handler: each request is forwarded to
``upstream`` (its path, query and key), and ``rewrite(seen, body)`` returns what the client
gets instead of the JSON body (a body, or a full ``(status, headers, body)`` answer). Answers
that are not 200 pass through unchanged. Use it with the ``serve`` fixture (with a generous
``limit``: the fake reports its own quota headers)::

    service = serve(rewriting(sandbox.url, lambda seen, body: body), limit=10_000)

``pages_ignored`` and the other rewrites below are the malformed answers the tests and the
reliability battery share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import requests

from _helpers.fake_service import Seen

Rewrite = Callable[[Seen, Any], Any]

_SESSION = requests.Session()


def forward(upstream: str, seen: Seen, query: dict[str, str] | None = None) -> requests.Response:
    """``seen`` sent to ``upstream`` (``query`` in place of its own, when given)."""
    key = next((v for k, v in seen.headers.items() if k.lower() == "x-api-key"), None)
    return _SESSION.request(
        seen.method,
        upstream + seen.path,
        params=seen.query if query is None else query,
        headers={"X-API-Key": key} if key else {},
        timeout=60,
    )


def rewriting(upstream: str, rewrite: Rewrite) -> Callable[[Seen], Any]:
    """A ``FakeService`` handler answering with ``rewrite(seen, body)`` of ``upstream``'s
    answer to the same request (non-200 answers pass through)."""

    def handler(seen: Seen) -> Any:
        answer = forward(upstream, seen)
        if answer.status_code != 200:
            return answer.status_code, {}, answer.content
        out = rewrite(seen, answer.json())
        if isinstance(out, tuple):
            return out
        return 200, {}, out

    return handler


def page_index(seen: Seen) -> int:
    """The 0-based page a paged request asks for (page/pageSize, offset/limit, skip/take)."""
    q = seen.query
    if "page" in q:
        return int(q["page"]) - 1
    size = int(q.get("limit") or q.get("take") or 1000)
    return int(q.get("offset") or q.get("skip") or 0) // size


def items_key(body: Any) -> str:
    """The list of a page: ``trades`` or ``results``."""
    return "trades" if "trades" in body else "results"


def set_total(body: Any, total: Any) -> Any:
    """``body`` with its paging total replaced."""
    if "pagination" in body:
        body["pagination"]["total"] = total
    else:
        body["total"] = total
    return body


def total_of(body: Any) -> int:
    return int(body["pagination"]["total"] if "pagination" in body else body["total"])


def first_page_query(seen: Seen) -> dict[str, str]:
    """``seen``'s query asking for the first page instead (the service ignoring paging)."""
    q = dict(seen.query)
    if "page" in q:
        q["page"] = "1"
    for name in ("offset", "skip"):
        if name in q:
            q[name] = "0"
    return q


def pages_ignored(upstream: str) -> Callable[[Seen], Any]:
    """A service that ignores the page parameter: every page is the first one."""

    def handler(seen: Seen) -> Any:
        answer = forward(upstream, seen, first_page_query(seen))
        return answer.status_code, {}, answer.content

    return handler
