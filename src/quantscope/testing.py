"""Test helpers: the whole client answered in-process by a Python handler, no socket.

``qsc.connect(url="http://fake", transport=handler)`` (or ``Client(..., transport=...)``)
sends every request of the client to ``handler`` instead of the network, as httpx's
``MockTransport`` does: the handler gets the ``requests.PreparedRequest`` the client would
send to ``url`` and returns a ``Reply``. Everything above the wire runs as it does against a
service: the HTTP cache, retries, the call's deadline, quota headers, the key scrubbed from
answers, errors and their messages. Example::

    import requests
    import quantscope as qsc
    from quantscope.testing import Reply, Script

    metrics = {"totalTrades": 3, "totalVolume": 1500.0,
               "tradesWeeklyChange": 50.0, "volumeWeeklyChange": -20.0}
    script = Script(Reply(503), Reply(json={"metrics": metrics}))  # a 503, then the answer
    client = qsc.Client("http://fake", "test-key", cache_dir=tmp, transport=script)
    stats = qsc.load_trade_stats(1, client=client)  # the 503 is retried once
    assert stats["trades_weekly_change"] == 0.5 and len(script.seen) == 2

A handler raises requests' exceptions for network faults (``requests.ReadTimeout``,
``requests.ConnectionError``); a ``Reply`` whose ``Content-Length`` header promises more than
its body is a body cut half-way. Only requests for ``url``'s origin reach the handler; with a
transport, ``QUANTSCOPE_URL`` / ``QUANTSCOPE_API_KEY`` are not read (pass ``url=`` and, if the
handler checks one, ``api_key=``), the cache keeps the transport's answers apart from the
service's at the same URL, and no key is required.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from requests import PreparedRequest

from quantscope._http.inprocess import Handler, InProcessTransport, Reply

__all__ = ["Handler", "InProcessTransport", "Reply", "Script"]

#: What a ``Script`` answers with: a reply, a network fault to raise, or a handler to call.
Answer = Reply | BaseException | Callable[[PreparedRequest], Reply]


class Script:
    """A handler answering from ``answers`` in order, the last one repeated, that keeps every
    request it saw (``seen``). An answer is a ``Reply``, an exception (raised: a network
    fault) or a handler (called with the request).
    """

    def __init__(self, *answers: Answer) -> None:
        if not answers:
            raise ValueError("a Script needs at least one answer")
        self.answers = list(answers)
        self.seen: list[PreparedRequest] = []

    def __call__(self, request: PreparedRequest) -> Reply:
        answer = self.answers[min(len(self.seen), len(self.answers) - 1)]
        self.seen.append(request)
        if isinstance(answer, BaseException):
            raise answer
        return answer if isinstance(answer, Reply) else answer(request)

    def count(self, path: str | None = None) -> int:
        """Requests seen (for ``path`` only, when given)."""
        return sum(1 for r in self.seen if path is None or urlsplit(r.url or "").path == path)
