"""The frame cache: a warm reload returns the stored typed frame without decoding or building,
and never once any answer it was built from expired, was invalidated, cleared or refetched.

Against the real sandbox over HTTP. "Nothing decoded, nothing built" is checked by counting
calls of ``Client._decode`` and ``build_frame`` (instrumentation around the real functions).
"""

from __future__ import annotations

import dataclasses
import pickle
import sqlite3
import warnings
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from _helpers.canary import Canary

import quantscope.loaders as L
from quantscope._config import RetryPolicy
from quantscope._errors import IncompleteDataWarning, StaleDataWarning
from quantscope._http.cache import CacheEntry
from quantscope._http.client import Client, FetchedPages, PageNumberPaging
from quantscope._http.framecache import FILENAME, FrameCache, frame_key
from quantscope._typed import arrowframe as _arrowframe
from quantscope._typed import schemas as _schemas
from quantscope._typed.frames import FrameSpec
from quantscope.loaders import _base
from quantscope.loaders.playbook import CONFIG
from quantscope.sandbox.serve import SandboxServer

PAGE = 250  # the scale-1 world has ~3.9k trades under tradingStatus=all: 16 pages


@dataclass
class Calls:
    decode: int = 0
    build: int = 0


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Counts of JSON bodies decoded by the client and frames of loads built by
    ``typed_frame``."""
    seen = Calls()
    decode, build = Client._decode, _base.build_frame

    def counting_decode(self: Client, response: Any, endpoint: str, *args: Any) -> Any:
        seen.decode += 1
        return decode(self, response, endpoint, *args)

    def counting_build(records: Any, spec: FrameSpec, **kwargs: Any) -> pd.DataFrame:
        # Frames of loads only: a write's result (update_playbook's) is typed the same way.
        seen.build += spec is not _schemas.PLAYBOOK_UPDATE
        return build(records, spec, **kwargs)

    monkeypatch.setattr(Client, "_decode", counting_decode)
    monkeypatch.setattr(_base, "build_frame", counting_build)
    return seen


def client_on(server: SandboxServer, cache_dir: Path, **kwargs: Any) -> Client:
    return Client(
        server.url, server.keys["enterprise"], cache_dir=str(cache_dir), progress=False, **kwargs
    )


def trades(c: Client, **kwargs: Any) -> pd.DataFrame:
    return L.load_trades(trading_status="all", page_size=PAGE, client=c, **kwargs)


def prov(frame: pd.DataFrame) -> dict[str, Any]:
    """The frame's provenance, ``fetched_at`` (ISO-8601 text in the attrs, so frames write to
    Parquet) read back as a datetime."""
    got = dict(frame.attrs["quantscope"])
    assert isinstance(got["fetched_at"], str)
    got["fetched_at"] = datetime.fromisoformat(got["fetched_at"])
    return got


def test_warm_reload_returns_the_stored_frame_without_decoding_or_building(
    client: Client, sandbox: SandboxServer, tmp_path: Path, calls: Calls
) -> None:
    cold = trades(client)
    pages = prov(cold)["pages"]
    assert pages > 10
    assert prov(cold)["requests"] == pages
    assert (calls.decode, calls.build) == (pages, 1)
    stored = {r.cache_key: r.created_at for r in client._session.cache.filter()}

    calls.decode = calls.build = 0
    hits = client.cache.hits
    warm = trades(client)
    assert (calls.decode, calls.build) == (0, 0)
    pd.testing.assert_frame_equal(warm, cold)
    assert warm is not cold
    got = prov(warm)
    assert got.pop("summary") == prov(cold)["summary"]
    assert got == {
        "endpoint": "/api/trades",
        "params": {"tradingStatus": "all"},
        "fetched_at": min(stored.values()),  # when the oldest page was fetched
        "from_cache": True,
        "pages": pages,
        "requests": 0,
        "service": client.settings.service,
        "stale": False,
    }
    assert got["fetched_at"] <= prov(cold)["fetched_at"] < got["fetched_at"] + timedelta(seconds=5)
    assert client.cache.hits == hits + pages

    # From disk: a new client on the same cache directory, and one offline.
    for other in (client_on(sandbox, tmp_path), client_on(sandbox, tmp_path, offline=True)):
        with other:
            again = trades(other)
        assert (calls.decode, calls.build) == (0, 0)
        pd.testing.assert_frame_equal(again, cold)
        assert prov(again)["requests"] == 0
        assert prov(again)["from_cache"] is True


def test_each_load_gets_its_own_frame(client: Client) -> None:
    trades(client)
    first = trades(client)
    first.loc[first.index[0], "pnl_usd"] = -1e9
    first.attrs["quantscope"]["summary"] = None
    second = trades(client)
    assert second["pnl_usd"].iloc[0] != -1e9
    assert second.attrs["quantscope"]["summary"] is not None


def test_another_load_is_another_frame(client: Client, calls: Calls) -> None:
    everything = trades(client)
    capped = trades(client, max_pages=2)
    bigger_pages = L.load_trades(trading_status="all", page_size=2 * PAGE, client=client)
    quant = trades(client, quant_id=1)
    assert calls.build == 4
    assert len(capped) == 2 * PAGE < len(everything) == len(bigger_pages)
    assert len(quant) < len(everything)
    calls.build = 0
    pd.testing.assert_frame_equal(trades(client, max_pages=2), capped)
    pd.testing.assert_frame_equal(trades(client, quant_id=1), quant)
    assert calls.build == 0


def test_a_changed_spec_misses(
    client: Client, calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = trades(client)
    fewer = dataclasses.replace(_schemas.TRADES, columns=_schemas.TRADES.columns[:-1])
    spec = _schemas.TRADES
    monkeypatch.setattr(_schemas, "TRADES", fewer)
    calls.build = 0
    narrow = trades(client)
    assert calls.build == 1
    assert list(narrow.columns) == list(full.columns[:-1])
    assert prov(narrow)["requests"] == 0  # the pages came from the cache, the frame did not

    rescaled = (*spec.columns[:-1], dataclasses.replace(spec.columns[-1], scale=2.0))
    monkeypatch.setattr(_schemas, "TRADES", dataclasses.replace(spec, columns=rescaled))
    trades(client)
    assert calls.build == 2
    monkeypatch.setattr(_schemas, "TRADES", spec)
    pd.testing.assert_frame_equal(trades(client), full)
    assert calls.build == 2  # the first spec's frame is still there


def test_cache_clear_means_no_stored_frame(client: Client, calls: Calls) -> None:
    first = trades(client)
    frames = FrameCache.beside(client.cache.path)
    assert frames.stats()[0] == 1
    client.cache.clear()
    assert frames.stats()[0] == 0  # the space comes back too
    calls.decode = calls.build = 0
    again = trades(client)
    assert calls.build == 1
    assert calls.decode == prov(again)["pages"]
    assert prov(again)["requests"] == prov(again)["pages"]
    assert prov(again)["from_cache"] is False
    pd.testing.assert_frame_equal(again, first)


def test_cleared_endpoint_means_no_stored_frame(client: Client, calls: Calls) -> None:
    trades(client)
    client.cache.clear("/api/trades*")
    calls.build = 0
    again = trades(client)
    assert calls.build == 1
    assert prov(again)["requests"] == prov(again)["pages"]


def test_expired_pages_mean_no_stored_frame_online(
    client: Client, sandbox: SandboxServer, tmp_path: Path, calls: Calls
) -> None:
    first = trades(client)
    # Expired now, the entries otherwise untouched (same created_at).
    client._session.cache.reset_expiration(timedelta(seconds=-1))

    with client_on(sandbox, tmp_path, offline=True) as offline:  # offline, any age will do
        calls.build = 0
        pd.testing.assert_frame_equal(trades(offline), first)
        assert calls.build == 0

    again = trades(client)
    assert calls.build == 1
    assert prov(again)["requests"] == prov(again)["pages"]  # fetched again
    calls.build = 0
    trades(client)  # and the frame of the new pages is stored
    assert calls.build == 0


def test_a_write_means_no_stored_frame(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path, calls: Calls
) -> None:
    server = fresh_sandbox()
    with client_on(server, tmp_path) as c:
        before = L.load_playbook(2, client=c)
        again = L.load_playbook(2, client=c)
        assert calls.build == 1
        pd.testing.assert_frame_equal(again, before)
        assert prov(again)["from_cache"] is True
        assert prov(again)["quant_id"] == 2

        entry = before[
            (before["criterion"] == "smart_money_buys") & (before["config_type"] == "BUYING")
        ].iloc[0]
        change = {"config_id": entry["config_id"], "value": entry["threshold"] + 1}
        L.update_playbook(2, [change], client=c)
        after = L.load_playbook(2, client=c)
        assert calls.build == 2
        assert prov(after)["from_cache"] is False
        assert prov(after)["requests"] == 1
        row = after[after["config_id"] == entry["config_id"]].iloc[0]
        assert row["threshold"] == entry["threshold"] + 1

        # Refetched by another way than the loader (same second, same size, new value): the
        # stored frame of the first read is not that answer's either.
        L.load_playbook(2, client=c)
        change = {"config_id": entry["config_id"], "value": entry["threshold"] + 2}
        L.update_playbook(2, [change], client=c)
        c.get(CONFIG, {"quantId": 2})
        latest = L.load_playbook(2, client=c)
        row = latest[latest["config_id"] == entry["config_id"]].iloc[0]
        assert row["threshold"] == entry["threshold"] + 2
        assert calls.build == 3


@pytest.mark.slow
def test_stale_fallback_never_serves_a_frame_of_replaced_pages(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path, calls: Calls
) -> None:
    server = fresh_sandbox()
    url, key = server.url, server.keys["enterprise"]
    c = Client(url, key, cache_dir=str(tmp_path), progress=False, retry=RetryPolicy(max_retries=0))
    old = trades(c)  # its frame is stored
    # The pages expire and are fetched again around the loader: the stored frame is of
    # answers no longer in the cache.
    c._session.cache.reset_expiration(timedelta(seconds=-1))
    refetched = c.get_pages("/api/trades", {"tradingStatus": "all"}, paging=PageNumberPaging(PAGE))
    assert refetched.provenance.requests == prov(old)["pages"]
    c._session.cache.reset_expiration(timedelta(seconds=-1))
    server.stop()  # the service is down: the loader falls back on the expired pages
    calls.build = 0
    with pytest.warns(StaleDataWarning):
        stale = trades(c)
    assert calls.build == 1
    assert prov(stale)["stale"] is True
    assert prov(stale)["requests"] == 0
    assert prov(stale)["fetched_at"] > prov(old)["fetched_at"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # offline: no warning, and still built from the pages
        with Client(url, key, cache_dir=str(tmp_path), offline=True, progress=False) as offline:
            assert prov(trades(offline))["fetched_at"] == prov(stale)["fetched_at"]
    assert calls.build == 2
    c.close()


def test_the_key_is_never_in_the_frame_cache(client: Client, sandbox: SandboxServer) -> None:
    trades(client)
    L.load_playbook(1, client=client)
    path = client.settings.cache_path.with_name(FILENAME)
    assert FrameCache(path).stats()[0] == 2
    assert sandbox.keys["enterprise"].encode() not in path.read_bytes()


def test_another_key_does_not_see_the_frames(
    sandbox: SandboxServer, tmp_path: Path, calls: Calls
) -> None:
    with client_on(sandbox, tmp_path) as enterprise:
        L.load_trades(1, client=enterprise)
        L.load_trades(1, client=enterprise)
    assert calls.build == 1
    basic = Client(sandbox.url, sandbox.keys["basic"], cache_dir=str(tmp_path), progress=False)
    with pytest.warns(IncompleteDataWarning, match="basic plan covers 1 chain"):
        L.load_trades(1, client=basic)  # not the enterprise key's frame (nor pages)
    assert calls.build == 2
    with basic, pytest.warns(IncompleteDataWarning, match="basic plan covers 1 chain"):
        L.load_trades(1, client=basic)  # its own frame, from the frame cache
    assert calls.build == 2


def test_a_broken_frame_cache_never_breaks_a_load(client: Client, calls: Calls) -> None:
    client.settings.cache_path.with_name(FILENAME).mkdir()  # not a database
    first = trades(client)
    pd.testing.assert_frame_equal(trades(client), first)
    assert calls.build == 2  # built each time, no error


# --- the store on its own -------------------------------------------------------------


@dataclass
class Answers:
    """A stand-in for ``ResponseCache.unchanged``: a fixed verdict, and what it was asked."""

    verdict: bool
    asked: list[list[CacheEntry]] = dataclasses.field(default_factory=list)

    def unchanged(self, entries: Sequence[CacheEntry]) -> bool:
        self.asked.append(list(entries))
        return self.verdict


SAME = Answers(True)


def entry(name: str) -> list[CacheEntry]:
    return [CacheEntry(name, datetime(2026, 1, 1, tzinfo=UTC))]


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"x": range(rows)}, dtype="float64")


def test_least_recently_used_frames_go_first(tmp_path: Path) -> None:
    size = FrameCache(tmp_path / "probe.sqlite")
    assert size.put("probe", frame(10_000), entry("p"))
    one = size.stats()[1]
    cache = FrameCache(tmp_path / FILENAME, max_bytes=int(2.5 * one))
    for name in "abc":
        assert cache.put(name, frame(10_000), entry(name))
    assert cache.stats()[0] == 2
    assert cache.get("a", SAME) is None
    got = cache.get("c", SAME)
    assert got is not None
    assert got.entries == tuple(entry("c"))
    pd.testing.assert_frame_equal(got.frame, frame(10_000))
    assert not cache.put("huge", frame(100_000), entry("h"))  # larger than the bound
    assert cache.stats()[0] == 2


def test_get_asks_about_the_entries_it_was_built_from(tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / FILENAME)
    entries = [*entry("page-1"), CacheEntry("page-2", datetime.now(UTC))]
    cache.put("k", frame(3), entries)
    changed = Answers(False)

    assert cache.get("k", changed) is None
    assert changed.asked == [entries]
    assert cache.get("k", SAME) is not None  # a miss does not drop the frame
    assert cache.clear() == 1
    assert cache.get("k", SAME) is None


def test_keys_change_with_every_input() -> None:
    def build(recipe: Any, pages: FetchedPages) -> pd.DataFrame:
        return pd.DataFrame()

    def other(recipe: Any, pages: FetchedPages) -> pd.DataFrame:
        return pd.DataFrame()

    base: dict[str, Any] = {
        "spec": _schemas.TRADES,
        "build": build,
        "scope": "s",
        "endpoint": "/api/trades",
        "params": {"quantId": "1"},
        "shape": {"paging": PageNumberPaging(10), "max_pages": None},
    }
    variants: list[dict[str, Any]] = [
        {"spec": _schemas.EVALUATIONS},
        {"spec": dataclasses.replace(_schemas.TRADES, columns=_schemas.TRADES.columns[1:])},
        {"build": other},
        {"scope": "t"},
        {"endpoint": "/api/eval-results"},
        {"params": {"quantId": "2"}},
        {"shape": {"paging": PageNumberPaging(20), "max_pages": None}},
        {"shape": {"paging": PageNumberPaging(10), "max_pages": 3}},
    ]
    keys = {frame_key(**base), *(frame_key(**{**base, **v}) for v in variants)}
    assert len(keys) == 1 + len(variants)
    assert frame_key(**base) == frame_key(**dict(base))


# --- every list and detail loader goes through the one recipe ------------------------------


def test_evaluations_warm_reload_is_the_stored_frame(client: Client, calls: Calls) -> None:
    cold = L.load_evaluations(page_size=500, max_pages=4, client=client)
    assert len(cold) == 2000
    assert prov(cold)["requests"] == 4
    assert (calls.decode, calls.build) == (4, 1)
    calls.decode = calls.build = 0
    warm = L.load_evaluations(page_size=500, max_pages=4, client=client)
    assert (calls.decode, calls.build) == (0, 0)
    pd.testing.assert_frame_equal(warm, cold)
    assert_reloaded(prov(warm), prov(cold))


def assert_reloaded(warm: dict[str, Any], cold: dict[str, Any]) -> None:
    """A frame-cache hit's provenance: the cold load's, from the cache, no request, fetched
    when the oldest answer was stored (at most a moment before the cold load saw it)."""
    assert {**warm, "fetched_at": None} == {
        **cold,
        "from_cache": True,
        "requests": 0,
        "fetched_at": None,
    }
    assert warm["fetched_at"] <= cold["fetched_at"] < warm["fetched_at"] + timedelta(seconds=5)


def test_eval_details_warm_spends_nothing_and_reads_no_stored_answer(
    client: Client,
    sandbox: SandboxServer,
    tmp_path: Path,
    calls: Calls,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ids = [
        int(i)
        for i in L.load_evaluations(page_size=300, max_pages=1, client=client)["evaluation_id"]
    ]
    cold = L.load_eval_details(ids, client=client)
    assert prov(cold)["requests"] == 300
    assert prov(cold)["params"] == {"evaluationId": "300 ids"}
    calls.decode = calls.build = 0
    quota = client.quota.remaining
    # Details never expire: the check reads each entry's stamp from the row, never the answer.
    monkeypatch.setattr(
        type(client.cache._store), "get_response", lambda *a, **k: pytest.fail("deserialized")
    )
    with client_on(sandbox, tmp_path) as other:
        for c in (client, other):
            warm = L.load_eval_details(ids, client=c)
            pd.testing.assert_frame_equal(warm, cold)
            assert prov(warm)["requests"] == 0
            assert prov(warm)["from_cache"] is True
            assert prov(warm)["pages"] == 300
            assert prov(warm)["params"] == prov(cold)["params"]
    assert (calls.decode, calls.build) == (0, 0)
    assert client.quota.remaining == quota


def test_row_stamps_are_read_from_the_head_of_each_row(
    client: Client, calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``unchanged`` reads created_at and expires from the first bytes of each stored row
    (``_http.cacheformat``: at a fixed offset), never the answer; an expired row says so there."""
    from quantscope._http import cachestore as _cachestore
    from quantscope._http.cacheformat import STAMP_BYTES

    first = trades(client)
    read: list[int] = []
    real = _cachestore.stamps_of
    with monkeypatch.context() as patch:
        patch.setattr(_cachestore, "stamps_of", lambda head: read.append(len(head)) or real(head))
        patch.setattr(
            type(client.cache._store), "get_response", lambda *a, **k: pytest.fail("deserialized")
        )
        calls.build = 0
        pd.testing.assert_frame_equal(trades(client), first)
    assert calls.build == 0
    assert len(read) == prov(first)["pages"]
    assert set(read) == {STAMP_BYTES}
    client._session.cache.reset_expiration(timedelta(seconds=-1))  # expired: read so too
    assert prov(trades(client))["requests"] == prov(first)["pages"]
    assert calls.build == 1


