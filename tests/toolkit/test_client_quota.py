"""The quota rules against the real sandbox: refuse before sending, the share rule, partial
loads on request, one exception family, estimates, and a panel that does not drain the quota.

Every count is taken server-side (``quota_left``): what the client says it did not send, the
service did not count. Tests that spend quota use ``fresh_sandbox`` or reset it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _helpers import quota_left, spend_quota

import quantscope as qs
import quantscope.loaders as L
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import ThresholdPanel


def make(server: SandboxServer, plan: str, cache: Path) -> Client:
    return Client(server.url, server.keys[plan], cache_dir=str(cache), progress=False)


def test_a_load_that_does_not_fit_sends_nothing_and_partial_is_explicit(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    spend_quota(server, "basic", 24)  # 76 left, as observed
    client = make(server, "basic", tmp_path)
    with pytest.raises(qs.QuotaWouldBeExceededError) as info:
        L.load_evaluations(page_size=100, client=client)
    refused = info.value
    pages = refused.needed + 1
    # the first page told the total (75 left); the other pages do not fit: none was sent
    assert (refused.fetched, refused.remaining, refused.limit) == (1, 75, 100)
    assert refused.needed > 75
    assert quota_left(server, "basic") == 75
    text = str(refused)
    assert "\n" not in text
    assert f"needed {refused.needed} requests for pages not in the cache" in text
    assert "75 of 100 are left" in text
    assert "after the reset at " in text
    assert "pass partial=True, confirm=True: it fetches the 75 that fit now" in text
    assert "cost 1 and stays in the cache" in text
    assert "ran out" not in text  # the old message claimed a stop before the quota ran out

    # partial=True alone would spend far more than a quarter of what is left: refused too
    with pytest.raises(qs.QuotaShareExceededError, match="pass confirm=True"):
        L.load_evaluations(page_size=100, partial=True, client=client)
    assert quota_left(server, "basic") == 75

    with pytest.warns(qs.IncompleteDataWarning) as said:
        frame = L.load_evaluations(page_size=100, partial=True, confirm=True, client=client)
    assert any("partial load, 98 of 174 requests" in str(w.message) for w in said)
    assert pages == 174  # page 1 from the cache, 75 fetched
    assert len(frame) == 100 * 76
    assert frame.attrs["quantscope"]["incomplete"] == {"missing": 98, "of": 174}
    assert quota_left(server, "basic") == 0


def test_the_refusals_and_the_429_are_one_family(
    fresh_sandbox: Callable[..., SandboxServer], tmp_path: Path
) -> None:
    server = fresh_sandbox()
    spend_quota(server, "basic", 100)
    client = make(server, "basic", tmp_path)
    with pytest.raises(qs.QuotaError) as spent:
        L.load_trade(1, client=client)
    assert isinstance(spent.value, qs.RateLimitError)
    assert issubclass(qs.QuotaWouldBeExceededError, qs.QuotaError)
    assert issubclass(qs.QuotaShareExceededError, qs.QuotaError)
    assert str(spent.value).count("resets at") == 1  # once, not in both sentences


# Growth covers 2 of the 3 chains: its frames say so (test_loaders_honest).
@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
def test_more_than_the_share_is_refused_with_its_cost_unless_confirmed(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    client = make(sandbox, "growth", tmp_path)
    evaluations = L.load_evaluations(page_size=200, max_pages=1, client=client)  # 1 request
    ids = evaluations["evaluation_id"].iloc[:130].tolist()
    with pytest.raises(qs.QuotaShareExceededError) as info:
        L.load_eval_details(ids, client=client)
    refused = info.value
    assert (refused.needed, refused.remaining, refused.share) == (130, 499, 0.25)
    assert "130 in all, more than 25% of the 499 of 500 left" in str(refused)
    assert "confirm=True (or max_requests=130)" in str(refused)
    assert quota_left(sandbox, "growth") == 499  # nothing sent

    with pytest.raises(qs.QuotaShareExceededError, match="more than max_requests=100"):
        L.load_eval_details(ids, max_requests=100, client=client)
    details = L.load_eval_details(ids, max_requests=130, client=client)
    assert details["evaluation_id"].nunique() == 130
    assert details.attrs["quantscope"]["requests"] == 130
    # 125 (a quarter of the 498 left now) would pass unasked; confirm=True takes any cost
    more = evaluations["evaluation_id"].iloc[130:200].tolist()
    assert L.load_eval_details(more, confirm=True, client=client).attrs["quantscope"][
        "requests"
    ] == len(more)


@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")
def test_opening_a_panel_does_not_spend_the_quota_without_asking(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    client = make(sandbox, "growth", tmp_path)
    panel = ThresholdPanel(1, client=client)
    left = quota_left(sandbox, "growth")
    assert left >= 490  # before: 498 of 500 spent on evaluation details
    message = panel.message.value
    assert "/api/eval-details, not in the cache" in message
    assert "Press Open" in message
    assert panel.research is None


@pytest.mark.filterwarnings("ignore::quantscope.IncompleteDataWarning")  # basic: 1 chain
def test_estimate_tells_the_cost_before_the_load(sandbox: SandboxServer, tmp_path: Path) -> None:
    client = make(sandbox, "basic", tmp_path)
    before = quota_left(sandbox, "basic")
    first = qs.estimate(L.load_evaluations, page_size=100, client=client)
    assert (first.requests, first.cached, first.exact, first.remaining) == (1, 0, False, None)
    assert "the first page, not cached, tells how many pages follow" in str(first)
    assert quota_left(sandbox, "basic") == before  # nothing sent

    probed = qs.estimate(L.load_evaluations, page_size=100, client=client, probe=True)
    assert probed.exact
    assert probed.probed == 1
    assert probed.cached == 1
    assert probed.remaining == before - 1
    assert probed.fits is False
    assert "does not fit" in str(probed)
    assert "probe=True spent 1" in str(probed)
    assert quota_left(sandbox, "basic") == before - 1  # the first page only

    trades = qs.estimate(L.load_trades, 1, page_size=1000, client=client, probe=True)
    assert (trades.requests, trades.probed, trades.exact) == (0, 1, True)  # one page in all
    assert trades.needs_confirm is False
    L.load_trades(1, page_size=1000, client=client)
    again = qs.estimate(L.load_trades, 1, page_size=1000, client=client)
    assert (again.requests, again.exact) == (0, True)  # the frame is in the cache
    assert qs.estimate(L.load_trade, 5, client=client).requests == 1
    write = qs.estimate(L.run_analysis, 1, client=client)
    assert write.write
    assert write.requests == 1
    with pytest.raises(TypeError, match="takes a quantscope loader"):
        qs.estimate(len, [1])
