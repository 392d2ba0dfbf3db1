"""Paged loads keep each page as typed columns as it arrives (``Client.get_pages(fold=)``,
``loaders._base.Recipe.folder``): the same frames, counts, checks and errors as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from _helpers import FakeService, Seen, fake_client, ok

import quantscope.loaders as L
from quantscope._errors import InvalidResponseError
from quantscope._http.client import PageNumberPaging
from quantscope._typed import schemas as _schemas
from quantscope._typed.frames import Columns, build_frame
from quantscope.loaders import _fold
from quantscope.loaders._fold import PageFolder, joined


def test_load_evaluations_over_pages_equals_build_frame_on_the_plain_pages(
    api: Callable[..., Any], sandbox: Any, tmp_path: Path
) -> None:
    from quantscope._http.client import Client

    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path)) as c:
        df = L.load_evaluations(2, page_size=250, max_pages=4, client=c)
    session = api()
    items = []
    for n in range(4):
        params = {"quantId": 2, "offset": n * 250, "limit": 250}
        items.extend(
            orjson.loads(session.get("/api/eval-results", params=params).content)["results"]
        )
    want = build_frame(items, _schemas.EVALUATIONS)
    want.attrs = df.attrs
    assert len(df) == 1000
    assert df.attrs["quantscope"]["pages"] == 4
    pd.testing.assert_frame_equal(df, want)


def _pages(items_of: Callable[[int], Any], total: int) -> Callable[[Seen], Any]:
    def handler(seen: Seen) -> Any:
        n = int(seen.query.get("page", 1))
        return ok({"trades": items_of(n), "pagination": {"total": total}, "summary": {"n": n}})

    return handler


def test_get_pages_folds_each_page_in_order_and_counts_its_items(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(_pages(lambda n: [{"id": n}, {"id": 10 + n}] if n < 3 else [{"id": 3}], 5))
    seen: list[Any] = []

    def fold(body: Any) -> Any:
        seen.append(body["summary"]["n"])
        return {**body, "trades": len(body["trades"])}  # the total stays: paging reads it

    client = fake_client(service, tmp_path)
    got = client.get_pages("/api/trades", paging=PageNumberPaging(2), fold=fold)
    assert seen == [1, 2, 3]
    assert got.items == []
    assert [p["trades"] for p in got.pages] == [2, 2, 1]
    assert got.total == 5
    assert got.provenance.pages == 3
    again = client.get_pages("/api/trades", paging=PageNumberPaging(2), fold=fold)  # cached
    assert seen == [1, 2, 3, 1, 2, 3]
    assert again.provenance.requests == 0


def test_a_page_of_another_shape_is_not_folded_and_is_the_usual_error(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    def items(n: int) -> Any:
        return {"not": "a list"} if n == 2 else [{"id": n}, {"id": 10 + n}]

    service = serve(_pages(items, 6))
    folded: list[int] = []

    def fold(body: Any) -> Any:
        folded.append(body["summary"]["n"])
        return dict(body)

    with pytest.raises(InvalidResponseError, match="expected 'trades'"):
        fake_client(service, tmp_path).get_pages(
            "/api/trades", paging=PageNumberPaging(2), fold=fold
        )
    assert folded == [1]


# The fake service reports a Basic plan's daily limit: the frame says the plan's chains narrow it.
@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
def test_a_load_whose_pages_hold_no_field_is_refused_and_forgotten(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    service = serve(_pages(lambda n: [{"other": n}, {"other": 10 + n}], 4))
    client = fake_client(service, tmp_path)
    with pytest.raises(InvalidResponseError, match="none of the 4 records holds a field of trades"):
        L.load_trades(page_size=2, client=client)
    sent = len(service.seen)
    with pytest.raises(InvalidResponseError):
        L.load_trades(page_size=2, client=client)
    assert len(service.seen) == 2 * sent  # both pages were dropped from the cache: asked again


@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
@pytest.mark.filterwarnings("ignore::quantscope.DataQualityWarning")  # sparse records
def test_trades_frame_reads_the_folded_pages(
    serve: Callable[..., FakeService], tmp_path: Path
) -> None:
    rows = {1: [{"id": 1, "token_chain": "BSC"}, {"id": 2}], 2: [{"id": 3, "token_chain": "BASE"}]}
    service = serve(_pages(lambda n: rows[n], 3))
    df = L.load_trades(page_size=2, client=fake_client(service, tmp_path))
    want = build_frame([*rows[1], *rows[2]], _schemas.TRADES)
    want.attrs = df.attrs
    pd.testing.assert_frame_equal(df, want)
    assert list(df["chain"].cat.categories) == ["BASE", "BSC", "SOLANA"]  # the spec's set
    assert df.attrs["quantscope"]["summary"] == {"n": 1}
    assert isinstance(Columns.of(rows[1], _schemas.TRADES), Columns)


@pytest.mark.filterwarnings("ignore::quantscope.DataQualityWarning")  # sparse records
def test_pages_are_folded_a_batch_at_a_time_and_joined_in_page_order() -> None:
    """A batch converts the items of the pages that reached it together; pages that arrive out
    of their order (cached ones first) are put back in page order; pages of the last, unfilled
    batch keep their items and are converted at the join."""
    spec = _schemas.EVALUATIONS
    pages = [
        {"results": [{"id": 10 * n + i, "chain": ("eth", "sol")[i % 2]} for i in range(3)]}
        for n in range(7)
    ]
    folder = PageFolder("results", spec, rows=6)  # two pages of 3 items a batch
    order = [0, 2, 4, 1, 3, 5, 6]  # 0, 2, 4 cached; then the misses in order
    kept = {n: folder({**pages[n]}) for n in order}
    held = [kept[n]["results"] for n in range(7)]
    assert [type(h).__name__ for h in held] == [*["PageRows"] * 6, "list"]
    assert held[0].columns is held[2].columns  # batches in order of arrival: {0, 2} {4, 1}
    assert held[4].columns is held[1].columns
    assert held[3].columns is held[5].columns
    got = joined(
        [kept[n] for n in range(7)],
        "results",
        spec,
        lambda run: Columns.of(run, spec),
        lambda body: list(body["results"]),
    )
    want = build_frame([item for page in pages for item in page["results"]], spec)
    pd.testing.assert_frame_equal(got.frame(), want)
    assert list(got.frame()["evaluation_id"]) == [10 * n + i for n in range(7) for i in range(3)]


def test_load_evaluations_from_partly_cached_pages_equals_a_cold_load(
    sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages 2 and 4 cached before (folded first, the rest after), two pages a batch: the
    same frame, in order."""
    from quantscope._http.client import Client

    monkeypatch.setattr(_fold, "FOLD_ROWS", 200)
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path / "a")) as c:
        cold = L.load_evaluations(2, page_size=100, max_pages=6, client=c)
    with Client(sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path / "b")) as c:
        for n in (1, 3):
            c.get("/api/eval-results", {"quantId": 2, "offset": n * 100, "limit": 100})
        warm = L.load_evaluations(2, page_size=100, max_pages=6, client=c)
    assert warm.attrs["quantscope"]["requests"] == 4
    pd.testing.assert_frame_equal(warm.reset_index(drop=True), cold.reset_index(drop=True))