@pytest.mark.parametrize(
    "load",
    [
        lambda c: L.load_eval_history(1, client=c),
        lambda c: L.load_eval_timeseries(start="2026-01-01", end="2027-01-01", client=c),
        lambda c: L.load_signals(client=c),
        lambda c: L.load_signal_stats(client=c),
        lambda c: L.load_ohlcv(1, client=c),
        pytest.param(  # 20 listed, the dashboard's cap: it says so
            lambda c: L.load_recommendations(client=c),
            marks=pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning"),
        ),
        lambda c: L.load_playbook(1, client=c),
    ],
    ids=[
        "history",
        "timeseries",
        "signals",
        "signal_stats",
        "ohlcv",
        "recommendations",
        "playbook",
    ],
)
def test_every_list_loader_reloads_from_the_frame_cache(
    client: Client,
    calls: Calls,
    load: Callable[[Client], pd.DataFrame],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cold = load(client)
    assert calls.build == 1
    assert prov(cold)["requests"] == 1
    converted: list[int] = []  # frames read by pyarrow's full conversion, not as views
    own = _arrowframe._own_columns
    monkeypatch.setattr(_arrowframe, "_own_columns", lambda f: converted.append(1) or own(f))
    warm = load(client)
    assert calls.build == 1
    assert calls.decode == 1
    assert converted == []  # every loader's dtypes are read back as views of the row
    pd.testing.assert_frame_equal(warm, cold)
    assert_reloaded(prov(warm), prov(cold))


# --- Arrow, never pickle --------------------------------------------------------------


def stored_rows(path: Path) -> list[tuple[str, bytes]]:
    with closing(sqlite3.connect(path)) as db:
        return [(k, bytes(b)) for k, b in db.execute("SELECT key, frame FROM arrow_frames")]


def test_frames_are_stored_as_arrow_and_read_back_equal(client: Client, calls: Calls) -> None:
    cold = L.load_eval_details([1, 2, 3], client=client)
    (_, blob), *_ = stored_rows(client.frames.path)
    table = pa.ipc.open_stream(blob).read_all()  # an Arrow IPC stream, nothing else
    assert table.num_rows == len(cold)
    assert table.column_names == list(cold.columns)
    assert table.schema.field("extra_info").type == pa.large_string()
    assert table.schema.field("chain").type.value_type == pa.large_string()  # a category
    assert b"\x80\x05" not in blob[:2]  # not a pickle (protocol 5 starts so)
    calls.build = 0
    warm = L.load_eval_details([1, 2, 3], client=client)
    assert calls.build == 0
    pd.testing.assert_frame_equal(warm, cold)


def test_a_pickle_in_the_frame_cache_is_never_unpickled(
    client: Client, calls: Calls, tmp_path: Path
) -> None:
    """A colleague's copied cache with a pickle where a frame should be (or the pickled frames
    of format 1): a miss, rebuilt from the pages and replaced by Arrow; nothing unpickled."""
    cold = trades(client)
    path = client.frames.path
    ((key, _),) = stored_rows(path)
    canary = tmp_path / "unpickled"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "UPDATE arrow_frames SET frame = ? WHERE key = ?", (pickle.dumps(Canary(canary)), key)
        )
        # The table of format 1 (pickled frames), as an older quantscope left it.
        db.execute(
            "CREATE TABLE frames "
            "(key TEXT PRIMARY KEY, used REAL, size INTEGER, meta TEXT, frame BLOB)"
        )
        db.execute(
            "INSERT INTO frames VALUES (?, 0, 1, '[]', ?)", (key, pickle.dumps(Canary(canary)))
        )
    calls.build = 0
    again = trades(client)
    assert calls.build == 1
    assert not canary.exists()
    pd.testing.assert_frame_equal(again, cold)
    ((same, blob),) = stored_rows(path)  # replaced by the rebuilt frame, as Arrow
    assert same == key
    assert pa.ipc.open_stream(blob).read_all().num_rows == len(cold)
    with closing(sqlite3.connect(path)) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "frames" not in tables  # the pickles are dropped unread
    calls.build = 0
    pd.testing.assert_frame_equal(trades(client), cold)
    assert calls.build == 0
    assert not canary.exists()


