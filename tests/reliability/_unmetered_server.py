"""The sandbox with its quota gate lifted, counting its answers: a process of the fuzz and the soak.

``python _unmetered_server.py DATA_DIR`` serves the world in ``DATA_DIR`` with
``create_app(info, metered=False)`` (the test-only switch: neither ``quantscope sandbox serve``
nor any environment variable reaches it), prints its URL on a line, then answers each line read
on stdin with the responses it sent so far, by status, as one JSON line (``{"200": 12, ...}``).
End of stdin stops it (so it also ends when the test process that started it dies).

``StatusCounter`` counts on the server, so the fuzz's figures are the wire's, not the fuzzer's.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quantscope.sandbox.app import create_app
from quantscope.sandbox.datadir import ensure_world
from quantscope.sandbox.serve import SandboxServer


class StatusCounter:
    """ASGI middleware: count the responses the server sent, by status."""

    def __init__(self, app: ASGIApp, counts: Counter[int]) -> None:
        self.app = app
        self.counts = counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.counts[message["status"]] += 1
            await send(message)

        await self.app(scope, receive, counting_send)


def main(data_dir: str) -> None:
    info = ensure_world(data_dir)
    counts: Counter[int] = Counter()
    app = create_app(info, metered=False)
    app.add_middleware(StatusCounter, counts=counts)
    with SandboxServer(info, app=app) as server:
        print(server.url, flush=True)
        for _ in sys.stdin:
            print(json.dumps(dict(counts)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
