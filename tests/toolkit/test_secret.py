"""The key is a secret everywhere (issue 20, item 1): what a service echoes, redirects, and
credentials in the URL.

Scripted services (``serve``): the sandbox never echoes a key nor redirects. A second
listener on another port records whether it ever saw the key. The all-artefact search through
a proxy in front of the real sandbox is ``test_key_leak.py``.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from _helpers import FAST, FakeService, Seen, ok
from _helpers.leaks import escaped, leaks

import quantscope as qsc
from quantscope._config import resolve_settings
from quantscope._http.client import Client
from quantscope._secret import Scrubber

SECRET = "qs/live_Key-0123456789abcdefXYZ"  # a "/" (JSON may write "\/") and both cases


def client_on(service: FakeService, tmp_path: Path, key: str = SECRET, **kwargs: Any) -> Client:
    kwargs.setdefault("retry", FAST)
    return Client(service.url, key, cache_dir=str(tmp_path / "cache"), progress=False, **kwargs)


def spelled(secret: str, seed: int) -> list[str]:
    """JSON string text spelling ``secret``: literal, all escaped (both cases), random mixes,
    and ``\\/`` for each slash."""
    rng = random.Random(seed)
    forms = [secret, escaped(secret), escaped(secret, upper=True), secret.replace("/", "\\/")]
    forms += [escaped(secret, rng) for _ in range(6)]
    return forms


def echoing_body(secret: str, seed: int = 1) -> bytes:
    items = [
        f'{{"id": {i}, "name": "token {form} end"}}' for i, form in enumerate(spelled(secret, seed))
    ]
    return ('{"items": [' + ", ".join(items) + '], "note": "' + escaped(secret) + '"}').encode()


# --- decoded values are scrubbed, not only bytes ------------------------------------------


def test_every_json_spelling_of_the_key_decodes_to_no_key() -> None:
    scrub = Scrubber(SECRET)
    for seed in range(200):
        for form in spelled(SECRET, seed):
            text = f'{{"a": "x{form}y", "b": ["{form}"], "{form}": 1}}'.encode()
            assert SECRET in json.dumps(orjson.loads(text))  # the spelling is the key...
            clean = scrub.scrub_bytes(text)
            assert SECRET not in json.dumps(orjson.loads(clean)), form  # ...and is gone
            assert orjson.loads(clean)["a"] == "x***y"
    # beyond the BMP: JSON escapes a character as a surrogate pair
    wide = "key-\U0001f511-0123456789"
    pair = b'"key-\\ud83d\\uDD11-0123456789"'
    assert orjson.loads(pair) == wide
    assert orjson.loads(Scrubber(wide).scrub_bytes(pair)) == "***"


def test_a_body_without_the_key_is_left_byte_for_byte() -> None:
    body = json.dumps({"a": "caf\u00e9 \\u0071", "b": "qs/live"}, ensure_ascii=True).encode()
    assert b"\\u00e9" in body  # escapes, but none of the key's characters spelled whole
    assert Scrubber(SECRET).scrub_bytes(body) == body
    assert SECRET not in repr(Scrubber(SECRET))


def test_an_echoed_key_reaches_no_frame_file_header_or_message(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    body = echoing_body(SECRET)
    escaped_header = f"token={escaped(SECRET, upper=True)}"

    def answer(seen: Seen) -> Any:
        if seen.path == "/api/trades/404":
            return (
                404,
                {"X-Echo": SECRET},
                {"error": {"code": "not_found", "message": body.decode()}},
            )
        return 200, {"X-Echo": escaped_header, "X-Plain": SECRET}, body

    service = serve(answer)
    client = client_on(service, tmp_path)
    got = client.get("/api/trades")
    assert SECRET not in json.dumps(got.data)
    assert got.data["items"][0]["name"] == "token *** end"
    assert len(got.data["items"]) == len(spelled(SECRET, 1))
    with pytest.raises(qsc.NotFoundError) as info:
        client.get("/api/trades/{id}", {"id": 404})
    assert SECRET not in str(info.value)
    assert SECRET not in json.dumps(info.value.body)
    again = client.get("/api/trades")  # from the cache
    assert again.provenance.from_cache
    assert again.data == got.data
    client.close()
    assert leaks(tmp_path, [SECRET]) == {}


# --- redirects -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "method"), [(302, "GET"), (307, "GET"), (302, "POST"), (307, "PUT"), (307, "POST")]
)
def test_a_redirect_to_another_origin_is_refused_and_never_sees_the_key(
    serve: Callable[..., FakeService], tmp_path: Path, status: int, method: str
) -> None:
    other = serve(lambda s: ok())
    service = serve(lambda s: (status, {"Location": other.url + s.path}, {}))
    client = client_on(service, tmp_path)
    call = {
        "GET": lambda: client.get("/api/trades"),
        "PUT": lambda: client.put("/api/degen/config", {"quantId": 1}),
        "POST": lambda: client.post("/api/refine-eval/analyze", {"quantId": 1}),
    }[method]
    with pytest.raises(qsc.RedirectRefusedError) as info:
        call()
    assert other.seen == []  # nothing was sent there: not the key, not anything
    assert info.value.origin == service.url
    assert info.value.target == other.url
    assert service.url in str(info.value)
    assert other.url in str(info.value)
    assert "QUANTSCOPE_URL" in str(info.value)
    assert service.count() == 1  # refused, not retried


def test_the_session_strips_credentials_from_a_request_leaving_the_origin(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    # Defence in depth: without a configured origin the redirected request's own counts.
    other = serve(lambda s: ok())
    service = serve(lambda s: (307, {"Location": other.url + s.path}, {}))
    session = client_on(service, tmp_path)._session
    session.origin = None
    with pytest.raises(qsc.RedirectRefusedError):
        session.get(
            service.url + "/api/trades", headers={"x-api-key": SECRET, "Authorization": "b"}
        )
    assert other.seen == []


def test_a_same_origin_redirect_is_followed_and_no_hop_is_stored_with_the_key(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    def answer(seen: Seen) -> Any:
        if seen.query.get("moved") != "1":
            return 307, {"Location": f"{seen.path}?moved=1"}, {}
        return ok({"trades": [], "total": 0})

    service = serve(answer)
    client = client_on(service, tmp_path)
    assert client.get("/api/trades").data == {"trades": [], "total": 0}
    assert [s.headers.get("X-API-Key") for s in service.seen] == [SECRET, SECRET]
    assert client.get("/api/trades").provenance.from_cache
    client.close()
    assert leaks(tmp_path, [SECRET]) == {}


# --- credentials in the URL ---------------------------------------------------------------


def test_url_credentials_are_sent_as_basic_auth_and_never_stored_or_shown(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    user, password = "researcher", "pw-Secr3t%40x"  # percent-encoded "@" in the URL
    service = serve(lambda s: ok({"trades": [{"id": 1}], "total": 1}))
    url = service.url.replace("http://", f"http://{user}:{password}@")
    client = Client(url, SECRET, cache_dir=str(tmp_path / "cache"), progress=False, retry=FAST)
    for _ in range(3):
        client.get("/api/trades")
        client.get("/api/trades", {"page": 2})
    sent = service.seen[0].headers["Authorization"]
    assert base64.b64decode(sent.split()[1]).decode() == f"{user}:pw-Secr3t@x"
    assert client.settings.url == service.url == client.base_url
    assert client.settings.auth == (user, "pw-Secr3t@x")
    shown = repr(client) + repr(client.settings) + str(client.cache.info())
    for secret in (user, "pw-Secr3t", SECRET):
        assert secret not in shown
    client.close()
    assert leaks(tmp_path, [user, "pw-Secr3t", SECRET]) == {}


def test_url_credentials_never_appear_in_a_configuration_error() -> None:
    with pytest.raises(qsc.ConfigurationError) as info:
        resolve_settings("ftp://someone:hunter22@host", "k", env={})
    assert "hunter22" not in str(info.value)
    assert "someone" not in str(info.value)
    settings = resolve_settings("https://someone:hunter22@host:8443/v1/", "k", env={})
    assert (settings.url, settings.auth) == ("https://host:8443/v1", ("someone", "hunter22"))
    assert "hunter22" not in repr(settings)


def test_the_quota_command_follows_no_redirect_with_the_key(
    serve: Callable[..., FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quantscope import cli

    other = serve(lambda s: ok())
    service = serve(lambda s: (307, {"Location": other.url + s.path}, {}))
    monkeypatch.setenv("QUANTSCOPE_URL", service.url)
    monkeypatch.setenv("QUANTSCOPE_API_KEY", SECRET)
    monkeypatch.setenv("QUANTSCOPE_CACHE_DIR", str(tmp_path))
    assert cli.main(["quota"]) == 1  # one line on stderr, not the other origin's answer
    assert other.seen == []
    assert service.count() == 1


def test_an_answer_stored_unscrubbed_by_an_earlier_quantscope_decodes_to_no_key(
    serve: Callable[..., FakeService], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import quantscope._http.transport as transport

    service = serve(lambda seen: (200, {}, echoing_body(SECRET, seed=3)))
    # An earlier quantscope scrubbed only the literal key: its cache holds escaped spellings.
    monkeypatch.setattr(
        transport, "scrub_key", lambda body, response, request: body.replace(SECRET.encode(), b"")
    )
    with client_on(service, tmp_path) as old:
        old.get("/api/trades")
    monkeypatch.undo()
    client = client_on(service, tmp_path)
    again = client.get("/api/trades")
    assert again.provenance.from_cache
    assert service.count("/api/trades") == 1
    assert SECRET not in json.dumps(again.data)
    assert again.data["items"][1]["name"] == "token *** end"
    client.close()
