"""What a load will cost, before it runs: ``qsc.estimate(loader, **kwargs)``.

``estimate`` runs the loader in pricing mode (a context variable the client reads): the load
goes down its usual recipe, and at the point where it would send its first request the client
counts what the cache already holds and what it would send, and stops with an ``Estimate``
instead. Nothing is sent, except with ``probe=True``: a paged load whose first page is not in
the cache cannot know how many pages follow, so its estimate counts that page as 1 request and
says the rest is unknown; ``probe=True`` spends that one request (the page stays in the cache,
so the load itself then reuses it) and counts the rest exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from quantscope._errors import format_reset
from quantscope._quota import share_limit
from quantscope._reprs import estimate_html

__all__ = ["Estimate", "Priced", "Pricing", "estimate", "pricing"]


@dataclass(frozen=True)
class Estimate:
    """The cost of one load, as the cache and the last reported quota say.

    ``requests`` would be sent (a lower bound when ``exact`` is False: the first page is
    needed to learn how many pages follow), ``cached`` answers come from the cache at no cost;
    ``remaining``/``limit``/``reset`` are the quota as last reported (None before any
    request), ``share`` the client's rule (``Settings.quota_share``). ``probed`` is the
    request ``probe=True`` spent on the first page (now in the cache, counted in ``cached``).
    """

    endpoint: str
    requests: int
    cached: int
    exact: bool
    remaining: int | None
    limit: int | None
    reset: datetime | None
    share: float
    reserve: int = 0
    write: bool = False
    probed: int = 0

    @property
    def fits(self) -> bool | None:
        """Whether the requests fit in the quota left (minus the reserve); None if unknown."""
        if self.remaining is None:
            return None
        return self.requests <= self.remaining - self.reserve

    @property
    def needs_confirm(self) -> bool | None:
        """Whether the load exceeds the share of the quota left (``confirm=True`` needed)."""
        if self.remaining is None:
            return None
        return self.requests > share_limit(self.share, self.remaining)

    def __str__(self) -> str:
        what = "a write, never cached: 1 request" if self.write else self._cost()
        if self.remaining is None:
            left = "quota not known yet (no request has reached the service)"
        else:
            of = f" of {self.limit}" if self.limit is not None else ""
            left = f"{self.remaining}{of} left, resets at {format_reset(self.reset)}"
        verdict = ""
        if self.fits is False:
            verdict = "; does not fit: partial=True fetches what fits"
        elif self.needs_confirm:
            verdict = f"; more than {self.share:.0%} of what is left: needs confirm=True"
        return f"{self.endpoint}: {what}; {left}{verdict}"

    def __repr__(self) -> str:
        return f"<Estimate {self}>"

    def _repr_html_(self) -> str:
        return estimate_html(self)

    def _cost(self) -> str:
        cached = f", {self.cached} from the cache" if self.cached else ""
        if self.probed:
            cached += f" (the first page among them: probe=True spent {self.probed} on it)"
        if self.exact:
            return f"{self.requests} requests{cached}"
        return (
            f"at least {self.requests} request{'s' if self.requests != 1 else ''}{cached} "
            "(the first page, not cached, tells how many pages follow; probe=True spends "
            "it to count them)"
        )


@dataclass(frozen=True)
class Pricing:
    """Pricing mode: ``probe`` lets a paged load spend its first page to learn its size."""

    probe: bool = False


class Priced(Exception):
    """Raised by the client in pricing mode where it would send: carries the estimate."""

    def __init__(self, estimate: Estimate) -> None:
        super().__init__(str(estimate))
        self.estimate = estimate


_PRICING: ContextVar[Pricing | None] = ContextVar("quantscope_pricing", default=None)


def pricing() -> Pricing | None:
    """The pricing mode in force (None: loads run for real)."""
    return _PRICING.get()


@contextmanager
def _priced(mode: Pricing) -> Iterator[None]:
    token = _PRICING.set(mode)
    try:
        yield
    finally:
        _PRICING.reset(token)


def estimate(
    loader: Callable[..., Any], /, *args: Any, probe: bool = False, **kwargs: Any
) -> Estimate:
    """What ``loader(*args, **kwargs)`` would cost, without running it (see module docstring).

    ``qsc.estimate(qsc.load_evaluations, page_size=100)`` -> ``/api/eval-results: 173 requests;
    76 of 100 left, resets at ...; does not fit: partial=True fetches what fits``.
    """
    with _priced(Pricing(probe=probe)):
        try:
            loader(*args, **kwargs)
        except Priced as priced:
            return priced.estimate
    name = getattr(loader, "__name__", repr(loader))
    raise TypeError(f"estimate() takes a quantscope loader; {name} sent nothing through a client")
