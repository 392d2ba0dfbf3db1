"""The cold path of a batch (issues 22, 24): each request keyed, looked up and stored once.

A per-id load (``get_many``: one eval-details or trade request per id) on an empty cache spent
more of its client time in requests-cache's machinery than on the wire: three keys per request
(pricing, the batch's look-up, requests-cache's own look-up before sending), a stored answer
decoded to price it, two writes of a closed trade (by its rule, then refined), and runtime
``Protocol`` / ``inspect.signature`` checks on every request. Against the session sandbox.
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
import requests

import quantscope as qsc
from quantscope._http.client import Client
from quantscope._http.sender import prepare_get, query_string

TRADE = "/api/trades/{id}"
IDS = [{"id": i} for i in range(1, 13)]


def spy(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[object]:
    """The first arguments ``owner.name`` is called with from now on."""
    seen: list[object] = []
    real = getattr(owner, name)

    def counted(first: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return seen


def test_a_cold_batch_keys_and_looks_up_each_request_once(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = client._session.cache
    keys = spy(monkeypatch, store, "create_key")
    reads = spy(monkeypatch, store, "get_response")
    priced = qsc.estimate(client.get_many, TRADE, IDS)
    assert (priced.requests, priced.cached) == (len(IDS), 0)
    assert reads == []  # pricing decodes no stored answer (was one look-up per request)
    loaded = client.get_many(TRADE, IDS)
    assert [int(f.data["trade"]["id"]) for f in loaded.results if f is not None] == [
        p["id"] for p in IDS
    ]
    assert len(keys) == len(IDS)  # was 3 per request: pricing, the look-up, requests-cache's
    assert len(reads) == len(IDS)  # the batch's look-up only (requests-cache looked up again)
    again = qsc.estimate(client.get_many, TRADE, IDS)
    assert (again.requests, again.cached) == (0, len(IDS))
    assert len(reads) == len(IDS)  # priced from the stored stamps, nothing decoded


def test_a_closed_trade_is_stored_once_for_good(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    saves = spy(monkeypatch, client._session.cache, "save_response")
    loaded = client.get_many(TRADE, IDS)
    bodies = [f.data["trade"] for f in loaded.results if f is not None]
    closed = [int(t["id"]) for t in bodies if str(t["status"]).lower() == "closed"]
    assert closed, "the sandbox's first trades include closed ones"
    assert len(saves) == len(IDS)  # a closed one was stored twice: by its rule, then refined
    entries = dict(zip([p["id"] for p in IDS], loaded.entries, strict=True))
    stamps = client.cache._stamps([e.key for e in loaded.entries if e is not None])
    for trade_id in closed:
        entry = entries[trade_id]
        assert entry is not None
        assert stamps[entry.key] == (entry.created_at, None)  # never expires
    open_ = [int(t["id"]) for t in bodies if int(t["id"]) not in closed]
    for trade_id in open_:
        entry = entries[trade_id]
        assert entry is not None
        assert stamps[entry.key][1] is not None  # 5 minutes, the rule's


@contextmanager
def slow_checks() -> Iterator[list[str]]:
    """Where runtime-Protocol ``isinstance`` checks and ``inspect.signature`` calls are made
    meanwhile (on this thread: the client sends on it).
    """
    seen: list[str] = []
    watched = {
        (typing.__file__, "_ProtocolMeta.__instancecheck__"): "Protocol isinstance",
        (inspect.__file__, "signature"): "inspect.signature",
    }

    def profile(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event == "call" and (what := watched.get((code.co_filename, code.co_qualname))):
            caller = frame.f_back.f_back if frame.f_back is not None else None
            seen.append(f"{what} in {caller.f_code.co_qualname if caller else '?'}")

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def test_a_cold_request_makes_no_runtime_protocol_or_signature_check(client: Client) -> None:
    client.get_many(TRADE, [{"id": 99}])  # the origin's environment settings, read once
    with slow_checks() as seen:
        loaded = client.get_many(TRADE, IDS)
    assert loaded.missing == ()
    assert seen == []  # were ~10 per request (requests' SupportsItems, requests-cache's kwargs)


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"quantId": "2", "page": "1"},
        {"b": "two words", "a": "ä/ß?&=+", "tradingStatus": "all"},
        {"timeFrom": "2026-11-01T00:00:00+00:00", "ids": "1,2,3"},
        {"evaluationId": 7, "page": 0},  # type: ignore[dict-item]  # ints, as some callers pass
    ],
)
def test_keys_stay_those_of_requests_encoding(client: Client, query: dict[str, str]) -> None:
    """Existing caches are still found: the query string is encoded as requests encodes a dict."""
    url = client.base_url + "/api/trades"
    ours = client._prepare("GET", "/api/trades", query)
    theirs = requests.Request("GET", url, params=dict(query)).prepare()
    assert ours.url == theirs.url
    assert client.cache.create_key(ours) == client.cache.create_key(theirs)


def hook(response: Any, *args: Any, **kwargs: Any) -> Any:
    return response


@pytest.mark.parametrize("netrc", [False, True])
def test_a_miss_is_prepared_as_the_session_prepares_it(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, netrc: bool
) -> None:
    session = requests.Session()
    session.headers["X-API-Key"] = "k-123"
    session.headers["Dropped"] = None  # type: ignore[assignment]  # requests drops None headers
    session.cookies.set("seen", "1")
    session.hooks["response"].append(hook)
    if netrc:
        (tmp_path / "netrc").write_text("machine example.test login me password secret\n")
        monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    else:
        session.auth = ("user", "pw")
    url, query = "http://example.test:8123/api/trades", {"quantId": "2", "q": "a b"}
    ours = prepare_get(session, url, query)
    theirs = session.prepare_request(requests.Request("GET", url, params=dict(query)))
    assert (ours.method, ours.url, ours.body) == (theirs.method, theirs.url, theirs.body)
    assert dict(ours.headers) == dict(theirs.headers)
    assert ours.headers["Cookie"] == "seen=1"
    credentials = "bWU6c2VjcmV0" if netrc else "dXNlcjpwdw=="  # me:secret, user:pw
    assert ours.headers["Authorization"] == f"Basic {credentials}"
    assert ours.hooks == theirs.hooks
    assert query_string(query) == "quantId=2&q=a+b"


def test_a_session_with_its_own_params_is_prepared_by_requests() -> None:
    session = requests.Session()
    session.params = {"token": "t"}
    ours = prepare_get(session, "http://example.test/x", {"a": "1"})
    assert ours.url == "http://example.test/x?token=t&a=1"
