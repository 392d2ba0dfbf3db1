"""pandas' private helpers are a speed path only: without them the same frames come out
(docs/architecture.md, "Private internals"; tests/tooling/test_private_internals.py).

``_typed.frames`` extracts record columns with ``pandas._libs.lib.dicts_to_array`` and
``_typed.arrowframe`` makes zoned datetimes with ``DatetimeArray._simple_new``, each only on a
verified pandas (``_versions.VERIFIED_PANDAS``); elsewhere, and here with the helper taken
away, the public way runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope._typed import arrowframe as _arrowframe
from quantscope._typed import frames as _frames
from quantscope._typed.arrowframe import frame_from_arrow, frame_to_arrow
from quantscope._versions import VERIFIED_PANDAS, installed_within, within


@pytest.mark.parametrize(
    ("version", "verified"),
    [("2.2.0", True), ("3.1.1", True), ("3.2.0", False), ("2.1.4", False), ("dev", False)],
)
def test_only_verified_pandas_versions_take_the_private_path(version: str, verified: bool) -> None:
    assert within(version, VERIFIED_PANDAS) is verified
    assert installed_within("no-such-distribution", VERIFIED_PANDAS) is False


def test_records_give_the_same_frame_without_dicts_to_array(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _frames._dicts_to_array is not None  # the verified pandas of the constraints
    fast = L.load_trades(quant_id=1, page_size=200, max_pages=1, client=client)
    with monkeypatch.context() as patch:
        patch.setattr(_frames, "_dicts_to_array", None)
        client.cache.clear()  # the frame is built again, from the same cached pages
        plain = L.load_trades(quant_id=1, page_size=200, max_pages=1, client=client)
    pd.testing.assert_frame_equal(plain, fast, check_like=False)


def test_zoned_datetimes_read_back_the_same_without_simple_new(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    moments = pd.to_datetime(
        ["2026-01-01T00:00:00Z", None, "2026-06-30T12:34:56.789Z"], utc=True, format="ISO8601"
    )
    frame = pd.DataFrame(
        {
            "utc": moments.as_unit("us"),
            "paris": moments.tz_convert("Europe/Paris").as_unit("ms"),
            "n": [1.0, np.nan, 3.0],
        }
    )
    fast = frame_from_arrow(bytearray(frame_to_arrow(frame)))
    monkeypatch.setattr(_arrowframe, "_VIEW_ZONED", False)
    plain = frame_from_arrow(bytearray(frame_to_arrow(frame)))
    pd.testing.assert_frame_equal(fast, frame)
    pd.testing.assert_frame_equal(plain, frame)


def test_a_read_only_stream_reads_back_the_same_without_the_block_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = pd.DataFrame(
        {
            "x": [1.5, 2.5, np.nan],
            "when": pd.to_datetime(["2026-01-01", "2026-01-02", None]).tz_localize("UTC"),
            "kind": pd.Categorical(["a", "b", "a"]),
        }
    )
    blob = bytes(frame_to_arrow(frame))  # read-only: the columns are copied to be writable
    fast = frame_from_arrow(blob)
    monkeypatch.setattr(_arrowframe, "_PANDAS_INTERNALS", False)
    plain = frame_from_arrow(blob)
    for got in (fast, plain):
        pd.testing.assert_frame_equal(got, frame)
        got.loc[0, "x"] = 9.0  # writable, as every frame a load returns
        assert got.loc[0, "x"] == 9.0
