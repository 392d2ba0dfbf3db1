"""The quota budget of a client's loads: what a load may spend, and the refusal when it may not.

Multi-request loads (``get_pages``, ``get_many``) serve cached answers first (no quota) and
count what the rest costs before sending any of it (a paged load's first page, which gives
the total, is sent first: it counts as one request of the load). Then, by the caller's
``Spend`` (``_http.quota``), as its ``Budget`` plans it (``plan``; ``left``: what may still
be sent, None while the quota is unknown or has reset since it was reported):

* the rest does not fit in the quota left (minus ``quota_reserve``): nothing more is sent,
  ``QuotaWouldBeExceededError`` says how many are needed, how many are left and when the quota
  resets; ``Spend(partial=True)`` fetches what fits instead and returns an incomplete result
  (``missing``), whose pages are kept in the cache until after the reset so the same call
  then fetches only the rest;
* the load needs more than ``Settings.quota_share`` of the quota left (``_http.quota.share_limit``):
  refused with its cost (``QuotaShareExceededError``) unless ``Spend(confirm=True)`` or a
  ``max_requests`` ceiling that covers it. A single request is never refused by this rule.

A load that starts before any answer reported the quota sends its first request to learn it.
Both refusals and the service's 429 (``RateLimitError``) are ``QuotaError``. What a call would
cost is priced without making it: ``_http.prices``.

``refusal`` builds either refusal, one line that says what to do; a load that stops early keeps
what it fetched until a day after the reset (``resume_until``, ``extend_fetched``).

The budget reads the quota the client's answers last reported (``Reported``: the ``Sender``)
and the client's settings; it sends nothing and touches no cache itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from quantscope._advice import Said
from quantscope._config import Settings
from quantscope._errors import QuotaShareExceededError, QuotaWouldBeExceededError, format_reset
from quantscope._http.quota import Quota, Spend, share_limit
from quantscope._http.results import One

__all__ = ["Budget", "Keep", "Refusal", "Reported", "extend_fetched"]

Refusal = QuotaWouldBeExceededError | QuotaShareExceededError
#: Stores GET ``path`` with ``query`` (whose body is given) again, kept at least until the time.
Keep = Callable[[str, Mapping[str, str], Any, datetime], None]


class Reported(Protocol):
    """What reports the quota the service last answered with (``_http.sender.Sender``)."""

    quota: Quota


class Budget:
    """The quota budget of one client's loads (module docstring)."""

    def __init__(self, reported: Reported, settings: Settings) -> None:
        self._reported = reported
        self.reserve: int = settings.quota_reserve
        self.share: float = settings.quota_share

    @property
    def quota(self) -> Quota:
        """The quota as last reported (``Quota()`` before any answer reported it)."""
        return self._reported.quota

    def left(self) -> int | None:
        """Requests this load may still send (quota left minus reserve); None when unknown."""
        quota = self.quota
        if quota.remaining is None:
            return None
        if quota.reset is not None and quota.reset <= datetime.now(UTC):
            return None  # the counter has been reset since it was reported
        return quota.remaining - self.reserve

    def plan(
        self, endpoint: str, needed: int, spent: int, spend: Spend, unit: str
    ) -> tuple[int, Refusal | None]:
        """How many of ``needed`` requests this load may send (the quota is known), or the
        refusal (module docstring). ``spent``: requests the load already sent.
        """
        quota = self.quota
        remaining = quota.remaining or 0
        budget = max(0, remaining - self.reserve)
        start = remaining + spent  # the quota left when the load began
        total = spent + needed
        ceiling = spend.max_requests
        share = self.share
        fits = needed
        if ceiling is not None and total > ceiling:
            if not spend.partial:
                return 0, self.refusal(endpoint, needed, spent, unit, cost=total, ceiling=ceiling)
            fits = max(0, ceiling - spent)
        if fits > budget:
            if not spend.partial:
                return 0, self.refusal(endpoint, needed, spent, unit)
            fits = budget
        cost = spent + fits
        if ceiling is None and not spend.confirm and cost > share_limit(share, start):
            return 0, self.refusal(endpoint, needed, spent, unit, cost=cost)
        return fits, None

    def refusal(
        self,
        endpoint: str,
        needed: int,
        spent: int,
        unit: str,
        *,
        cost: int | None = None,
        ceiling: int | None = None,
    ) -> Refusal:
        """The error for a load refused before sending ``needed`` requests (one line each)."""
        quota = self.quota
        remaining = quota.remaining or 0
        reserve = self.reserve
        of = f" of {quota.limit}" if quota.limit is not None else ""
        kept = f", reserve {reserve}" if reserve else ""
        first = (
            f" (the first page, which gives the total, cost {spent} and stays in the cache)"
            if spent
            else ""
        )
        needs = f"{endpoint} needed {needed} requests for {unit} not in the cache"
        sent = "sent nothing more" if spent else "sent nothing"
        fields: dict[str, Any] = {
            "endpoint": endpoint,
            "needed": needed,
            "fetched": spent,
            "remaining": remaining,
            "limit": quota.limit,
            "reset": quota.reset,
            "reserve": reserve,
        }
        values: dict[str, Any] = {
            "needs": needs,
            "sent": sent,
            "first": first,
            "of": of,
            "remaining": remaining,
            "cost": cost,
            "ceiling": ceiling,
        }
        if cost is not None:
            share = self.share
            if ceiling is not None:
                template = (
                    "{needs}; this call would send {cost} in all, more than {max_requests}: "
                    "{sent}{first}. To load it, {advice}."
                )
                advice: tuple[str, ...] = ("raise_max_requests", "partial_allowed")
            else:
                template = (
                    "{needs}; this call would send {cost} in all, more than {pct} of the "
                    "{all}{of} left: {sent}{first}. To load it, {confirm} to spend them, or "
                    "{narrow}."
                )
                advice = ()
            return QuotaShareExceededError(
                Said(
                    template,
                    advice,
                    values | {"pct": f"{share:.0%}", "all": remaining + spent},
                ),
                share=share,
                ceiling=ceiling,
                **fields,
            )
        fits = max(0, remaining - reserve)
        over_share = spent + fits > share_limit(self.share, remaining + spent)
        return QuotaWouldBeExceededError(
            Said(
                "{needs}, but {remaining}{of} are left{kept}: {sent}{first}. {Advice}: it "
                "fetches the {fits} that fit now, and {again} after the reset fetches only the "
                "other {rest}, from the cache.",
                ("wait_for_reset", "partial_confirm" if over_share else "partial"),
                values
                | {
                    "kept": kept,
                    "reset": format_reset(quota.reset),
                    "fits": fits,
                    "rest": needed - fits,
                },
            ),
            **fields,
        )

    def resume_until(self) -> datetime:
        """How long pages of a load that will stop early are kept: until a day after the reset."""
        reset = self.quota.reset or datetime.now(UTC)
        return reset + timedelta(days=1)


def extend_fetched(
    results: Sequence[One | None],
    indices: Sequence[int],
    requests_: Sequence[tuple[str, Mapping[str, str]]],
    extend_to: datetime,
    keep: Keep,
) -> None:
    """Keep what this load already fetched until after the reset, for the resume (the
    stored copies are read back: a load does not hold its answers' responses). ``keep``
    stores one request's copy again, kept at least until ``extend_to`` (``Client._keep_until``).
    """
    for i in indices:
        one = results[i]
        if one is not None and one.key is not None and not one.from_cache:
            path, query = requests_[i]
            keep(path, query, one.body, extend_to)
