"""The quota budget as a unit of its own (``_http.budget.Budget``): what a load may send given
the quota last reported, the reserve, the share and the caller's ``Spend``, with no client and
no service (the same rules over HTTP: test_client_quota.py, test_estimate_plans.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from quantscope._config import Settings
from quantscope._errors import QuotaShareExceededError, QuotaWouldBeExceededError
from quantscope._http.budget import Budget
from quantscope._http.quota import Quota, Spend

RESET = datetime.now(UTC) + timedelta(hours=3)


@dataclass
class Reported:
    quota: Quota = field(default_factory=Quota)


def budget(
    remaining: int | None, *, reserve: int = 0, share: float = 0.5, reset: datetime = RESET
) -> Budget:
    settings = Settings(
        None, None, Path("."), False, False, quota_reserve=reserve, quota_share=share
    )
    return Budget(Reported(Quota(1000, remaining, reset, datetime.now(UTC))), settings)


def test_left_is_the_quota_minus_the_reserve_and_unknown_before_or_after_a_reset() -> None:
    assert budget(100, reserve=10).left() == 90
    assert budget(None).left() is None
    assert budget(100, reset=datetime.now(UTC) - timedelta(seconds=1)).left() is None
    assert budget(100).resume_until() == RESET + timedelta(days=1)


def test_a_load_within_the_share_is_sent_whole() -> None:
    assert budget(100).plan("/api/x", 50, 0, Spend(), "answers") == (50, None)


@pytest.mark.parametrize(
    ("spend", "sent"),
    [(Spend(confirm=True), 60), (Spend(max_requests=60), 60), (Spend(partial=True), 0)],
)
def test_over_the_share_a_load_is_refused_unless_confirmed_or_capped(
    spend: Spend, sent: int
) -> None:
    fits, refusal = budget(100).plan("/api/x", 60, 0, spend, "answers")
    assert fits == sent
    if sent:
        assert refusal is None
    else:
        assert isinstance(refusal, QuotaShareExceededError)
        assert (refusal.needed, refusal.remaining, refusal.share) == (60, 100, 0.5)


def test_more_than_the_quota_left_is_refused_or_fetched_in_part() -> None:
    fits, refusal = budget(100, reserve=10).plan("/api/x", 120, 1, Spend(), "pages")
    assert fits == 0
    assert isinstance(refusal, QuotaWouldBeExceededError)
    assert (refusal.needed, refusal.fetched, refusal.reserve) == (120, 1, 10)
    assert "needed 120 requests for pages not in the cache, but 100 of 1000 are left" in str(
        refusal
    )
    partial = Spend(partial=True, confirm=True)
    assert budget(100, reserve=10).plan("/api/x", 120, 1, partial, "pages") == (90, None)


def test_a_ceiling_below_the_load_refuses_it_with_the_ceiling_or_sends_up_to_it() -> None:
    fits, refusal = budget(100).plan("/api/x", 10, 2, Spend(max_requests=5), "answers")
    assert fits == 0
    assert isinstance(refusal, QuotaShareExceededError)
    assert (refusal.ceiling, refusal.needed) == (5, 10)
    assert budget(100).plan("/api/x", 10, 2, Spend(max_requests=5, partial=True), "answers") == (
        3,
        None,
    )