def test_a_frame_arrow_cannot_hold_is_not_stored(tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / FILENAME)
    mixed = pd.DataFrame({"x": pd.array([1, "a", 2.5], dtype=object)})
    assert not cache.put("mixed", mixed, entry("m"))
    dated = frame(3)
    dated.attrs["when"] = datetime(2026, 1, 1, tzinfo=UTC)  # not JSON: pyarrow would drop it
    assert not cache.put("dated", dated, entry("d"))
    assert cache.stats() == (0, 0)


def test_empty_categories_keep_their_dtype(tmp_path: Path) -> None:
    cache = FrameCache(tmp_path / FILENAME)
    empty = pd.DataFrame(
        {
            "chain": pd.Categorical([None, None], categories=pd.Index([], dtype="str")),
            "x": [1.0, 2.0],
        }
    )
    empty.attrs = {"quantscope": {"endpoint": "/api/x", "params": {"a": "1"}}}
    assert cache.put("e", empty, entry("e"))
    got = cache.get("e", SAME)
    assert got is not None
    pd.testing.assert_frame_equal(got.frame, empty)
    assert got.frame.attrs == empty.attrs


def test_a_reloaded_frame_is_writable(client: Client, calls: Calls) -> None:
    cold = trades(client)
    warm = trades(client)
    assert calls.build == 1
    warm.loc[warm.index[0], ["pnl_usd", "trade_id"]] = [1.5, 7]  # in place, as users do
    warm.iloc[1, warm.columns.get_loc("opened_at")] = pd.Timestamp("2026-01-01", tz="UTC")
    assert warm["pnl_usd"].iloc[0] == 1.5
    assert warm["trade_id"].iloc[0] == 7
    # Every kind of column, by the in-place ways pandas offers (pandas 3 writes into the
    # column's own array: a read-only one would raise).
    warm.loc[warm["roi"] > 0, "roi"] = 0.0
    warm.loc[warm.index[2], ["chain", "evaluation_passed"]] = [cold["chain"].iloc[-1], None]
    warm.fillna({"closed_at": pd.Timestamp("2026-02-01", tz="UTC")}, inplace=True)
    warm.mask(warm[["duration_s"]] > 60, -1.0, inplace=True)
    warm.loc[warm.index[3], "token_symbol"] = "EDITED"
    assert (warm["roi"] <= 0).all()
    assert warm["closed_at"].notna().all()
    assert warm["evaluation_passed"].isna().iloc[2]
    assert warm["token_symbol"].iloc[3] == "EDITED"
    again = trades(client)  # the stored frame is not the one edited
    pd.testing.assert_frame_equal(again, cold)


