"""The in-process transport (``quantscope.testing``): faults scripted as Python, no socket.

The whole client runs on it (requests-cache, retries, the call's deadline, quota headers, the
key scrubbed, errors), and it never becomes a way for the key to reach another origin. Also:
the body read whole is handed to requests through its public ``Response.raw``, decoded once.
"""

from __future__ import annotations

import gzip
import re
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests
from _helpers import KEY, script_client

import quantscope as qsc
import quantscope.testing
from quantscope._config import resolve_settings
from quantscope._errors import (
    APIConnectionError,
    APITimeoutError,
    ConfigurationError,
    RateLimitError,
    RedirectRefusedError,
    ServerError,
)
from quantscope.testing import InProcessTransport, Reply, Script

ERROR = {"error": {"code": "internal", "message": "boom"}}
RESET = 1_900_000_000  # 2030-03-17T17:46:40Z


def test_a_500_then_a_200_is_retried_once_and_served(tmp_path: Path) -> None:
    script = Script(Reply(500, json=ERROR), Reply(json={"ok": True}))
    client = script_client(script, tmp_path)
    assert client.get("/api/trades/stats").data == {"ok": True}
    assert script.count("/api/trades/stats") == 2
    assert [r.method for r in script.seen] == ["GET", "GET"]
    assert script.seen[0].headers["X-API-Key"] == KEY  # the request the client sends to url


def test_a_500_every_time_is_one_server_error_after_four_attempts(tmp_path: Path) -> None:
    script = Script(Reply(500, json=ERROR))
    with pytest.raises(ServerError, match="The service failed after 4 attempts") as info:
        script_client(script, tmp_path).get("/api/trades/stats")
    assert (info.value.status_code, script.count()) == (500, 4)


def test_a_daily_429_is_not_retried_and_says_when_the_quota_resets(tmp_path: Path) -> None:
    quota = {
        "X-RateLimit-Limit": "100",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(RESET),
        "Retry-After": "36000",
    }
    script = Script(Reply(429, json={"error": {"code": "rate_limited"}}, headers=quota))
    client = script_client(script, tmp_path)
    with pytest.raises(
        RateLimitError, match=r"Quota spent \(100 requests/day.*resets at 2030-03-17T17:46:40Z"
    ) as info:
        client.get("/api/trades")
    assert script.count() == 1
    assert info.value.retry_after == 36000
    assert (client.quota.limit, client.quota.remaining) == (100, 0)
    assert client.quota.reset == datetime.fromtimestamp(RESET, UTC)


def test_a_truncated_body_is_retried_then_reported_and_never_cached(tmp_path: Path) -> None:
    cut = Reply(body=b'{"trades": [' + b'{"id": 1},' * 50, headers={"Content-Length": "4000"})
    script = Script(cut)
    client = script_client(script, tmp_path)
    with pytest.raises(APIConnectionError, match="could not be reached after 4 attempts") as info:
        client.get("/api/trades")
    assert isinstance(info.value.__cause__, requests.exceptions.ChunkedEncodingError)
    assert (info.value.attempts, script.count()) == (4, 4)
    assert client.cache.info().entries == 0


def test_a_redirect_to_another_host_is_refused_and_never_reaches_it(tmp_path: Path) -> None:
    script = Script(Reply(302, headers={"Location": "http://elsewhere.example/api/trades"}))
    with pytest.raises(RedirectRefusedError, match="to another origin") as info:
        script_client(script, tmp_path).get("/api/trades")
    assert (info.value.origin, info.value.target) == ("http://fake", "http://elsewhere.example")
    assert [r.url for r in script.seen] == ["http://fake/api/trades"]


def test_a_timeout_is_retried_then_one_timeout_error(tmp_path: Path) -> None:
    script = Script(requests.ReadTimeout("no answer"))
    with pytest.raises(APITimeoutError, match="did not answer in time after 4 attempts") as info:
        script_client(script, tmp_path).get("/api/trades")
    assert (info.value.attempts, script.count()) == (4, 4)


def test_a_timeout_then_an_answer_is_served_and_cached(tmp_path: Path) -> None:
    script = Script(requests.ReadTimeout("slow"), Reply(json={"ok": 1}))
    client = script_client(script, tmp_path)
    assert client.get("/api/trades/stats").data == {"ok": 1}
    assert client.get("/api/trades/stats").data == {"ok": 1}  # from the HTTP cache
    assert (script.count(), client.cache.info().entries) == (2, 1)


def test_a_gzip_body_is_decoded_once_and_the_echoed_key_scrubbed(tmp_path: Path) -> None:
    echo = b'{"note": "your key ' + KEY.encode() + b'", "n": 3}'
    packed = Reply(body=gzip.compress(echo), headers={"Content-Encoding": "gzip"})
    client = script_client(Script(packed), tmp_path)
    assert client.get("/api/trades/stats").data == {"note": "your key ***", "n": 3}
    stored = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert KEY.encode() not in stored


def test_the_handler_sees_only_its_origin() -> None:
    script = Script(Reply(json={}))
    with requests.Session() as session:
        session.mount("http://", InProcessTransport(script, "http://fake"))
        assert session.get("http://fake/x", timeout=5).json() == {}
        with pytest.raises(requests.exceptions.InvalidURL, match="only for its configured"):
            session.get("http://fake:8080/x", timeout=5)
    assert [r.url for r in script.seen] == ["http://fake/x"]


def test_a_transport_reads_no_service_or_key_from_the_environment() -> None:
    env = {"QUANTSCOPE_URL": "https://real.example", "QUANTSCOPE_API_KEY": "real-key-123456"}
    handler = Script(Reply())
    settings = resolve_settings(url="http://fake", transport=handler, env=env)
    assert (settings.url, settings.api_key, settings.transport) == ("http://fake", None, handler)
    assert (settings.service, settings.service_id) == (
        "in-process transport",
        "in-process:http://fake",
    )
    with pytest.raises(ConfigurationError, match="needs both"):
        resolve_settings(transport=handler, env=env)
    with pytest.raises(ConfigurationError, match="or a catalog, not both"):
        resolve_settings(url="http://fake", catalog="c", transport=handler, env={})


def test_connect_with_a_transport_needs_no_key(tmp_path: Path) -> None:
    script = Script(Reply(json={"ok": True}))
    with qsc.connect(url="http://fake", transport=script, cache_dir=tmp_path, progress=False) as c:
        assert c.get("/api/trades/stats").data == {"ok": True}
        assert "X-API-Key" not in script.seen[0].headers
    qsc.set_default_client(None)


def test_the_example_of_the_testing_docs_runs(tmp_path: Path) -> None:
    doc = quantscope.testing.__doc__ or ""
    match = re.search(r"Example::\n\n(.*?)\n\n", doc, re.S)
    assert match is not None
    exec(textwrap.dedent(match.group(1)), {"tmp": str(tmp_path)})  # its asserts hold
