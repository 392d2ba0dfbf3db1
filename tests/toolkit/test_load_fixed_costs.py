"""A small cold load pays its fixed costs once, not once per page or twice per request.

Fact (issue 22): a 4-page cold ``load_trades`` (3,939 rows) converted every column once per
page (140 conversions, 20 of them datetime parses), prepared each request twice through the
session (once only to compute its cache key), and pandas deep-copied the frame's attrs into
every column it handed to Arrow when the frame was stored (~2,900 ``deepcopy`` calls). The
work is counted here, never timed; the frames stay the ones built before (values, dtypes,
attrs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pandas.core.generic
import pytest
import requests

from quantscope._http.client import Client
from quantscope._typed import frames as _frames
from quantscope._typed import schemas as _schemas
from quantscope._typed.arrowframe import frame_from_arrow, frame_to_arrow
from quantscope.loaders import trades as trades_module
from quantscope.loaders.evaluations import load_eval_details
from quantscope.loaders.trades import load_trades

COLUMNS = len(_schemas.TRADES.columns)


def counting(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, kinds: list[str] | None = None
) -> list[Any]:
    """Each call of ``owner.name`` from now on (its first argument's kind, for ``convert``)."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1].kind if kinds is not None else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.fixture(scope="module")
def cold(sandbox: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One cold 4-page ``load_trades(trading_status="all")`` with its conversions counted."""
    with pytest.MonkeyPatch.context() as mp:
        converted = counting(mp, _frames, "convert", kinds=[])
        with Client(
            sandbox.url,
            sandbox.keys["enterprise"],
            cache_dir=str(tmp_path_factory.mktemp("cold")),
            progress=False,
        ) as c:
            frame = load_trades(trading_status="all", client=c)
    return {"frame": frame, "converted": converted}


def test_a_four_page_load_converts_each_column_once(cold: dict[str, Any]) -> None:
    frame = cold["frame"]
    assert frame.attrs["quantscope"]["pages"] == 4
    assert len(frame) == 3939
    assert len(cold["converted"]) == COLUMNS  # was 4 x 35 = 140
    dates = [k for k in cold["converted"] if k in ("iso", "trade_date", "epoch_ms")]
    assert len(dates) == 5  # was 20


def test_the_frame_equals_the_one_folded_page_by_page(
    cold: dict[str, Any],
    sandbox: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trades_module, "TRADES_FOLD_ROWS", 1_000)  # a batch a page, as before
    converted = counting(monkeypatch, _frames, "convert", kinds=[])
    with Client(
        sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path), progress=False
    ) as c:
        before = load_trades(trading_status="all", client=c)
    assert len(converted) == 4 * COLUMNS
    after = cold["frame"]
    pd.testing.assert_frame_equal(after, before)  # values, dtypes, categories, index
    timeless = ("fetched_at",)
    assert {k: v for k, v in after.attrs["quantscope"].items() if k not in timeless} == {
        k: v for k, v in before.attrs["quantscope"].items() if k not in timeless
    }


def test_a_request_is_prepared_by_the_session_once(
    cold: dict[str, Any], sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [int(i) for i in cold["frame"]["evaluation_id"].dropna().iloc[:6]]
    # every preparation, by the session (``prepare_request``) or by the client's cold path
    # (``_http.sender.prepare_get``), ends in one ``PreparedRequest.prepare``
    prepared = counting(monkeypatch, requests.PreparedRequest, "prepare")
    with Client(
        sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path), progress=False
    ) as c:
        first = load_eval_details(ids, client=c)
        assert len(prepared) == len(ids)  # was 2 per request: one only to key the look-up
        assert first.attrs["quantscope"]["requests"] == len(ids)
        again = load_eval_details(ids, client=c)
        fresh = Client(
            sandbox.url, sandbox.keys["enterprise"], cache_dir=str(tmp_path), progress=False
        )
        with fresh:
            single = load_eval_details(ids[0], client=fresh)
    # the keys looked up are the keys stored: nothing is asked again
    assert again.attrs["quantscope"]["requests"] == 0
    assert single.attrs["quantscope"]["requests"] == 0
    assert len(prepared) == len(ids)
    pd.testing.assert_frame_equal(again, first)


def test_storing_a_frame_copies_its_attrs_into_no_column(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pd.DataFrame({f"c{i}": range(5) for i in range(30)})
    frame.attrs = {"quantscope": {"endpoint": "/api/x", "summary": {"a": list(range(50))}}}
    copies = counting(monkeypatch, pandas.core.generic, "deepcopy")
    blob = frame_to_arrow(frame)
    assert copies == []  # was one deep copy of the attrs per column
    back = frame_from_arrow(blob)
    assert back.attrs == frame.attrs
    pd.testing.assert_frame_equal(back, frame)


def test_a_frame_whose_attrs_are_not_json_is_still_refused() -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    frame.attrs = {"when": pd.Timestamp("2026-01-01")}
    with pytest.raises((TypeError, UserWarning)):  # json's error now, pyarrow's warning before
        frame_to_arrow(frame)