def test_a_frame_is_written_into_its_blob_as_the_stream_frame_to_arrow_makes(
    tmp_path: Path,
) -> None:
    """``put`` writes the stream in pieces into a blob sized by a counting pass: the stored
    bytes are exactly ``frame_to_arrow``'s, and the size column says how many."""
    cache = FrameCache(tmp_path / FILENAME)
    stored = frame(5_000).assign(
        text=pd.array([None if i % 7 == 0 else f"t{i}" * 40 for i in range(5_000)], "string"),
        chain=pd.Categorical([("eth", "sol", None)[i % 3] for i in range(5_000)]),
    )
    assert cache.put("k", stored, entry("k"))
    ((key, blob),) = stored_rows(cache.path)
    assert key == "k"
    assert blob == bytes(_arrowframe.frame_to_arrow(stored))
    assert cache.stats() == (1, len(blob))
    got = cache.get("k", SAME)
    assert got is not None
    pd.testing.assert_frame_equal(got.frame, stored)


def test_a_stream_longer_than_counted_is_not_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blob cannot grow: a stream that does not fit its counted size leaves nothing (the
    row is rolled back) and the load goes on (False)."""
    cache = FrameCache(tmp_path / FILENAME)
    assert cache.put("old", frame(3), entry("o"))
    monkeypatch.setattr(_arrowframe.ArrowStream, "nbytes", property(lambda self: 100))
    assert not cache.put("k", frame(1_000), entry("k"))
    assert [key for key, _ in stored_rows(cache.path)] == ["old"]
