"""A filter that matches nothing warns (issue 24: ``load_trades(quant_id=99)`` returned 0 rows
with no word): one ``EmptyResultWarning`` naming the filters, the plan and the service, on a
fresh load as on a frame-cache hit; none where rows came back, none inside a sync."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import quantscope as qs
import quantscope.loaders as L
from quantscope._http.client import Client


def test_a_quant_the_service_does_not_know_warns(client: Client) -> None:
    for _ in range(2):  # the second load is a frame-cache hit: it warns again
        with pytest.warns(qs.EmptyResultWarning) as seen:
            frame = L.load_trades(quant_id=99, client=client)
        assert len(frame) == 0
        (record,) = seen.list
        warning = record.message
        assert isinstance(warning, qs.EmptyResultWarning)
        assert warning.endpoint == "/api/trades"
        assert warning.filters == {"quantId": "99", "tradingStatus": "executed"}
        assert warning.plan == "enterprise"
        assert str(warning) == (
            "quantscope: /api/trades: no rows match quantId=99, tradingStatus=executed "
            f"(enterprise plan, {client.settings.service}); check the values: an id the "
            "service does not know, or a window with nothing in it, matches nothing"
        )
        assert record.filename == __file__  # points at the caller, not quantscope


def test_an_empty_window_of_evaluations_warns(client: Client) -> None:
    with pytest.warns(qs.EmptyResultWarning, match=r"/api/eval-results: no rows match .*quant"):
        frame = L.load_evaluations(1, start="2020-01-01", end="2020-01-31", client=client)
    assert len(frame) == 0


def test_a_filter_that_matches_rows_does_not_warn(client: Client) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", qs.EmptyResultWarning)
        assert len(L.load_trades(1, start="2026-07-01", end="2026-07-31", client=client)) > 0


def test_a_sync_of_an_empty_window_does_not_warn(client: Client, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", qs.EmptyResultWarning)
        report = qs.sync(
            tmp_path / "cat",
            quant_id=1,
            resources=["trades", "evaluations"],
            start="2020-01-01",
            end="2020-01-31",
            client=client,
        )
    assert report.rows_added == 0
    assert report.status == "complete"
