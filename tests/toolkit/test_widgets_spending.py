"""Panels validate, then price, then spend (issue 24, item 1), headless over the sandbox.

A plan that cannot use a panel is told so without a request once the plan is known (the
client's last quota headers); an Open button offers only what can succeed (all of it when it
fits, else what fits, else nothing before the reset), in the panel's words, never Python
advice; a confirmation names the host the write goes to.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from _helpers import QUANT, WidgetData, share_refusal

from quantscope._errors import QuotaShareExceededError
from quantscope._http.client import Client
from quantscope.sandbox.serve import SandboxServer
from quantscope.widgets import PlaybookEditor, RecommendationsPanel, ThresholdPanel
from quantscope.widgets._offer import opening_offer

#: Python advice a panel never gives (its buttons are the options).
PYTHON_ADVICE = re.compile(r"\bpass \w+=|confirm=True|partial=True|force=True|qsc?\.\w+\(")
RESERVE = 450  # requests the Growth client keeps: what fits is less than the quant's details


def _spent(client: Client, limit: int) -> int:
    return limit - (client.quota.remaining if client.quota.remaining is not None else limit)


def test_basic_page_learns_its_plan_once_then_sends_nothing(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    # the panels page: three panels on one fresh client (nothing known about the plan yet)
    client = client_for(sandbox, "basic")
    panels = [cls(QUANT, client=client) for cls in (ThresholdPanel, PlaybookEditor)]
    panels.append(RecommendationsPanel(QUANT, client=client))
    assert client.quota.plan == "basic"
    assert _spent(client, 100) == 1  # the first panel's request told the plan; no other
    for panel in panels:
        assert "Your plan (basic)" in panel.message.value
        assert not PYTHON_ADVICE.search(panel.message.value)
    # a page opened again on the same client (the plan known): not one request
    again = [ThresholdPanel(QUANT, client=client), PlaybookEditor(QUANT, client=client)]
    assert _spent(client, 100) == 1
    for panel in again:
        assert "nothing was sent" in panel.message.value
        assert "Growth or higher can read the playbook" in panel.message.value


def test_growth_is_offered_only_what_fits_and_gets_it(
    sandbox: SandboxServer, tmp_path: Path
) -> None:
    # Growth, 500 a day, 450 kept in reserve: the quant's details (371) do not fit today
    with Client(
        sandbox.url,
        sandbox.keys["growth"],
        cache_dir=tmp_path,
        progress=False,
        quota_reserve=RESERVE,
    ) as client:
        _offered_what_fits(ThresholdPanel(QUANT, client=client), client)


def _offered_what_fits(panel: ThresholdPanel, client: Client) -> None:
    left = client.quota.remaining
    assert left is not None
    assert panel.research is None
    text = panel.message.value
    found = re.search(r"needs ([\d,]+) more requests", text)
    assert found is not None, text
    needed = int(found[1].replace(",", ""))
    assert needed > left - RESERVE  # the whole load cannot fit today: it is not offered
    label = panel.open_button.description
    assert label == f"Open what fits: spend {left - RESERVE:,} requests"
    assert "resets at" in text
    assert "(in " in text
    assert not PYTHON_ADVICE.search(text)
    assert panel.open_button.layout.width == "auto"  # the label is never cut
    panel.open_button.click()
    assert panel.research is not None
    assert not panel.slider.disabled
    assert client.quota.remaining is not None
    assert client.quota.remaining >= RESERVE
    assert panel.open_button.layout.display == "none"
    studied = html.unescape(panel.message.value)
    match = re.search(r"Studying ([\d,]+) of quant \d+'s ([\d,]+) closed trades", studied)
    assert match is not None, studied
    assert 0 < int(match[1].replace(",", "")) < int(match[2].replace(",", ""))
    assert "Loading…" not in studied
    assert not PYTHON_ADVICE.search(studied)


def _refusal(needed: int, remaining: int, reserve: int = 0) -> QuotaShareExceededError:
    return share_refusal(needed, remaining, reserve=reserve, fetched=2)


def test_an_offer_is_all_of_it_what_fits_or_nothing_before_the_reset() -> None:
    fits = opening_offer(_refusal(300, 498), "the trades")
    assert fits.label == "Open: spend 300 requests"
    assert fits.spend == {"confirm": True}
    part = opening_offer(_refusal(600, 498, reserve=10), "the trades")
    assert part.label == "Open what fits: spend 488 requests"
    assert part.spend == {"confirm": True, "max_requests": 488, "partial": True}
    assert "the rest then costs 112" in part.text
    assert "10 of them kept in reserve" in part.text
    none = opening_offer(_refusal(600, 5, reserve=10), "the trades")
    assert none.label is None
    assert none.spend == {}
    assert "nothing can be loaded before the quota resets at" in none.text
    for offer in (fits, part, none):
        assert not PYTHON_ADVICE.search(offer.text)


def test_nothing_left_shows_no_button(
    sandbox: SandboxServer, client_for: Callable[..., Client]
) -> None:
    panel = ThresholdPanel(QUANT, client=client_for(sandbox, "growth"))
    panel._open_lazily(opening_offer(_refusal(600, 0), "the trades"), lambda **_: None)
    assert panel.open_button.layout.display == "none"
    assert panel._opening is None
    assert panel.open() is False
    assert "Nothing waits to be opened" in panel.message.value


def test_the_confirmation_names_the_host(
    sandbox: SandboxServer, widget_data: WidgetData, client_for: Callable[..., Client]
) -> None:
    panel = ThresholdPanel(
        QUANT, client=client_for(sandbox), trades=widget_data.trades, details=widget_data.details
    )
    panel.select("smart_money_buys")
    panel.set_threshold(panel.threshold + 1)
    assert panel.apply() is not None
    asked = panel.confirmation.text.value
    assert f"on {urlsplit(sandbox.url).netloc}?" in asked
    assert "configured URL" not in asked
    panel.cancel()
